"""The orderings of facet-only searches' matches, done after their answers, one at a time per
process.

A facet-only search answers from the facet cells and its first page, and leaves every match to
be ordered on its snapshot after the answer (``services.searching``): 50-70 ms for the 22,000
matches of a search over 100,000 resources. A thread per search piled those up when searches
came faster than that (one analyst clicking through facets: each search took longer than the
one before, 21 ms to 370 ms over 30 searches, the orderings taking 87 % of the process). Here
they take turns on one thread, and an ordering still waiting when its session starts another
facet-only search is skipped: the session's newer search is the one its pages will ask for, and
the store already marks the older one as left to the page that asks for it
(``store.search.DEFERRED``). An ordering that runs when its session searches again is stopped
as that search starts (its ``cancel``, which interrupts its statement: on a 2-core machine, a
facet-only search answered two to three times slower while the ordering of the one before it
still ran), and in any case does not store what it found (:meth:`Orderings.superseded`): the
write would hold the store's write lock, on SQLite, while the session's next search waits to
save its result. An ordering starts only once its search is :data:`QUIET_SECONDS` old, so that
the search of a quick next click skips it before it has cost anything, unless a page of it
already waits (:meth:`Orderings.hurry`).

Example::

    orderings.submit(session, key, run=lambda: order_and_store(...), skip=held.close,
                     cancel=interruptible.interrupt)
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: The niceness of the ordering thread: behind the requests being answered (Linux gives each
#: thread a priority of its own).
ORDERING_NICE = 10
#: Seconds the thread waits for work before it ends (a new one starts with the next ordering).
IDLE_SECONDS = 2.0
#: Seconds an ordering waits after its search before it starts, unless a page asks for it
#: (:meth:`Orderings.hurry`): an analyst clicking through facets makes a search of each click,
#: and the next click within this time makes the ordering of no use before it has cost anything.
QUIET_SECONDS = 0.1


@dataclass
class _Job:
    session: str
    key: str
    run: Callable[[], None]
    skip: Callable[[], None]
    cancel: Callable[[], None] | None
    #: time.monotonic() before which the job does not start.
    due: float


class Orderings:
    """The process's queue of orderings, worked through by one thread (started when needed).

    ``run`` of each job submitted is called on that thread, in order, unless a newer job of the
    same session was submitted before its turn: then ``skip`` is called instead (it must release
    what ``run`` would have: the held read). A job is told to stop (its ``cancel``, called on
    a thread of its own) when its session searches again (:meth:`stop`) or submits a newer job
    while it runs. Exceptions of any are logged, never raised.
    """

    def __init__(self, idle_seconds: float = IDLE_SECONDS,
                 quiet_seconds: float = QUIET_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self.quiet_seconds = quiet_seconds
        self._jobs: deque[_Job] = deque()
        #: The key of each session's latest job (until that job has run).
        self._latest: dict[str, str] = {}
        self._cond = threading.Condition()
        self._worker: threading.Thread | None = None
        #: The job the thread runs now, if any.
        self._running: _Job | None = None

    def submit(self, session: str, key: str, *, run: Callable[[], None],
               skip: Callable[[], None], cancel: Callable[[], None] | None = None) -> None:
        """Queue the ordering of result ``key`` of ``session``; stop the session's ordering
        that runs now, if any (``cancel`` is how to stop this one in its turn)."""
        with self._cond:
            self._latest[session] = key
            self._jobs.append(_Job(session, key, run, skip, cancel,
                                   time.monotonic() + self.quiet_seconds))
            if self._worker is None:
                self._worker = threading.Thread(target=self._work, name="search-orderings",
                                                daemon=True)
                self._worker.start()
            self._cond.notify()
        self.stop(session)

    def stop(self, session: str) -> None:
        """Stop ``session``'s ordering that runs now, if any: the session searches again (a
        search calls this as it starts, so that the ordering does not slow it down)."""
        with self._cond:
            running = self._running
        if running is None or running.session != session or running.cancel is None:
            return
        # On a thread of its own: PostgreSQL's cancel request waits for the server, which the
        # search that stops the ordering need not do.
        threading.Thread(target=self._cancel, args=(running,), name="search-ordering-stop",
                         daemon=True).start()

    @staticmethod
    def _cancel(job: _Job) -> None:
        try:
            if job.cancel is not None:
                job.cancel()
        except Exception:
            log.exception("stopping the ordering of search %s failed", job.key)

    def hurry(self, session: str, key: str) -> None:
        """Start ``session``'s ordering of ``key`` as soon as its turn comes (a page of it is
        waiting), without the quiet time after its search."""
        with self._cond:
            for job in self._jobs:
                if job.session == session and job.key == key:
                    job.due = 0.0
                    self._cond.notify_all()

    def holds(self, session: str, key: str) -> bool:
        """Whether ``session``'s ordering of ``key`` waits or runs in this process."""
        with self._cond:
            running = self._running
            return (running is not None and (running.session, running.key) == (session, key)
                    ) or any(j.session == session and j.key == key for j in self._jobs)

    def superseded(self, session: str, key: str) -> bool:
        """Whether ``session`` submitted another ordering after ``key``'s: asked by a running
        ordering before it stores its work, which the session's pages will not ask for."""
        with self._cond:
            return self._latest.get(session) != key

    def pending(self) -> int:
        """How many orderings wait for their turn."""
        with self._cond:
            return len(self._jobs)

    def _next(self) -> tuple[_Job, bool] | None:
        """The next job and whether it runs (False: skipped), or None once idle (the thread
        then ends)."""
        with self._cond:
            if not self._jobs:
                self._cond.wait(self.idle_seconds)
            if not self._jobs:
                self._worker = None
                return None
            job = self._jobs[0]
            # Its quiet time: a newer search of its session, or a page asking for it, ends it.
            while (wait := job.due - time.monotonic()) > 0 and (
                    self._latest.get(job.session) == job.key):
                self._cond.wait(wait)
            self._jobs.popleft()
            runs = self._latest.get(job.session) == job.key
            self._running = job if runs else None
            return job, runs

    def _done(self, job: _Job) -> None:
        with self._cond:
            self._running = None
            if self._latest.get(job.session) == job.key:
                del self._latest[job.session]

    def _work(self) -> None:
        with suppress(AttributeError, OSError):
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), ORDERING_NICE)
        while (turn := self._next()) is not None:
            job, runs = turn
            try:
                (job.run if runs else job.skip)()
            except Exception:
                log.exception("the ordering of search %s failed", job.key)
            finally:
                self._done(job)
