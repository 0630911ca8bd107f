"""Users: CRUD, look-ups, /user/_me, roles (default, replace, assign, remove), passwords, search."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest

from catalog_nb.contract import ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    Member,
    assert_error,
    create_role,
    create_user,
    get_user,
    snapshot,
    user_by_name,
)

USER_FIELDS = {
    "key", "type", "name", "description", "richDescription", "timeOfCreation",
    "timeOfLastChange", "prefiltersEnabled", "assignedByMap", "accessLevels", "attributes",
    "roles", "admin", "passwordSet",
}


def no_password_in(response_text: str, password: str = PASSWORD) -> None:
    assert password not in response_text
    assert "scrypt$" not in response_text
    assert '"password"' not in response_text
    assert "passwordHash" not in response_text and "password_hash" not in response_text


# -- create, read, update, delete --------------------------------------------------------------


def test_create_user_answers_201_with_the_user(
    admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("ada")
    attributes = {"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.org"}
    response = admin.post("/user", json={
        "name": name, "description": "first programmer", "attributes": attributes,
        "roles": ["Steward"], "password": PASSWORD, "prefiltersEnabled": True,
    })
    assert response.status_code == 201, response.text
    no_password_in(response.text)
    user = response.json()
    assert set(user) >= USER_FIELDS
    assert user["key"] and user["type"] == "user"
    assert user["name"] == name
    assert user["description"] == "first programmer"
    assert user["attributes"] == attributes
    assert user["roles"] == ["Steward"]
    assert user["accessLevels"] == ["Steward"]
    assert user["admin"] is False
    assert user["passwordSet"] is True
    assert user["prefiltersEnabled"] is True
    assert user["assignedByMap"] == {"Steward": "admin"}
    assert isinstance(user["timeOfCreation"], int) and user["timeOfCreation"] > 1_600_000_000_000
    assert get_user(admin, user["key"]) == user


def test_read_a_user_by_key_by_name_and_by_query(
    admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("Reader")
    user = create_user(admin, name)
    assert get_user(admin, user["key"]) == user
    assert user_by_name(admin, name) == user
    assert user_by_name(admin, name.lower()) == user  # names are case-insensitive
    listed = admin.get("/user", params={"name": name})
    assert listed.status_code == 200 and listed.json() == [user]
    assert admin.get("/user", params={"name": unique("nobody")}).json() == []
    everyone = admin.get("/user")
    assert everyone.status_code == 200
    assert user in everyone.json()
    assert any(u["name"] == "admin" for u in everyone.json())
    no_password_in(everyone.text)


def test_unknown_users_are_404(admin: Http, unique: Callable[[str], str]) -> None:
    code = ErrorCode.USER_NOT_FOUND.value
    assert_error(admin.get("/user/no-such-key"), 404, code)
    assert_error(admin.get(f"/user/name/{unique('nobody')}"), 404, code)
    assert_error(admin.put("/user/no-such-key", json={"description": "x"}), 404, code)
    assert_error(admin.delete("/user/no-such-key"), 404, code)


def test_update_changes_only_what_the_body_names(
    admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("upd"), roles=["Guest"], description="before",
                       attributes={"email": "a@example.org"})
    response = admin.put(f"/user/{user['key']}", json={"description": "after"})
    assert response.status_code == 204 and response.content == b""
    after = get_user(admin, user["key"])
    assert after["description"] == "after"
    assert after["timeOfLastChange"] >= user["timeOfLastChange"]
    assert {k: v for k, v in after.items() if k not in ("description", "timeOfLastChange")} == {
        k: v for k, v in user.items() if k not in ("description", "timeOfLastChange")
    }


def test_rename_a_user_and_refuse_a_taken_name(
    admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("old"))
    other = create_user(admin, unique("taken"))
    new_name = unique("new")
    assert admin.put(f"/user/{user['key']}", json={"name": new_name}).status_code == 204
    assert user_by_name(admin, new_name)["key"] == user["key"]
    before = snapshot(admin)
    response = admin.put(f"/user/{user['key']}", json={"name": other["name"].upper()})
    assert_error(response, 409, ErrorCode.DUPLICATE_NAME.value)
    assert snapshot(admin) == before


def test_delete_a_user(admin: Http, unique: Callable[[str], str]) -> None:
    user = create_user(admin, unique("del"))
    response = admin.delete(f"/user/{user['key']}")
    assert response.status_code == 204 and response.content == b""
    assert_error(admin.get(f"/user/{user['key']}"), 404, ErrorCode.USER_NOT_FOUND.value)
    assert_error(admin.delete(f"/user/{user['key']}"), 404, ErrorCode.USER_NOT_FOUND.value)
    assert all(u["key"] != user["key"] for u in admin.get("/user").json())


def test_nobody_deletes_themselves(admin: Http, members: dict[str, Member]) -> None:
    me = admin.get("/user/_me").json()
    before = snapshot(admin)
    assert_error(admin.delete(f"/user/{me['key']}"), 409, ErrorCode.CANNOT_DELETE_SELF.value)
    assert snapshot(admin) == before


def test_a_second_administrator_may_delete_another_one(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    boss = create_user(admin, unique("boss"), roles=["Administrator"])
    doomed = create_user(admin, unique("doomed"), roles=["Administrator"])
    http = live_server.session(boss["name"], PASSWORD)
    assert http.delete(f"/user/{doomed['key']}").status_code == 204
    assert_error(http.delete(f"/user/{boss['key']}"), 409, ErrorCode.CANNOT_DELETE_SELF.value)


# -- /user/_me and /user/list/roles ------------------------------------------------------------


def test_me_is_the_caller(admin: Http, members: dict[str, Member]) -> None:
    me = admin.get("/user/_me")
    assert me.status_code == 200
    assert me.json()["name"] == "admin" and me.json()["admin"] is True
    for member in members.values():
        mine = member.http.get("/user/_me").json()
        assert mine["key"] == member.key and mine["name"] == member.name


def test_me_may_change_only_prefilters(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("prefs"), roles=["Guest"])
    http = live_server.session(user["name"], PASSWORD)
    assert user["prefiltersEnabled"] is False
    response = http.put("/user/_me", json={"prefiltersEnabled": True})
    assert response.status_code == 204 and response.content == b""
    assert http.get("/user/_me").json()["prefiltersEnabled"] is True
    # Strict types (issue 17): the text "false" is no boolean.
    assert http.put("/user/_me", json={"prefiltersEnabled": "false"}).status_code == 400
    assert http.put("/user/_me", json={"prefiltersEnabled": False}).status_code == 204
    assert http.get("/user/_me").json()["prefiltersEnabled"] is False

    before = snapshot(admin)
    for body in (
        {"prefiltersEnabled": True, "description": "sneaky"},
        {"name": "renamed"},
        {"roles": ["Administrator"]},
        {"admin": True},
        {},
        {"prefiltersEnabled": "perhaps"},
    ):
        assert_error(http.put("/user/_me", json=body), 400, ErrorCode.INVALID_PAYLOAD.value)
    assert snapshot(admin) == before


def test_list_roles_answers_the_callers_roles(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    mine = admin.get("/user/list/roles")
    assert mine.status_code == 200
    assert [r["name"] for r in mine.json()] == ["Administrator"]
    user = create_user(admin, unique("two-roles"), roles=["Steward", "Guest"])
    http = live_server.session(user["name"], PASSWORD)
    roles = http.get("/user/list/roles").json()
    assert sorted(r["name"] for r in roles) == ["Guest", "Steward"]
    assert {r["accessLevel"] for r in roles} == {"Guest", "Steward"}


# -- roles of a user ---------------------------------------------------------------------------


def test_a_user_created_without_roles_gets_the_default_roles(
    admin: Http, unique: Callable[[str], str]
) -> None:
    defaults = sorted(r["name"] for r in admin.get("/user/role").json() if r["defaultRole"])
    assert defaults, "the built-in roles include a default role"
    user = create_user(admin, unique("plain"))
    assert sorted(user["roles"]) == defaults


def test_default_roles_follow_the_role_flag(
    server: Server, fresh_admin: Http, unique: Callable[[str], str]
) -> None:
    extra = create_role(fresh_admin, unique("Extra"), "Guest", defaultRole=True)
    assert sorted(create_user(fresh_admin, unique("u1"))["roles"]) == sorted(
        ["Analyst", extra["name"]]
    )
    roles = {r["name"]: r for r in fresh_admin.get("/user/role").json()}
    for name in ("Analyst", extra["name"]):
        put = fresh_admin.put(f"/user/role/{roles[name]['key']}", json={"defaultRole": False})
        assert put.status_code == 200, put.text
    # No default role left: a user without roles cannot be created, and nothing is written.
    before = snapshot(fresh_admin)
    response = fresh_admin.post("/user", json={"name": unique("u2")})
    assert_error(response, 400, ErrorCode.INVALID_PAYLOAD.value)
    assert snapshot(fresh_admin) == before


def test_put_roles_replaces_the_roles(admin: Http, unique: Callable[[str], str]) -> None:
    user = create_user(admin, unique("swap"), roles=["Analyst"])
    response = admin.put(f"/user/{user['key']}", json={"roles": ["Guest", "Steward"]})
    assert response.status_code == 204
    after = get_user(admin, user["key"])
    assert after["roles"] == ["Guest", "Steward"]
    assert after["accessLevels"] == ["Steward", "Guest"]
    assert set(after["assignedByMap"]) == {"Guest", "Steward"}


def test_put_no_roles_is_refused(admin: Http, unique: Callable[[str], str]) -> None:
    user = create_user(admin, unique("keep"), roles=["Analyst"])
    before = snapshot(admin)
    assert_error(admin.put(f"/user/{user['key']}", json={"roles": []}), 409,
                 ErrorCode.LAST_ROLE.value)
    assert_error(admin.put(f"/user/{user['key']}", json={"roles": ["NoSuchRole"]}), 400,
                 ErrorCode.UNKNOWN_ROLE.value, "NoSuchRole")
    assert snapshot(admin) == before


def test_assign_role_answers_201_with_the_user(
    admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("assignee"), roles=["Guest"])
    response = admin.post("/user/assign/role",
                          json={"userName": user["name"], "roleName": "steward"})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["key"] == user["key"]
    assert body["roles"] == ["Guest", "Steward"]
    assert body["assignedByMap"]["Steward"] == "admin"
    assert get_user(admin, user["key"]) == body
    # Assigning a role the user holds changes nothing.
    again = admin.post("/user/assign/role", json={"userName": user["name"], "roleName": "Guest"})
    assert again.status_code == 201 and again.json()["roles"] == ["Guest", "Steward"]


def test_assign_role_refuses_unknown_names(admin: Http, unique: Callable[[str], str]) -> None:
    user = create_user(admin, unique("assignee"), roles=["Guest"])
    before = snapshot(admin)
    assert_error(
        admin.post("/user/assign/role", json={"userName": user["name"], "roleName": "Wizard"}),
        400, ErrorCode.UNKNOWN_ROLE.value, "Wizard",
    )
    ghost = unique("ghost")
    assert_error(
        admin.post("/user/assign/role", json={"userName": ghost, "roleName": "Guest"}),
        400, ErrorCode.UNKNOWN_USER.value, ghost,
    )
    assert snapshot(admin) == before


@pytest.mark.parametrize("form", ["list", "string"])
def test_remove_role_takes_a_list_or_a_single_name(
    admin: Http, unique: Callable[[str], str], form: str
) -> None:
    user = create_user(admin, unique("remove"), roles=["Analyst", "Guest", "Steward"])
    names: Any = ["Guest", "steward"] if form == "list" else "Guest"
    response = admin.post("/user/remove/role", json={user["key"]: names})
    assert response.status_code == 201, response.text
    expected = ["Analyst"] if form == "list" else ["Analyst", "Steward"]
    assert [u["roles"] for u in response.json()] == [expected]
    assert get_user(admin, user["key"])["roles"] == expected


def test_remove_role_for_several_users_is_all_or_nothing(
    admin: Http, unique: Callable[[str], str]
) -> None:
    one = create_user(admin, unique("one"), roles=["Analyst", "Guest"])
    two = create_user(admin, unique("two"), roles=["Analyst"])
    before = snapshot(admin)
    response = admin.post("/user/remove/role",
                          json={one["key"]: ["Guest"], two["key"]: ["Analyst"]})
    assert_error(response, 409, ErrorCode.LAST_ROLE.value)
    assert snapshot(admin) == before
    response = admin.post("/user/remove/role", json={one["key"]: ["Guest"], two["key"]: []})
    assert_error(response, 400, ErrorCode.INVALID_PAYLOAD.value)
    ok = admin.post("/user/remove/role", json={one["key"]: "Guest"})
    assert ok.status_code == 201


def test_removing_the_last_role_is_refused(admin: Http, unique: Callable[[str], str]) -> None:
    user = create_user(admin, unique("last"), roles=["Analyst"])
    before = snapshot(admin)
    body = assert_error(admin.post("/user/remove/role", json={user["key"]: ["Analyst"]}), 409,
                        ErrorCode.LAST_ROLE.value)
    assert "assign" in body["message"].lower()
    assert snapshot(admin) == before


def test_replace_the_last_role_by_assigning_then_removing(
    admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("replace"), roles=["Analyst"])
    assign = admin.post("/user/assign/role", json={"userName": user["name"], "roleName": "Guest"})
    assert assign.status_code == 201
    remove = admin.post("/user/remove/role", json={user["key"]: ["Analyst"]})
    assert remove.status_code == 201
    assert get_user(admin, user["key"])["roles"] == ["Guest"]


def test_remove_role_refuses_unknown_users_and_roles(
    admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("rr"), roles=["Analyst", "Guest"])
    before = snapshot(admin)
    assert_error(admin.post("/user/remove/role", json={user["key"]: ["Wizard"]}), 400,
                 ErrorCode.UNKNOWN_ROLE.value, "Wizard")
    assert_error(admin.post("/user/remove/role", json={"no-such-key": ["Guest"]}), 400,
                 ErrorCode.UNKNOWN_USER.value, "no-such-key")
    bad: list[Any] = [{}, [], "Guest", {user["key"]: []}, {user["key"]: 5}, {user["key"]: [""]},
                      {user["key"]: [["Guest"]]}]
    for body in bad:
        assert_error(admin.post("/user/remove/role", json=body), 400,
                     ErrorCode.INVALID_PAYLOAD.value)
    assert snapshot(admin) == before


# -- passwords ---------------------------------------------------------------------------------


def test_passwords_are_write_only(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    secret = "a-very-secret-password"
    name = unique("secret")
    created = admin.post("/user", json={"name": name, "password": secret})
    assert created.status_code == 201
    key = created.json()["key"]
    answers = [
        created,
        admin.get(f"/user/{key}"),
        admin.get("/user"),
        admin.get("/user", params={"name": name}),
        admin.get(f"/user/name/{quote(name)}"),
        admin.get("/search/user", params={"searchUsersBy": name}),
        admin.post("/user/assign/role", json={"userName": name, "roleName": "Guest"}),
        admin.post("/user/remove/role", json={key: ["Guest"]}),
        admin.post("/auditevent/search", json={"objectKey": key}),
        live_server.session(name, secret).get("/user/_me"),
    ]
    for response in answers:
        assert response.status_code in (200, 201), response.text
        no_password_in(response.text, secret)
    assert created.json()["passwordSet"] is True


def test_setting_a_password(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("pw"), password=None)
    assert user["passwordSet"] is False
    response = admin.put(f"/user/{user['key']}", json={"password": "brand-new-password"})
    assert response.status_code == 204
    assert get_user(admin, user["key"])["passwordSet"] is True
    live_server.session(user["name"], "brand-new-password")
    second = admin.put(f"/user/{user['key']}", json={"password": "second-password"})
    assert second.status_code == 204
    old = live_server.anonymous().post(
        "/login", json={"username": user["name"], "password": "brand-new-password"})
    assert_error(old, 401, ErrorCode.LOGIN_FAILED.value)
    live_server.session(user["name"], "second-password")
    before = snapshot(admin)
    assert_error(admin.put(f"/user/{user['key']}", json={"password": "short"}), 400,
                 ErrorCode.WEAK_PASSWORD.value, "password")
    assert_error(admin.put(f"/user/{user['key']}", json={"password": None}), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "password")
    assert snapshot(admin) == before


def test_a_new_password_ends_the_users_other_sessions(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("rotated"))
    old_session = live_server.session(user["name"], PASSWORD)
    assert old_session.get("/user/_me").status_code == 200
    rotated = admin.put(f"/user/{user['key']}", json={"password": "rotated-password"})
    assert rotated.status_code == 204
    assert_error(old_session.get("/user/_me"), 401, ErrorCode.AUTHENTICATION_REQUIRED.value)
    assert admin.get("/user/_me").status_code == 200  # the administrator's own session stays


def test_an_administrator_changing_their_own_password_keeps_this_session(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    boss = create_user(admin, unique("boss"), roles=["Administrator"])
    here = live_server.session(boss["name"], PASSWORD)
    elsewhere = live_server.session(boss["name"], PASSWORD)
    assert here.put(f"/user/{boss['key']}", json={"password": "boss-password-2"}).status_code == 204
    assert here.get("/user/_me").status_code == 200
    assert_error(elsewhere.get("/user/_me"), 401, ErrorCode.AUTHENTICATION_REQUIRED.value)


def test_an_unchanged_password_field_keeps_sessions(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    user = create_user(admin, unique("stay"))
    http = live_server.session(user["name"], PASSWORD)
    assert admin.put(f"/user/{user['key']}", json={"description": "x"}).status_code == 204
    assert http.get("/user/_me").status_code == 200


# -- search ------------------------------------------------------------------------------------


def test_search_matches_name_first_last_and_email_case_insensitively(
    admin: Http, unique: Callable[[str], str]
) -> None:
    token = unique("zq").replace("-", "")
    by_name = create_user(admin, f"{token}-name")
    by_first = create_user(admin, unique("f"), attributes={"firstName": f"X{token.upper()}Y"})
    by_last = create_user(admin, unique("l"), attributes={"lastName": token.capitalize()})
    by_mail = create_user(admin, unique("m"), attributes={"email": f"{token}@Example.org"})
    create_user(admin, unique("other"), attributes={"description": token, "nickname": token},
                description=token)

    response = admin.get("/search/user", params={"searchUsersBy": token.upper()})
    assert response.status_code == 200
    found = response.json()
    assert sorted(u["key"] for u in found) == sorted(
        u["key"] for u in (by_name, by_first, by_last, by_mail)
    )
    assert all(set(u) == {"name", "key", "attributes"} for u in found)
    first = next(u for u in found if u["key"] == by_first["key"])
    assert first["attributes"] == {"firstName": f"X{token.upper()}Y"}
    assert admin.get("/search/user", params={"searchUsersBy": unique("none")}).json() == []


def test_search_limit_defaults_to_25(admin: Http, unique: Callable[[str], str]) -> None:
    token = unique("many").replace("-", "")
    for i in range(27):
        create_user(admin, f"{token}-{i:02d}", password=None)
    assert len(admin.get("/search/user", params={"searchUsersBy": token}).json()) == 25
    for limit, expected in ((3, 3), (30, 27)):
        found = admin.get("/search/user", params={"searchUsersBy": token, "limit": str(limit)})
        assert len(found.json()) == expected


@pytest.mark.parametrize("limit", ["0", "-1", "1001", "ten", "2.5"])
def test_search_limit_out_of_bounds_is_400(admin: Http, limit: str) -> None:
    response = admin.get("/search/user", params={"searchUsersBy": "a", "limit": limit})
    assert_error(response, 400, ErrorCode.INVALID_PARAMETER.value, "limit")


def test_every_member_may_read_users_and_search(members: dict[str, Member]) -> None:
    for member in members.values():
        assert member.http.get("/user").status_code == 200
        assert member.http.get(f"/user/{member.key}").status_code == 200
        assert member.http.get("/search/user", params={"searchUsersBy": member.name}).json()[0][
            "key"] == member.key
