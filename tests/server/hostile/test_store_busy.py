"""A write that cannot get the store's lock in time answers 503 with Retry-After, never 500, and
writes nothing; the service answers again as soon as the lock is free.

The lock is really held, by a second connection to the server's own store: SQLite's write lock
(``BEGIN IMMEDIATE``) or, on PostgreSQL, a table lock that blocks writers but not readers.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

import catalog_nb
from catalog_nb.contract import ErrorCode
from tests.conftest import Server
from tests.server.helpers import assert_error
from tests.server.hostile.common import StoreState, still_answering

BUSY = ErrorCode.STORE_BUSY.value


@contextmanager
def write_lock_held(server: Server) -> Iterator[None]:
    url = make_url(server.store.url)
    if url.get_backend_name() == "sqlite":
        conn = sqlite3.connect(str(url.database), isolation_level=None, timeout=30)
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")
            conn.close()
        return
    engine = create_engine(url)
    try:
        with engine.connect() as conn, conn.begin():
            conn.execute(text("LOCK TABLE users IN EXCLUSIVE MODE"))
            yield
    finally:
        engine.dispose()


def test_a_write_behind_a_held_lock_is_503_and_writes_nothing(
    make_server: Callable[..., Server], unique: Callable[[str], str]
) -> None:
    server = make_server(store_busy_timeout_seconds=0.5)
    admin = server.session()
    before = StoreState.of(server)
    name = unique("blocked")
    with write_lock_held(server):
        # Reads go on while a writer holds the lock.
        assert admin.get("/user").status_code == 200
        response = admin.post("/user", json={"name": name})
        body = assert_error(response, 503, BUSY, "busy")
        assert int(response.headers["Retry-After"]) == body["retryAfter"] >= 1
    before.assert_same(server)
    still_answering(server, admin)
    # The same request, sent again once the lock is free, is done.
    assert admin.post("/user", json={"name": name}).status_code == 201


def test_writes_queued_behind_a_short_lock_all_succeed(
    make_server: Callable[..., Server], unique: Callable[[str], str]
) -> None:
    server = make_server(store_busy_timeout_seconds=20)
    sessions = [server.session() for _ in range(4)]  # logging in writes: done before the lock
    statuses: list[int] = []

    def create(index: int) -> None:
        response = sessions[index].post("/user", json={"name": unique("queued")})
        statuses.append(response.status_code)

    with write_lock_held(server):
        threads = [threading.Thread(target=create, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        threads[0].join(0.5)  # the writers are waiting for the lock, not refused
        assert not statuses
    for thread in threads:
        thread.join(60)
    assert statuses == [201] * 4


def test_the_client_raises_a_typed_busy_error_for_a_write(
    make_server: Callable[..., Server], unique: Callable[[str], str]
) -> None:
    server = make_server(store_busy_timeout_seconds=0.5)
    with catalog_nb.connect(server.url, server.admin_user, server.admin_password) as cat:
        name = unique("typed")
        with write_lock_held(server), pytest.raises(catalog_nb.ServiceBusyError) as caught:
            cat.create_user(name)
        assert caught.value.status == 503 and caught.value.error_code == BUSY
        assert caught.value.retry_after == 2
        assert isinstance(caught.value, catalog_nb.ServerError)
        assert name not in {user["name"] for user in cat.users(as_frame=False)}
