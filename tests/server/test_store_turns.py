"""A thread writing in back-to-back batches lets a waiting writer in between two of them.

SQLite's busy handler is not fair: without ``Store.write`` taking turns, a login waiting behind a
job's batches would get the lock only when the job had finished all of them.
"""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import text

from catalog_nb.server.store import Store

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
