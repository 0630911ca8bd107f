"""Audits of tagging: suggestions waiting for review, and tags (or domains) nothing uses.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from catalog_nb.notebook.audits.findings import (
    ago,
    confidence,
    days_since,
    findings_frame,
    frames_of,
    place_of,
    present,
    rows_of,
)

__all__ = ["orphan_tags", "pending_suggestions"]


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
    for r in rows_of(assoc[assoc["state"] == "SUGGESTED"]):
        age = days_since(frames.now, r["created"])
        if age is not None and age < min_age_days:
            continue
        sure = confidence(r["weight"])
        by = f" by {r['created_by']}" if present(r["created_by"]) else ""
        rows.append(
            {
                "audit": "pending_suggestions",
                "severity": "medium" if age is not None and age >= old_days else "low",
                "object_type": "association",
                "object": f"{place_of(r)} -> {r['tag']}",
                "detail": f"{r['tag']} was suggested{by} {ago(age)} for {place_of(r)}"
                f"{'' if sure is None else f' ({sure})'} and is still not reviewed: "
                "accept or reject it.",
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
    return findings_frame(rows)


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
            current = str(parent) if present(parent) else None
    rows = []
    for t in rows_of(tags):
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
    for d in rows_of(frames.get("tag_domains")):
        if per_domain.get(d["key"], 0) or (present(d["tag_count"]) and d["tag_count"] > 0):
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
    return findings_frame(rows)
