"""What one browse, profile or discover job does (run by
:func:`catalog_nb.server.job_run.run_job`).

What a job does:

1. **Claim** the QUEUED job (atomically: two processes on one store never run the same job).
2. **Browse** the source: a FILE source's folder (checked again against the data roots) with
   ``profiling.browse``, an SQL source with ``profiling.browse_sql``; the include and exclude
   patterns select paths (for SQL, ``schema.table`` or the bare table name). A source that cannot
   be read FAILS the job with a message that never holds a password.
3. **Record** what browsing found with ``ingest.record_browsed`` (collection members included),
   in transactions of at most ``BATCH`` resources, then ``ingest.mark_missing`` for what is gone.
   A profiled file whose size or modification time changed keeps its profiled size and time until
   it is profiled again, so an interrupted job never lets stale statistics pass as current.
4. **Profile** (PROFILE jobs) every resource, or those at/under ``resourcePath`` (``/``-separated
   folders for files, ``schema`` or ``schema.table`` for SQL): unchanged files (same size and
   modification time as when last profiled) are skipped; a collection is profiled as one resource
   and its members count as ``skipped`` (a member named by ``resourcePath`` is profiled on its
   own). Each resource is read outside any transaction and written in one short transaction
   together with the job's progress (a wide one's fields are staged first in short transactions
   and moved in by that one: ``store/staging.py``). A resource that cannot be profiled is
   recorded as ERROR and listed in the job's ``errors``; the job goes on and SUCCEEDS.

5. **Discover** tags (:mod:`catalog_nb.server.job_discovery`): a PROFILE job ends with tag
   discovery over what it profiled; a DISCOVER job runs it alone over the profiled resources at
   or under ``resourcePath``, without reading the source.

Counts: every resource of the job's scope lands in exactly one of ``created`` (new, and read
without error), ``updated`` (known before, and changed or profiled again), ``unchanged``,
``skipped`` (collection members) or ``errors``. Discovery adds its own counts
(``suggestionsCreated``...).

A RUNNING job's worker touches the job every ``job_heartbeat_seconds``; a RUNNING job silent for
``job_stale_seconds`` was left by a stopped process and becomes FAILED (at start-up and every
heartbeat). QUEUED jobs run at start-up. Stopping the service asks workers to stop between two
resources; their jobs go back to QUEUED and run again at the next start.
"""

from __future__ import annotations

import fnmatch
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from catalog_nb.contract import JobEngine, JobType, ResourceType, SourceType
from catalog_nb.server.errors import ServiceError
from catalog_nb.server.job_discovery import MAX_ERRORS, DiscoverySteps, JobFailed, JobStopped
from catalog_nb.server.job_spark import profile_on_spark
from catalog_nb.server.profiling import (
    ProfilingError,
    ResourceProfile,
    browse,
    browse_sql,
    profile_collection,
    profile_file,
    profile_table,
)
from catalog_nb.server.profiling.connect import redact, source_engine
from catalog_nb.server.profiling.locations import (
    ObjectFolder,
    describe_store_error,
    open_object_folder,
)
from catalog_nb.server.profiling.model import ReadProgress
from catalog_nb.server.profiling.object_uri import is_object_uri, parse_object_uri
from catalog_nb.server.profiling.sql import estimate_rows
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store, ingest, staging
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.common import now_ms

log = logging.getLogger(__name__)

#: Resources recorded per browse transaction.
BATCH = 200
#: Least seconds between two progress writes when nothing else is written.
PROGRESS_EVERY = 0.5
STALE_MESSAGE = "The service stopped while the job was running; run the job again."
REQUEUED_MESSAGE = (
    "The service stopped before the job finished; it runs again when the service starts."
)

#: Called after every step: (job key, done, total, path just handled or None).
ProgressHook = Callable[[str, int, int | None, str | None], None]


@dataclass
class _Tally:
    total: int | None = None
    done: int = 0
    counts: dict[str, int] = field(default_factory=job_store.empty_counts)
    errors: list[dict[str, Any]] = field(default_factory=list)
    # What ``progress`` measures when it is not resources: bytes of the files to profile.
    work_unit: str | None = None
    work_total: int | None = None
    work_done: int = 0

    def error(self, path: str | None, message: str) -> None:
        self.counts["errors"] += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append({"path": path, "message": message})

    def values(self) -> dict[str, Any]:
        if self.work_unit is not None and self.work_total:
            progress = min(1.0, self.work_done / self.work_total)
        else:
            progress = 0.0 if not self.total else min(1.0, self.done / self.total)
        work = ({"work_unit": self.work_unit, "work_total": self.work_total,
                 "work_done": min(self.work_done, self.work_total or self.work_done)}
                if self.work_unit is not None else {})
        return {"progress": progress, "total": self.total, "done": self.done,
                "counts": dict(self.counts), "errors": list(self.errors), **work}


def _selected(path: str, includes: list[str], excludes: list[str]) -> bool:
    def hit(pattern: str) -> bool:
        short = path.rsplit(".", 1)[-1]
        return fnmatch.fnmatchcase(path, pattern) or (
            "." not in pattern and fnmatch.fnmatchcase(short, pattern)
        )

    if includes and not any(hit(p) for p in includes):
        return False
    return not any(hit(p) for p in excludes)


def _same_facts(current: dict[str, Any], found: ResourceProfile) -> bool:
    """Whether browsing found what is stored (size and time for files, structure for SQL)."""
    if found.resource_size is not None or found.modified_ms is not None:
        return bool(
            current["resource_size"] == found.resource_size
            and current["time_of_resource_change"] == found.modified_ms
            and current["status"] != ingest.MISSING
        )
    stored = current.get("extra") or {}
    return bool(
        current["status"] != ingest.MISSING
        and current["resource_type"] == found.resource_type
        and all(stored.get(k) == v for k, v in found.extra.items())
    )


class ClaimedJob(DiscoverySteps):
    """One claimed job being run (see the module docstring)."""

    def __init__(
        self, store: Store, settings: Settings, job: dict[str, Any], *, enforce_roots: bool,
        should_stop: Callable[[], bool], on_progress: ProgressHook | None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.job = job
        self.key = str(job["key"])
        self.enforce_roots = enforce_roots
        self.should_stop = should_stop
        self.on_progress = on_progress
        self.tally = _Tally()
        self.source: dict[str, Any] = {}
        self.engine: Engine | None = None
        self.folder: Path | ObjectFolder | None = None
        self._flushed = 0.0
        self.missing = 0
        self._created: set[str] = set()
        self._changed: set[str] = set()
        self._profiled: set[str] = set()  # keys of the resources this job profiled

    # ------------------------------------------------------------------------------ running

    def run(self) -> str:
        with self.store.read() as conn:
            self.source = source_store.get_source(conn, str(self.job["data_source_key"]))
        if self.job["job_type"] == JobType.DISCOVER.value:
            # Metadata only: the source itself is not read.
            return self._discover_job() + " " + self._discover_relations()
        try:
            found = self._browse()
            members = self._record_browse(found)
            if self.job["job_type"] == JobType.PROFILE.value:
                message = self._profile_all(found, members)
                if self.settings.discovery_after_profile:
                    message += " " + self._discover_after_profile()
                if self.settings.relations_after_profile:
                    message += " " + self._discover_relations(self._profiled)
                return message
            return self._browse_message()
        finally:
            if self.engine is not None:
                self.engine.dispose()

    @property
    def _name(self) -> str:
        return str(self.source["name"])

    @property
    def _is_file(self) -> bool:
        return bool(self.source["source_type"] == SourceType.FILE.value)

    def _check_stop(self) -> None:
        if self.should_stop():
            raise JobStopped()

    def _browse(self) -> list[ResourceProfile]:
        includes = list(self.source["include_patterns"] or [])
        excludes = list(self.source["exclude_patterns"] or [])
        uri = str(self.source["uri"])
        if self._is_file and is_object_uri(uri):
            return self._browse_objects(uri, includes, excludes)
        if self._is_file:
            if self.enforce_roots:
                try:
                    self.folder = source_store.file_folder(uri, self.settings.data_roots)
                except ServiceError as exc:
                    raise JobFailed(
                        f"Cannot browse data source '{self._name}': {exc.message}"
                    ) from None
            else:
                self.folder = Path(uri).resolve()
            try:
                return browse(self.folder, includes, excludes)
            except ProfilingError as exc:
                raise JobFailed(f"Cannot browse data source '{self._name}': {exc}") from None
        roots = self.settings.data_roots if self.enforce_roots else None
        try:
            # Checked again here, not only at registration: the files may have been swapped
            # since (a link to the store, or out of the roots). The guard repeats the check on
            # every connection the job opens.
            source_store.sql_url(uri, self.settings.store_url, roots)
            guard = source_store.sqlite_guard(self.settings.store_url, roots)
            self.engine = source_engine(uri, guard=guard)
            found = browse_sql(self.engine)
        except ServiceError as exc:
            raise JobFailed(f"Cannot connect to data source '{self._name}': {exc.message}"
                            ) from None
        except (ProfilingError, ValueError) as exc:
            raise JobFailed(
                f"Cannot connect to data source '{self._name}': {redact(str(exc), uri)}"
            ) from None
        return [r for r in found if _selected(r.path, includes, excludes)]

    def _browse_objects(self, uri: str, includes: list[str],
                        excludes: list[str]) -> list[ResourceProfile]:
        """Browse an object-store source: its location checked again against the object roots
        (they may have changed since registration), then listed; a missing bucket, refused
        credentials or an unreachable store FAIL the job with a message without the secret."""
        try:
            if self.enforce_roots:
                source_store.object_uri(uri, self.settings.object_roots)
            self.folder = open_object_folder(uri)
        except ServiceError as exc:
            raise JobFailed(f"Cannot browse data source '{self._name}': {exc.message}") from None
        except ValueError as exc:
            raise JobFailed(
                f"Cannot browse data source '{self._name}': {redact(str(exc), uri)}") from None
        try:
            return browse(self.folder, includes, excludes)
        except OSError as exc:
            why = describe_store_error(exc, parse_object_uri(uri), uri)
            raise JobFailed(f"Cannot browse data source '{self._name}': {why}") from None

    def _record_browse(self, found: list[ResourceProfile]) -> set[str]:
        """Record every resource found; returns the paths of collection members."""
        source_key = str(self.source["key"])
        members = {m for r in found for m in r.members if m != r.path}
        browse_job = self.job["job_type"] == JobType.BROWSE.value
        if browse_job:
            self.tally.total = len(found) + len(members)
        seen: set[str] = set()
        for start in range(0, len(found), BATCH):
            self._check_stop()
            batch = found[start:start + BATCH]
            with self.store.write() as conn:
                for resource in batch:
                    self._record_one(conn, source_key, resource, browse_job)
                    seen.add(resource.path)
                    seen.update(resource.members)
                if browse_job:
                    job_store.update_job(conn, self.key, **self.tally.values())
            self._report(batch[-1].path)
        with self.store.write() as conn:
            self.missing = ingest.mark_missing(conn, source_key, seen)
        return members

    def _record_one(
        self, conn: Any, source_key: str, resource: ResourceProfile, browse_job: bool
    ) -> None:
        current = ingest.find(conn, source_key, resource.path)
        member_rows = {m: ingest.find(conn, source_key, m) for m in resource.members
                       if m != resource.path}
        self._created.update(m for m, row in member_rows.items() if row is None)
        if current is None:
            self._created.add(resource.path)
        elif not _same_facts(current, resource):
            self._changed.add(resource.path)
        ingest.record_browsed(conn, source_key, resource, run_id=self.key)
        if browse_job:
            self._count_browsed(current is None, resource.path in self._changed)
            for row in member_rows.values():
                self._count_browsed(row is None, row is not None and
                                    row["status"] == ingest.MISSING)

    def _count_browsed(self, created: bool, changed: bool) -> None:
        self.tally.counts["created" if created else "updated" if changed else "unchanged"] += 1
        self.tally.done += 1

    def _browse_message(self) -> str:
        c = self.tally.counts
        gone = f"; {self.missing} no longer found" if self.missing else ""
        return (
            f"Browsed data source '{self._name}': {self.tally.total} resources "
            f"({c['created']} new, {c['updated']} changed, {c['unchanged']} unchanged{gone})."
        )

    # ---------------------------------------------------------------------------- profiling

    def _scope(self) -> tuple[str | None, str]:
        raw = self.job["resource_path"]
        separator = "/" if self._is_file else "."
        if raw is None:
            return None, separator
        scope = str(raw).strip()
        if self._is_file:
            scope = scope.strip("/")
            scope = "" if scope == "." else scope
        return (scope or None), separator

    def _targets(
        self, found: list[ResourceProfile], members: set[str]
    ) -> tuple[list[ResourceProfile], int]:
        scope, sep = self._scope()

        def inside(path: str) -> bool:
            return scope is None or path == scope or path.startswith(scope + sep)

        targets = [r for r in found if inside(r.path)]
        skipped = sum(1 for r in targets for m in r.members if m != r.path)
        for collection in found:
            if inside(collection.path):
                continue
            for member in collection.members:
                if member != collection.path and member in members and inside(member):
                    targets.append(ResourceProfile(
                        path=member, name=member.rsplit("/", 1)[-1],
                        file_format=collection.file_format,
                    ))
        if scope is not None and not targets:
            raise JobFailed(
                f"There is no resource at '{scope}' in data source '{self._name}' (paths are "
                + ("relative to the source folder, e.g. 'sales/orders.csv')."
                   if self._is_file else "'schema' or 'schema.table').")
            )
        return targets, skipped

    def _profile_all(self, found: list[ResourceProfile], members: set[str]) -> str:
        source_key = str(self.source["key"])
        targets, skipped = self._targets(found, members)
        self.tally.total = len(targets) + skipped
        self.tally.done = skipped
        self.tally.counts["skipped"] = skipped
        # Progress in bytes of the files, or rows of the tables, to read: known before the
        # first is read (for tables, the database's own cheap estimate).
        sizes = ({t.path: t.resource_size or 0 for t in targets} if self._is_file
                 else self._row_estimates(targets))
        self.tally.work_unit = "bytes" if self._is_file else "rows"
        self.tally.work_total = sum(sizes.values())
        self._flush(force=True)
        for target in targets:
            self._check_stop()
            before = self.tally.work_done
            if self._is_file and target.path not in self._changed and (
                target.path not in self._created
            ):
                with self.store.read() as conn:
                    unchanged = ingest.is_unchanged(conn, source_key, target)
                if unchanged:
                    self.tally.counts["unchanged"] += 1
                    self.tally.done += 1
                    self.tally.work_done = before + sizes[target.path]
                    self._flush()
                    self._report(target.path)
                    continue
            started = now_ms()
            profile = self._profile(target, partial(self._read, before, sizes[target.path]))
            self.tally.work_done = before + sizes[target.path]
            # A wide profile's fields are staged in short transactions first, so the one that
            # records it (with the job's progress) stays short: logins wait behind it.
            staged = None
            if profile.state != ingest.ERROR and staging.is_wide(profile.fields):
                staged = staging.stage(self.store, profile.fields, self.key, self._check_stop)
            try:
                with self.store.write() as conn:
                    outcome = ingest.record_profile(conn, source_key, profile, run_id=self.key,
                                                    started_ms=started, staged=staged)
                    if profile.state == ingest.ERROR:
                        self.tally.error(profile.path, profile.error_msg or "cannot be profiled")
                    else:
                        self._profiled.add(outcome.key)
                        new = target.path in self._created
                        self.tally.counts["created" if new else "updated"] += 1
                    self.tally.done += 1
                    job_store.update_job(conn, self.key, **self.tally.values())
                    self._flushed = time.monotonic()
            finally:
                if staged is not None:
                    staging.discard(self.store, staged)
            self._report(target.path)
        c = self.tally.counts
        scope = self._scope()[0]
        where = f" under '{scope}'" if scope else ""
        parts = [f"{c['created']} new", f"{c['updated']} updated",
                 f"{c['unchanged']} unchanged (not read again)"]
        if c["skipped"]:
            parts.append(f"{c['skipped']} collection members (profiled with their collection)")
        parts.append(f"{c['errors']} {'error' if c['errors'] == 1 else 'errors'}")
        gone = f" {self.missing} resources are no longer found." if self.missing else ""
        return (
            f"Profiled {len(targets)} resources{where} of data source '{self._name}': "
            f"{', '.join(parts)}.{gone}"
        )

    def _row_estimates(self, targets: list[ResourceProfile]) -> dict[str, int]:
        """Each table's estimated rows (0 where the database has no cheap estimate)."""
        assert self.engine is not None
        found: dict[str, int] = {}
        for target in targets:
            schema, table = self._table_of(target)
            try:
                found[target.path] = estimate_rows(self.engine, schema, table) or 0
            except ProfilingError:
                found[target.path] = 0
        return found

    @staticmethod
    def _table_of(target: ResourceProfile) -> tuple[str, str]:
        schema = str(target.extra.get("dataSchemaName") or target.path.split(".", 1)[0])
        return schema, str(target.extra.get("tableName") or target.name)

    def _read(self, before: int, size: int, read: int) -> None:
        """``read`` bytes (rows) of the current resource, of about ``size``, read after
        ``before`` of the job's (called from the profiler's reading thread): progress,
        throttled. A stale row estimate never lets progress run past the resource's share."""
        self.tally.work_done = max(self.tally.work_done, before + min(read, size))
        try:
            self._flush()
        except Exception:  # a progress write never fails the resource being read
            log.warning("job %s: progress not written", self.key, exc_info=True)

    def _profile(self, target: ResourceProfile, on_read: ReadProgress) -> ResourceProfile:
        rows = self.settings.profile_sample_rows
        if self._is_file and self.job.get("engine") == JobEngine.SPARK.value:
            return profile_on_spark(self.settings, self.folder, target, rows, on_read)
        try:
            if self._is_file:
                assert self.folder is not None
                if target.resource_type == ResourceType.COLLECTION.value:
                    return profile_collection(target.path, root=self.folder,
                                              members=target.members, sample_rows=rows,
                                              on_read=on_read)
                return profile_file(target.path, root=self.folder, sample_rows=rows,
                                    on_read=on_read)
            assert self.engine is not None
            schema, table = self._table_of(target)
            return profile_table(self.engine, schema, table, sample_rows=rows, on_read=on_read)
        except ProfilingError as exc:
            if self._is_file:
                return replace(target, fields=[]).fail(str(exc))
            raise JobFailed(
                f"Lost the connection to data source '{self._name}': "
                f"{redact(str(exc), str(self.source['uri']))}"
            ) from None
        except Exception as exc:
            log.exception("profiling %s of job %s failed", target.path, self.key)
            message = redact(f"{type(exc).__name__}: {exc}", str(self.source["uri"]))
            return replace(target, fields=[]).fail(f"Unexpected error while profiling: {message}")

    # ------------------------------------------------------------------------------ progress

    def _flush(self, force: bool = False) -> None:
        if not force and time.monotonic() - self._flushed < PROGRESS_EVERY:
            return
        self._flushed = time.monotonic()  # first: a second thread must not write it twice
        with self.store.write() as conn:
            job_store.update_job(conn, self.key, **self.tally.values())

    def _report(self, path: str | None) -> None:
        if self.on_progress is not None:
            self.on_progress(self.key, self.tally.done, self.tally.total, path)


