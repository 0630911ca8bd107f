"""Relationship discovery across the whole catalog: view lineage, file lineage and joins.

Relationships span data sources (a CSV extract of a table, a file keyed by a table's ids), so
each run compares against every profiled resource. A full run (a DISCOVER job) recomputes
every relationship; an incremental run (the end of a PROFILE job) is given the resources that
changed and recomputes only the joins with a side in them and the lineage they may take part
in, comparing their sketches with the rest of the catalog through the sketch index
(:mod:`.sketch_index`); relationships between unchanged resources stay as stored. What an
incremental run cannot see - a change of the discovery settings, a tag people added that
makes a field a personal attribute, a hash that became too common to pair two unchanged
fields - waits for the next full run. View lineage parses view definitions, not sketches, and
is always recomputed whole. A step of an incremental run may widen the changed set for the
steps after it (``StepReport.touched``): file lineage names both ends of every edge it
rewrote, since join discovery merges copies along those edges. Each step writes what it found
in one transaction, so readers see the old answer or the new one. A step that fails is
reported and the others still run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Set
from dataclasses import dataclass, field
from typing import Any

from catalog_nb.server.discovery import file_lineage, joins, sketch_index, view_lineage
from catalog_nb.server.discovery.relation_report import StepReport
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import sketches as sketch_store

log = logging.getLogger(__name__)

#: Share of the profiled resources above which a changed set is rediscovered in full.
FULL_SHARE = 0.25

Step = Callable[[Store, Settings, Set[str] | None], StepReport]


def _views(store: Store, settings: Settings, _changed: Set[str] | None = None) -> StepReport:
    return view_lineage.refresh(store, settings)


#: The steps in order: views first, since their lineage is certain.
STEPS: tuple[tuple[str, Step], ...] = (
    ("view lineage", _views),
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


def _profiled(store: Store) -> int:
    with store.read() as conn:
        return sketch_store.profiled_count(conn)


def discover_relations(store: Store, settings: Settings,
                       check_stop: Callable[[], None] | None = None,
                       changed: Set[str] | None = None) -> RelationsReport:
    """Run every step over the whole catalog, or incrementally for the ``changed`` resources
    (keys; see the module docstring); ``check_stop`` is called between steps (it raises to
    stop)."""
    report = RelationsReport()
    if changed is not None and len(changed) > FULL_SHARE * _profiled(store):
        changed = None  # most of the catalog changed: comparing all at once is cheaper
    if changed is None:
        # A full rerun trusts nothing it holds: every sketch is read again.
        sketch_index.forget(store)
    for name, step in STEPS:
        if check_stop is not None:
            check_stop()
        try:
            found = step(store, settings, changed)
        except Exception as exc:
            log.exception("%s discovery failed", name)
            report.errors.append({"path": None, "message": f"{name.capitalize()} discovery "
                                                          f"failed: {exc}"})
            report.summaries.append(f"{name.capitalize()} discovery failed.")
            continue
        if changed is not None and found.touched:
            changed = set(changed) | found.touched
        report.counts.update(found.counts)
        report.errors.extend(found.errors)
        report.summaries.append(found.summary)
    return report
