"""``catalog-nb worker``: a process that runs jobs beside the service, on this machine or another.

A worker opens the store that ``catalog-nb serve`` (or several ``serve --no-jobs`` replicas)
use, and runs a :class:`~catalog_nb.server.jobs.JobRunner` with ``claims=True``: each of its
``jobs`` threads claims the oldest QUEUED job whose data source has no job RUNNING (on PostgreSQL
with ``FOR UPDATE SKIP LOCKED``, ``store/jobs.claim_next``), records the worker's name in the
job's ``worker`` column, and runs it in a job process of its own, heartbeating while it runs.
Every worker (and every service that runs jobs) also sweeps: a RUNNING job whose heartbeat
stopped (its worker died) is failed, and the fields it staged are removed.

SIGTERM or SIGINT stops the worker gracefully: its running jobs stop between two resources and go
back to QUEUED for another worker, as a stopped service's do.

Example::

    catalog-nb worker --db-url postgresql+psycopg://catalog@db/catalog --jobs 2 --name etl-1
"""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from types import FrameType

from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from catalog_nb.server.settings import Settings

__all__ = ["STOP_SECONDS", "WorkerError", "check_store", "run_worker",
           "where"]

log = logging.getLogger("catalog_nb.server.worker")

#: How long a stopping worker waits for its jobs to reach the end of a resource.
STOP_SECONDS = 10.0


class WorkerError(Exception):
    """The worker cannot start (its store is missing or unreachable); the message says why."""


def where(url: str) -> str:
    """The store's URL as a log line may show it (no password)."""
    return make_url(url).render_as_string(hide_password=True)


def check_store(url: str) -> None:
    """Refuse, with a sentence, a store a worker cannot run jobs from.

    A worker never creates a catalog: a SQLite file that does not exist is a mistyped path
    (opening it would make an empty catalog nobody queues jobs in), and a database without the
    catalog's schema has no jobs. ``catalog-nb serve`` creates the store.
    """
    from catalog_nb.server.store import Store
    from catalog_nb.server.store.migrations import current_version

    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise WorkerError("An in-memory store lives in one process: a worker needs the "
                              "store the service uses (--db-url or --data-dir).")
        if not Path(parsed.database).is_file():
            raise WorkerError(f"There is no catalog store at {parsed.database}; give the "
                              "--db-url or --data-dir of the service (catalog-nb serve creates "
                              "the store).")
    store = Store(url, pool_size=1, max_overflow=0, application_name="catalog-nb worker")
    try:
        with store.read() as conn:
            version = current_version(conn)
    except DBAPIError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else type(exc).__name__
        raise WorkerError(f"The store at {where(url)} cannot be reached: {reason}") from exc
    finally:
        store.dispose()
    if version is None:
        raise WorkerError(f"The store at {where(url)} holds no catalog; start catalog-nb serve "
                          "on it first (it creates the catalog).")


def run_worker(settings: Settings, *, jobs: int, name: str, poll_seconds: float,
               stop: threading.Event | None = None) -> None:
    """Run jobs from the store of ``settings`` with ``jobs`` at once until ``stop`` is set (or
    SIGTERM / SIGINT arrives, when called on the main thread); then stop them gracefully.

    Raises :class:`WorkerError` when the store cannot be used (see :func:`check_store`).
    """
    from catalog_nb.server import runtime_config
    from catalog_nb.server.jobs import JobRunner
    from catalog_nb.server.store import Store

    check_store(settings.store_url)
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        def stopping(signum: int, _frame: FrameType | None) -> None:
            log.info("worker %s: %s received, stopping after the current resources", name,
                     signal.Signals(signum).name)
            stop.set()

        signal.signal(signal.SIGTERM, stopping)
        signal.signal(signal.SIGINT, stopping)
    settings = settings.model_copy(update={"job_workers": jobs})
    store = Store(settings.store_url, busy_timeout=settings.store_busy_timeout_seconds,
                  pool_size=1, max_overflow=2, application_name=f"catalog-nb worker {name}")
    watcher = runner = None
    try:
        # A newer catalog_nb than the store's: the same upgrade serve would make.
        store.migrate()
        runtime = runtime_config.RuntimeConfig(settings)
        # Stored /config values win over the environment, as in the service.
        watcher = runtime_config.start(store, runtime)
        runner = JobRunner(store, settings, runtime.startup, name=name, claims=True,
                           poll_seconds=poll_seconds).start()
        log.info("worker %s: running up to %d jobs at once from %s", name, jobs,
                 where(settings.store_url))
        while not stop.wait(1.0):
            pass
    finally:
        if watcher is not None:
            watcher.stop()
        if runner is not None:
            runner.stop(STOP_SECONDS)
        store.dispose()
    log.info("worker %s: stopped", name)
