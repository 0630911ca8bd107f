"""Job workers in processes of their own, so profiling never competes with requests for the GIL.

Profiling and discovery are CPU-bound and much of them is Python. Run on threads of the service's
process, they share its interpreter lock with the threads answering requests: a login that needs
90 ms of CPU could take a second while a wide document was being profiled. Each worker of
:class:`catalog_nb.server.jobs.JobRunner` therefore owns one child process (forked from a fork
server that imported the job code once, see :data:`_CONTEXT`: no copied locks or connections),
started on first use and kept for the next jobs (its sketch index stays warm). The worker
thread sends the child a job key over a pipe and waits for the answer; the child runs
:func:`catalog_nb.server.job_run.run_job` on its own store (its own connections to the same
database) at a lower CPU priority.

Stopping: the runner sets a shared event; the child's job sees it between two resources and goes
back to QUEUED, as a thread's would. A child that does not answer within the stop timeout is
terminated. A child that dies (killed, out of memory) fails its job at once with a message, and
the worker starts a new child for the next job. A child whose runner's process dies (a
``catalog-nb worker`` killed with SIGKILL) dies with it (:func:`_watch_lifeline`): left running,
it would go on writing a job that another worker's stale sweep has already failed.

Writes take turns across the processes: SQLite's lock is not fair, and a child writing in
back-to-back batches would keep a login of the service waiting; the service and its children
count their waiting writers in one shared counter, and a batch writer lets them go first.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import threading
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from typing import TYPE_CHECKING, Any

from catalog_nb.server.settings import Settings

if TYPE_CHECKING:  # ForkServerContext exists where fork does (not on Windows)
    from multiprocessing.context import ForkServerContext, SpawnContext

log = logging.getLogger(__name__)

#: Lower CPU priority of job processes (0 is normal, 19 the lowest).
NICENESS = 10
DIED_MESSAGE = ("The process running the job stopped unexpectedly (killed, or out of memory); "
                "run the job again.")

#: Job processes are forked from a fork server (``forkserver``) that imported the job code once
#: (:mod:`catalog_nb.server.job_imports`): spawned, each imported it again, about 2.5 s of CPU per
#: process. The fork server is a fresh interpreter of its own, single-threaded and without
#: connections, so a job process still inherits no lock and no connection of the service.
_CONTEXT: ForkServerContext | SpawnContext = (
    mp.get_context("forkserver") if "forkserver" in mp.get_all_start_methods()
    else mp.get_context("spawn"))
_PRELOAD = "catalog_nb.server.job_imports"
if _CONTEXT.get_start_method() == "forkserver":
    _CONTEXT.set_forkserver_preload([_PRELOAD])


def _watch_lifeline(lifeline: Connection) -> None:
    """End this process at once when the runner's process is gone (a daemon thread's loop).

    The runner keeps the other end of ``lifeline`` open and never writes to it: a read ends
    only when every copy of that end is closed, that is when the runner's process has ended,
    however it ended (a ``catalog-nb worker`` killed with SIGKILL). The fork server cannot be
    relied on for this: it lives while any of its job processes does. Exiting without a word
    leaves the job's open transaction uncommitted (rolled back by the database) and the job
    RUNNING, for the stale sweep of a live worker or service to fail.
    """
    with contextlib.suppress(EOFError, OSError):
        lifeline.recv_bytes()
    os._exit(1)


def _serve(pipe: Connection, url: str, busy_timeout: float, settings: Settings,
           startup: dict[str, Any], stop: Event, turns: Any, lifeline: Connection) -> None:
    """The child's loop: run each job received (``(key, worker, claimed)``, see
    :meth:`JobProcess.run`), answer with its final state.

    The parent's settings change at run time (``PUT /config``, or another process through the
    store); the child applies the stored configuration before each job, as the parent's
    watcher does, returning a property whose stored value went to its ``startup`` value.
    """
    # Imported in the fork server already (or here, in a spawned process): it tells the
    # allocators to keep freed memory before anything loads Arrow or Polars.
    from catalog_nb.server.job_imports import (
        ALLOCATORS_IN_TIME,
        RuntimeConfig,
        Store,
        config_store,
        run_job,
        share_write_turns,
    )

    if not ALLOCATORS_IN_TIME:
        log.info("job process: Arrow or Polars loaded before the allocators were told to keep "
                 "freed memory; only glibc's settings apply")

    threading.Thread(target=_watch_lifeline, args=(lifeline,), name="catalog-job-lifeline",
                     daemon=True).start()
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):  # not allowed here: the priority stays
            os.nice(NICENESS)
    logging.basicConfig(level=logging.WARNING)
    store = Store(url, busy_timeout=busy_timeout, pool_size=2, max_overflow=2,
                  application_name="catalog-nb jobs")
    share_write_turns(url, turns)
    runtime = RuntimeConfig(settings)
    runtime.startup.update(startup)
    try:
        while True:
            try:
                order = pipe.recv()
            except (EOFError, OSError):
                return  # the service is gone
            if order is None:
                return
            key, worker, claimed = order
            try:
                with store.read() as conn:
                    runtime.refresh(config_store.stored(conn))
                final = run_job(store, settings, str(key), should_stop=stop.is_set,
                                worker=worker, claimed=claimed)
                pipe.send(None if final is None else str(final["state"]))
            except Exception as exc:  # run_job ends jobs itself; this is the store failing
                log.exception("job %s failed in its process", key)
                pipe.send(f"ERROR {type(exc).__name__}: {exc}")
    finally:
        store.dispose()


class JobProcess:
    """One child process that runs jobs one at a time (see the module docstring)."""

    def __init__(self, url: str, busy_timeout: float, settings: Settings,
                 startup: dict[str, Any], stop: Event, turns: Any) -> None:
        self._args = (url, busy_timeout, settings, startup, stop, turns)
        self._process: Any = None
        self._pipe: Connection | None = None
        #: The end of the child's lifeline this process keeps open (see _watch_lifeline).
        self._lifeline: Connection | None = None
        self._reaping = threading.Lock()

    def _start(self) -> Connection:
        parent, child = _CONTEXT.Pipe()
        theirs, ours = _CONTEXT.Pipe(duplex=False)
        self._process = _CONTEXT.Process(target=_serve, args=(child, *self._args, theirs),
                                         name="catalog-nb-job", daemon=True)
        self._process.start()
        child.close()
        theirs.close()
        self._pipe, self._lifeline = parent, ours
        return parent

    def run(self, key: str, *, worker: str | None = None, claimed: bool = False) -> bool:
        """Run job ``key`` in the child (``worker`` and ``claimed`` as for
        :func:`~catalog_nb.server.job_run.run_job`); False when the child died on it."""
        pipe = self._pipe if self._alive() else self._start()
        assert pipe is not None
        try:
            pipe.send((key, worker, claimed))
            pipe.recv()
            return True
        except (EOFError, OSError):
            self._reap()
            return False

    @property
    def pid(self) -> int | None:
        """The child's process id while it is alive."""
        return int(self._process.pid) if self._alive() else None

    def _alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def _reap(self) -> None:
        # Both the worker (its child died under it) and the stopping thread (it terminated the
        # child) reap: whichever comes first takes the handles, so nothing is closed twice.
        with self._reaping:
            process, pipe, lifeline = self._process, self._pipe, self._lifeline
            self._process = self._pipe = self._lifeline = None
        if process is not None:
            process.join(timeout=5)
        for end in (pipe, lifeline):
            if end is not None:
                with contextlib.suppress(OSError):
                    end.close()

    def close(self, timeout: float) -> None:
        """Ask the child to end after its job, wait up to ``timeout``, then terminate it."""
        process, pipe = self._process, self._pipe
        if process is None:
            return
        try:
            if pipe is not None:
                pipe.send(None)
        except (OSError, ValueError):
            pass
        process.join(timeout=max(timeout, 0.1))
        if process.is_alive():
            log.warning("a job process did not stop in time: terminated")
            process.terminate()
            process.join(timeout=5)
        self._reap()


def new_stop_event() -> Event:
    """An event the children can wait on (made in their start method's context)."""
    return _CONTEXT.Event()


def new_turns_counter() -> Any:
    """A counter of waiting writers the service and its children share (see
    :func:`catalog_nb.server.store.share_write_turns`)."""
    return _CONTEXT.Value("i", 0)
