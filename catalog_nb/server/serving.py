"""Serving with several worker processes: ``catalog-nb serve --workers N``.

One process answers requests with one interpreter, so one core. ``serve(settings, workers=N)``
runs N uvicorn worker processes on one listening socket, each with its own store pool and caches,
under one supervising process that restarts a worker that dies. What every process of a service
must not do N times happens once, in the supervisor:

* the store is migrated and bootstrapped before any worker starts;
* the job runner (:class:`catalog_nb.server.jobs.JobRunner`) runs there and only there. Workers
  are made with ``create_app(settings, run_jobs=False)``: ``POST /job`` queues the job in the
  store and the runner, polling the store every ``JOB_POLL_SECONDS``, takes it. N runners would
  each start ``job_workers`` job processes, and jobs of one source could run side by side;
* with ``run_jobs=False`` (``serve --no-jobs``) there is no runner: ``catalog-nb worker``
  processes (``server/worker.py``) claim the queued jobs from the store;
* SQLite writers take turns across all of them (``store.share_write_turns``): the supervisor
  makes the shared counter and hands it to each worker and job process as they are spawned.

Sessions and callers' roles live in the store, so a session made through one worker is honoured
by every other, and a logout or a role taken away takes effect on the very next request whichever
worker answers it (``server.callers``). Workers are spawned, never forked: no connection of the
supervisor's pool reaches them.

Example::

    serve(Settings(), host="127.0.0.1", port=8765, workers=4)
"""

from __future__ import annotations

import copy
import logging
import socket
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.config import LOGGING_CONFIG
from uvicorn.supervisors import Multiprocess

from catalog_nb.server.settings import Settings

__all__ = ["JOB_POLL_SECONDS", "WorkerConfig", "serve", "worker_app"]

log = logging.getLogger(__name__)

#: How often the supervisor's job runner looks in the store for jobs the workers queued.
JOB_POLL_SECONDS = 0.5

#: Seconds a worker process may take to answer the supervisor's health check. uvicorn's default
#: (5) counts from the spawn, so it includes importing the service (pandas, Arrow, SQLAlchemy,
#: FastAPI): seconds when idle, over a minute on a loaded machine, where the supervisor then
#: killed and respawned every worker in a loop and no request was ever answered.
WORKER_HEALTHCHECK_SECONDS = 120

#: What a worker process was handed by the supervisor (set before its app is made).
_HANDED: dict[str, Any] = {}


class WorkerConfig(uvicorn.Config):
    """A uvicorn configuration that carries the service's settings and the shared write-turn
    counter to each worker: uvicorn pickles its configuration into every worker it spawns, and
    a ``multiprocessing`` counter may only travel that way (while a process is spawned)."""

    def __init__(self, settings: Settings, turns: Any, **options: Any) -> None:
        options.setdefault("timeout_worker_healthcheck", WORKER_HEALTHCHECK_SECONDS)
        super().__init__("catalog_nb.server.serving:worker_app", factory=True, **options)
        self.catalog_settings = settings
        self.catalog_turns = turns

    def load(self) -> None:
        _HANDED.update(settings=self.catalog_settings, turns=self.catalog_turns)
        super().load()


def worker_app() -> FastAPI:
    """The application of one worker process: the service without a job runner (the import
    string factory ``catalog_nb.server.serving:worker_app``)."""
    from catalog_nb.server.app import create_app
    from catalog_nb.server.store import share_write_turns

    settings: Settings = _HANDED.get("settings") or Settings()
    turns = _HANDED.get("turns")
    if turns is not None:
        share_write_turns(settings.store_url, turns)
    return create_app(settings, run_jobs=False)


def _log_config() -> dict[str, Any]:
    """uvicorn's logging, each line saying which process wrote it."""
    config = copy.deepcopy(LOGGING_CONFIG)
    for formatter in config["formatters"].values():
        formatter["fmt"] = formatter["fmt"].replace("%(levelprefix)s",
                                                    "%(levelprefix)s [%(process)d]")
    return config


def connection_budget(settings: Settings, workers: int, run_jobs: bool = True) -> int:
    """The most PostgreSQL connections a service of ``workers`` workers may open: each worker's
    request pool, the supervisor's own store and job runner, and each job process's pool (no
    runner and no job process with ``run_jobs=False``)."""
    # + the event loop's own (the held one, or on PostgreSQL sessions.SessionReads's)
    per_worker = settings.store_pool_size + settings.store_max_overflow + 1
    runner = 2 * (settings.job_workers + 1)
    job_processes = settings.job_workers * 4
    if not run_jobs:
        return workers * per_worker + 2
    return workers * per_worker + 2 + runner + job_processes


def _check_connections(store: Any, settings: Settings, workers: int, run_jobs: bool) -> None:
    if store.dialect != "postgresql":
        return
    with store.single() as conn:
        limit = int(conn.exec_driver_sql("SHOW max_connections").scalar_one())
    needed = connection_budget(settings, workers, run_jobs)
    if needed > limit:
        log.warning(
            "%d workers may open up to %d connections to PostgreSQL, which allows %d (shared "
            "with every other client): lower CATALOG_STORE_POOL_SIZE / "
            "CATALOG_STORE_MAX_OVERFLOW or --workers, or raise max_connections.",
            workers, needed, limit)


def serve(settings: Settings, *, host: str, port: int, workers: int,
          log_level: str = "info", run_jobs: bool = True) -> None:
    """Serve the catalog with ``workers`` worker processes until interrupted (see the module
    docstring); returns once every worker and the job runner have stopped. ``run_jobs=False``
    (``serve --no-jobs``): no job runner at all; ``catalog-nb worker`` processes run the jobs
    queued in the store."""
    from catalog_nb.server.job_process import new_turns_counter
    from catalog_nb.server.lifecycle import service
    from catalog_nb.server.runtime_config import RuntimeConfig
    from catalog_nb.server.store import Store

    store = Store(settings.store_url, busy_timeout=settings.store_busy_timeout_seconds,
                  pool_size=1, max_overflow=2, application_name="catalog-nb supervisor")
    if store.in_memory:
        store.dispose()
        raise ValueError("An in-memory store lives in one process: serve it with one worker, "
                         "or give --db-url / --data-dir a database that workers can share.")
    # The runner shares the counter with this process's writers while it runs.
    turns = new_turns_counter() if store.dialect == "sqlite" else None
    with service(store, settings, RuntimeConfig(settings), run_jobs=run_jobs, turns=turns,
                 poll_seconds=JOB_POLL_SECONDS):
        _check_connections(store, settings, workers, run_jobs)
        config = WorkerConfig(settings, turns, host=host, port=port, workers=workers,
                              log_level=log_level, log_config=_log_config())
        listening = config.bind_socket()
        if listening.family in (socket.AF_INET, socket.AF_INET6):
            # uvicorn binds with protocol 0, so asyncio (which sets TCP_NODELAY only on sockets
            # it knows are TCP) leaves Nagle on in the workers: every answer on a kept-alive
            # connection then waits ~40 ms for the client's delayed ACK. Connections accepted
            # from the listening socket inherit the option.
            listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            Multiprocess(config, sockets=[listening]).run()
        finally:
            listening.close()
