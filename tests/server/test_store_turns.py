"""A thread writing in back-to-back batches lets a waiting writer in between two of them.

SQLite's busy handler is not fair: without ``Store.write`` taking turns, a login waiting behind a
job's batches would get the lock only when the job had finished all of them.
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from typing import Any

import pytest
from sqlalchemy import text

from catalog_nb.server.job_process import new_turns_counter
from catalog_nb.server.store import Store, share_write_turns

BATCHES = 40


def test_a_waiting_write_goes_before_the_rest_of_a_batch_writer(store: Store) -> None:
    if store.dialect != "sqlite":
        pytest.skip("PostgreSQL has no store-wide write lock")
    with store.write() as conn:
        conn.exec_driver_sql("CREATE TABLE turns (who TEXT, batch INTEGER)")
    started = threading.Event()

    def batches() -> None:
        for number in range(BATCHES):
            with store.write() as conn:
                conn.execute(text("INSERT INTO turns VALUES ('batch', :n)"), {"n": number})
                if number == 2:
                    started.set()
                time.sleep(0.05)  # a batch's worth of work while holding the lock

    writer = threading.Thread(target=batches)
    writer.start()
    assert started.wait(30)
    with store.write() as conn:
        conn.execute(text("INSERT INTO turns VALUES ('login', NULL)"))
    writer.join(60)
    with store.read() as conn:
        order = [str(w) for w, in conn.execute(text("SELECT who FROM turns ORDER BY rowid"))]
    assert order.count("batch") == BATCHES
    assert order.index("login") < BATCHES // 2, order


def _batch_writer(url: str, turns: Any, started: Any, batches: int) -> None:
    """Another process writing in back-to-back batches (what a job process does)."""
    from catalog_nb.server.store import Store, share_write_turns

    store = Store(url)
    share_write_turns(url, turns)
    for number in range(batches):
        with store.write() as conn:
            conn.execute(text("INSERT INTO turns VALUES ('batch', :n)"), {"n": number})
            if number == 2:
                started.set()
            time.sleep(0.05)
    store.dispose()


def test_writers_in_another_process_take_turns_too(store: Store) -> None:
    if store.dialect != "sqlite":
        pytest.skip("PostgreSQL has no store-wide write lock")
    with store.write() as conn:
        conn.exec_driver_sql("CREATE TABLE turns (who TEXT, batch INTEGER)")
    context = mp.get_context("spawn")
    turns, started = new_turns_counter(), context.Event()
    share_write_turns(store.url, turns)
    batches = 3 * BATCHES
    try:
        writer = context.Process(target=_batch_writer,
                                 args=(store.url, turns, started, batches))
        writer.start()
        assert started.wait(60)
        # Three logins, each noting how many batches were written when it asked for the lock.
        for _ in range(3):
            with store.read() as conn:
                asked = conn.execute(text("SELECT count(*) FROM turns WHERE who = 'batch'")
                                     ).scalar_one()
            with store.write() as conn:
                conn.execute(text("INSERT INTO turns VALUES ('login', :n)"), {"n": asked})
            time.sleep(0.3)
        writer.join(120)
    finally:
        share_write_turns(store.url, None)
    assert writer.exitcode == 0
    with store.read() as conn:
        rows = [(str(w), n) for w, n in conn.execute(
            text("SELECT who, batch FROM turns ORDER BY rowid"))]
    logins = [(position, asked) for position, (who, asked) in enumerate(rows) if who == "login"]
    assert len(logins) == 3 and sum(1 for who, _ in rows if who == "batch") == batches
    # Each login got the lock after the batch in progress (and perhaps one more), not later.
    waited = [sum(1 for who, _ in rows[:position] if who == "batch") - asked
              for position, asked in logins]
    assert max(waited) <= 2, waited
