"""Callers' identities are cached per process, and never outlive a change made in another.

Two services share one store (two applications, each with its own cache, as two processes of one
deployment would be): a change made through one takes effect on the very next request to the
other. ``tests/test_serve_workers.py`` checks the same across the worker processes of
``catalog-nb serve --workers 2``. Below them, the store's auth generation is bumped by every
write to users, their roles, roles and grants, whoever makes it, and by nothing else.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
from sqlalchemy import Connection, text

from catalog_nb.server.callers import CallerCache, Identity
from catalog_nb.server.store import Store
from catalog_nb.server.store import roles as role_store
from catalog_nb.server.store import sessions as session_store
from catalog_nb.server.store import users as user_store
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    create_role,
    create_user,
    generation,
    generation_bumps,
)
from tests.server.lake import profile_many, resource_key
from tests.server.test_request_path import statements


@pytest.fixture(scope="module")
def pair(make_server: Callable[..., Server]) -> tuple[Server, Server]:
    """Two services on one store."""
    first = make_server()
    second = make_server(db_url=first.embedded.settings.store_url)
    return first, second


@pytest.fixture(scope="module")
def admin(pair: tuple[Server, Server]) -> Http:
    return pair[0].session()


def _member(pair: tuple[Server, Server], admin: Http, roles: list[str]) -> tuple[str, Http, Http]:
    """A new user with ``roles``: (key, a session through the first service, the same cookie
    sent to the second)."""
    name = f"member-{uuid.uuid4().hex[:8]}"
    key = create_user(admin, name, roles=roles)["key"]
    first = pair[0].session(name, PASSWORD)
    second = pair[1].anonymous()
    second.cookies.update(first.cookies)
    return key, first, second


def _role_names(http: Http) -> set[str]:
    response = http.get("/user/list/roles")
    assert response.status_code == 200, response.text
    return {r["name"] for r in response.json()}


def test_a_role_taken_away_through_one_service_is_gone_at_the_others_next_request(
    pair: tuple[Server, Server], admin: Http
) -> None:
    key, _, elsewhere = _member(pair, admin, ["Steward", "Analyst"])
    assert _role_names(elsewhere) == {"Steward", "Analyst"}  # cached there now
    assert elsewhere.get("/user/permit/source", params={"dataSourceName": "x"}).status_code != 403
    removed = admin.post("/user/remove/role", json={key: ["Steward"]})
    assert removed.status_code == 201, removed.text
    assert _role_names(elsewhere) == {"Analyst"}
    assert elsewhere.get("/user/permit/source",
                         params={"dataSourceName": "x"}).status_code == 403


def test_a_logout_through_one_service_ends_the_session_in_the_other(
    pair: tuple[Server, Server], admin: Http
) -> None:
    _, here, elsewhere = _member(pair, admin, ["Analyst"])
    assert elsewhere.get("/version").status_code == 200
    assert here.get("/logout").status_code == 200
    refused = elsewhere.get("/version")
    assert refused.status_code == 401, refused.text
    assert refused.json()["errorCode"] == "AUTHENTICATION_REQUIRED"


def test_a_new_password_ends_the_users_sessions_in_every_service(
    pair: tuple[Server, Server], admin: Http
) -> None:
    key, _, elsewhere = _member(pair, admin, ["Analyst"])
    assert elsewhere.get("/version").status_code == 200
    changed = admin.put(f"/user/{key}", json={"password": "another-password-2"})
    assert changed.status_code == 204, changed.text
    assert elsewhere.get("/version").status_code == 401


def test_a_deleted_user_is_refused_by_the_other_service(
    pair: tuple[Server, Server], admin: Http
) -> None:
    key, _, elsewhere = _member(pair, admin, ["Analyst"])
    assert elsewhere.get("/version").status_code == 200
    assert admin.delete(f"/user/{key}").status_code == 204
    assert elsewhere.get("/version").status_code == 401


def test_a_grant_changed_through_one_service_changes_what_the_other_shows(
    pair: tuple[Server, Server], admin: Http
) -> None:
    first, _ = pair
    source = profile_many(first.store, f"granted-{uuid.uuid4().hex[:6]}", 1)
    resource = resource_key(first.store, source, "area0/file00000.csv")
    role = create_role(admin, f"readers-{uuid.uuid4().hex[:6]}", "Guest")
    _, _, elsewhere = _member(pair, admin, [role["name"]])
    assert elsewhere.get(f"/dataresource/{resource}").status_code == 404
    granted = admin.put(f"/user/role/{role['key']}", json={"dataSourceKeys": [source]})
    assert granted.status_code == 200, granted.text
    assert elsewhere.get(f"/dataresource/{resource}").status_code == 200
    revoked = admin.put(f"/user/role/{role['key']}", json={"dataSourceKeys": []})
    assert revoked.status_code == 200, revoked.text
    assert elsewhere.get(f"/dataresource/{resource}").status_code == 404


def test_a_cached_caller_costs_one_statement_until_the_generation_moves(
    pair: tuple[Server, Server], admin: Http
) -> None:
    _, second = pair
    _, _, elsewhere = _member(pair, admin, ["Analyst"])
    elsewhere.get("/version")
    with statements(second) as seen:
        assert elsewhere.get("/version").status_code == 200
    assert len(seen) == 1, seen
    create_role(admin, f"unrelated-{uuid.uuid4().hex[:6]}")  # any auth write moves it
    with statements(second) as seen:
        assert elsewhere.get("/version").status_code == 200
    assert len(seen) > 1, seen  # read again
    with statements(second) as seen:
        assert elsewhere.get("/version").status_code == 200
    assert len(seen) == 1, seen


# -- the generation in the store ------------------------------------------------------------------


def _generation(store: Store) -> int:
    return generation(store, "auth")


def _bumps(store: Store, change: Callable[[Connection], object]) -> int:
    return generation_bumps(store, "auth", change)


def test_every_write_to_users_roles_and_grants_moves_the_generation(store: Store) -> None:
    with store.write() as conn:
        for name in ("Administrator", "Analyst"):
            role_store.create(conn, {"name": name, "access_level": name,
                                     "metadata_access_option": "ALL",
                                     "data_access_option": "ALL"}, {})
        admin = user_store.create(conn, {"name": "root"}, ["Administrator"], "test")
    made: dict[str, str] = {}

    def create_user_(conn: Connection) -> None:
        made["user"] = user_store.create(conn, {"name": "ana"}, ["Analyst"], "test").key

    def create_role_(conn: Connection) -> None:
        made["role"] = role_store.create(
            conn, {"name": "Readers", "access_level": "Guest", "metadata_access_option": "ALL",
                   "data_access_option": "NONE"}, {}).key

    changes: list[Callable[[Connection], object]] = [
        create_user_,
        create_role_,
        lambda conn: user_store.update_user(conn, made["user"], {"description": "x"}, None,
                                            "test"),
        lambda conn: user_store.assign_role(conn, made["user"], "Readers", "test"),
        lambda conn: user_store.remove_roles(conn, made["user"], ["Readers"]),
        lambda conn: user_store.set_password_hash(conn, made["user"], "scrypt$1$1$1$AA==$AA=="),
        lambda conn: role_store.update_role(conn, made["role"], {"description": "y"}, {}),
        lambda conn: role_store.update_role(conn, made["role"], {}, {"DOMAIN": []}),
        lambda conn: role_store.delete_role(conn, made["role"]),
        lambda conn: user_store.delete_user(conn, made["user"], admin.key),
        # Whoever writes, even bypassing the store's functions:
        lambda conn: conn.execute(text("UPDATE users SET description = 'by hand'")),
    ]
    for change in changes:
        assert _bumps(store, change) >= 1, change


def test_reads_sessions_and_logins_leave_the_generation_alone(store: Store) -> None:
    with store.write() as conn:
        role_store.create(conn, {"name": "Administrator", "access_level": "Administrator",
                                 "metadata_access_option": "ALL", "data_access_option": "ALL"},
                          {})
        user = user_store.create(conn, {"name": "root"}, ["Administrator"], "test")
    policy = session_store.SessionPolicy(idle_ms=60_000, max_ms=60_000)
    token: dict[str, str] = {}

    def open_(conn: Connection) -> None:
        token["t"] = session_store.open_session(conn, user.key, None, 1)

    assert _bumps(store, open_) == 0
    assert _bumps(store, lambda conn: session_store.touch(conn, token["t"], 2)) == 0
    assert _bumps(store, lambda conn: user_store.list_all(conn)) == 0
    assert _bumps(store, lambda conn: session_store.resolve(conn, token["t"], policy, 3)) == 0
    assert _bumps(store, lambda conn: session_store.close_session(conn, token["t"])) == 0


# -- the cache itself ------------------------------------------------------------------------------


def _identity(generation: int, loaded: float | None = None) -> Identity:
    return Identity(key="u", name="ana", roles=(), generation=generation,
                    loaded=time.monotonic() if loaded is None else loaded)


def test_the_cache_answers_only_for_the_generation_and_the_time_it_was_filled_for() -> None:
    cache = CallerCache(seconds=5.0)
    cache.put(_identity(7))
    assert cache.get("u", 7) is not None
    assert cache.get("u", 8) is None
    assert cache.get("u", None) is None
    assert cache.get("someone-else", 7) is None
    cache.put(_identity(7, loaded=time.monotonic() - 6.0))
    assert cache.get("u", 7) is None  # older than its seconds


def test_a_full_cache_drops_what_is_stale_first() -> None:
    cache = CallerCache(seconds=5.0, max_entries=3)
    for key in ("a", "b"):
        cache.put(Identity(key=key, name=key, roles=(), generation=1, loaded=time.monotonic()))
    cache.put(Identity(key="c", name="c", roles=(), generation=2, loaded=time.monotonic()))
    cache.put(Identity(key="d", name="d", roles=(), generation=2, loaded=time.monotonic()))
    assert cache.get("c", 2) is not None and cache.get("d", 2) is not None
    assert cache.get("a", 1) is None
