"""Audits of sensitive data: suggested but unreviewed sensitive tags, and who can see
sensitive data (role x data source x sensitive tag).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from catalog_nb.notebook.audits.findings import (
    SENSITIVE,
    SEVERITY_BY_SENSITIVITY,
    confidence,
    findings_frame,
    frames_of,
    place_of,
    present,
    role_holders,
    rows_of,
    sensitive_tags,
    sensitivity_rank,
)

__all__ = ["sensitive_exposure", "unreviewed_sensitive"]


def unreviewed_sensitive(source: Any, *, sensitivities: Iterable[str] = SENSITIVE) -> pd.DataFrame:
    """Fields (and resources) with suggested sensitive tags but no accepted sensitive tag.

    One finding per field; ``tag`` is the most sensitive suggestion, ``detail`` lists them
    all with discovery's confidence. Severity: high for RESTRICTED suggestions, medium for
    CONFIDENTIAL, low otherwise.

    Example::

        audit.unreviewed_sensitive(cat)[["source", "path", "field", "tag", "detail"]]
    """
    frames = frames_of(source)
    sensitive = sensitive_tags(frames, sensitivities)
    assoc = frames.get("associations")
    assoc = assoc[assoc["tag_key"].isin(list(sensitive))]
    accepted = {
        (r["resource_key"], r["field"] if present(r["field"]) else None)
        for r in rows_of(assoc[assoc["state"] == "ACCEPTED"])
    }
    pending: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for r in rows_of(assoc[assoc["state"] == "SUGGESTED"]):
        where = (r["resource_key"], r["field"] if present(r["field"]) else None)
        if where not in accepted:
            pending.setdefault(where, []).append(r)
    rows = []
    for suggestions in pending.values():
        suggestions.sort(key=lambda r: -sensitivity_rank(sensitive[str(r["tag_key"])]))
        top = suggestions[0]
        level = sensitive[str(top["tag_key"])]
        listed = ", ".join(
            f"{s['tag']} ({sensitive[str(s['tag_key'])]}"
            + (f", {confidence(s['weight'])})" if present(s["weight"]) else ")")
            for s in suggestions
        )
        rows.append(
            {
                "audit": "unreviewed_sensitive",
                "severity": SEVERITY_BY_SENSITIVITY.get(level, "low"),
                "object_type": "field" if present(top["field"]) else "resource",
                "object": place_of(top),
                "detail": f"{place_of(top)} may hold sensitive data: suggested {listed}, but no "
                "sensitive tag is accepted there, so access rules and reports miss it.",
                "key": top["resource_key"],
                "source": top["source"],
                "path": top["path"],
                "field": top["field"],
                "tag": top["tag"],
                "sensitivity": level,
                "count": len(suggestions),
            }
        )
    return findings_frame(rows)


def _visible_sources(role: Mapping[str, Any], source_names: Mapping[str, str]) -> list[str]:
    if role.get("metadata_access_option") == "ALL" or role.get("access_level") == "Administrator":
        return sorted(set(source_names.values()))
    return sorted({source_names[k] for k in role.get("data_source_keys") or []
                   if k in source_names})


def sensitive_exposure(
    source: Any, *, sensitivities: Iterable[str] = SENSITIVE, include_suggested: bool = False
) -> pd.DataFrame:
    """Who can see sensitive data: one finding per role x data source x sensitive tag.

    A role sees a data source when it lists it, or with ``ALL`` metadata access or the
    Administrator level. ``count`` is the number of tagged fields and resources; ``users``
    the users holding the role. Only ACCEPTED tags count unless ``include_suggested``.
    Severity: info for Administrator roles, high for RESTRICTED tags, medium for
    CONFIDENTIAL, low otherwise; low also for a role nobody holds.

    Example::

        audit.sensitive_exposure(cat).query("role == 'Analyst'")[["source", "tag", "users"]]
    """
    frames = frames_of(source)
    sensitive = sensitive_tags(frames, sensitivities)
    assoc = frames.get("associations")
    states = ["ACCEPTED", "SUGGESTED"] if include_suggested else ["ACCEPTED"]
    assoc = assoc[assoc["tag_key"].isin(list(sensitive)) & assoc["state"].isin(states)]
    exposed: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows_of(assoc):
        entry = exposed.setdefault(
            (str(r["source"]), str(r["tag"])),
            {"tag_key": str(r["tag_key"]), "objects": 0, "resources": set()},
        )
        entry["objects"] += 1
        entry["resources"].add(r["resource_key"])
    sources = frames.get("sources")
    source_names = {str(k): str(n) for k, n in zip(sources["key"], sources["name"], strict=True)}
    source_names.update({str(n): str(n) for n in assoc["source"].dropna().unique()
                         if str(n) not in source_names.values()})
    holders = role_holders(frames)
    rows = []
    for role in rows_of(frames.get("roles")):
        name = str(role["name"])
        users = holders.get(name, [])
        for source_name in _visible_sources(role, source_names):
            for (where, tag), entry in sorted(exposed.items()):
                if where != source_name:
                    continue
                level = sensitive[entry["tag_key"]]
                if role["access_level"] == "Administrator":
                    severity = "info"
                elif not users:
                    severity = "low"
                else:
                    severity = SEVERITY_BY_SENSITIVITY.get(level, "low")
                held = f"{len(users)} user(s): {', '.join(users)}" if users else "nobody holds it"
                rows.append(
                    {
                        "audit": "sensitive_exposure",
                        "severity": severity,
                        "object_type": "role",
                        "object": name,
                        "detail": f"Role {name!r} ({role['access_level']}; {held}) can see "
                        f"{entry['objects']} item(s) in {len(entry['resources'])} resource(s) of "
                        f"data source {where!r} tagged {tag} ({level}).",
                        "key": role["key"],
                        "source": where,
                        "tag": tag,
                        "sensitivity": level,
                        "role": name,
                        "users": users,
                        "count": entry["objects"],
                    }
                )
    return findings_frame(rows)
