"""The audit trail: logins and writes (done or refused) are recorded; list, search, get, delete."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    Member,
    assert_error,
    audit_search,
    create_role,
    create_user,
)

EVENT_FIELDS = {
    "key", "time", "userName", "userKey", "action", "objectType", "objectKey", "objectName",
    "outcome", "message", "clientAddress",
}


def now_ms() -> int:
    return int(time.time() * 1000)


def only(events: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    found = [e for e in events if all(e.get(k) == v for k, v in match.items())]
    assert len(found) == 1, (match, events)
    return found[0]


# -- what is recorded --------------------------------------------------------------------------


def test_logins_are_recorded_whatever_their_outcome(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("auditee")
    user = create_user(admin, name)
    start = now_ms()
    anonymous = live_server.anonymous()
    live_server.session(name, PASSWORD)
    for _ in range(5):  # the default throttle locks the name at the fifth failure
        assert anonymous.post("/login", json={"username": name, "password": "wrong-pw"}
                              ).status_code == 401
    locked = anonymous.post("/login", json={"username": name, "password": PASSWORD})
    assert locked.status_code == 429

    events = audit_search(admin, userName=name, action="LOGIN")
    assert len(events) == 7
    assert all(e["objectType"] == "SESSION" and e["objectName"] == name for e in events)
    assert all(e["time"] >= start - 1000 for e in events)
    success = only(events, outcome="SUCCESS")
    assert success["objectKey"] == user["key"]
    failures = [e for e in events if e["outcome"] == "FAILURE"]
    assert len(failures) == 6
    assert sum("throttled" in (e["message"] or "") for e in failures) == 1
    assert events == sorted(events, key=lambda e: e["time"], reverse=True)
    # An unknown name is recorded too.
    ghost = unique("ghost")
    anonymous.post("/login", json={"username": ghost, "password": "wrong-pw"})
    (event,) = audit_search(admin, userName=ghost)
    assert (event["action"], event["outcome"], event["objectKey"]) == ("LOGIN", "FAILURE", None)


def test_each_write_is_recorded_with_who_what_and_outcome(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    start = now_ms()
    user = create_user(admin, unique("trail"), roles=["Analyst"])
    key = user["key"]
    role = create_role(admin, unique("TrailRole"), "Guest")
    assert admin.put(f"/user/{key}", json={"description": "x"}).status_code == 204
    assert admin.put(f"/user/{key}", json={"password": "another-password"}).status_code == 204
    assert admin.post("/user/assign/role",
                      json={"userName": user["name"], "roleName": role["name"]}).status_code == 201
    assert admin.post("/user/remove/role", json={key: [role["name"]]}).status_code == 201
    assert admin.put(f"/user/role/{role['key']}", json={"description": "y"}).status_code == 200
    assert admin.delete(f"/user/role/{role['key']}").status_code == 204
    assert admin.delete(f"/user/{key}").status_code == 204
    end = now_ms()

    on_user = audit_search(admin, objectKey=key)
    assert [e["action"] for e in reversed(on_user)] == [
        "CREATE", "UPDATE", "SET_PASSWORD", "ASSIGN_ROLE", "REMOVE_ROLE", "DELETE"]
    on_role = audit_search(admin, objectKey=role["key"])
    assert [e["action"] for e in reversed(on_role)] == ["CREATE", "UPDATE", "DELETE"]
    for event in on_user + on_role:
        assert set(event) >= EVENT_FIELDS
        assert event["userName"] == "admin"
        assert event["userKey"] == admin.get("/user/_me").json()["key"]
        assert event["outcome"] == "SUCCESS"
        assert start - 1000 <= event["time"] <= end + 1000
        assert event["clientAddress"] == "127.0.0.1"
    assert {e["objectType"] for e in on_user} == {"USER"}
    assert {e["objectType"] for e in on_role} == {"ROLE"}
    assert {e["objectName"] for e in on_user} == {user["name"]}
    assert {e["objectName"] for e in on_role} == {role["name"]}
    assert "another-password" not in str(on_user)


def test_own_preferences_and_logout_are_recorded(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("prefs"))
    http = live_server.session(user["name"], PASSWORD)
    assert http.put("/user/_me", json={"prefiltersEnabled": True}).status_code == 204
    assert http.get("/logout").status_code == 200  # the product's {redirectUrl, message}
    events = audit_search(admin, userName=user["name"])
    update = only(events, action="UPDATE")
    assert (update["objectKey"], update["outcome"]) == (user["key"], "SUCCESS")
    logout = only(events, action="LOGOUT")
    assert (logout["objectType"], logout["outcome"]) == ("SESSION", "SUCCESS")


def test_refused_writes_are_recorded_as_failures_with_the_reason(
    admin: Http, members: dict[str, Member], unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("refused"), roles=["Analyst"])
    assert admin.post("/user", json={"name": user["name"]}).status_code == 409
    assert admin.post("/user/remove/role", json={user["key"]: ["Analyst"]}).status_code == 409
    missing = unique("missing-key")
    assert admin.delete(f"/user/{missing}").status_code == 404
    analyst = members["Analyst"]
    assert analyst.http.delete(f"/user/{user['key']}").status_code == 403

    duplicate = only(audit_search(admin, action="CREATE", outcome="FAILURE", userName="admin"),
                     objectName=user["name"])
    assert ErrorCode.DUPLICATE_NAME.value in duplicate["message"]
    assert duplicate["objectType"] == "USER"

    on_user = audit_search(admin, objectKey=user["key"], outcome="FAILURE")
    last_role = only(on_user, action="REMOVE_ROLE")
    assert ErrorCode.LAST_ROLE.value in last_role["message"]
    denied = only(on_user, action="DELETE")
    assert denied["userName"] == analyst.name and denied["userKey"] == analyst.key
    assert ErrorCode.PERMISSION_DENIED.value in denied["message"]

    (unknown,) = audit_search(admin, objectKey=missing)
    assert (unknown["action"], unknown["outcome"]) == ("DELETE", "FAILURE")
    assert ErrorCode.USER_NOT_FOUND.value in unknown["message"]


# -- search ------------------------------------------------------------------------------------


def test_search_filters_combine(
    admin: Http, members: dict[str, Member], unique: Callable[[str], str]
) -> None:
    steward = members["Steward"]
    start = now_ms()
    user = create_user(admin, unique("filtered"))
    steward.http.put(f"/user/{user['key']}", json={"description": "nope"})  # refused: 403
    admin.put(f"/user/{user['key']}", json={"description": "yes"})
    end = now_ms()

    assert len(audit_search(admin, objectKey=user["key"])) == 3
    assert [e["action"] for e in audit_search(admin, objectKey=user["key"], action="CREATE")] == [
        "CREATE"]
    by_steward = audit_search(admin, userName=steward.name.upper(), objectKey=user["key"])
    assert [(e["action"], e["outcome"]) for e in by_steward] == [("UPDATE", "FAILURE")]
    assert [e["userName"] for e in audit_search(
        admin, objectKey=user["key"], outcome="SUCCESS", action="UPDATE")] == ["admin"]
    assert audit_search(admin, objectKey=user["key"], objectType="ROLE") == []
    assert len(audit_search(admin, objectKey=user["key"], objectType="USER",
                            fromTime=start - 1000, toTime=end + 1000)) == 3
    assert audit_search(admin, objectKey=user["key"], toTime=start - 60_000) == []
    assert audit_search(admin, objectKey=user["key"], fromTime=end + 60_000) == []
    everything = audit_search(admin, fromTime=start - 1000, toTime=end + 1000)
    assert {e["key"] for e in audit_search(admin, objectKey=user["key"])} <= {
        e["key"] for e in everything}


@pytest.mark.parametrize(
    "body",
    [
        {"action": "EXPLODE"},
        {"outcome": "MAYBE"},
        {"objectType": "PLANET"},
        {"fromTime": "yesterday"},
        {"fromTime": -1},
        {"size": 0},
        {"size": 100_000},
        {"from": -1},
        {"colour": "red"},
    ],
)
def test_bad_search_criteria_are_400(admin: Http, body: dict[str, Any]) -> None:
    assert_error(admin.post("/auditevent/search", json=body), 400,
                 ErrorCode.INVALID_PAYLOAD.value)


# -- paging, get, delete -----------------------------------------------------------------------


def test_list_pages_newest_first(admin: Http, unique: Callable[[str], str]) -> None:
    for _ in range(3):
        create_user(admin, unique("pager"), password=None)
    first = admin.get("/auditevent/list", params={"from": 0, "size": 4})
    assert first.status_code == 200
    page = first.json()
    assert (page["from"], page["size"]) == (0, 4)
    assert len(page["list"]) == 4 and page["totalCount"] >= 4
    assert page["list"][0]["action"] == "CREATE"  # the newest event is the last write
    times = [e["time"] for e in page["list"]]
    assert times == sorted(times, reverse=True)
    second = admin.get("/auditevent/list", params={"from": 2, "size": 4}).json()
    assert [e["key"] for e in second["list"][:2]] == [e["key"] for e in page["list"][2:]]
    default = admin.get("/auditevent/list").json()
    assert default["from"] == 0 and len(default["list"]) == min(100, default["totalCount"])


def test_search_pages_cover_every_match_once(
    admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("paged"), password=None)
    for i in range(6):
        assert admin.put(f"/user/{user['key']}", json={"description": str(i)}).status_code == 204
    seen: list[str] = []
    for start in range(0, 8, 3):
        response = admin.post("/auditevent/search",
                              json={"objectKey": user["key"], "from": start, "size": 3})
        page = response.json()
        assert page["totalCount"] == 7
        assert page["from"] == start and page["size"] == 3
        seen.extend(e["key"] for e in page["list"])
    assert len(seen) == 7 == len(set(seen))
    beyond = admin.post("/auditevent/search", json={"objectKey": user["key"], "from": 50}).json()
    assert beyond["list"] == [] and beyond["totalCount"] == 7


@pytest.mark.parametrize(
    "params", [{"size": 0}, {"size": 1001}, {"from": -1}, {"size": "ten"}, {"from": 2**63}]
)
def test_bad_list_parameters_are_400(admin: Http, params: dict[str, Any]) -> None:
    assert_error(admin.get("/auditevent/list", params=params), 400,
                 ErrorCode.INVALID_PARAMETER.value)


def test_get_and_delete_one_event(admin: Http, unique: Callable[[str], str]) -> None:
    user = create_user(admin, unique("evented"), password=None)
    (event,) = audit_search(admin, objectKey=user["key"])
    got = admin.get(f"/auditevent/{event['key']}")
    assert got.status_code == 200 and got.json() == event

    deleted = admin.delete(f"/auditevent/{event['key']}")
    assert deleted.status_code == 204 and deleted.content == b""
    code = ErrorCode.AUDIT_EVENT_NOT_FOUND.value
    assert_error(admin.get(f"/auditevent/{event['key']}"), 404, code)
    assert_error(admin.delete(f"/auditevent/{event['key']}"), 404, code)
    assert audit_search(admin, objectKey=user["key"]) == []

    trail = audit_search(admin, objectKey=event["key"], objectType="AUDIT_EVENT")
    assert [(e["action"], e["outcome"], e["userName"]) for e in trail] == [
        ("DELETE", "FAILURE", "admin"), ("DELETE", "SUCCESS", "admin")]
    assert "CREATE" in trail[1]["message"]


def test_unknown_events_are_404(admin: Http) -> None:
    assert_error(admin.get("/auditevent/no-such-event"), 404,
                 ErrorCode.AUDIT_EVENT_NOT_FOUND.value)
