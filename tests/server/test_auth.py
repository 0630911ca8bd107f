"""Login, the session cookie, throttling, logout, forged and expired sessions, /version."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from http.cookies import SimpleCookie

import pytest
import requests
from sqlalchemy import update

from catalog_nb.contract import SESSION_COOKIE, ErrorCode, distribution_version
from catalog_nb.server.store import schema
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    assert_error,
    create_user,
    session_row,
    session_token,
    token_hash,
    with_cookie,
)

FAILED = ErrorCode.LOGIN_FAILED.value
THROTTLED = ErrorCode.LOGIN_THROTTLED.value
REQUIRED = ErrorCode.AUTHENTICATION_REQUIRED.value
EXPIRED = ErrorCode.SESSION_EXPIRED.value


def login(http: Http, name: str, password: str) -> requests.Response:
    return http.post("/login", json={"username": name, "password": password})


def set_session_times(server: Server, token: str, **values: int) -> None:
    with server.store.write() as conn:
        conn.execute(
            update(schema.sessions)
            .where(schema.sessions.c.token_hash == token_hash(token))
            .values(**values)
        )


def now_ms() -> int:
    return int(time.time() * 1000)


# -- login -------------------------------------------------------------------------------------


def test_login_answers_the_documented_body_and_a_safe_cookie(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("login")
    create_user(admin, name, attributes={"firstName": "Ada", "lastName": "Lovelace"})
    http = live_server.anonymous()
    response = http.post("/login", json={"username": name, "password": PASSWORD})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["loginResult"] == "SUCCESS"
    assert isinstance(body["message"], str) and body["message"]
    assert body["userInfo"] == {"username": name, "displayName": "Ada Lovelace"}

    raw = response.headers["set-cookie"]
    cookie = SimpleCookie()
    cookie.load(raw)
    morsel = cookie[SESSION_COOKIE]
    assert len(morsel.value) >= 32
    assert morsel["httponly"] is True
    assert morsel["samesite"].lower() == "lax"
    assert morsel["path"] == "/"
    assert not morsel["secure"]
    assert morsel.value not in response.text
    # The cookie is the whole credential: the session works, and only through it.
    assert http.get("/user/_me").json()["name"] == name
    assert session_row(live_server, morsel.value) is not None


def test_login_ignores_the_case_of_the_user_name(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("CaseUser")
    create_user(admin, name)
    response = login(live_server.anonymous(), name.upper(), PASSWORD)
    assert response.status_code == 200, response.text
    assert response.json()["userInfo"]["username"] == name


def test_wrong_password_and_unknown_user_answer_the_same(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("victim")
    create_user(admin, name)
    wrong = login(live_server.anonymous(), name, "not-the-password")
    unknown = login(live_server.anonymous(), unique("nobody"), PASSWORD)
    for response in (wrong, unknown):
        body = assert_error(response, 401, FAILED)
        assert body["loginResult"] == "FAILURE"
        assert "set-cookie" not in response.headers
    assert wrong.json() == unknown.json()


def test_a_user_without_a_password_cannot_log_in(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("nopass")
    user = create_user(admin, name, password=None)
    assert user["passwordSet"] is False
    for attempt in ("", "anything-at-all", PASSWORD):
        body = assert_error(login(live_server.anonymous(), name, attempt), 401, FAILED)
        assert body["loginResult"] == "FAILURE"


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({}, ErrorCode.INVALID_PAYLOAD),
        ({"username": "admin"}, ErrorCode.INVALID_PAYLOAD),
        ({"password": "x"}, ErrorCode.INVALID_PAYLOAD),
        ({"username": "admin", "password": "x", "remember": True}, ErrorCode.INVALID_PAYLOAD),
        ({"username": ["admin"], "password": "x"}, ErrorCode.INVALID_PAYLOAD),
        ({"username": "a" * 256, "password": "x"}, ErrorCode.INVALID_PAYLOAD),
        ('{"username": "admin", ', ErrorCode.MALFORMED_JSON),
    ],
)
def test_a_bad_login_payload_is_a_400(
    live_server: Server, payload: object, code: ErrorCode
) -> None:
    http = live_server.anonymous()
    if isinstance(payload, str):
        response = http.post("/login", data=payload, headers={"Content-Type": "application/json"})
    else:
        response = http.post("/login", json=payload)
    assert_error(response, 400, code.value)
    assert "set-cookie" not in response.headers


# -- throttling --------------------------------------------------------------------------------

LOCKOUT = 1.5


@pytest.fixture(scope="module")
def strict(make_server: Callable[..., Server]) -> Server:
    """A server that locks a user name for 1.5 s after 3 failed logins."""
    return make_server(login_max_failures=3, login_lockout_seconds=LOCKOUT)


def test_repeated_failures_lock_the_name_even_for_the_right_password(
    strict: Server, unique: Callable[[str], str]
) -> None:
    name = unique("locked")
    create_user(strict.session(), name)
    http = strict.anonymous()
    for attempt in (name, name.upper(), name):  # the count ignores the case of the name
        assert_error(login(http, attempt, "wrong-password"), 401, FAILED)
    response = login(http, name, PASSWORD)
    body = assert_error(response, 429, THROTTLED)
    retry_after = int(response.headers["Retry-After"])
    assert 1 <= retry_after <= 2
    assert body["retryAfter"] == retry_after
    assert "set-cookie" not in response.headers
    # Only this name is locked.
    assert login(strict.anonymous(), strict.admin_user, strict.admin_password).status_code == 200

    time.sleep(LOCKOUT + 0.3)
    assert login(http, name, PASSWORD).status_code == 200


def test_a_successful_login_resets_the_failure_count(
    strict: Server, unique: Callable[[str], str]
) -> None:
    name = unique("reset")
    create_user(strict.session(), name)
    http = strict.anonymous()
    for _ in range(2):
        assert_error(login(http, name, "wrong-password"), 401, FAILED)
    assert login(http, name, PASSWORD).status_code == 200
    for _ in range(3):  # without the reset, the first of these would already lock the name
        assert_error(login(http, name, "wrong-password"), 401, FAILED)
    assert_error(login(http, name, PASSWORD), 429, THROTTLED)


def test_unknown_names_are_throttled_like_known_ones(
    strict: Server, unique: Callable[[str], str]
) -> None:
    name = unique("ghost")
    http = strict.anonymous()
    for _ in range(3):
        assert_error(login(http, name, "wrong-password"), 401, FAILED)
    assert_error(login(http, name, "wrong-password"), 429, THROTTLED)


# -- logout ------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_logout_ends_the_session_on_the_server(
    live_server: Server, admin: Http, unique: Callable[[str], str], method: str
) -> None:
    name = unique("leaver")
    create_user(admin, name)
    http = live_server.session(name, PASSWORD)
    other = live_server.session(name, PASSWORD)
    token = session_token(http)
    assert http.get("/user/_me").status_code == 200

    response = http.request(method, "/logout")
    if method == "GET":  # the product's answer, which scripts read with .json() (issue 17)
        assert response.status_code == 200
        assert set(response.json()) == {"redirectUrl", "message"}
    else:
        assert response.status_code == 204
        assert response.content == b""
    assert SESSION_COOKIE in response.headers.get("set-cookie", "")  # the browser forgets it
    assert session_row(live_server, token) is None

    assert_error(with_cookie(live_server, token).get("/user/_me"), 401, REQUIRED)
    assert_error(with_cookie(live_server, token).request(method, "/logout"), 401, REQUIRED)
    # Only that session ended.
    assert other.get("/user/_me").status_code == 200


def test_logout_needs_a_session(live_server: Server) -> None:
    assert_error(live_server.anonymous().get("/logout"), 401, REQUIRED)


# -- forged and expired sessions ---------------------------------------------------------------


@pytest.mark.parametrize("kind", ["empty", "short", "well-formed", "injection", "huge"])
def test_a_forged_cookie_is_refused(live_server: Server, kind: str) -> None:
    token = {"empty": "", "short": "x", "well-formed": secrets.token_urlsafe(32),
             "injection": "' OR 1=1 --", "huge": "a" * 4000}[kind]
    assert_error(with_cookie(live_server, token).get("/user"), 401, REQUIRED)


def test_a_session_idle_too_long_has_expired(live_server: Server) -> None:
    http = live_server.session()
    token = session_token(http)
    assert http.get("/version").status_code == 200
    set_session_times(live_server, token, last_seen_ms=now_ms() - 121 * 60_000)
    assert_error(http.get("/version"), 401, EXPIRED)


def test_a_session_past_its_absolute_lifetime_has_expired(live_server: Server) -> None:
    http = live_server.session()
    token = session_token(http)
    set_session_times(live_server, token, created_ms=now_ms() - 25 * 3_600_000,
                      last_seen_ms=now_ms())
    assert_error(http.get("/version"), 401, EXPIRED)


def test_activity_keeps_a_session_alive(live_server: Server) -> None:
    http = live_server.session()
    token = session_token(http)
    set_session_times(live_server, token, last_seen_ms=now_ms() - 119 * 60_000)
    assert http.get("/version").status_code == 200
    row = session_row(live_server, token)
    assert row is not None and row["last_seen_ms"] >= now_ms() - 60_000
    # Two more minutes of idleness would have ended it without that request.
    set_session_times(live_server, token, last_seen_ms=row["last_seen_ms"] - 2 * 60_000)
    assert http.get("/version").status_code == 200


def test_the_idle_timeout_is_a_setting_and_use_extends_it(
    make_server: Callable[..., Server],
) -> None:
    # The clock is moved in the store rather than slept through: a busy machine can stretch a
    # sleep of a second past any idle timeout short enough to wait for.
    server = make_server(session_idle_minutes=2)
    http = server.session()
    token = session_token(http)
    for _ in range(3):  # 3 minutes in all, but never idle for 2
        set_session_times(server, token, last_seen_ms=now_ms() - 100_000)
        assert http.get("/version").status_code == 200
    set_session_times(server, token, last_seen_ms=now_ms() - 121_000)
    assert_error(http.get("/version"), 401, EXPIRED)


def test_the_absolute_lifetime_is_a_setting(make_server: Callable[..., Server]) -> None:
    server = make_server(session_max_hours=0.5)
    token = session_token(server.session())
    http = with_cookie(server, token)  # the cookie's Max-Age would drop it client-side too
    set_session_times(server, token, created_ms=now_ms() - 29 * 60_000)
    assert http.get("/version").status_code == 200
    set_session_times(server, token, created_ms=now_ms() - 31 * 60_000)
    assert_error(http.get("/version"), 401, EXPIRED)


def test_deleting_a_user_ends_their_sessions(
    live_server: Server, admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("gone")
    user = create_user(admin, name)
    http = live_server.session(name, PASSWORD)
    token = session_token(http)
    assert admin.delete(f"/user/{user['key']}").status_code == 204
    assert session_row(live_server, token) is None
    assert_error(http.get("/user/_me"), 401, REQUIRED)


# -- version -----------------------------------------------------------------------------------


def test_version_reports_name_version_api_and_build(live_server: Server, admin: Http) -> None:
    response = admin.get("/version")
    assert response.status_code == 200
    body = response.json()
    assert body["name"] == "catalog-nb"
    assert body["version"] == distribution_version()
    assert body["apiVersion"] == "v2"
    assert body["build"] == "local"
    assert_error(live_server.anonymous().get("/version"), 401, REQUIRED)
