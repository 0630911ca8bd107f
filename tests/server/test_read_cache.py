"""A resource read from a process's read cache is always what a read from the store would give.

Two services share one store (two processes of one deployment, each with its own cache): the
second keeps a resource's answer, the first changes something the answer shows, and the second's
very next answer shows the change. Below them, the store's catalog generation moves with every
committed change to what people can read, and with nothing else.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import Connection, create_engine, text
from sqlalchemy.pool import NullPool

from catalog_nb.server.read_cache import SingleFlight
from catalog_nb.server.store import Store
from catalog_nb.server.store import sessions as session_store
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    create_role,
    create_user,
    generation,
    generation_bumps,
)
from tests.server.lake import profile_many, resource_key
from tests.server.tag_helpers import associate, make_domain, make_tag
from tests.server.test_request_path import statements


@pytest.fixture(scope="module")
def pair(make_server: Callable[..., Server]) -> tuple[Server, Server]:
    first = make_server()
    second = make_server(db_url=first.embedded.settings.store_url)
    return first, second


@pytest.fixture(scope="module")
def admins(pair: tuple[Server, Server]) -> tuple[Http, Http]:
    return pair[0].session(), pair[1].session()


def _resource(server: Server) -> str:
    source = profile_many(server.store, f"cached-{uuid.uuid4().hex[:6]}", 1, fields=3)
    return resource_key(server.store, source, "area0/file00000.csv")


def _read(http: Http, key: str) -> dict[str, Any]:
    response = http.get(f"/dataresource/{key}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _kept(server: Server, http: Http, key: str) -> dict[str, Any]:
    """Read twice through ``server``; the second answer must come from its cache."""
    _read(http, key)
    with statements(server) as seen:
        body = _read(http, key)
    assert len(seen) == 1, seen  # the authentication only
    return body


def test_a_changed_description_shows_at_once_in_the_other_process(
    pair: tuple[Server, Server], admins: tuple[Http, Http]
) -> None:
    key = _resource(pair[0])
    assert _kept(pair[1], admins[1], key)["description"] is None
    changed = admins[0].put(f"/dataresource/{key}", json={"description": "now described"})
    assert changed.status_code == 200, changed.text
    assert _read(admins[1], key)["description"] == "now described"


def test_tags_favorites_and_reviews_show_at_once(
    pair: tuple[Server, Server], admins: tuple[Http, Http]
) -> None:
    key = _resource(pair[0])
    before = _kept(pair[1], admins[1], key)
    assert before["favorite"] is False and before["ratingCount"] == 0
    tag = make_tag(admins[0], make_domain(admins[0])["key"], "kept")
    associate(admins[0], key, tag["key"], state="ACCEPTED")
    tagged = _read(admins[1], key)
    assert "kept" in str(tagged)
    _kept(pair[1], admins[1], key)
    # The favorite is the admin's own: the same user, through the other process.
    assert admins[0].post(f"/favorites/{key}").status_code == 201
    assert _read(admins[1], key)["favorite"] is True
    _kept(pair[1], admins[1], key)
    review = admins[0].post("/reviews", json={"entityKey": key, "rating": 2})
    assert review.status_code == 201, review.text
    assert _read(admins[1], key)["ratingCount"] == 1


def test_answers_are_kept_per_caller(
    pair: tuple[Server, Server], admins: tuple[Http, Http]
) -> None:
    first, second = pair
    key = _resource(first)
    assert admins[1].post(f"/favorites/{key}").status_code == 201
    assert _kept(second, admins[1], key)["favorite"] is True
    name = f"guest-{uuid.uuid4().hex[:6]}"
    create_user(admins[0], name, roles=[create_role(admins[0], name, "Guest")["name"]])
    guest = second.session(name, PASSWORD)
    assert guest.get(f"/dataresource/{key}").status_code == 404  # not the admin's answer


def test_writes_that_change_nothing_shown_keep_the_answers(
    pair: tuple[Server, Server], admins: tuple[Http, Http]
) -> None:
    first, second = pair
    key = _resource(first)
    _kept(second, admins[1], key)
    first.session()  # a login: sessions, throttle and audit rows
    assert admins[0].get("/logout").status_code == 200
    with statements(second) as seen:
        _read(admins[1], key)
    assert len(seen) == 1, seen


def test_a_change_made_behind_the_stores_back_shows_within_the_cache_seconds(
    pair: tuple[Server, Server], admins: tuple[Http, Http]
) -> None:
    first, second = pair
    key = _resource(first)
    reads = second.embedded.app.state.reads
    seconds = reads.seconds
    reads.seconds = 0.5
    try:
        _kept(second, admins[1], key)
        engine = create_engine(first.embedded.settings.store_url, poolclass=NullPool)
        with engine.begin() as conn:  # not through Store: no generation moves
            conn.execute(text("UPDATE data_resources SET description = 'by hand' "
                              "WHERE key = :key"), {"key": key})
        engine.dispose()
        time.sleep(0.6)
        assert _read(admins[1], key)["description"] == "by hand"
    finally:
        reads.seconds = seconds


# -- the catalog generation -----------------------------------------------------------------------


def _generation(store: Store) -> int:
    return generation(store, "catalog")


def _bumps(store: Store, change: Callable[[Connection], object]) -> int:
    return generation_bumps(store, "catalog", change)


def test_committed_changes_move_the_catalog_generation_once_each(store: Store) -> None:
    key = resource_key(store, profile_many(store, "counted", 2), "area0/file00000.csv")
    assert _bumps(store, lambda conn: conn.execute(
        text("UPDATE data_resources SET owner = 'x' WHERE key = :k"), {"k": key})) == 1
    assert _bumps(store, lambda conn: conn.exec_driver_sql(
        "DELETE FROM resource_custom_values WHERE resource_key = 'nothing'")) == 1

    def several(conn: Connection) -> None:
        for owner in ("a", "b", "c"):
            conn.execute(text("UPDATE data_resources SET owner = :o"), {"o": owner})

    assert _bumps(store, several) == 1  # one transaction, one step
    with pytest.raises(RuntimeError), store.write() as conn:
        conn.execute(text("UPDATE data_resources SET owner = 'rolled back'"))
        raise RuntimeError("undo")
    assert _bumps(store, lambda conn: None) == 0


def test_bookkeeping_writes_leave_the_catalog_generation_alone(store: Store) -> None:
    before = _generation(store)
    with store.write() as conn:
        conn.execute(text(
            "INSERT INTO users (key, name, name_fold, attributes, prefilters_enabled, "
            "created_ms, changed_ms) VALUES ('u1', 'ana', 'ana', '{}', false, 1, 1)"))
    assert _generation(store) == before + 1  # users are the catalog's too (GET /user)
    token: dict[str, str] = {}

    def login(conn: Connection) -> None:
        token["t"] = session_store.open_session(conn, "u1", None, 1)

    assert _bumps(store, login) == 0
    assert _bumps(store, lambda conn: session_store.touch(conn, token["t"], 2)) == 0
    assert _bumps(store, lambda conn: conn.exec_driver_sql(
        "INSERT INTO login_throttle (scope, failures, last_ms) VALUES ('s', 1, 1)")) == 0
    assert _bumps(store, lambda conn: session_store.close_session(conn, token["t"])) == 0


def test_a_search_keeps_cached_reads(pair: tuple[Server, Server]) -> None:
    # Every /search/new stores its result: that is the caller's bookkeeping, not a change to
    # the catalog, so searching must not empty every process's read cache.
    first, _ = pair
    http = first.session()
    key = _resource(first)
    _kept(first, http, key)
    before = _generation(first.store)
    found = http.post("/search/new", json={"searchPhrase": "file00000"})
    assert found.status_code == 201, found.text
    assert _generation(first.store) == before
    _kept(first, http, key)


def test_requests_that_miss_at_once_share_one_read(
    pair: tuple[Server, Server], admins: tuple[Http, Http]
) -> None:
    first, second = pair
    key = _resource(first)
    _read(admins[1], key)  # the caller's identity cached; then the answer forgotten
    second.embedded.app.state.reads.clear()
    with statements(second) as seen, ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda _: admins[1].get(f"/dataresource/{key}"), range(16)))
    assert {a.status_code for a in answers} == {200}
    reads = [s for s in seen if s.startswith("SELECT") and "FROM resource_fields" in s]
    assert len(reads) == 1, reads


def test_one_fill_serves_every_waiter_its_result_or_its_error() -> None:
    calls = []

    async def scenario() -> None:
        flights: SingleFlight[int] = SingleFlight()

        async def fill() -> int:
            calls.append(1)
            await asyncio.sleep(0.05)
            return 42

        assert await asyncio.gather(*(flights.run("k", fill) for _ in range(10))) == [42] * 10

        async def fail() -> int:
            calls.append(1)
            await asyncio.sleep(0.05)
            raise LookupError("gone")

        results = await asyncio.gather(*(flights.run("k", fail) for _ in range(5)),
                                       return_exceptions=True)
        assert all(isinstance(r, LookupError) for r in results)

    asyncio.run(scenario())
    assert len(calls) == 2
