"""Logins that resist guessing: an atomic throttle, no timing oracle for user names, spraying
throttled per client, and a lock that stops the guesser without locking out the user.

Two client addresses are real here: requests bind their source address to 127.0.0.1 (the user)
or 127.0.0.2 (the attacker); every 127.x address is the loopback interface.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from requests.adapters import HTTPAdapter
from sqlalchemy import update

import catalog_nb.server.routes.auth as auth_route
from catalog_nb.contract import ErrorCode
from catalog_nb.server.store import schema
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, assert_error, create_user, row_count

FAILED = ErrorCode.LOGIN_FAILED.value
THROTTLED = ErrorCode.LOGIN_THROTTLED.value
ATTACKER = "127.0.0.2"


class _SourceAddress(HTTPAdapter):
    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def client(server: Server, address: str = "127.0.0.1") -> Http:
    """An anonymous session whose requests come from ``address``."""
    http = server.anonymous()
    http.mount("http://", _SourceAddress(address))
    return http


def login(http: Http, name: str, password: str) -> Any:
    return http.post("/login", json={"username": name, "password": password})


def _at_once(server: Server, clients: int, attempt: Callable[[Http], list[Any]]) -> list[int]:
    """The statuses of ``attempt`` run by ``clients`` anonymous clients released together."""
    statuses: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(clients)

    def run() -> None:
        http = client(server)
        start.wait()
        for response in attempt(http):
            with lock:
                statuses.append(response.status_code)

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return statuses


def test_parallel_guesses_cannot_race_past_the_limit(
    make_server: Callable[..., Server], unique: Callable[[str], str]
) -> None:
    server = make_server(login_max_failures=5)
    name = unique("raced")
    create_user(server.session(), name)
    statuses = _at_once(server, 40, lambda http: [login(http, name, "wrong-password")])
    # Exactly the allowed five were checked against the password; every other one waited.
    assert Counter(statuses) == {401: 5, 429: 35}


def test_parallel_logins_of_one_name_never_fail_the_service(
    make_server: Callable[..., Server], unique: Callable[[str], str]
) -> None:
    # A success deletes its name's throttle row while the others lock it: on PostgreSQL one of
    # them found the row gone between making it and locking it, and answered 500. Attempts are
    # counted before their password is checked, so some wait (429), and the store may be busy
    # with the others' locks (503): both are answers; a 500 is a fault.
    server = make_server()
    name = unique("busy")
    create_user(server.session(), name)
    statuses = _at_once(server, 12, lambda http: [login(http, name, PASSWORD) for _ in range(8)])
    counted = Counter(statuses)
    assert set(counted) <= {200, 429, 503} and counted[200] > 0, counted


def test_unknown_names_are_hashed_like_known_ones(
    live_server: Server, unique: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[bool] = []
    real = auth_route.verify_password

    def counting(password: str, stored: str | None) -> bool:
        checked.append(stored is None)
        return real(password, stored)

    monkeypatch.setattr(auth_route, "verify_password", counting)
    http = client(live_server)
    assert_error(login(http, unique("nobody"), "some-password"), 401, FAILED)
    assert_error(login(http, live_server.admin_user, "some-password"), 401, FAILED)
    # One scrypt each: against a dummy hash for the unknown name, the real one for the known.
    assert checked == [True, False]


def test_spraying_many_names_from_one_client_is_throttled(
    make_server: Callable[..., Server], unique: Callable[[str], str]
) -> None:
    server = make_server(login_client_max_failures=10, login_lockout_seconds=60)
    sprayer = client(server, ATTACKER)
    names = [unique("spray") for _ in range(40)]
    statuses = [login(sprayer, name, "Summer2024!").status_code for name in names]
    assert statuses == [401] * 10 + [429] * 30
    response = login(sprayer, server.admin_user, server.admin_password)
    body = assert_error(response, 429, THROTTLED)
    assert 1 <= int(response.headers["Retry-After"]) <= 60 and body["retryAfter"] >= 1
    # Everybody else still logs in.
    assert login(client(server), server.admin_user, server.admin_password).status_code == 200


def test_a_guessers_lock_does_not_lock_the_user_out(
    make_server: Callable[..., Server], unique: Callable[[str], str]
) -> None:
    server = make_server(login_max_failures=3, login_lockout_seconds=300)
    name = unique("targeted")
    create_user(server.session(), name)
    attacker = client(server, ATTACKER)
    for _ in range(3):
        assert_error(login(attacker, name, "guess-password"), 401, FAILED)
    # The attacker now waits, even with the right password ...
    assert_error(login(attacker, name, PASSWORD), 429, THROTTLED)
    # ... while the user, from their own address, logs in at once.
    assert login(client(server), name, PASSWORD).status_code == 200
    assert_error(login(attacker, name, PASSWORD), 429, THROTTLED)


def age_throttle(server: Server, seconds: float) -> None:
    """Move every throttle count ``seconds`` into the past (the clock is moved in the store
    rather than slept through, which a busy machine would stretch)."""
    shift = int(seconds * 1000)
    table = schema.login_throttle
    with server.store.write() as conn:
        conn.execute(update(table).values(last_ms=table.c.last_ms - shift))
        conn.execute(update(table).where(table.c.locked_until_ms.is_not(None))
                     .values(locked_until_ms=table.c.locked_until_ms - shift))


def test_each_further_failure_doubles_the_wait(
    make_server: Callable[..., Server], unique: Callable[[str], str]
) -> None:
    server = make_server(login_max_failures=2, login_lockout_seconds=60)
    name = unique("doubling")
    http = client(server)
    for _ in range(2):
        assert_error(login(http, name, "wrong-password"), 401, FAILED)
    first = login(http, name, "wrong-password")
    assert_error(first, 429, THROTTLED)
    assert 55 <= int(first.headers["Retry-After"]) <= 60
    age_throttle(server, 61)  # the wait is over, the failures are still remembered
    assert_error(login(http, name, "wrong-password"), 401, FAILED)  # the third failure
    second = login(http, name, "wrong-password")
    assert_error(second, 429, THROTTLED)
    assert 115 <= int(second.headers["Retry-After"]) <= 120


def test_a_success_forgets_the_names_failures_and_quiet_rows_are_purged(
    make_server: Callable[..., Server], unique: Callable[[str], str]
) -> None:
    server = make_server(login_max_failures=3, login_lockout_seconds=60)
    name = unique("forgotten")
    create_user(server.session(), name)
    http = client(server)
    for _ in range(2):
        assert_error(login(http, name, "wrong-password"), 401, FAILED)
    assert login(http, name, PASSWORD).status_code == 200
    for _ in range(2):  # without the reset, the second of these would be throttled
        assert_error(login(http, name, "wrong-password"), 401, FAILED)
    age_throttle(server, 61)  # quiet for longer than the lockout: the counts mean nothing
    for _ in range(2):
        assert_error(login(http, name, "wrong-password"), 401, FAILED)
    assert login(http, name, PASSWORD).status_code == 200
    # Only the rows of the logins since the purge remain: the client's own count.
    assert row_count(server, schema.login_throttle) == 1
