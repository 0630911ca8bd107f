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

The audits live in one module per kind of check: :mod:`.sensitive`, :mod:`.resources`,
:mod:`.tagging`, :mod:`.access`; what they share in :mod:`.findings`.

Example::

    from catalog_nb.notebook import audit

    findings = audit.run_all(cat, stale_days=30)
    findings.query("severity == 'high'")[["audit", "object", "detail"]]
    audit.sensitive_exposure(catalog_nb.open_snapshot("snapshots/q1"))
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

import pandas as pd

from catalog_nb.notebook.audits.access import user_role_hygiene
from catalog_nb.notebook.audits.findings import (
    FINDING_COLUMNS,
    SENSITIVE,
    SEVERITIES,
    Frames,
    findings_frame,
    frames_of,
    rows_of,
)
from catalog_nb.notebook.audits.resources import stale_profiles, undocumented
from catalog_nb.notebook.audits.sensitive import sensitive_exposure, unreviewed_sensitive
from catalog_nb.notebook.audits.tagging import orphan_tags, pending_suggestions

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
    return findings_frame(row for frame in results for row in rows_of(frame))
