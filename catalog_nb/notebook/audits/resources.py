"""Audits of data resources: missing descriptions or owners, and stale or failed profiles.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from catalog_nb.notebook.audits.findings import (
    ago,
    as_utc,
    days_since,
    findings_frame,
    frames_of,
    place_of,
    present,
    rows_of,
)

__all__ = ["stale_profiles", "undocumented"]


def undocumented(source: Any) -> pd.DataFrame:
    """Data resources without a description or without an owner.

    Severity: medium when both are missing, low when one is.

    Example::

        audit.undocumented(cat).groupby("source").size()
    """
    frames = frames_of(source)
    rows = []
    for r in rows_of(frames.get("resources")):
        missing = [what for what in ("description", "owner") if not present(r[what])]
        if not missing:
            continue
        rows.append(
            {
                "audit": "undocumented",
                "severity": "medium" if len(missing) == 2 else "low",
                "object_type": "resource",
                "object": place_of(r),
                "detail": f"{place_of(r)} has no {' and no '.join(missing)}: people finding it "
                "cannot tell what it holds or whom to ask.",
                "key": r["key"],
                "source": r["source"],
                "path": r["path"],
                "count": len(missing),
            }
        )
    return findings_frame(rows)


def stale_profiles(source: Any, *, stale_days: float = 90, now: Any = None) -> pd.DataFrame:
    """Profiling errors (high), resources never profiled, changed since their profile or
    missing at the source (medium), and profiles older than ``stale_days`` (low).

    Example::

        audit.stale_profiles(cat, stale_days=30).query("severity == 'high'")
    """
    if stale_days < 0:
        raise ValueError("stale_days must be 0 or more")
    frames = frames_of(source, now)
    resources = rows_of(frames.get("resources"))
    # The member files of a collection are profiled as the collection, never one by one.
    collections = [(r["source"], f"{r['path']}/") for r in resources if r["type"] == "collection"]
    rows = []
    for r in resources:
        age = days_since(frames.now, r["profiled"])
        where = place_of(r)
        member = any(r["source"] == s and str(r["path"]).startswith(p) for s, p in collections)
        if r["state"] == "ERROR" or r["status"] == "ERROR":
            why = r["error"] if present(r["error"]) else "no message"
            severity, text = "high", f"Profiling {where} failed: {why}."
        elif r["status"] == "MISSING":
            severity, text = "medium", f"{where} was not found at its source any more."
        elif age is None and member:
            continue
        elif age is None:
            severity, text = "medium", f"{where} was never profiled: it has no statistics."
        elif present(r["modified"]) and as_utc(r["modified"]) > as_utc(r["profiled"]):
            severity = "medium"
            text = f"{where} changed after it was last profiled; its statistics are out of date."
        elif age > stale_days:
            severity = "low"
            text = f"{where} was last profiled {ago(age)} (more than {stale_days:g} days ago)."
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
    return findings_frame(rows)
