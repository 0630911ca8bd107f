"""Jobs: browse and profile data sources, follow them with a progress bar, list them.

``profile(source)`` posts a PROFILE job and, with ``wait=True`` (the default), polls
``GET /job/{key}`` until the job ends, showing a ``tqdm.auto`` bar: in bytes of the files (rows
of the tables) read of their total (``workTotal``/``workDone``) when the service counts them,
else in resources (``total``/``done``). A job that ends ``FAILED`` raises
:class:`~catalog_nb.client.errors.JobFailedError` with the job's message; waiting longer than
``timeout`` raises :class:`~catalog_nb.client.errors.JobTimeoutError` (the job keeps running on
the service). A job that SUCCEEDS but could not read some resources warns with their paths.

Example::

    job = cat.profile("demo_files")
    job["state"], job["resources_created"]
    cat.jobs(state="FAILED")
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.errors import JobFailedError, JobTimeoutError
from catalog_nb.client.frame_display import JobSeries
from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.paging import caller_stacklevel, check_limit, progress_bar, warn_truncated
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.resources.sources import SourceRef, resolve_source

__all__ = ["DEFAULT_JOB_LIMIT", "JOB_COLUMNS", "JOB_LIST_MAX", "JobsMixin", "job_series"]

#: Default ``limit`` of :meth:`JobsMixin.jobs` (the service's default too).
DEFAULT_JOB_LIMIT = contract.JOB_LIST_DEFAULT
#: Largest ``limit`` the service accepts on ``GET /job``.
JOB_LIST_MAX = contract.JOB_LIST_MAX
#: Longest pause between two polls of a running job, in seconds (the first pauses are shorter).
DEFAULT_POLL_INTERVAL = 1.0
_FIRST_POLL = 0.1
_DONE = frozenset({contract.JobState.SUCCEEDED.value, contract.JobState.FAILED.value})

#: Columns of :meth:`JobsMixin.jobs` (and the index of the Series of :meth:`JobsMixin.job`).
JOB_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("job_type", "string", "jobType"),
    Column("source", "string", "dataSourceName"),
    Column("source_key", "string", "dataSourceKey"),
    Column("resource_path", "string", "resourcePath"),
    Column("state", "string"),
    Column("progress", "float"),
    Column("total", "int"),
    Column("done", "int"),
    Column("resources_created", "int", "counts.created"),
    Column("resources_updated", "int", "counts.updated"),
    Column("resources_unchanged", "int", "counts.unchanged"),
    Column("resources_skipped", "int", "counts.skipped"),
    Column("resources_failed", "int", "counts.errors"),
    Column("errors", "list"),
    Column("message", "string"),
    Column("engine", "string"),
    Column("worker", "string"),
    Column("requested_by", "string", "requestedBy"),
    Column("requested", "time", "timeOfCreation"),
    Column("started", "time", "startTime"),
    Column("ended", "time", "endTime"),
)


def job_series(job: Mapping[str, Any]) -> JobSeries:
    """A job's JSON as a Series indexed by the :data:`JOB_COLUMNS` names, whose reprs show
    the job's message whole (:class:`~catalog_nb.client.frame_display.JobSeries`)."""
    series = JobSeries(to_frame([job], JOB_COLUMNS).iloc[0])
    series.name = job.get("key")
    return series


def _failure(job: Mapping[str, Any]) -> JobFailedError:
    what = f"The {str(job.get('jobType') or 'job').lower()} job {job.get('key')}"
    where = f" of data source {job.get('dataSourceName')}" if job.get("dataSourceName") else ""
    reason = job.get("message") or "the service gave no reason"
    return JobFailedError(f"{what}{where} failed: {reason}", job=dict(job))


def _warn_errors(job: Mapping[str, Any]) -> None:
    errors = list(job.get("errors") or [])
    count = int((job.get("counts") or {}).get("errors") or len(errors))
    if not count:
        return
    shown = "; ".join(f"{e.get('path')}: {e.get('message')}" for e in errors[:3])
    more = f" (and {count - 3} more)" if count > 3 else ""
    warnings.warn(
        f"The {str(job.get('jobType')).lower()} job {job.get('key')} succeeded, but {count} "
        f"resource(s) could not be read: {shown}{more}. They are marked resourceState ERROR; "
        "see cat.resources(state='ERROR').",
        UserWarning,
        stacklevel=caller_stacklevel(),
    )


class JobsMixin(CatalogPart):
    """Job frames, browse and profile; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    def _source_key_of(self, source: SourceRef) -> str:
        return str(resolve_source(self.api, source)["key"])

    # -- reads ---------------------------------------------------------------------------------

    @overload
    def jobs(
        self,
        state: str | contract.JobState | None = ...,
        source: SourceRef | None = ...,
        limit: int = ...,
        *,
        as_frame: Literal[True] = ...,
    ) -> pd.DataFrame: ...
    @overload
    def jobs(
        self,
        state: str | contract.JobState | None = ...,
        source: SourceRef | None = ...,
        limit: int = ...,
        *,
        as_frame: Literal[False],
    ) -> list[dict[str, Any]]: ...
    def jobs(
        self,
        state: str | contract.JobState | None = None,
        source: SourceRef | None = None,
        limit: int = DEFAULT_JOB_LIMIT,
        *,
        as_frame: bool = True,
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Jobs, newest first: all, or those in ``state`` / of data source ``source``.

        Columns: key, job_type, source, source_key, resource_path, state, progress (0..1),
        total, done, resources_created, resources_updated, resources_unchanged,
        resources_skipped, resources_failed, errors (list of ``{path, message}``), message,
        engine (``local`` or ``spark``), worker (the process that ran it), requested_by,
        requested, started, ended (UTC datetimes). At most ``limit`` rows
        (1..1000); a :class:`TruncatedResultWarning` says when there are more.

        Example::

            cat.jobs(state="FAILED")[["source", "message", "ended"]]
        """
        check_limit(limit, "every job", maximum=JOB_LIST_MAX)
        source_key = None if source is None else self._source_key_of(source)
        wanted_state = None if state is None else str(state).upper()
        records = self.api.list_jobs(wanted_state, source_key, min(limit + 1, JOB_LIST_MAX))
        if len(records) > limit or len(records) >= JOB_LIST_MAX:
            more = "more than" if len(records) > limit else "possibly more than"
            records = records[:limit]
            warn_truncated("jobs", shown=len(records), total=f"{more} {len(records)}", noun="jobs",
                           because=f"limit={limit}", order="newest",
                           remedy=f"pass a larger limit= (up to {JOB_LIST_MAX}) or filter by "
                           "state= or source=")
        return to_frame(records, JOB_COLUMNS) if as_frame else records

    @overload
    def job(self, key: str, *, as_frame: Literal[True] = ...) -> pd.Series: ...
    @overload
    def job(self, key: str, *, as_frame: Literal[False]) -> dict[str, Any]: ...
    def job(self, key: str, *, as_frame: bool = True) -> pd.Series | dict[str, Any]:
        """One job, as a Series with the :data:`JOB_COLUMNS` index (``as_frame=False``: JSON).

        Example::

            cat.job(key)[["state", "done", "total", "message"]]
        """
        record: dict[str, Any] = self.api.get_job(key)
        return job_series(record) if as_frame else record

    # -- running -------------------------------------------------------------------------------

    def browse(
        self,
        source: SourceRef,
        *,
        wait: bool = True,
        timeout: float | None = None,
        progress: bool | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        as_frame: bool = True,
    ) -> pd.Series | dict[str, Any]:
        """Browse a data source: find its resources and record the cheap facts (no reading).

        Arguments and result as in :meth:`profile`.

        Example::

            cat.browse("demo_files")["resources_created"]
        """
        return self.run_job(
            contract.JobType.BROWSE,
            source,
            wait=wait,
            timeout=timeout,
            progress=progress,
            poll_interval=poll_interval,
            as_frame=as_frame,
        )

    def profile(
        self,
        source: SourceRef,
        path: str | None = None,
        *,
        engine: str | contract.JobEngine | None = None,
        wait: bool = True,
        timeout: float | None = None,
        progress: bool | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        as_frame: bool = True,
    ) -> pd.Series | dict[str, Any]:
        """Profile a data source (or the resources at or under ``path`` in it).

        Posts a PROFILE job (it browses first; unchanged resources are skipped). With ``wait``
        it follows the job with a progress bar until it ends and returns the final job as a
        Series (see :meth:`job`; ``as_frame=False``: the JSON); without, it returns the job
        as queued. ``engine``: ``"local"`` or ``"spark"`` (None: the data source's default).

        Raises:
            JobFailedError: the job ended FAILED (``exc.message`` says why, ``exc.job`` is it).
            JobTimeoutError: it still ran after ``timeout`` seconds; it keeps running on the
                service (follow it with ``cat.job(exc.job["key"])``).

        Example::

            cat.profile("demo_files")
            cat.profile("demo_files", "sales/orders", timeout=600)
            cat.profile("lake", engine="spark")
        """
        return self.run_job(
            contract.JobType.PROFILE,
            source,
            path,
            engine=engine,
            wait=wait,
            timeout=timeout,
            progress=progress,
            poll_interval=poll_interval,
            as_frame=as_frame,
        )

    def run_job(
        self,
        job_type: str | contract.JobType,
        source: SourceRef,
        path: str | None = None,
        *,
        engine: str | contract.JobEngine | None = None,
        wait: bool = True,
        timeout: float | None = None,
        progress: bool | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
        as_frame: bool = True,
    ) -> pd.Series | dict[str, Any]:
        """Post a job of ``job_type`` (BROWSE, PROFILE...) and optionally wait for it
        (``engine``: what computes a PROFILE job, see :meth:`profile`)."""
        if timeout is not None and timeout < 0:
            raise ValueError("timeout must not be negative")
        job: dict[str, Any] = self.api.create_job(
            str(job_type).upper(), self._source_key_of(source), path,
            None if engine is None else str(engine).lower(),
        )
        if wait:
            job = self.wait_for_job(
                job, timeout=timeout, progress=progress, poll_interval=poll_interval
            )
        return job_series(job) if as_frame else job

    def wait_for_job(
        self,
        job: str | Mapping[str, Any],
        *,
        timeout: float | None = None,
        progress: bool | None = None,
        poll_interval: float = DEFAULT_POLL_INTERVAL,
    ) -> dict[str, Any]:
        """Poll a job (its key or JSON) until it ends; returns its final JSON.

        Raises :class:`JobFailedError` when it FAILS and :class:`JobTimeoutError` after
        ``timeout`` seconds (``None``: wait as long as it runs).

        Example::

            job = cat.profile("demo_files", wait=False)
            cat.wait_for_job(job["key"], timeout=60)
        """
        current: dict[str, Any] = self.api.get_job(job) if isinstance(job, str) else dict(job)
        key = str(current.get("key"))
        started = time.monotonic()
        pause = min(_FIRST_POLL, poll_interval)
        show = self.progress if progress is None else progress
        bar: Any = None
        try:
            while current.get("state") not in _DONE:
                if show and bar is None:
                    what = str(current.get("jobType") or "job").lower()
                    bar = progress_bar(
                        _measure(current)[0],
                        f"{what} {current.get('dataSourceName') or ''}".strip(),
                        unit=" resources",
                    )
                _advance(bar, current)
                waited = time.monotonic() - started
                if timeout is not None and waited >= timeout:
                    raise JobTimeoutError(
                        f"Job {key} is still {current.get('state')} after {timeout:g}s "
                        f"({current.get('done') or 0} of {current.get('total') or '?'} done). "
                        f"It keeps running on the service: follow it with cat.job({key!r}) or "
                        f"cat.wait_for_job({key!r}).",
                        job=current,
                    )
                if timeout is not None:
                    pause = min(pause, max(timeout - waited, 0.0))
                time.sleep(pause)
                pause = min(pause * 1.5, poll_interval) or poll_interval
                current = self.api.get_job(key)
            _advance(bar, current)
        finally:
            if bar is not None:
                bar.close()
        if current.get("state") == contract.JobState.FAILED.value:
            raise _failure(current)
        _warn_errors(current)
        return current


#: The bar's look for each unit the service counts a job's work in.
_UNITS = {"bytes": ("B", 1024), "rows": (" rows", 1000)}


def _measure(job: Mapping[str, Any]) -> tuple[int | None, int]:
    """A job's (total, done): bytes or rows read when the service counts them, else resources."""
    if job.get("workUnit") in _UNITS and job.get("workTotal"):
        return int(job["workTotal"]), int(job.get("workDone") or 0)
    return (int(job["total"]) if job.get("total") else None), int(job.get("done") or 0)


def _advance(bar: Any, job: Mapping[str, Any]) -> None:
    """Move a progress bar to the job's done of its total (see :func:`_measure`)."""
    if bar is None:
        return
    total, done = _measure(job)
    unit = _UNITS.get(str(job.get("workUnit")))
    if unit is not None and job.get("workTotal") and bar.unit != unit[0]:
        # the service counts bytes (rows) once it has browsed: the bar starts again in them
        bar.unit, bar.unit_scale, bar.unit_divisor = unit[0], True, unit[1]
        bar.reset(total=total)
    if total and bar.total != total:
        bar.total = total
        bar.refresh()
    if done > bar.n:
        bar.update(done - bar.n)
