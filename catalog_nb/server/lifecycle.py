"""What a start of the service does once, and its stop undoes: one sequence for the application's
lifespan (``app.create_app``) and for the supervisor of ``catalog-nb serve --workers N``
(``serving.serve``), so the two cannot drift apart.

On entry the store is migrated and bootstrapped, the stored ``/config`` values are applied and
watched, and the job runner starts (unless this process runs none); on exit, or when the start
fails half-way, each of them is stopped and the store's pool closed.

Example::

    with service(store, settings, RuntimeConfig(settings)) as runner:
        ...  # serve requests; runner.submit(key) for a new job
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from catalog_nb.server import runtime_config
from catalog_nb.server.bootstrap import bootstrap
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store

if TYPE_CHECKING:  # the runner's module loads the profiling libraries
    from catalog_nb.server.jobs import JobRunner

__all__ = ["service"]


@contextmanager
def service(store: Store, settings: Settings, runtime: runtime_config.RuntimeConfig, *,
            run_jobs: bool = True, turns: Any | None = None,
            poll_seconds: float | None = None) -> Iterator[JobRunner | None]:
    """The service started on ``store`` for the block: yields its job runner (None with
    ``run_jobs=False``). ``turns`` and ``poll_seconds`` go to the runner
    (:class:`~catalog_nb.server.jobs.JobRunner`). The store is disposed at the end either way."""
    watcher = runner = None
    try:
        store.migrate()
        with store.write() as conn:
            bootstrap(conn, settings)
        # Stored /config values win over the environment; applied before any job starts.
        watcher = runtime_config.start(store, runtime)
        if run_jobs:
            # Imported here: a process that runs no jobs never loads the profiling libraries
            # (pandas, pyarrow, polars...), which are most of a start-up.
            from catalog_nb.server.jobs import JobRunner

            # Jobs left RUNNING by a stopped process fail, QUEUED ones run (server/jobs.py).
            runner = JobRunner(store, settings, runtime.startup, turns=turns,
                               poll_seconds=poll_seconds).start()
        yield runner
    finally:
        if watcher is not None:
            watcher.stop()
        if runner is not None:
            runner.stop()
        store.dispose()


def freeze_startup_heap() -> bool:
    """Collect, then leave out of every later collection, the objects of a server process
    that has started (modules, the application, the store): whether it did. Called by the
    application's lifespan once started (``app.create_app``).

    They live as long as the process, yet each collection of the oldest generation walked
    them all (190,000 objects): at 32 connections requests set one off every two seconds or so,
    and each held every request up for 100-200 ms, the p99 latency of
    tests/benchmarks/request_rate.py. Only where the server owns the process, which runs it
    on its main thread (``catalog-nb serve``, each of its workers): a server embedded in a
    notebook or a test runs on a thread of its own, in a process whose objects are not its to
    freeze (one of them later dropped in a cycle would never be freed).
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    gc.collect()
    gc.freeze()
    return True
