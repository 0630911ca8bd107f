"""HttpSession: retries, timeouts, connection errors, re-login on 401, decoding."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
import responses

from catalog_nb.client import Catalog, connect, errors
from catalog_nb.client import http as http_module
from catalog_nb.client.http import HttpSession, normalize_url
from tests.client.mocks import (
    API,
    BASE,
    Reply,
    ScriptedServer,
    add_login,
    error_body,
    json_of,
    url_of,
)


def _calls(mock: responses.RequestsMock, method: str, path: str) -> list[Any]:
    return [
        call
        for call in mock.calls
        if call.request.method == method and url_of(call).split("?")[0] == API + path
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# -- retries -----------------------------------------------------------------------------------


def test_get_is_retried_on_503(mock: responses.RequestsMock, cat: Catalog) -> None:
    unavailable = error_body(503, "INTERNAL_ERROR", "Busy.")
    mock.add(responses.GET, API + "/version", status=503, json=unavailable)
    mock.add(responses.GET, API + "/version", status=503, json=unavailable)
    mock.add(responses.GET, API + "/version", json={"name": "catalog", "apiVersion": "v2"})
    assert cat.version()["apiVersion"] == "v2"
    assert len(_calls(mock, "GET", "/version")) == 3


def test_post_is_not_retried_on_503(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.POST, API + "/user", status=503, json=error_body(503, "INTERNAL_ERROR"))
    mock.add(responses.POST, API + "/user", status=201, json={"key": "u1", "name": "ada"})
    with pytest.raises(errors.ServerError):
        cat.api.create_user({"name": "ada"})
    assert len(_calls(mock, "POST", "/user")) == 1


def test_retries_used_up_report_the_last_answer(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/user", status=504, json=error_body(504, "INTERNAL_ERROR"))
    with pytest.raises(errors.ServerError) as info:
        cat.users()
    assert info.value.status == 504
    assert len(_calls(mock, "GET", "/user")) == 1 + http_module.DEFAULT_RETRIES


def test_500_is_not_retried(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/user", status=500, json=error_body(500, "INTERNAL_ERROR"))
    with pytest.raises(errors.ServerError):
        cat.users()
    assert len(_calls(mock, "GET", "/user")) == 1


def test_real_retry_after_is_honoured(scripted: ScriptedServer) -> None:
    scripted.script = [
        Reply(429, error_body(429, "LOGIN_THROTTLED"), {"Retry-After": "1"}),
        Reply(200, {"apiVersion": "v2"}),
    ]
    with HttpSession(scripted.url, backoff_factor=0) as http:
        assert http.request("GET", "/version") == {"apiVersion": "v2"}
    assert len(scripted.received) == 2
    waited = scripted.received[1][2] - scripted.received[0][2]
    assert waited >= 0.9


def test_real_429_on_post_is_not_retried(scripted: ScriptedServer) -> None:
    scripted.script = [Reply(429, error_body(429, "LOGIN_THROTTLED"), {"Retry-After": "7"})]
    http = HttpSession(scripted.url, username="u", password="p", backoff_factor=0)
    with http, pytest.raises(errors.RateLimitedError) as info:
        http.login()
    assert info.value.retry_after == 7.0
    assert len(scripted.received) == 1


def test_real_503_get_retried_post_not(scripted: ScriptedServer) -> None:
    busy = Reply(503, error_body(503, "INTERNAL_ERROR"))
    scripted.script = [busy, Reply(200, [])]
    with HttpSession(scripted.url, backoff_factor=0) as http:
        assert http.request("GET", "/user") == []
        scripted.script = [busy, Reply(201, {"key": "k"})]
        with pytest.raises(errors.ServerError):
            http.request("POST", "/user", json={"name": "x"})
    assert [method for method, _path, _t in scripted.received] == ["GET", "GET", "POST"]


def test_retry_after_is_capped() -> None:
    retry = http_module.make_retry(3)
    assert retry.parse_retry_after("100000") == http_module.MAX_RETRY_AFTER


# -- connection errors and timeouts ------------------------------------------------------------


def test_connection_refused_is_a_connection_error_after_retries(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attempts: list[str] = []
    original = http_module._CatalogRetry.increment

    def counting(self: Any, method: str | None = None, *args: Any, **kwargs: Any) -> Any:
        attempts.append(str(method))
        return original(self, method, *args, **kwargs)

    monkeypatch.setattr(http_module._CatalogRetry, "increment", counting)
    url = f"http://127.0.0.1:{_free_port()}"
    http = HttpSession(url, retries=2, backoff_factor=0, timeout=2)
    with http, pytest.raises(errors.CatalogConnectionError) as info:
        http.request("POST", "/user", json={"name": "x"})  # connect errors: every verb
    assert url in str(info.value)
    assert not isinstance(info.value, errors.CatalogTimeoutError)
    assert attempts == ["POST", "POST", "POST"]


def test_connect_fails_fast_when_nothing_listens() -> None:
    with pytest.raises(errors.CatalogConnectionError):
        connect(f"http://127.0.0.1:{_free_port()}", "u", "p", retries=0)


def test_read_timeout_is_a_connection_error(scripted: ScriptedServer) -> None:
    scripted.script = [Reply(200, {"late": True}, delay=0.6)]
    with HttpSession(scripted.url, retries=0, timeout=(2, 0.2)) as http:
        started = time.monotonic()
        with pytest.raises(errors.CatalogTimeoutError) as info:
            http.request("GET", "/version")
    assert time.monotonic() - started < 0.6
    assert isinstance(info.value, errors.CatalogConnectionError)
    assert "in time" in str(info.value)


def test_timeout_is_never_none() -> None:
    with pytest.raises(errors.ConfigurationError):
        HttpSession(BASE, timeout=None)  # type: ignore[arg-type]
    assert HttpSession(BASE).timeout == http_module.DEFAULT_TIMEOUT


# -- login and transparent re-login ------------------------------------------------------------


def test_relogin_once_on_401_then_the_call_succeeds(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    add_login(mock, cookie="s2")
    expired = error_body(401, "SESSION_EXPIRED", "Your session expired.")
    mock.add(responses.GET, API + "/user", status=401, json=expired)
    mock.add(responses.GET, API + "/user", json=[{"key": "u1", "name": "ada"}])
    frame = cat.users()
    assert frame["name"].tolist() == ["ada"]
    logins = _calls(mock, "POST", "/login")
    assert len(logins) == 2  # connect() + exactly one re-login
    assert json_of(logins[1]) == {"username": "admin", "password": "pw-123456"}
    gets = _calls(mock, "GET", "/user")
    assert len(gets) == 2
    assert "catalog_session=s2" in gets[1].request.headers["Cookie"]
    assert cat.http.logins == 2


def test_second_401_raises_authentication_error(mock: responses.RequestsMock, cat: Catalog) -> None:
    body = error_body(401, "AUTHENTICATION_REQUIRED", "Log in first.")
    mock.add(responses.GET, API + "/user", status=401, json=body)
    with pytest.raises(errors.AuthenticationError) as info:
        cat.users()
    assert info.value.error_code == "AUTHENTICATION_REQUIRED"
    assert len(_calls(mock, "POST", "/login")) == 2
    assert len(_calls(mock, "GET", "/user")) == 2


def test_failed_relogin_raises_login_failed(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.replace(
        responses.POST,
        API + "/login",
        status=401,
        json={
            "loginResult": "FAILURE",
            "message": "Wrong user or password.",
            "errorCode": "LOGIN_FAILED",
        },
    )
    mock.add(responses.GET, API + "/user", status=401, json=error_body(401, "SESSION_EXPIRED"))
    with pytest.raises(errors.AuthenticationError) as info:
        cat.users()
    assert info.value.error_code == "LOGIN_FAILED"
    assert len(_calls(mock, "GET", "/user")) == 1


def test_wrong_credentials_fail_in_connect(mock: responses.RequestsMock) -> None:
    failure = {"loginResult": "FAILURE", "message": "Wrong.", "errorCode": "LOGIN_FAILED"}
    mock.add(responses.POST, API + "/login", status=401, json=failure)
    with pytest.raises(errors.AuthenticationError) as info:
        connect(BASE, "admin", "wrong")
    assert info.value.error_code == "LOGIN_FAILED"
    assert len(mock.calls) == 1  # a login is never retried


def test_401_without_credentials_is_not_retried(mock: responses.RequestsMock) -> None:
    mock.add(responses.GET, API + "/user", status=401, json=error_body(401, "SESSION_EXPIRED"))
    with HttpSession(BASE) as http, pytest.raises(errors.AuthenticationError):
        http.request("GET", "/user")
    assert len(mock.calls) == 1


# -- requests and answers ----------------------------------------------------------------------


def test_request_headers_params_and_body(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/search/user", json=[])
    cat.api.request("GET", "/search/user", params={"searchUsersBy": "ad", "limit": None, "x": True})
    request = _calls(mock, "GET", "/search/user")[0].request
    assert request.url == API + "/search/user?searchUsersBy=ad&x=true"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"].startswith("catalog-nb/")


def test_answers_are_decoded_by_type(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/logout", status=204)
    mock.add(responses.GET, API + "/overlap/csv", body="a,b\n1,2\n", content_type="text/csv")
    mock.add(responses.GET, API + "/version", json={"apiVersion": "v2"})
    assert cat.api.get("/logout") is None
    assert cat.api.get("/overlap/csv") == "a,b\n1,2\n"
    assert cat.api.get("/version") == {"apiVersion": "v2"}


def test_invalid_json_answer_is_an_error(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/version", body="{not json", content_type="application/json")
    with pytest.raises(errors.CatalogError, match="invalid JSON"):
        cat.version()


def test_path_segments_are_quoted(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/user/name/a%2Fb%20c", json={"key": "k", "name": "a/b c"})
    assert cat.api.get_user_by_name("a/b c")["key"] == "k"


@pytest.mark.parametrize(
    ("given", "root"),
    [
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("http://127.0.0.1:8765/", "http://127.0.0.1:8765"),
        (" https://cat.example.org/api/v2/ ", "https://cat.example.org"),
        ("http://proxy.example.org/catalog/api/v2", "http://proxy.example.org/catalog"),
    ],
)
def test_normalize_url(given: str, root: str) -> None:
    assert normalize_url(given) == root


@pytest.mark.parametrize("bad", ["", "127.0.0.1:8765", "ftp://host", "http://"])
def test_bad_urls_are_configuration_errors(bad: str) -> None:
    with pytest.raises(errors.ConfigurationError):
        normalize_url(bad)


def test_closed_session_refuses_requests() -> None:
    http = HttpSession(BASE)
    http.close()
    with pytest.raises(errors.CatalogError, match="closed"):
        http.request("GET", "/version")
