"""Sessions read together (``store.sessions.SessionReads``, PostgreSQL) are each still read
after their request arrived, and each request gets its own session's answer.

Through real HTTP on both backends (on SQLite each request reads its own, which the same
assertions hold for), and on PostgreSQL against the reader itself, where the order of reads
and requests can be set exactly.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, text

from catalog_nb.server.errors import Unauthorized
from catalog_nb.server.store import Store
from catalog_nb.server.store import sessions as session_store
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, create_user, session_token, with_cookie

POLICY = session_store.SessionPolicy(idle_ms=3_600_000, max_ms=86_400_000)


@pytest.fixture(scope="module")
def pair(make_server: Callable[..., Server]) -> tuple[Server, Server]:
    """Two services on one store, as two processes of one deployment."""
    first = make_server()
    second = make_server(db_url=first.embedded.settings.store_url)
    return first, second


def _user(server: Server) -> tuple[str, Http]:
    name = f"reader-{uuid.uuid4().hex[:8]}"
    create_user(server.session(), name)
    return name, server.session(name, PASSWORD)


def test_concurrent_requests_each_get_their_own_sessions_answer(
    pair: tuple[Server, Server]
) -> None:
    first, second = pair
    users = [_user(first) for _ in range(4)]
    ended = first.session(users[0][0], PASSWORD)
    ended_token = session_token(ended)
    assert ended.get("/logout").status_code == 200
    cookies = [(name, session_token(http)) for name, http in users]
    cookies += [(None, ended_token), (None, uuid.uuid4().hex)]

    def ask(n: int) -> tuple[str | None, int, str | None]:
        expected, token = cookies[n % len(cookies)]
        answer = with_cookie(second, token).get("/user/_me")
        return expected, answer.status_code, (
            answer.json().get("name") if answer.status_code == 200 else None)

    with ThreadPoolExecutor(24) as pool:
        answers = list(pool.map(ask, range(240)))
    for expected, status, name in answers:
        if expected is None:
            assert status == 401
        else:
            assert (status, name) == (200, expected)


def test_under_load_a_logout_in_one_service_refuses_every_later_request_in_the_other(
    pair: tuple[Server, Server]
) -> None:
    """Requests keep arriving at the second service while the session is ended through the
    first: every request sent after the logout had been answered is refused."""
    first, second = pair
    _, here = _user(first)
    token = session_token(here)
    assert with_cookie(second, token).get("/version").status_code == 200
    logged_out = threading.Event()
    stop = threading.Event()
    late: list[int] = []
    lock = threading.Lock()

    def hammer() -> None:
        http = with_cookie(second, token)
        while not stop.is_set():
            after = logged_out.is_set()  # read before the request is sent
            status = http.get("/version").status_code
            if after:
                with lock:
                    late.append(status)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.3)  # requests in flight: not an assertion on time
        assert here.get("/logout").status_code == 200
        logged_out.set()
        while True:
            with lock:
                if len(late) >= 200:
                    break
            time.sleep(0.01)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert late and set(late) == {401}


# -- the reader itself (PostgreSQL) ---------------------------------------------------------------


@pytest.fixture
def pg_store(store: Store) -> Store:
    if not session_store.SessionReads.applies(store):
        pytest.skip("sessions are read together on PostgreSQL through psycopg")
    return store


def _sessions(store: Store, count: int) -> list[str]:
    from catalog_nb.server.store import roles as role_store
    from catalog_nb.server.store import users as user_store

    tokens = []
    with store.write() as conn:
        role = f"readers-{uuid.uuid4().hex[:6]}"
        role_store.create(conn, {"name": role, "access_level": "Guest",
                                 "metadata_access_option": "ALL",
                                 "data_access_option": "NONE"}, {})
        for n in range(count):
            user = user_store.create(conn, {"name": f"u{n}-{uuid.uuid4().hex[:6]}"},
                                     [role], "test")
            tokens.append(session_store.open_session(conn, user.key, None, _now()))
    return tokens


def _now() -> int:
    return int(time.time() * 1000)


@contextmanager
def _session_statements(store: Store) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.startswith("SELECT") and "FROM sessions" in statement:
            seen.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(store.engine, "before_cursor_execute", record)


def test_requests_arriving_together_share_one_statement(pg_store: Store) -> None:
    tokens = _sessions(pg_store, 5)
    reads = session_store.SessionReads(pg_store)

    async def main() -> list[Any]:
        asks = [reads.resolve(t, POLICY, _now()) for t in tokens * 4]
        asks.append(reads.resolve(uuid.uuid4().hex, POLICY, _now()))
        return await asyncio.gather(*asks, return_exceptions=True)

    with _session_statements(pg_store) as seen:
        answers = asyncio.run(main())
    assert len(seen) == 1, seen
    expected = [_key(pg_store, t) for t in tokens] * 4
    assert [a.user_key for a in answers[:-1]] == expected
    assert isinstance(answers[-1], Unauthorized)


def _key(store: Store, token: str) -> str:
    with store.single() as conn:
        return session_store.resolve(conn, token, POLICY, _now()).user_key


def test_a_request_arriving_while_a_read_is_on_its_way_waits_for_the_next(
    pg_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session ended after a read was sent, before a request arrived: that read may not
    answer the request, whatever it found."""
    kept, ended = _sessions(pg_store, 2)
    reads = session_store.SessionReads(pg_store)
    waiting = session_store._result_ready

    async def main() -> tuple[Any, Any]:
        sent, answer = asyncio.Event(), asyncio.Event()

        async def held(pgconn: Any) -> None:  # the answer is read once the test lets it
            sent.set()
            await answer.wait()
            await waiting(pgconn)

        monkeypatch.setattr(session_store, "_result_ready", held)
        first = asyncio.create_task(reads.resolve(kept, POLICY, _now()))
        await sent.wait()
        sent.clear()
        with pg_store.write() as conn:
            session_store.close_session(conn, ended)
        second = asyncio.create_task(reads.resolve(ended, POLICY, _now()))
        await asyncio.sleep(0)  # the request has joined the next read
        answer.set()
        return await first, (await asyncio.gather(second, return_exceptions=True))[0]

    with _session_statements(pg_store) as seen:
        first, second = asyncio.run(main())
    assert first.user_key == _key(pg_store, kept)
    assert isinstance(second, Unauthorized)
    assert len(seen) == 2, seen


def test_expired_sessions_are_refused(pg_store: Store) -> None:
    idle, old = _sessions(pg_store, 2)
    now = _now()
    policy = session_store.SessionPolicy(idle_ms=60_000, max_ms=3_600_000)
    reads = session_store.SessionReads(pg_store)

    async def main() -> list[Any]:
        return await asyncio.gather(reads.resolve(idle, policy, now + 61_000),
                                    reads.resolve(old, policy, now + 3_601_000),
                                    return_exceptions=True)

    for refused in asyncio.run(main()):
        assert isinstance(refused, Unauthorized)
        assert refused.body()["errorCode"] == "SESSION_EXPIRED"


@pytest.mark.parametrize("fault", ["statement dropped", "connection ended"])
def test_reads_go_on_after_the_connection_fails(pg_store: Store, fault: str) -> None:
    (token,) = _sessions(pg_store, 1)
    reads = session_store.SessionReads(pg_store)
    user_key = _key(pg_store, token)

    async def ask() -> str:
        return (await reads.resolve(token, POLICY, _now())).user_key

    assert asyncio.run(ask()) == user_key
    loop_conn = pg_store.loop_connection()
    if fault == "statement dropped":
        loop_conn.exec_driver_sql("DEALLOCATE ALL")
    else:
        pid = loop_conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        with pg_store.single() as conn:
            conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    assert [asyncio.run(ask()) for _ in range(3)] == [user_key] * 3
