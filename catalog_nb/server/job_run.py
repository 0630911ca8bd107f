"""Running one claimed job to its end: the part the service's workers (threads or job processes,
``server.jobs`` / ``server.job_process``) and ``catalog-nb profile`` share.

What a job does is in :mod:`catalog_nb.server.job_work`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from catalog_nb.contract import JobState
from catalog_nb.server.errors import ServiceError
from catalog_nb.server.job_work import (
    REQUEUED_MESSAGE,
    ClaimedJob,
    JobFailed,
    JobStopped,
    ProgressHook,
)
from catalog_nb.server.profiling.connect import redact
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store import maintenance
from catalog_nb.server.store.engine import Store

__all__ = ["refresh_statistics", "run_job"]

#: The log of ``server.jobs``, where these lines were written before the module was split off.
log = logging.getLogger("catalog_nb.server.jobs")


def run_job(
    store: Store,
    settings: Settings,
    key: str,
    *,
    enforce_roots: bool = True,
    should_stop: Callable[[], bool] = lambda: False,
    on_progress: ProgressHook | None = None,
    worker: str | None = None,
    claimed: bool = False,
) -> dict[str, Any] | None:
    """Claim and run the QUEUED job ``key`` to its end; returns its final row.

    ``worker`` names who runs it (the job's ``worker`` column). ``claimed``: the caller claimed
    the job already (``catalog-nb worker`` claims the next job and runs it in one step,
    ``store.jobs.claim_next``); it is run if still RUNNING.

    Returns None when the job was not QUEUED (another worker has it; with ``claimed``, when it is
    no longer RUNNING: a stale sweep took it), and the QUEUED row again when ``should_stop``
    asked the job to stop. Never raises for a failing source or resource: the job ends FAILED
    with a message instead.
    """
    with store.write() as conn:
        if claimed:
            job = job_store.find(conn, key)
            if job is None or job["state"] != JobState.RUNNING.value:
                return None
        else:
            if not job_store.claim(conn, key, worker):
                return None
            job = job_store.get(conn, key)
    log.info("job %s: %s of data source %s started%s", key, job["job_type"],
             job["data_source_name"], f" by {worker}" if worker else "")
    run = ClaimedJob(store, settings, job, enforce_roots=enforce_roots, should_stop=should_stop,
               on_progress=on_progress)
    state = JobState.SUCCEEDED
    try:
        message = run.run()
    except JobStopped:
        with store.write() as conn:
            job_store.requeue(conn, key, REQUEUED_MESSAGE)
            return job_store.get(conn, key)
    except (JobFailed, ServiceError) as exc:
        state = JobState.FAILED
        message = str(getattr(exc, "message", None) or exc)
    except Exception as exc:
        log.exception("job %s failed unexpectedly", key)
        state = JobState.FAILED
        message = f"The job stopped on an unexpected error: {type(exc).__name__}: {exc}"
    message = redact(message, str(run.source.get("uri") or ""))
    values = run.tally.values()
    if state is JobState.SUCCEEDED:
        values["progress"] = 1.0
    if run.tally.done >= maintenance.LARGE_JOB:
        # Before the job is seen to end: whoever waited for it searches with fresh statistics.
        refresh_statistics(store, key)
    with store.write() as conn:
        job_store.finish(conn, key, state, message, **values)
        final = job_store.get(conn, key)
    log.info("job %s %s: %s", key, state.value, message)
    return final


def refresh_statistics(store: Store, key: str) -> None:
    """After a job that recorded many resources, the tables it grew are analysed again, so that
    searches keep starting from their matches (``store/maintenance.py``). Never fails the job."""
    try:
        analysed = maintenance.after_bulk_write(store)
    except Exception:
        log.warning("job %s: the planner's statistics were not refreshed", key, exc_info=True)
        return
    if analysed:
        log.info("job %s: planner statistics refreshed for %s", key, ", ".join(analysed))
