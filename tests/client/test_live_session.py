"""The client against a real server: login, logout, re-login, permissions and typed errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import requests

from catalog_nb.client import Catalog, connect, errors
from catalog_nb.contract import API_PREFIX, SESSION_COOKIE, ErrorCode
from tests.client.mocks import LIVE_PASSWORD


def test_connect_repr_version_and_context_manager(live_server: Any) -> None:
    with connect(live_server.url, live_server.admin_user, live_server.admin_password) as cat:
        assert repr(cat) == f"<Catalog {live_server.url} as {live_server.admin_user}>"
        assert cat.version()["apiVersion"] == "v2"
        token = cat.http.session.cookies.get(SESSION_COOKIE)
        assert token
    assert cat.closed
    # leaving the block logged out: the old cookie no longer opens a session
    replay = requests.get(
        live_server.url + API_PREFIX + "/version", cookies={SESSION_COOKIE: token}, timeout=10
    )
    assert replay.status_code == 401


def test_wrong_password_fails_in_connect(live_server: Any, unique: Callable[[str], str]) -> None:
    with pytest.raises(errors.AuthenticationError) as info:
        connect(live_server.url, unique("nobody"), "not-the-password")
    assert info.value.status == 401
    assert info.value.error_code == ErrorCode.LOGIN_FAILED


def test_relogin_after_the_session_is_ended_on_the_server(live_cat: Catalog) -> None:
    assert live_cat.http.logins == 1
    live_cat.api.logout()  # the server forgets the session; the client keeps its cookie
    assert len(live_cat.users()) >= 1  # 401 -> one transparent re-login -> retried
    assert live_cat.http.logins == 2
    assert not live_cat.me().empty
    assert live_cat.http.logins == 2


def test_relogin_fails_loudly_when_the_password_changed(
    live_cat: Catalog, make_user: Callable[..., dict[str, Any]], live_server: Any
) -> None:
    user = make_user()
    with connect(live_server.url, user["name"], LIVE_PASSWORD) as own:
        live_cat.set_password(user["name"], "a-new-password-2")  # also ends its sessions
        with pytest.raises(errors.AuthenticationError) as info:
            own.me()
        assert info.value.error_code == ErrorCode.LOGIN_FAILED


def test_user_without_password_cannot_log_in(
    make_user: Callable[..., dict[str, Any]], live_server: Any
) -> None:
    user = make_user(password=None)
    assert user["passwordSet"] is False
    with pytest.raises(errors.AuthenticationError):
        connect(live_server.url, user["name"], "any-password-at-all")


def test_analyst_is_denied_admin_work(
    make_user: Callable[..., dict[str, Any]], live_server: Any, unique: Callable[[str], str]
) -> None:
    user = make_user()
    with connect(live_server.url, user["name"], LIVE_PASSWORD, progress=False) as own:
        me = own.me()
        assert me.loc[0, "name"] == user["name"] and not me.loc[0, "admin"]
        assert own.my_roles()["name"].tolist() == user["roles"]
        with pytest.raises(errors.PermissionDeniedError) as info:
            own.create_user(unique("sneaky"))
        assert info.value.error_code == ErrorCode.PERMISSION_DENIED
        with pytest.raises(errors.PermissionDeniedError):
            own.audit_events(limit=1)


def test_typed_errors_from_real_answers(
    live_cat: Catalog, make_user: Callable[..., dict[str, Any]], unique: Callable[[str], str]
) -> None:
    user = make_user()
    with pytest.raises(errors.ConflictError) as conflict:
        live_cat.create_user(user["name"])
    assert conflict.value.error_code == ErrorCode.DUPLICATE_NAME
    assert user["name"] in conflict.value.message

    with pytest.raises(errors.NotFoundError) as missing:
        live_cat.user(unique("ghost"))
    assert missing.value.error_code == ErrorCode.USER_NOT_FOUND

    with pytest.raises(errors.BadRequestError) as unknown_role:
        live_cat.create_user(unique("user"), roles=[unique("no-such-role")])
    assert unknown_role.value.error_code == ErrorCode.UNKNOWN_ROLE

    with pytest.raises(errors.BadRequestError) as weak:
        live_cat.set_password(user["name"], "short")
    # the contract has WEAK_PASSWORD; the server reports a too-short one as a validation failure
    assert weak.value.error_code in (ErrorCode.WEAK_PASSWORD, ErrorCode.INVALID_PAYLOAD)
    assert "password" in weak.value.message

    with pytest.raises(errors.ConflictError) as last_role:
        live_cat.remove_role(user["name"], user["roles"][0])
    assert last_role.value.error_code == ErrorCode.LAST_ROLE

    with pytest.raises(errors.NotFoundError) as route:
        live_cat.api.get("/no/such/endpoint")
    assert route.value.error_code == ErrorCode.ROUTE_NOT_FOUND


def test_invalid_payload_is_a_bad_request_with_details(live_cat: Catalog) -> None:
    with pytest.raises(errors.BadRequestError) as info:
        live_cat.api.create_user({"name": "x", "noSuchField": 1})
    assert info.value.status == 400
    assert info.value.error_code == ErrorCode.INVALID_PAYLOAD
