"""Relationship discovery across the whole catalog: view lineage, file lineage and joins.

Relationships span data sources (a CSV extract of a table, a file keyed by a table's ids), so
each run looks at every profiled resource, not only at what one job profiled. Each step replaces
what it found before in one transaction, so readers see the old answer or the new one. A step
that fails is reported and the others still run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from catalog_nb.server.discovery import file_lineage, joins, view_lineage
from catalog_nb.server.discovery.relation_report import StepReport
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store

log = logging.getLogger(__name__)

Step = Callable[[Store, Settings], StepReport]

#: The steps in order: views first, since their lineage is certain.
STEPS: tuple[tuple[str, Step], ...] = (
    ("view lineage", view_lineage.refresh),
    ("file lineage", file_lineage.infer),
    ("joins", joins.discover),
)


@dataclass
class RelationsReport:
    """The steps' counts (prefixed by nothing: step count names are distinct) and errors."""

    counts: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the job's message."""
        return " ".join(s for s in self.summaries if s)


def discover_relations(store: Store, settings: Settings,
                       check_stop: Callable[[], None] | None = None) -> RelationsReport:
    """Run every step; ``check_stop`` is called between steps (it raises to stop)."""
    report = RelationsReport()
    for name, step in STEPS:
        if check_stop is not None:
            check_stop()
        try:
            found = step(store, settings)
        except Exception as exc:
            log.exception("%s discovery failed", name)
            report.errors.append({"path": None, "message": f"{name.capitalize()} discovery "
                                                          f"failed: {exc}"})
            report.summaries.append(f"{name.capitalize()} discovery failed.")
            continue
        report.counts.update(found.counts)
        report.errors.extend(found.errors)
        report.summaries.append(found.summary)
    return report
