"""Reviews over HTTP: one per user and resource, the resource's averageRating/ratingCount,
author-only changes, bad ratings and payloads, visibility, roles and the audit trail."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import func, select

from catalog_nb.contract import ErrorCode
from catalog_nb.server.store.schema import reviews
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, assert_error, audit_search, create_role, create_user
from tests.server.lake import profile_folder, resource_key, write_files

CSV = "id,name\n1,a\n2,b\n"


@dataclass
class World:
    keys: dict[str, str]
    users: dict[str, Http]
    names: dict[str, str]


@pytest.fixture(scope="module")
def world(live_server: Server, admin: Http, tmp_path_factory: pytest.TempPathFactory) -> World:
    tag = uuid.uuid4().hex[:8]
    shown = profile_folder(live_server.store, f"rev-shown-{tag}", write_files(
        tmp_path_factory.mktemp("rev"), {"a.csv": CSV, "b.csv": CSV, "c.csv": CSV}))
    hidden = profile_folder(live_server.store, f"rev-hidden-{tag}", write_files(
        tmp_path_factory.mktemp("revh"), {"secret.csv": CSV}))
    keys = {p: resource_key(live_server.store, shown, p) for p in ("a.csv", "b.csv", "c.csv")}
    keys["secret.csv"] = resource_key(live_server.store, hidden, "secret.csv")
    analysts = create_role(admin, f"Rev-{tag}", "Analyst", dataSourceKeys=[shown])
    guests = create_role(admin, f"RevGuest-{tag}", "Guest", dataSourceKeys=[shown])
    users, names = {}, {}
    for who, role in (("ana", analysts), ("bob", analysts), ("guest", guests)):
        names[who] = f"rev-{who}-{tag}"
        create_user(admin, names[who], roles=[role["name"]])
        users[who] = live_server.session(names[who], PASSWORD)
    return World(keys, users, names)


def post_review(http: Http, key: str, rating: Any = 4, **extra: Any) -> dict[str, Any]:
    response = http.post("/reviews", json={"entityKey": key, "rating": rating, **extra})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def stored_reviews(server: Server) -> int:
    with server.store.read() as conn:
        return int(conn.execute(select(func.count()).select_from(reviews)).scalar_one())


def test_reviews_make_the_resources_average_and_count(world: World) -> None:
    key = world.keys["a.csv"]
    ana, bob = world.users["ana"], world.users["bob"]
    fresh = ana.get(f"/dataresource/{key}").json()
    assert fresh["averageRating"] == 0.0 and fresh["ratingCount"] == 0
    mine = post_review(ana, key, 5, title="Clean", text="Well documented.")
    assert mine["userName"] == world.names["ana"] and mine["entityKey"] == key
    assert mine["rating"] == 5 and mine["title"] == "Clean" and mine["resourcePath"] == "a.csv"
    assert mine["timeOfCreation"] == mine["timeOfLastChange"] > 0
    post_review(bob, key, 2)
    resource = bob.get(f"/dataresource/{key}").json()
    assert resource["averageRating"] == 3.5 and resource["ratingCount"] == 2
    listed = ana.get("/reviews", params={"entityKey": key}).json()
    assert listed["totalCount"] == 2 and listed["averageRating"] == 3.5
    assert listed["ratingCount"] == 2
    assert {r["userName"] for r in listed["list"]} == {world.names["ana"], world.names["bob"]}
    assert ana.get(f"/reviews/{mine['key']}").json() == mine

    changed = ana.put(f"/reviews/{mine['key']}", json={"rating": 3, "title": None})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert body["rating"] == 3 and body["title"] is None and body["text"] == "Well documented."
    assert body["timeOfLastChange"] >= mine["timeOfLastChange"]
    # The read form can be sent back: its derived properties are ignored.
    resent = ana.put(f"/reviews/{mine['key']}", json={**body, "text": "Still good."})
    assert resent.status_code == 200 and resent.json()["text"] == "Still good."
    assert ana.get(f"/dataresource/{key}").json()["averageRating"] == 2.5

    own = ana.get("/reviews").json()
    assert [r["key"] for r in own["list"]] == [mine["key"]] and own["averageRating"] == 3.0

    assert ana.delete(f"/reviews/{mine['key']}").status_code == 204
    assert_error(ana.get(f"/reviews/{mine['key']}"), 404, ErrorCode.REVIEW_NOT_FOUND.value)
    after = ana.get(f"/dataresource/{key}").json()
    assert after["averageRating"] == 2.0 and after["ratingCount"] == 1


def test_one_review_per_user_and_resource(live_server: Server, world: World) -> None:
    key = world.keys["b.csv"]
    first = post_review(world.users["ana"], key, 4)
    before = stored_reviews(live_server)
    body = assert_error(world.users["ana"].post("/reviews", json={"entityKey": key, "rating": 1}),
                        409, ErrorCode.DUPLICATE_REVIEW.value, "update")
    assert body["reviewKey"] == first["key"]
    assert stored_reviews(live_server) == before


@pytest.mark.parametrize("rating", [0, 6, -1, 4.5, "5", True, None, [5]])
def test_a_rating_outside_1_to_5_or_not_whole_is_400(
    live_server: Server, world: World, rating: Any
) -> None:
    before = stored_reviews(live_server)
    response = world.users["bob"].post(
        "/reviews", json={"entityKey": world.keys["c.csv"], "rating": rating})
    assert_error(response, 400, ErrorCode.INVALID_RATING.value, "1", "5")
    assert stored_reviews(live_server) == before


def test_bad_payloads_are_400_and_write_nothing(live_server: Server, world: World) -> None:
    ana, key = world.users["ana"], world.keys["c.csv"]
    before = stored_reviews(live_server)
    cases = [
        {"entityKey": key, "rating": 3, "title": "x" * 201},
        {"entityKey": key, "rating": 3, "text": "x" * 10_001},
        {"entityKey": key, "rating": 3, "stars": 3},
        {"rating": 3},
    ]
    for body in cases:
        assert_error(ana.post("/reviews", json=body), 400, ErrorCode.INVALID_PAYLOAD.value)
    assert stored_reviews(live_server) == before
    review = post_review(ana, key, 3, title="ok")
    assert_error(ana.put(f"/reviews/{review['key']}", json={"rating": 9}), 400,
                 ErrorCode.INVALID_RATING.value)
    assert_error(ana.put(f"/reviews/{review['key']}", json={"entityKey": world.keys["a.csv"]}),
                 400, ErrorCode.INVALID_PAYLOAD.value, "cannot move")
    assert ana.get(f"/reviews/{review['key']}").json()["rating"] == 3
    assert ana.delete(f"/reviews/{review['key']}").status_code == 204


def test_invisible_resources_and_their_reviews_are_404(
    live_server: Server, admin: Http, world: World
) -> None:
    secret = world.keys["secret.csv"]
    before = stored_reviews(live_server)
    assert_error(world.users["ana"].post("/reviews", json={"entityKey": secret, "rating": 3}),
                 404, ErrorCode.RESOURCE_NOT_FOUND.value)
    assert_error(world.users["ana"].post("/reviews", json={"entityKey": "nope", "rating": 3}),
                 404, ErrorCode.RESOURCE_NOT_FOUND.value)
    assert stored_reviews(live_server) == before
    hidden_review = post_review(admin, secret, 1)
    for http in (world.users["ana"], world.users["guest"]):
        assert_error(http.get(f"/reviews/{hidden_review['key']}"), 404,
                     ErrorCode.REVIEW_NOT_FOUND.value)
        assert_error(http.get("/reviews", params={"entityKey": secret}), 404,
                     ErrorCode.RESOURCE_NOT_FOUND.value)
    assert_error(world.users["ana"].delete(f"/reviews/{hidden_review['key']}"), 404)
    assert admin.get(f"/reviews/{hidden_review['key']}").status_code == 200
    assert admin.delete(f"/reviews/{hidden_review['key']}").status_code == 204


def test_only_the_author_changes_and_the_author_or_an_administrator_deletes(
    admin: Http, world: World
) -> None:
    key = world.keys["c.csv"]
    bobs = post_review(world.users["bob"], key, 4)
    assert_error(world.users["ana"].put(f"/reviews/{bobs['key']}", json={"rating": 1}), 403,
                 ErrorCode.PERMISSION_DENIED.value, world.names["bob"])
    assert_error(world.users["ana"].delete(f"/reviews/{bobs['key']}"), 403,
                 ErrorCode.PERMISSION_DENIED.value)
    assert_error(admin.put(f"/reviews/{bobs['key']}", json={"rating": 1}), 403)
    assert world.users["ana"].get(f"/reviews/{bobs['key']}").json()["rating"] == 4
    assert admin.delete(f"/reviews/{bobs['key']}").status_code == 204


def test_guests_read_reviews_but_do_not_write_them(world: World) -> None:
    key = world.keys["a.csv"]
    guest = world.users["guest"]
    assert guest.get("/reviews", params={"entityKey": key}).status_code == 200
    assert_error(guest.post("/reviews", json={"entityKey": key, "rating": 3}), 403,
                 ErrorCode.PERMISSION_DENIED.value, "Analyst")


def test_review_writes_are_audited(admin: Http, world: World) -> None:
    ana = world.users["ana"]
    review = post_review(ana, world.keys["c.csv"], 2)
    assert ana.put(f"/reviews/{review['key']}", json={"rating": 3}).status_code == 200
    assert ana.delete(f"/reviews/{review['key']}").status_code == 204
    assert ana.post("/reviews", json={"entityKey": world.keys["secret.csv"],
                                      "rating": 3}).status_code == 404
    events = audit_search(admin, userName=world.names["ana"], objectType="REVIEW")
    seen = [(e["action"], e["outcome"]) for e in reversed(events)][-4:]
    assert seen == [("CREATE", "SUCCESS"), ("UPDATE", "SUCCESS"), ("DELETE", "SUCCESS"),
                    ("CREATE", "FAILURE")]
    assert all(e["objectKey"] == review["key"] for e in events[1:4])
