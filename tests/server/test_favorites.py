"""Favorites over HTTP: keep, list, flag on the resource, forget; visibility, roles, audit.

Two sources: the Analysts' role sees ``shown`` only; ``hidden`` is invisible to them. Every
answer is checked through the API; the store is read only to prove a refusal wrote nothing.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import func, select

from catalog_nb.contract import ErrorCode
from catalog_nb.server.store.schema import favorites
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    assert_error,
    audit_search,
    counted_statements,
    create_role,
    create_user,
)
from tests.server.lake import profile_folder, profile_many, resource_key, write_files

CSV = "id,name\n1,a\n2,b\n"


@dataclass
class World:
    tag: str
    shown: str
    hidden: str
    keys: dict[str, str]
    role: dict[str, Any]
    ana: Http
    ana_name: str
    bob: Http
    guest: Http


@pytest.fixture(scope="module")
def world(live_server: Server, admin: Http, tmp_path_factory: pytest.TempPathFactory) -> World:
    tag = uuid.uuid4().hex[:8]
    shown = profile_folder(live_server.store, f"fav-shown-{tag}", write_files(
        tmp_path_factory.mktemp("fav"), {"one.csv": CSV, "two.csv": CSV, "three.csv": CSV}))
    hidden = profile_folder(live_server.store, f"fav-hidden-{tag}", write_files(
        tmp_path_factory.mktemp("favh"), {"secret.csv": CSV}))
    keys = {p: resource_key(live_server.store, shown, p) for p in ("one.csv", "two.csv",
                                                                   "three.csv")}
    keys["secret.csv"] = resource_key(live_server.store, hidden, "secret.csv")
    role = create_role(admin, f"Fav-{tag}", "Analyst", dataSourceKeys=[shown])
    guests = create_role(admin, f"FavGuest-{tag}", "Guest", dataSourceKeys=[shown])
    sessions = {}
    for who, granted in (("ana", role), ("bob", role), ("guest", guests)):
        name = f"fav-{who}-{tag}"
        create_user(admin, name, roles=[granted["name"]])
        sessions[who] = live_server.session(name, PASSWORD)
    return World(tag, shown, hidden, keys, role, sessions["ana"], f"fav-ana-{tag}",
                 sessions["bob"], sessions["guest"])


def favorites_of(http: Http) -> dict[str, Any]:
    response = http.get("/favorites")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert body["totalCount"] == len(body["list"])
    return body


def stored_count(server: Server) -> int:
    with server.store.read() as conn:
        return int(conn.execute(select(func.count()).select_from(favorites)).scalar_one())


def test_keep_list_flag_and_forget_a_favorite(world: World) -> None:
    one, two = world.keys["one.csv"], world.keys["two.csv"]
    first = world.ana.post(f"/favorites/{one}")
    assert first.status_code == 201, first.text
    assert first.json()["entityKey"] == one and first.json()["favoriteTime"] > 0
    again = world.ana.post(f"/favorites/{one}")
    assert again.status_code == 200 and again.json() == first.json()
    assert world.ana.post(f"/favorites/{two}").status_code == 201

    listed = favorites_of(world.ana)
    assert [r["key"] for r in listed["list"]] == [two, one]  # newest first
    item = listed["list"][1]
    assert item["favorite"] is True and item["favoriteTime"] == first.json()["favoriteTime"]
    assert item["resourcePath"] == "one.csv" and "fields" not in item

    # The flag is the caller's: Bob sees the same resource unflagged.
    assert world.ana.get(f"/dataresource/{one}").json()["favorite"] is True
    assert world.bob.get(f"/dataresource/{one}").json()["favorite"] is False
    page = world.ana.get("/dataresource/metadata",
                         params={"propertyFilter": f"id:{one};{world.keys['three.csv']}"}).json()
    assert {r["key"]: r["favorite"] for r in page["list"]} == {
        one: True, world.keys["three.csv"]: False}
    assert favorites_of(world.bob)["totalCount"] == 0

    assert world.ana.delete(f"/favorites/{one}").status_code == 204
    assert_error(world.ana.delete(f"/favorites/{one}"), 404, ErrorCode.FAVORITE_NOT_FOUND.value)
    assert [r["key"] for r in favorites_of(world.ana)["list"]] == [two]
    assert world.ana.get(f"/dataresource/{one}").json()["favorite"] is False
    assert world.ana.delete(f"/favorites/{two}").status_code == 204


def test_an_invisible_or_unknown_resource_cannot_be_a_favorite(
    live_server: Server, world: World
) -> None:
    before = stored_count(live_server)
    for key in (world.keys["secret.csv"], "no-such-resource"):
        assert_error(world.ana.post(f"/favorites/{key}"), 404,
                     ErrorCode.RESOURCE_NOT_FOUND.value, key)
    assert stored_count(live_server) == before
    assert_error(world.ana.delete(f"/favorites/{world.keys['secret.csv']}"), 404,
                 ErrorCode.FAVORITE_NOT_FOUND.value)


def test_a_favorite_no_longer_visible_leaves_the_list_and_comes_back(
    admin: Http, world: World
) -> None:
    key = world.keys["three.csv"]
    assert world.bob.post(f"/favorites/{key}").status_code == 201
    role = world.role
    assert admin.put(f"/user/role/{role['key']}", json={"dataSourceKeys": []}).status_code == 200
    try:
        assert favorites_of(world.bob) == {"list": [], "totalCount": 0}
        assert_error(world.bob.post(f"/favorites/{key}"), 404, ErrorCode.RESOURCE_NOT_FOUND.value)
    finally:
        restored = admin.put(f"/user/role/{role['key']}",
                             json={"dataSourceKeys": [world.shown]})
        assert restored.status_code == 200, restored.text
    assert [r["key"] for r in favorites_of(world.bob)["list"]] == [key]
    assert world.bob.delete(f"/favorites/{key}").status_code == 204


def test_guests_read_but_do_not_keep_favorites(live_server: Server, world: World) -> None:
    assert favorites_of(world.guest) == {"list": [], "totalCount": 0}
    key = world.keys["one.csv"]
    assert world.guest.get(f"/dataresource/{key}").status_code == 200
    assert_error(world.guest.post(f"/favorites/{key}"), 403, ErrorCode.PERMISSION_DENIED.value,
                 "Analyst")
    assert_error(world.guest.delete(f"/favorites/{key}"), 403,
                 ErrorCode.PERMISSION_DENIED.value)
    anonymous = live_server.anonymous()
    assert_error(anonymous.get("/favorites"), 401)
    assert_error(anonymous.post(f"/favorites/{key}"), 401)


def test_favorite_writes_are_audited(admin: Http, world: World) -> None:
    key = world.keys["two.csv"]
    assert world.ana.post(f"/favorites/{key}").status_code == 201
    assert world.ana.delete(f"/favorites/{key}").status_code == 204
    assert world.ana.post(f"/favorites/{world.keys['secret.csv']}").status_code == 404
    events = audit_search(admin, userName=world.ana_name, objectType="FAVORITE")
    seen = [(e["action"], e["outcome"], e["objectKey"]) for e in reversed(events)]
    assert seen[-3:] == [("CREATE", "SUCCESS", key), ("DELETE", "SUCCESS", key),
                         ("CREATE", "FAILURE", world.keys["secret.csv"])]


def test_flags_and_ratings_cost_the_same_queries_whatever_the_page_size(
    live_server: Server, admin: Http
) -> None:
    name = f"favmany-{uuid.uuid4().hex[:8]}"
    profile_many(live_server.store, name, 400)
    params: dict[str, Any] = {"propertyFilter": f"data_source:{name}"}
    first = admin.get("/dataresource/metadata", params={**params, "pageSize": 1}).json()
    key = first["list"][0]["key"]
    assert admin.post(f"/favorites/{key}").status_code == 201
    review = admin.post("/reviews", json={"entityKey": key, "rating": 4})
    assert review.status_code == 201, review.text
    with counted_statements(live_server, ("favorites", "reviews")) as small:
        one = admin.get("/dataresource/metadata", params={**params, "pageSize": 5})
    with counted_statements(live_server, ("favorites", "reviews")) as large:
        page = admin.get("/dataresource/metadata", params={**params, "pageSize": 400})
    assert one.status_code == page.status_code == 200
    assert len(large) == len(small) == 2, large
    listed = page.json()["list"]
    flagged = [r for r in listed if r["favorite"]]
    assert [r["key"] for r in flagged] == [key]
    assert flagged[0]["averageRating"] == 4.0 and flagged[0]["ratingCount"] == 1
    assert sum(r["ratingCount"] for r in listed) == 1
