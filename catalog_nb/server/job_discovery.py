"""The tag discovery part of jobs: DISCOVER jobs, and the discovery that ends a PROFILE job.

:class:`DiscoverySteps` is mixed into :class:`catalog_nb.server.job_work.ClaimedJob`.

* A **DISCOVER** job reads nothing from the source: it runs tag discovery
  (:mod:`catalog_nb.server.discovery.runner`) over the stored resources at or under
  ``resourcePath`` (all of the source's without one). Its ``counts`` count resources like other
  jobs - ``updated`` (some suggestion created, changed or withdrawn), ``unchanged``,
  ``skipped`` (no profiled fields: never profiled, collection members) and ``errors`` (a tag
  skipped on one of its fields) - plus the discovery counts (``suggestionsCreated``,
  ``suggestionsUpdated``, ``suggestionsUnchanged``, ``suggestionsWithdrawn``, ``rejectedKept``,
  ``acceptedKept``, ``fieldsExamined``, ``resourcesExamined``, ``discoveryErrors``).
* Both end with join and lineage discovery across the catalog
  (:mod:`catalog_nb.server.discovery.relations`): a DISCOVER job recomputes every relationship,
  a PROFILE job only those of the resources it profiled (incremental), unless
  ``relations_after_profile`` is off.
* A **PROFILE** job ends with discovery over what it profiled, and over the resources of its
  scope profiled since their last discovery (a job stopped in between). Its resource counts stay
  those of profiling; the discovery counts are added, discovery's errors join the job's errors
  and its summary the job's message. A failure of discovery never fails the profiling job.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from catalog_nb.server.discovery import DiscoveryReport, discover
from catalog_nb.server.discovery.relations import discover_relations
from catalog_nb.server.discovery.runner import COUNT_NAMES as DISCOVERY_COUNTS
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import discovery as discovery_store

log = logging.getLogger(__name__)

#: Most errors one job keeps (the count goes on).
MAX_ERRORS = 1000


class JobFailed(Exception):
    """The job cannot go on; the message is shown as the job's ``message``."""


class JobStopped(Exception):
    """The worker was asked to stop between two resources."""


class DiscoverySteps:
    """Discovery steps of a job; the attributes and helpers are those of ``ClaimedJob``."""

    store: Store
    settings: Settings
    key: str
    source: dict[str, Any]
    tally: Any
    _profiled: set[str]

    if TYPE_CHECKING:
        @property
        def _name(self) -> str: ...
        def _scope(self) -> tuple[str | None, str]: ...
        def _check_stop(self) -> None: ...
        def _flush(self, force: bool = False) -> None: ...
        def _report(self, path: str | None) -> None: ...

    def _in_scope(self) -> list[dict[str, Any]]:
        """The source's stored resources at or under the job's ``resourcePath``."""
        scope, sep = self._scope()
        with self.store.read() as conn:
            rows = discovery_store.source_resources(conn, str(self.source["key"]))
        return [r for r in rows
                if scope is None or r["path"] == scope or r["path"].startswith(scope + sep)]

    def _discover(self, targets: list[dict[str, Any]], on_resource: Callable[[str], None]
                  ) -> DiscoveryReport:
        report = discover(self.store, self.settings, targets, run_id=self.key,
                          check_stop=self._check_stop, on_resource=on_resource)
        self.tally.counts.update({name: report.counts[name] for name in DISCOVERY_COUNTS})
        room = MAX_ERRORS - len(self.tally.errors)
        self.tally.errors.extend(report.errors[:max(room, 0)])
        return report

    def _discover_job(self) -> str:
        """DISCOVER: tag discovery over the resources in the job's scope."""
        targets = self._in_scope()
        scope = self._scope()[0]
        if scope is not None and not targets:
            raise JobFailed(f"There is no resource at '{scope}' in data source '{self._name}'.")
        self.tally.total = len(targets)
        self._flush(force=True)

        def step(path: str) -> None:
            self.tally.done += 1
            self._flush()
            self._report(path)

        report = self._discover(targets, step)
        counts = self.tally.counts
        counts["updated"], counts["unchanged"] = len(report.changed), len(report.unchanged)
        counts["skipped"], counts["errors"] = len(report.skipped), len(report.failed)
        where = f" under '{scope}'" if scope else ""
        unprofiled = f", {len(report.skipped)} without profiled fields" if report.skipped else ""
        return (f"Data source '{self._name}'{where}: {len(targets)} resources{unprofiled}. "
                + report.summary())

    def _discover_after_profile(self) -> str:
        """Discovery at the end of a PROFILE job (see the module docstring)."""
        targets = [
            r for r in self._in_scope()
            if r["key"] in self._profiled or (
                r["time_of_last_profile"] is not None
                and (discovery_store.last_discovered(r["detailed_status"]) or 0)
                < r["time_of_last_profile"])
        ]
        try:
            report = self._discover(targets, self._report)
        except JobStopped:
            raise
        except Exception as exc:
            log.exception("tag discovery after profiling failed in job %s", self.key)
            self.tally.errors.append({"path": None, "message": f"Tag discovery failed: {exc}"})
            return "Tag discovery failed; see the job's errors."
        return report.summary()

    def _discover_relations(self, changed: set[str] | None = None) -> str:
        """Joins and lineage across the catalog (see :mod:`...discovery.relations`): all of
        them, or incrementally for the ``changed`` resources (what a PROFILE job profiled).

        Their counts join the job's; a failure is one of the job's errors, never its end.
        """
        try:
            report = discover_relations(self.store, self.settings, self._check_stop, changed)
        except JobStopped:
            raise
        except Exception as exc:
            log.exception("relationship discovery failed in job %s", self.key)
            self.tally.errors.append({"path": None, "message": f"Join and lineage discovery "
                                                              f"failed: {exc}"})
            return "Join and lineage discovery failed; see the job's errors."
        self.tally.counts.update(report.counts)
        room = MAX_ERRORS - len(self.tally.errors)
        self.tally.errors.extend(report.errors[:max(room, 0)])
        return report.summary()
