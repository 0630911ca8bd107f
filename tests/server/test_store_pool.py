"""The store's pool: connections are opened once and reused, never cross a fork, and an in-memory
SQLite store is one database for every thread of the service."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import bindparam, event, literal_column, select, table, text
from sqlalchemy.exc import DBAPIError

from catalog_nb.server.store import Store
from catalog_nb.server.store import users as user_store
from catalog_nb.server.store.schema import store_generations
from tests.conftest import TEST_APPLICATION, Server
from tests.server.lake import write_files
from tests.server.source_helpers import create_source, run_job


def _connects(store: Store) -> list[int]:
    """Process ids of the connections ``store`` opens from now on."""
    opened: list[int] = []
    event.listen(store.engine, "connect", lambda *_: opened.append(os.getpid()))
    return opened


def test_requests_reuse_the_pools_connections(store: Store) -> None:
    with store.read() as conn:  # the first connection of the pool
        conn.execute(text("SELECT 1"))
    opened = _connects(store)
    for _ in range(30):
        with store.read() as conn:
            user_store.count(conn)
        with store.single() as conn:
            user_store.count(conn)
    with store.write() as conn:
        user_store.count(conn)
    assert opened == []


def test_held_single_reads_keep_one_connection_per_thread(store: Store) -> None:
    if not store.quick_single_reads:
        pytest.skip("reads of this store go to worker threads")
    opened = _connects(store)
    seen = set()
    for _ in range(20):
        with store.single(held=True) as conn:
            user_store.count(conn)
            seen.add(id(conn))
    assert len(opened) <= 1 and len(seen) == 1  # borrowed once, kept
    other: list[int] = []
    thread = threading.Thread(target=lambda: other.append(_held_id(store)))
    thread.start()
    thread.join(30)
    assert other and other[0] not in seen  # each thread its own


def _held_id(store: Store) -> int:
    with store.single(held=True) as conn:
        user_store.count(conn)
        return id(conn)


def test_held_first_reads_what_sqlalchemy_reads_on_the_held_connection(store: Store) -> None:
    if not store.quick_single_reads:
        pytest.skip("reads of this store go to worker threads")
    G = store_generations
    statement = (select(G.c.name, G.c.generation).where(G.c.name == bindparam("name")))
    with store.read() as conn:
        expected = tuple(conn.execute(statement, {"name": "catalog"}).one())
    held = _held_id(store)
    opened = _connects(store)
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, sql: str, params: Any, *_rest: Any) -> None:
        seen.append((sql, params))

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        rows = [store.held_first(statement, {"name": "catalog"}) for _ in range(20)]
        missing = store.held_first(statement, {"name": "no such counter"})
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
    assert rows == [expected] * 20 and missing is None
    # Seen by the engine's listeners like any statement, on the thread's held connection.
    assert len(seen) == 21 and "store_generations" in seen[0][0]
    assert opened == [] and _held_id(store) == held


def test_held_first_survives_its_prepared_statements_being_dropped(store: Store) -> None:
    if store.dialect != "postgresql":
        pytest.skip("PostgreSQL's prepared statements (held_first through libpq)")
    G = store_generations
    statement = select(G.c.name, G.c.generation).where(G.c.name == bindparam("name"))
    first = store.held_first(statement, {"name": "auth"})
    with store.single(held=True) as conn:  # the same session, its statements gone
        conn.exec_driver_sql("DEALLOCATE ALL")
    assert first is not None
    assert [store.held_first(statement, {"name": "auth"}) for _ in range(3)] == [first] * 3


def test_a_failed_held_first_read_is_a_store_error_and_the_next_one_works(store: Store) -> None:
    if not store.quick_single_reads:
        pytest.skip("reads of this store go to worker threads")
    broken = select(literal_column("1")).select_from(table("no_such_table")).where(
        literal_column("1") == bindparam("secret"))
    with store.single(held=True) as held:  # kept referenced: its id is not reused
        pass
    with pytest.raises(DBAPIError) as failed:
        store.held_first(broken, {"secret": "hunter2"})
    assert "hunter2" not in str(failed.value)  # bound values never reach a message
    G = store_generations
    statement = select(G.c.generation).where(G.c.name == bindparam("name"))
    assert store.held_first(statement, {"name": "auth"}) is not None
    assert _held_id(store) != id(held)  # the failed connection was given up


def test_sqlite_connections_are_set_up_once_each(store: Store) -> None:
    if store.dialect != "sqlite":
        pytest.skip("SQLite's per-connection PRAGMAs")
    with store.read() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar_one() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar_one() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one() == int(
            store.busy_timeout * 1000)
    pragmas: list[str] = []
    event.listen(store.engine, "before_cursor_execute",
                 lambda _c, _k, statement, *_: pragmas.append(statement)
                 if statement.startswith("PRAGMA") else None)
    for _ in range(10):
        with store.read() as conn:
            user_store.count(conn)
    assert pragmas == []


def test_threads_at_once_get_connections_of_their_own(store: Store) -> None:
    # More threads than the pool keeps: SQLite opens more without waiting, PostgreSQL's burst
    # overflow covers them; each thread's transaction sees its own connection.
    barrier = threading.Barrier(store.pool_size + 3)
    seen: list[int] = []
    failures: list[BaseException] = []

    def read() -> None:
        try:
            with store.read() as conn:
                seen.append(id(conn.connection.driver_connection))
                barrier.wait(30)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=read) for _ in range(barrier.parties)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not failures, failures
    assert len(set(seen)) == barrier.parties


def _child_reads(url: str, parent_pid: int, pipe: Any) -> None:
    """In a forked child: borrow from the pool inherited from the parent, report what it got."""
    # The store object came with the fork (module global set by the test).
    store: Store = _FORKED["store"]
    opened = _connects(store)
    try:
        with store.read() as conn:
            users = user_store.count(conn)
        pipe.send({"opened": opened, "users": users, "pid": os.getpid()})
    except BaseException as exc:  # noqa: BLE001 - sent to the parent, which fails the test
        pipe.send({"error": repr(exc)})
    finally:
        # Only the child's own connections: the parent's handles are detached, not closed.
        store.engine.dispose(close=True)
        pipe.close()


_FORKED: dict[str, Store] = {}


def test_a_forked_child_never_uses_the_parents_connections(store: Store) -> None:
    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork on this platform")
    with store.read() as conn:  # the parent's pool holds a connection now
        before = user_store.count(conn)
    _FORKED["store"] = store
    parent, child = mp.get_context("fork").Pipe()
    process = mp.get_context("fork").Process(target=_child_reads,
                                             args=(store.url, os.getpid(), child))
    process.start()
    try:
        assert parent.poll(60), "the child did not answer"
        answer = parent.recv()
    finally:
        process.join(30)
        _FORKED.clear()
    assert "error" not in answer, answer
    # The child opened a connection of its own instead of using the inherited one...
    assert answer["opened"] == [answer["pid"]]
    assert answer["users"] == before
    # ...and the parent's connection still works (a shared socket would be broken by now).
    opened = _connects(store)
    with store.read() as conn:
        assert user_store.count(conn) == before
    assert opened == []


# -- in-memory SQLite --------------------------------------------------------------------------


def test_an_in_memory_store_is_one_database_for_every_thread() -> None:
    with Store("sqlite://", application_name=TEST_APPLICATION) as store:
        store.migrate()
        with store.write() as conn:
            conn.execute(text("CREATE TABLE notes (text TEXT)"))
            with store.read() as nested:  # a savepoint of the same connection
                nested.execute(text("INSERT INTO notes VALUES ('nested')"))
        results: list[int] = []

        def write_then_count() -> None:
            with store.write() as conn:
                conn.execute(text("INSERT INTO notes VALUES ('thread')"))
            with store.read() as conn:
                results.append(int(conn.execute(text("SELECT count(*) FROM notes")).scalar_one()))

        threads = [threading.Thread(target=write_then_count) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert sorted(results)[-1] == 5
        with pytest.raises(RuntimeError), store.write() as conn:
            conn.execute(text("INSERT INTO notes VALUES ('rolled back')"))
            raise RuntimeError("undo")
        with store.single() as conn:
            assert conn.execute(text("SELECT count(*) FROM notes")).scalar_one() == 5


def test_a_service_on_an_in_memory_store_serves_and_runs_jobs(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    folder = write_files(tmp_path / "files", {"people.csv": "id,name\n1,ana\n2,bo\n"})
    server = make_server(db_url="sqlite://", data_roots=[tmp_path])
    admin = server.session()
    assert admin.get("/version").status_code == 200
    source = create_source(admin, f"mem-{uuid.uuid4().hex[:6]}", "FILE", str(folder))
    job = run_job(admin, source["key"], "PROFILE")
    assert job["state"] == "SUCCEEDED", job
    page = admin.get("/dataresource/metadata").json()
    assert [r["resourcePath"] for r in page["list"]] == ["people.csv"]


def test_a_snapshot_read_sees_one_snapshot_and_its_connection_goes_back_as_it_was(
    store: Store,
) -> None:
    def count(conn: Any) -> int:
        return int(conn.execute(text("SELECT count(*) FROM snapshot_probe")).scalar_one())

    def insert_one() -> None:
        with store.write() as conn:
            conn.execute(text("INSERT INTO snapshot_probe VALUES (1)"))

    sent: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    with store.write() as conn:
        conn.execute(text("CREATE TABLE snapshot_probe (x INTEGER)"))
    event.listen(store.engine, "before_cursor_execute", record)
    try:
        with store.read(snapshot=True) as conn:
            before = count(conn)
            writer = threading.Thread(target=insert_one)  # a connection of its own
            writer.start()
            writer.join(30)
            with store.single() as other:
                assert count(other) == before + 1
            assert count(conn) == before  # still the block's snapshot
        # The isolation level came with the BEGIN: no statement of its own.
        assert not [s for s in sent if "ISOLATION" in s.upper()], sent
        if store.dialect == "postgresql":
            # Back in the pool at READ COMMITTED: each statement sees what was committed.
            with store.read() as conn:
                level = conn.execute(text("SHOW transaction_isolation")).scalar_one()
                first = count(conn)
                insert_one()
                assert (level, count(conn)) == ("read committed", first + 1)
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
        with store.write() as conn:
            conn.execute(text("DROP TABLE snapshot_probe"))
