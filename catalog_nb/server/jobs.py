"""Background jobs: browse and profile data sources, with persisted state.

:func:`run_job` runs one job to its end (the service's workers and ``catalog-nb profile`` share
it); :class:`JobRunner` is the service's small pool of worker threads, started and stopped by the
application's lifespan, and the whole of a ``catalog-nb worker`` (``server/worker.py``), which
runs it with ``claims=True``: its threads claim the next runnable job from the store instead of
taking the jobs handed to :meth:`JobRunner.submit`.

What a job does is in :mod:`catalog_nb.server.job_work`; :func:`run_job` itself in
:mod:`catalog_nb.server.job_run`.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from catalog_nb.contract import JobState
from catalog_nb.server.job_process import (
    DIED_MESSAGE,
    JobProcess,
    new_stop_event,
    new_turns_counter,
)
from catalog_nb.server.job_run import run_job
from catalog_nb.server.job_work import (
    REQUEUED_MESSAGE,
    STALE_MESSAGE,
)
from catalog_nb.server.profiling.threads import run_in_background
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store, share_write_turns, staging
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store.common import now_ms

__all__ = ["REQUEUED_MESSAGE", "STALE_MESSAGE", "JobRunner", "default_worker_name", "heartbeat",
           "run_job"]

log = logging.getLogger(__name__)

def default_worker_name() -> str:
    """The name a process records in the ``worker`` of the jobs it runs: ``hostname:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


@contextmanager
def heartbeat(store: Store, key: str, seconds: float) -> Iterator[None]:
    """Touch the RUNNING job ``key`` every ``seconds`` while the block runs (for the CLI).

    A service sharing the store would otherwise take a job busy with one long file for one
    left by a dead process.
    """
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(seconds):
            try:
                with store.write() as conn:
                    job_store.heartbeat(conn, [key])
            except Exception:
                log.exception("job heartbeat failed")

    thread = threading.Thread(target=beat, name="catalog-job-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(seconds)


#: How long a worker may take to record its job once its child process is gone.
CHILD_GONE_SECONDS = 5.0
#: How often an idle thread of a claiming runner (``claims=True``) looks for a job, by default.
CLAIM_POLL_SECONDS = 0.5


class JobRunner:
    """The service's job workers: ``settings.job_workers`` daemon threads and a heartbeat; each
    worker runs its jobs in a child process of its own (:mod:`.job_process`) unless
    ``job_isolation`` is ``thread``.

    Jobs of one data source never run at the same time in one process, and they never hold a
    worker while they wait: a free worker takes the oldest waiting job whose source has no job
    running, so jobs on one source never keep a job on another from starting (sources are
    served in the order their jobs arrived, never one source's backlog first).
    The runner opens a store of its own on the same database: background work never takes
    connections from the pool that serves requests. That pool is sized for the runner's own
    threads (each worker and the heartbeat, one nested connection each at most), so an idle
    runner keeps few connections open. It looks for jobs a dead process left behind at
    start-up and every ``job_stale_seconds / 2``.

    With ``claims=True`` (``catalog-nb worker``, several of which may share a store with
    ``serve --no-jobs`` replicas) nothing is submitted: each free thread claims the oldest
    QUEUED job whose source has no job RUNNING anywhere (``store.jobs.claim_next``, with
    ``FOR UPDATE SKIP LOCKED`` on PostgreSQL), so the one-job-per-source rule holds across every
    process sharing the store.
    """

    def __init__(self, store: Store, settings: Settings,
                 startup: Mapping[str, Any] | None = None, *, turns: Any | None = None,
                 poll_seconds: float | None = None, name: str | None = None,
                 claims: bool = False) -> None:
        """``startup``: the configuration properties' start-up values
        (``RuntimeConfig.startup``), which job processes return to when a stored value goes.
        ``turns``: the write-turn counter of the service's processes (``serving.serve`` makes
        one for all its workers), else the runner makes its own. ``poll_seconds``: also take
        every QUEUED job found in the store this often (jobs queued by other processes: the
        workers of ``serve --workers N``), not only those given to :meth:`submit`; with
        ``claims``, how often an idle thread looks for a job to claim (default
        :data:`CLAIM_POLL_SECONDS`). ``name``: recorded in the ``worker`` column of the jobs
        this runner runs (default :func:`default_worker_name`). ``claims``: see the class
        docstring."""
        threads = settings.job_workers + 1
        # An in-memory database exists only in the store that made it: the runner shares it.
        self._own_store = not store.in_memory
        self.store = store if store.in_memory else Store(
            store.url, busy_timeout=store.busy_timeout, pool_size=threads, max_overflow=threads,
            application_name="catalog-nb jobs")
        self.settings = settings
        # A child process cannot open the parent's in-memory database.
        self.processes = settings.job_isolation == "process" and not store.in_memory
        self._stop_children = new_stop_event() if self.processes else None
        self._turns = turns if turns is not None else (
            new_turns_counter() if self.processes else None)
        self.poll_seconds = poll_seconds
        self.name = name or default_worker_name()
        self.claims = claims
        self._children: list[JobProcess] = []
        self._startup = dict(startup or {})
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        # (job key, its source's key) in arrival order; the sources with a job running
        self._waiting: list[tuple[str, str]] = []
        self._running: set[str] = set()
        self._busy_sources: set[str] = set()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> JobRunner:
        """Fail jobs a stopped process left RUNNING, queue the QUEUED ones, start the workers."""
        try:
            self._sweep(everything_queued=True)
        except BaseException:
            # Nobody will call stop() on a runner that never started: close its pool here.
            if self._own_store:
                self.store.dispose()
            raise
        if self._turns is not None:
            share_write_turns(self.store.url, self._turns)
        for number in range(self.settings.job_workers):
            child = None
            if self._stop_children is not None:
                child = JobProcess(self.store.url, self.store.busy_timeout, self.settings,
                                   dict(self._startup), self._stop_children, self._turns)
                self._children.append(child)
            thread = threading.Thread(target=self._work, args=(child,),
                                      name=f"catalog-job-{number}", daemon=True)
            thread.start()
            self._threads.append(thread)
        beat = threading.Thread(target=self._beat, name="catalog-job-heartbeat", daemon=True)
        beat.start()
        self._threads.append(beat)
        if self.poll_seconds and not self.claims:
            poll = threading.Thread(target=self._poll, name="catalog-job-poll", daemon=True)
            poll.start()
            self._threads.append(poll)
        return self

    def submit(self, key: str) -> None:
        """Run the QUEUED job ``key`` when a worker is free and its source has no job running."""
        with self.store.read() as conn:
            job = job_store.find(conn, key)
        if job is None:
            return
        with self._ready:
            if key in self._running or any(k == key for k, _ in self._waiting):
                return
            self._waiting.append((key, str(job["data_source_key"])))
            self._ready.notify()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the workers to stop after their current resource, and wait up to ``timeout``."""
        self._stop.set()
        if self._stop_children is not None:
            self._stop_children.set()
        with self._ready:
            self._ready.notify_all()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        for child in self._children:
            child.close(deadline - time.monotonic())
        if self._children:
            # A worker whose child was just terminated puts its job back in the queue: let it.
            for thread in self._threads:
                thread.join(CHILD_GONE_SECONDS)
        if self._turns is not None:
            share_write_turns(self.store.url, None)
        # Let go of the semaphores shared with the children (their finalizers unlink them): a
        # service stopped by a signal dies of it once shut down (uvicorn raises it again), so
        # the exit handlers that would unlink them never run and Python's resource tracker
        # then warns of leaked semaphores.
        self._children, self._stop_children, self._turns = [], None, None
        if self._own_store:
            self.store.dispose()

    @property
    def pids(self) -> list[int]:
        """The process ids of the job processes alive now (none with thread isolation)."""
        return [pid for pid in (child.pid for child in self._children) if pid is not None]

    @property
    def running(self) -> set[str]:
        with self._lock:
            return set(self._running)

    def _next(self) -> tuple[str, str] | None:
        """The oldest waiting job whose source is free (taken off the list), else None."""
        for index, (key, source) in enumerate(self._waiting):
            if source not in self._busy_sources:
                del self._waiting[index]
                return key, source
        return None

    def _claim(self) -> tuple[str, str] | None:
        """Claim the next runnable job in the store for this runner (``claims=True``): its key
        and its source's key, noted as running (for the heartbeat); None when there is none (or
        the store failed: logged)."""
        try:
            with self.store.write() as conn:
                claimed = job_store.claim_next(conn, self.name)
        except Exception:
            log.exception("claiming a job failed")
            return None
        if claimed is not None:
            with self._lock:
                self._running.add(claimed[0])
        return claimed

    def _work(self, child: JobProcess | None) -> None:
        while not self._stop.is_set():
            if self.claims:
                picked = self._claim()
                if picked is None:
                    self._stop.wait(self.poll_seconds or CLAIM_POLL_SECONDS)
                    continue
                key, source = picked
            else:
                with self._ready:
                    picked = self._next()
                    if picked is None:
                        self._ready.wait(timeout=0.2)
                        continue
                    key, source = picked
                    self._running.add(key)
                    self._busy_sources.add(source)
            try:
                self._run(key, child)
            except Exception:
                log.exception("the worker failed on job %s", key)
            finally:
                with self._ready:
                    self._running.discard(key)
                    self._busy_sources.discard(source)
                    self._ready.notify_all()  # a job of that source may wait for it

    def _run(self, key: str, child: JobProcess | None) -> None:
        with self.store.read() as conn:
            job = job_store.find(conn, key)
        # A claimed job is RUNNING already (for this runner); any other must still wait.
        wanted = JobState.RUNNING if self.claims else JobState.QUEUED
        if job is None or job["state"] != wanted.value:
            return
        started = time.monotonic()
        if child is not None:
            log.info("job %s (%s of data source %s) started on %s", key, job["job_type"],
                     job["data_source_name"], self.name)
        if child is None:
            run_in_background()
            run_job(self.store, self.settings, key, should_stop=self._stop.is_set,
                    worker=self.name, claimed=self.claims)
        elif child.run(key, worker=self.name, claimed=self.claims):
            # The child's own log lines go no further than warnings: one line per job here.
            self._log_end(key, job, time.monotonic() - started)
        else:
            # Terminated by a stop that could not wait for it: the job runs again at the next
            # start, as a stopped thread's would. Otherwise the process died on the job.
            stopping = self._stop.is_set()
            with self.store.write() as conn:
                if job_store.get(conn, key)["state"] == JobState.RUNNING.value:
                    if stopping:
                        job_store.requeue(conn, key, REQUEUED_MESSAGE)
                    else:
                        job_store.finish(conn, key, JobState.FAILED, DIED_MESSAGE)
            if not stopping:
                log.error("the process running job %s died", key)

    def _log_end(self, key: str, job: Mapping[str, Any], seconds: float) -> None:
        with self.store.read() as conn:
            final = job_store.find(conn, key)
        if final is None:
            return
        log.info("job %s (%s of data source %s) %s after %.1f s on %s: %s", key,
                 job["job_type"], job["data_source_name"], final["state"], seconds, self.name,
                 final["message"])

    def _beat(self) -> None:
        sweep_every = max(self.settings.job_heartbeat_seconds, self.settings.job_stale_seconds / 2)
        last_sweep = time.monotonic()
        while not self._stop.wait(self.settings.job_heartbeat_seconds):
            try:
                running = self.running
                if running:
                    with self.store.write() as conn:
                        job_store.heartbeat(conn, running)
                if time.monotonic() - last_sweep >= sweep_every:
                    last_sweep = time.monotonic()
                    self._sweep()
            except Exception:
                log.exception("job heartbeat failed")

    def _poll(self) -> None:
        assert self.poll_seconds
        while not self._stop.wait(self.poll_seconds):
            try:
                with self.store.read() as conn:
                    waiting = job_store.queued(conn)
                with self._lock:
                    known = self._running | {k for k, _ in self._waiting}
                for key in waiting:
                    if key not in known:
                        self.submit(key)
            except Exception:
                log.exception("looking for queued jobs failed")

    def _sweep(self, everything_queued: bool = False) -> None:
        silent_since = now_ms() - int(self.settings.job_stale_seconds * 1000)
        with self.store.write() as conn:
            failed = job_store.fail_stale(conn, silent_since, STALE_MESSAGE, keep=self.running)
            waiting = job_store.queued(conn, None if everything_queued else silent_since)
        for key in failed:
            log.warning("job %s was left RUNNING by a stopped process: now FAILED", key)
        if self.claims:
            waiting = []  # nothing is submitted: the threads claim from the store
        # After fail_stale: the fields a dead job staged belong to no RUNNING job any more.
        swept = staging.sweep(self.store)
        if swept:
            log.warning("removed %d field stagings left by stopped jobs", swept)
        for key in waiting:
            self.submit(key)

