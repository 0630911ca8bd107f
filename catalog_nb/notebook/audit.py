"""Audits of a catalog: each a function returning a frame of findings, and :func:`run_all`.

Every audit takes a *source*: a live :class:`~catalog_nb.client.Catalog`, an offline
:class:`~catalog_nb.snapshot.Snapshot`, or the :class:`Frames` cache :func:`run_all` shares
between audits. Each finding is one row of :data:`FINDING_COLUMNS`: ``audit``, ``severity``
(high, medium, low, info), ``object_type``, ``object`` and ``detail`` (a sentence saying what
is wrong and why it matters), then the columns that apply: key, source, path, field, tag,
sensitivity, role, users (list), count, age_days, when.

Ages are measured from ``now``: the snapshot's time for a snapshot, the present otherwise.

=========================  =================================================================
audit                      finds
=========================  =================================================================
unreviewed_sensitive       fields with suggested sensitive tags but no accepted one
sensitive_exposure         role x data source x sensitive tag, with the users of the role
undocumented               resources without description or owner
stale_profiles             profiling errors, never profiled, changed since, or old profiles
pending_suggestions        suggestions waiting for review, oldest first
orphan_tags                tags nothing is tagged with, and empty tag domains
user_role_hygiene          administrators, users without email / with only the default
                           role / without password, roles with ALL access
=========================  =================================================================

Example::

    from catalog_nb.notebook import audit

    findings = audit.run_all(cat, stale_days=30)
    findings.query("severity == 'high'")[["audit", "object", "detail"]]
    audit.sensitive_exposure(catalog_nb.open_snapshot("snapshots/q1"))
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

import pandas as pd

from catalog_nb.client.frames import Column, to_frame

__all__ = [
    "AUDITS",
    "FINDING_COLUMNS",
    "SENSITIVE",
    "SEVERITIES",
    "Frames",
    "orphan_tags",
    "pending_suggestions",
    "run_all",
    "sensitive_exposure",
    "stale_profiles",
    "undocumented",
    "unreviewed_sensitive",
    "user_role_hygiene",
]


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as dicts keyed by column name."""
    return cast(list[dict[str, Any]], frame.to_dict("records"))

#: Severities from most to least urgent.
SEVERITIES: tuple[str, ...] = ("high", "medium", "low", "info")
#: Tag sensitivities an audit treats as sensitive by default.
SENSITIVE: tuple[str, ...] = ("CONFIDENTIAL", "RESTRICTED")
_BY_SENSITIVITY = {"RESTRICTED": "high", "CONFIDENTIAL": "medium"}

#: Columns of every findings frame.
FINDING_COLUMNS: tuple[Column, ...] = (
    Column("audit", "string"),
    Column("severity", "string"),
    Column("object_type", "string"),
    Column("object", "string"),
    Column("detail", "string"),
    Column("key", "string"),
    Column("source", "string"),
    Column("path", "string"),
    Column("field", "string"),
    Column("tag", "string"),
    Column("sensitivity", "string"),
    Column("role", "string"),
    Column("users", "list"),
    Column("count", "int"),
    Column("age_days", "float"),
    Column("when", "time"),
)

_TABLES = ("users", "roles", "sources", "tag_domains", "tags", "associations", "resources",
           "fields")


class Frames:
    """The frames of one source, each read once: what :func:`run_all` hands every audit.

    Example::

        frames = Frames(cat)
        audit.undocumented(frames), audit.stale_profiles(frames)   # one read of resources
    """

    def __init__(
        self, source: Any, now: Any = None, frames: Mapping[str, pd.DataFrame] | None = None
    ) -> None:
        self.source = source
        # frames already read (e.g. by an export) are used instead of reading them again
        self._cache: dict[str, pd.DataFrame] = dict(frames or {})
        if now is not None:
            self.now = _utc(now)
        elif getattr(source, "taken_at", None) is not None:
            self.now = _utc(source.taken_at)
        else:
            self.now = pd.Timestamp.now(tz="UTC")

    def get(self, name: str) -> pd.DataFrame:
        """The frame ``name`` (users, roles, sources, tag_domains, tags, associations,
        resources, fields) of the source, read on first use."""
        if name not in _TABLES:
            raise KeyError(f"no frame {name!r}; expected one of {', '.join(_TABLES)}")
        if name not in self._cache:
            self._cache[name] = getattr(self.source, name)()
        return self._cache[name]


def _utc(value: Any) -> pd.Timestamp:
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def frames_of(source: Any, now: Any = None) -> Frames:
    """``source`` as :class:`Frames` (a Frames is returned as is unless ``now`` is given)."""
    if isinstance(source, Frames):
        return source if now is None else Frames(source.source, now)
    return Frames(source, now)


def _present(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | dict):
        return True
    return not pd.isna(value)


def _clean(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row with pandas' missing values (NA, NaT, NaN) as ``None``, as frames expect."""
    return {
        key: None if not isinstance(value, list | dict) and not _present(value) else value
        for key, value in row.items()
    }


def _findings(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    rank = {name: i for i, name in enumerate(SEVERITIES)}
    ordered = sorted(rows, key=lambda r: rank.get(str(r.get("severity")), len(rank)))
    return to_frame([_clean(row) for row in ordered], FINDING_COLUMNS)


def _where(row: Mapping[str, Any], path: str = "path") -> str:
    text = f"{row.get('source')}:{row.get(path)}"
    field = row.get("field")
    return f"{text} [{field}]" if _present(field) else text


def _sensitive_tags(frames: Frames, sensitivities: Iterable[str]) -> dict[str, str]:
    """tag key -> sensitivity of the tags whose sensitivity is one of ``sensitivities``."""
    wanted = {str(s).upper() for s in sensitivities}
    tags = frames.get("tags")
    return {
        str(row["key"]): str(row["sensitivity"])
        for row in _records(tags)
        if _present(row["sensitivity"]) and str(row["sensitivity"]).upper() in wanted
    }


def _rank(sensitivity: str) -> int:
    order = ("PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED")
    return order.index(sensitivity) if sensitivity in order else -1


def unreviewed_sensitive(source: Any, *, sensitivities: Iterable[str] = SENSITIVE) -> pd.DataFrame:
    """Fields (and resources) with suggested sensitive tags but no accepted sensitive tag.

    One finding per field; ``tag`` is the most sensitive suggestion, ``detail`` lists them
    all with discovery's confidence. Severity: high for RESTRICTED suggestions, medium for
    CONFIDENTIAL, low otherwise.

    Example::

        audit.unreviewed_sensitive(cat)[["source", "path", "field", "tag", "detail"]]
    """
    frames = frames_of(source)
    sensitive = _sensitive_tags(frames, sensitivities)
    assoc = frames.get("associations")
    assoc = assoc[assoc["tag_key"].isin(list(sensitive))]
    accepted = {
        (r["resource_key"], r["field"] if _present(r["field"]) else None)
        for r in _records(assoc[assoc["state"] == "ACCEPTED"])
    }
    pending: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for r in _records(assoc[assoc["state"] == "SUGGESTED"]):
        where = (r["resource_key"], r["field"] if _present(r["field"]) else None)
        if where not in accepted:
            pending.setdefault(where, []).append(r)
    rows = []
    for suggestions in pending.values():
        suggestions.sort(key=lambda r: -_rank(sensitive[str(r["tag_key"])]))
        top = suggestions[0]
        level = sensitive[str(top["tag_key"])]
        listed = ", ".join(
            f"{s['tag']} ({sensitive[str(s['tag_key'])]}"
            + (f", weight {float(s['weight']):.2f})" if _present(s["weight"]) else ")")
            for s in suggestions
        )
        rows.append(
            {
                "audit": "unreviewed_sensitive",
                "severity": _BY_SENSITIVITY.get(level, "low"),
                "object_type": "field" if _present(top["field"]) else "resource",
                "object": _where(top),
                "detail": f"{_where(top)} may hold sensitive data: suggested {listed}, but no "
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
    return _findings(rows)


def _visible_sources(role: Mapping[str, Any], source_names: Mapping[str, str]) -> list[str]:
    if role.get("metadata_access_option") == "ALL" or role.get("access_level") == "Administrator":
        return sorted(set(source_names.values()))
    return sorted({source_names[k] for k in role.get("data_source_keys") or []
                   if k in source_names})


def _holders(frames: Frames) -> dict[str, list[str]]:
    """role name -> names of the users who hold it."""
    holders: dict[str, list[str]] = {}
    for user in _records(frames.get("users")):
        for role in user["roles"] or []:
            holders.setdefault(str(role), []).append(str(user["name"]))
    return {role: sorted(names) for role, names in holders.items()}


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
    sensitive = _sensitive_tags(frames, sensitivities)
    assoc = frames.get("associations")
    states = ["ACCEPTED", "SUGGESTED"] if include_suggested else ["ACCEPTED"]
    assoc = assoc[assoc["tag_key"].isin(list(sensitive)) & assoc["state"].isin(states)]
    exposed: dict[tuple[str, str], dict[str, Any]] = {}
    for r in _records(assoc):
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
    holders = _holders(frames)
    rows = []
    for role in _records(frames.get("roles")):
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
                    severity = _BY_SENSITIVITY.get(level, "low")
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
    return _findings(rows)


def undocumented(source: Any) -> pd.DataFrame:
    """Data resources without a description or without an owner.

    Severity: medium when both are missing, low when one is.

    Example::

        audit.undocumented(cat).groupby("source").size()
    """
    frames = frames_of(source)
    rows = []
    for r in _records(frames.get("resources")):
        missing = [what for what in ("description", "owner") if not _present(r[what])]
        if not missing:
            continue
        rows.append(
            {
                "audit": "undocumented",
                "severity": "medium" if len(missing) == 2 else "low",
                "object_type": "resource",
                "object": _where(r),
                "detail": f"{_where(r)} has no {' and no '.join(missing)}: people finding it "
                "cannot tell what it holds or whom to ask.",
                "key": r["key"],
                "source": r["source"],
                "path": r["path"],
                "count": len(missing),
            }
        )
    return _findings(rows)


def _days(now: pd.Timestamp, then: Any) -> float | None:
    if not _present(then):
        return None
    return round((now - _utc(then)).total_seconds() / 86400, 2)


def stale_profiles(source: Any, *, stale_days: float = 90, now: Any = None) -> pd.DataFrame:
    """Profiling errors (high), resources never profiled, changed since their profile or
    missing at the source (medium), and profiles older than ``stale_days`` (low).

    Example::

        audit.stale_profiles(cat, stale_days=30).query("severity == 'high'")
    """
    if stale_days < 0:
        raise ValueError("stale_days must be 0 or more")
    frames = frames_of(source, now)
    resources = _records(frames.get("resources"))
    # The member files of a collection are profiled as the collection, never one by one.
    collections = [(r["source"], f"{r['path']}/") for r in resources if r["type"] == "collection"]
    rows = []
    for r in resources:
        age = _days(frames.now, r["profiled"])
        where = _where(r)
        member = any(r["source"] == s and str(r["path"]).startswith(p) for s, p in collections)
        if r["state"] == "ERROR" or r["status"] == "ERROR":
            why = r["error"] if _present(r["error"]) else "no message"
            severity, text = "high", f"Profiling {where} failed: {why}."
        elif r["status"] == "MISSING":
            severity, text = "medium", f"{where} was not found at its source any more."
        elif age is None and member:
            continue
        elif age is None:
            severity, text = "medium", f"{where} was never profiled: it has no statistics."
        elif _present(r["modified"]) and _utc(r["modified"]) > _utc(r["profiled"]):
            severity = "medium"
            text = f"{where} changed after it was last profiled; its statistics are out of date."
        elif age > stale_days:
            severity = "low"
            text = f"{where} was last profiled {age:.0f} days ago (more than {stale_days:g})."
        else:
            continue
        rows.append(
            {
                "audit": "stale_profiles",
                "severity": severity,
                "object_type": "resource",
                "object": where,
                "detail": text,
                "key": r["key"],
                "source": r["source"],
                "path": r["path"],
                "age_days": age,
                "when": r["profiled"],
            }
        )
    return _findings(rows)


def pending_suggestions(
    source: Any, *, old_days: float = 30, min_age_days: float = 0, now: Any = None
) -> pd.DataFrame:
    """Suggested tag associations waiting for review, oldest first.

    Severity: medium once a suggestion is ``old_days`` old, low before. Suggestions younger
    than ``min_age_days`` are left out.

    Example::

        audit.pending_suggestions(cat, old_days=14).head(20)
    """
    if old_days < 0 or min_age_days < 0:
        raise ValueError("old_days and min_age_days must be 0 or more")
    frames = frames_of(source, now)
    assoc = frames.get("associations")
    rows = []
    for r in _records(assoc[assoc["state"] == "SUGGESTED"]):
        age = _days(frames.now, r["created"])
        if age is not None and age < min_age_days:
            continue
        weight = f" with weight {float(r['weight']):.2f}" if _present(r["weight"]) else ""
        by = f" by {r['created_by']}" if _present(r["created_by"]) else ""
        rows.append(
            {
                "audit": "pending_suggestions",
                "severity": "medium" if age is not None and age >= old_days else "low",
                "object_type": "association",
                "object": f"{_where(r)} -> {r['tag']}",
                "detail": f"{r['tag']} was suggested{by} for {_where(r)}{weight} "
                f"{'' if age is None else f'{age:.0f} days ago '}and is still not reviewed.",
                "key": r["key"],
                "source": r["source"],
                "path": r["path"],
                "field": r["field"],
                "tag": r["tag"],
                "sensitivity": r["sensitivity"],
                "age_days": age,
                "when": r["created"],
            }
        )
    rows.sort(key=lambda r: -(r["age_days"] or 0))
    return _findings(rows)


def orphan_tags(source: Any) -> pd.DataFrame:
    """Tags that nothing is tagged with (nor any tag below them), and empty tag domains.

    Rejected associations do not count as use. Severity: low; info for built-in tags.

    Example::

        audit.orphan_tags(cat)[["object_type", "object"]]
    """
    frames = frames_of(source)
    tags, assoc = frames.get("tags"), frames.get("associations")
    used = set(assoc.loc[assoc["state"] != "REJECTED", "tag_key"].dropna().astype(str))
    parents = dict(zip(tags["key"].astype(str), tags["parent_key"], strict=True))
    in_use: set[str] = set()
    for start in used:
        current: str | None = start
        while current is not None and current not in in_use:
            in_use.add(current)
            parent = parents.get(current)
            current = str(parent) if _present(parent) else None
    rows = []
    for t in _records(tags):
        if str(t["key"]) in in_use:
            continue
        rows.append(
            {
                "audit": "orphan_tags",
                "severity": "info" if t["immutable"] is True else "low",
                "object_type": "tag",
                "object": t["full_name"],
                "detail": f"Tag {t['full_name']} is not used on any resource or field (nor is "
                "any tag below it): remove it or start using it.",
                "key": t["key"],
                "tag": t["full_name"],
                "sensitivity": t["sensitivity"],
                "count": 0,
            }
        )
    per_domain = tags.groupby("domain_key").size().to_dict() if len(tags) else {}
    for d in _records(frames.get("tag_domains")):
        if per_domain.get(d["key"], 0) or (_present(d["tag_count"]) and d["tag_count"] > 0):
            continue
        rows.append(
            {
                "audit": "orphan_tags",
                "severity": "low",
                "object_type": "tag_domain",
                "object": d["name"],
                "detail": f"Tag domain {d['name']!r} holds no tags: delete it or add its tags.",
                "key": d["key"],
                "count": 0,
            }
        )
    return _findings(rows)


def user_role_hygiene(source: Any, *, max_admins: int = 3) -> pd.DataFrame:
    """Users and roles worth a look.

    * every administrator (info; medium each when there are more than ``max_admins``);
    * users without an email (low), holding only a default role (low), without a password
      (info: they cannot log in);
    * roles with ``ALL`` metadata or data access (medium; info for the Administrator level).

    Example::

        audit.user_role_hygiene(cat, max_admins=2)
    """
    frames = frames_of(source)
    users, roles = frames.get("users"), frames.get("roles")
    defaults = set(roles.loc[roles["default_role"].fillna(False).astype(bool), "name"].astype(str))
    admin_roles = set(roles.loc[roles["access_level"] == "Administrator", "name"].astype(str))
    holders = _holders(frames)
    rows: list[dict[str, Any]] = []

    def user_row(u: Mapping[str, Any], severity: str, detail: str) -> None:
        rows.append({"audit": "user_role_hygiene", "severity": severity, "object_type": "user",
                     "object": u["name"], "detail": detail, "key": u["key"],
                     "users": [u["name"]]})

    admins = [
        u for u in _records(users)
        if u["admin"] is True or set(u["roles"] or []) & admin_roles
        or "Administrator" in (u["access_levels"] or [])
    ]
    too_many = len(admins) > max_admins
    for u in admins:
        extra = f" There are {len(admins)} administrators (more than {max_admins})." if (
            too_many) else ""
        user_row(u, "medium" if too_many else "info",
                 f"{u['name']} is an administrator: full control of the catalog.{extra}")
    for u in _records(users):
        held = [str(r) for r in u["roles"] or []]
        if not _present(u["email"]):
            user_row(u, "low", f"{u['name']} has no email address: nobody can reach them "
                     "about the data they use.")
        if held and set(held) <= defaults:
            user_row(u, "low", f"{u['name']} holds only the default role "
                     f"{', '.join(held)}: probably never given the role their work needs.")
        if u["password_set"] is False:
            user_row(u, "info", f"{u['name']} has no password and cannot log in.")
    for r in _records(roles):
        wide = [what for what, column in (("metadata", "metadata_access_option"),
                                          ("data", "data_access_option")) if r[column] == "ALL"]
        if not wide:
            continue
        admin = r["access_level"] == "Administrator"
        who = holders.get(str(r["name"]), [])
        rows.append(
            {
                "audit": "user_role_hygiene",
                "severity": "info" if admin else "medium",
                "object_type": "role",
                "object": r["name"],
                "detail": f"Role {r['name']!r} ({r['access_level']}) has ALL "
                f"{' and '.join(wide)} access: it sees every data source, present and future"
                f" ({len(who)} user(s) hold it).",
                "key": r["key"],
                "role": r["name"],
                "users": who,
                "count": len(who),
            }
        )
    return _findings(rows)


#: The audits of :func:`run_all`, by name.
AUDITS: dict[str, Callable[..., pd.DataFrame]] = {
    "unreviewed_sensitive": unreviewed_sensitive,
    "sensitive_exposure": sensitive_exposure,
    "undocumented": undocumented,
    "stale_profiles": stale_profiles,
    "pending_suggestions": pending_suggestions,
    "orphan_tags": orphan_tags,
    "user_role_hygiene": user_role_hygiene,
}


def run_all(
    source: Any, *, audits: Iterable[str] | None = None, now: Any = None, **options: Any
) -> pd.DataFrame:
    """Run every audit (or those named in ``audits``) on ``source`` and gather the findings,
    most severe first. Each frame is read once and shared.

    ``options`` are the audits' keyword arguments (``stale_days``, ``old_days``,
    ``min_age_days``, ``max_admins``, ``sensitivities``, ``include_suggested``); each audit
    gets those it takes. An option no audit takes raises :class:`TypeError`.

    Example::

        audit.run_all(cat, stale_days=30, max_admins=2).severity.value_counts()
    """
    names = list(AUDITS) if audits is None else list(audits)
    unknown = [n for n in names if n not in AUDITS]
    if unknown:
        raise ValueError(f"unknown audit(s) {', '.join(unknown)}; expected {', '.join(AUDITS)}")
    known = {p for f in AUDITS.values() for p in inspect.signature(f).parameters} - {"source"}
    stray = sorted(set(options) - known)
    if stray:
        raise TypeError(f"no audit takes {', '.join(stray)}; options: {', '.join(sorted(known))}")
    frames = frames_of(source, now)
    results = []
    for name in names:
        function = AUDITS[name]
        accepted = inspect.signature(function).parameters
        results.append(function(frames, **{k: v for k, v in options.items() if k in accepted}))
    return _findings(row for frame in results for row in _records(frame))
