"""Stopping a statement that another thread runs: the work a newer request makes useless (a
search's ordering after the session searched again) stops at once instead of competing with
that request for the database and the interpreter.

On SQLite the block's statements ask, every :data:`CHECK_EVERY` virtual machine instructions,
whether to stop (a progress handler), so an interruption is never missed. PostgreSQL's cancel
request stops whatever the connection runs when it arrives, so :class:`Interruptible` only
sends one while its block runs, and the block cannot end before the server has taken the
request (the cancel waits for it, under the lock the block's end takes): a backend that
finished its statement meanwhile is waiting for the next one, and PostgreSQL ignores a cancel
request that reaches an idle backend, so the connection's next statement (the transaction's
end, or the pool's) is never the one stopped. One sent between two statements of the block is
lost that way: the work then ends normally.

Example::

    stop = Interruptible(conn)
    # another thread: stop.interrupt()
    try:
        with stop.running():
            rows = conn.execute(query).all()
    except Interrupted:
        ...  # nothing to keep
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError

#: SQLite virtual machine instructions between two checks for an interruption (a few
#: microseconds of work).
CHECK_EVERY = 10_000


class Interrupted(Exception):
    """The block was interrupted (:meth:`Interruptible.interrupt`) before or while it ran."""


class Interruptible:
    """A connection's statements in :meth:`running` blocks, stoppable from another thread."""

    def __init__(self, conn: Connection) -> None:
        #: The connection whose statements may be stopped.
        self.connection = conn
        self._lock = threading.Lock()
        self._active = False
        #: Whether :meth:`interrupt` was called.
        self.interrupted = False

    def interrupt(self) -> None:
        """Stop the running block's statement, and any block not started yet. Safe from any
        thread, at any time: outside a block it only marks the next one as interrupted."""
        with self._lock:
            self.interrupted = True
            if not self._active:
                return
            if self.connection.dialect.name == "sqlite":
                return  # the progress handler stops the statement
            raw = self.connection.connection.driver_connection
            # cancel_safe (psycopg 3.2) waits for the server's reply to the request.
            cancel = getattr(raw, "cancel_safe", None) or raw.cancel  # type: ignore[union-attr]
            cancel()

    @contextmanager
    def running(self) -> Iterator[None]:
        """The statements of the block may be stopped by :meth:`interrupt`, which then raises
        :class:`Interrupted` here (also at the start, when it came first)."""
        sqlite = self.connection.dialect.name == "sqlite"
        raw: Any = self.connection.connection.driver_connection
        with self._lock:
            if self.interrupted:
                raise Interrupted
            self._active = True
        if sqlite:
            raw.set_progress_handler(lambda: self.interrupted, CHECK_EVERY)
        try:
            yield
        except DBAPIError as exc:
            if self.interrupted:
                raise Interrupted from exc
            raise
        finally:
            if sqlite:
                raw.set_progress_handler(None, CHECK_EVERY)
            with self._lock:  # not before a cancel request being sent was taken
                self._active = False
