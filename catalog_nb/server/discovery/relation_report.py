"""What one step of relationship discovery (view lineage, file lineage, joins) reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class StepReport:
    """Counts, per-resource errors and a one-sentence summary of one discovery step.

    ``errors`` items are ``{"path": <resource path or None>, "message": str}`` like a job's.
    ``touched``: in an incremental run, resources beyond the changed ones whose relationships
    this step rewrote (a copy edge gone): the later steps recompute them too.
    """

    counts: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""
    touched: set[str] = field(default_factory=set)
