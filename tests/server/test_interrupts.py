"""Stopping a statement from another thread (``store.interrupts``), on the real backend: a
long statement ends at once with ``Interrupted``, the store goes on answering, and nothing
outside a ``running`` block is ever stopped."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import Connection, text

from catalog_nb.server.store import Store
from catalog_nb.server.store.interrupts import Interrupted, Interruptible

#: A statement that runs for a minute unless stopped.
_SQLITE_LONG = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                "WHERE x < 2000000000) SELECT count(*) FROM c")
_PG_LONG = "SELECT pg_sleep(60)"


def _long(conn: Connection) -> str:
    return _SQLITE_LONG if conn.dialect.name == "sqlite" else _PG_LONG


def _when_running(store: Store, conn: Connection) -> threading.Event:
    """Set once ``conn``'s statement runs (PostgreSQL: as the server sees it; SQLite's check
    cannot miss an interruption, so a moment is enough)."""
    started = threading.Event()
    if conn.dialect.name == "sqlite":
        threading.Timer(0.3, started.set).start()
        return started
    pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()

    def watch() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with store.read() as other:
                state = other.execute(text(
                    "SELECT state FROM pg_stat_activity WHERE pid = :pid AND query LIKE "
                    "'%pg_sleep%'"), {"pid": pid}).scalar()
            if state == "active":
                started.set()
                return
            time.sleep(0.05)

    threading.Thread(target=watch, daemon=True).start()
    return started


def test_a_running_statement_is_stopped_from_another_thread(store: Store) -> None:
    with store.read() as conn:
        stop = Interruptible(conn)
        started = _when_running(store, conn)

        def interrupt() -> None:
            assert started.wait(30)
            stop.interrupt()

        threading.Thread(target=interrupt, daemon=True).start()
        began = time.monotonic()
        with pytest.raises(Interrupted), stop.running():
            conn.execute(text(_long(conn))).all()
        assert time.monotonic() - began < 30  # not the minute the statement would take
        assert stop.interrupted
    # The connection the request went to goes on serving (it is lent again as it is).
    for _ in range(12):
        with store.read() as conn:
            assert conn.execute(text("SELECT 1")).scalar_one() == 1


def test_an_interruption_before_the_block_stops_it_before_any_statement(store: Store) -> None:
    ran: list[int] = []
    with store.read() as conn:
        stop = Interruptible(conn)
        stop.interrupt()
        with pytest.raises(Interrupted), stop.running():
            ran.append(conn.execute(text("SELECT 1")).scalar_one())
        assert ran == []
        assert conn.execute(text("SELECT 3")).scalar_one() == 3  # nothing was sent


def test_an_interruption_after_the_block_stops_nothing(store: Store) -> None:
    with store.read() as conn:
        stop = Interruptible(conn)
        with stop.running():
            assert conn.execute(text("SELECT 2")).scalar_one() == 2
        stop.interrupt()
        # The same connection's next statements, outside any block, run to their end.
        assert conn.execute(text(
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) "
            "SELECT count(*) FROM c")).scalar_one() == 200000
