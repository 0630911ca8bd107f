"""The name the tour notebooks and the README use: ``from catalog_nb.notebook import audit``.

The hygiene checks live in :mod:`catalog_nb.notebook.audits` (one module per kind of check);
this module gives them their public short name. It is not the audit *trail* of the service
(who did what, when), which is ``cat.audit_events()`` (:mod:`catalog_nb.client.audit_trail`).

Example::

    from catalog_nb.notebook import audit

    audit.run_all(cat, stale_days=30).query("severity == 'high'")
"""

from __future__ import annotations

from catalog_nb.notebook.audits import (
    AUDITS,
    FINDING_COLUMNS,
    SENSITIVE,
    SEVERITIES,
    Frames,
    orphan_tags,
    pending_suggestions,
    run_all,
    sensitive_exposure,
    stale_profiles,
    undocumented,
    unreviewed_sensitive,
    user_role_hygiene,
)

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
