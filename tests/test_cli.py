"""The ``catalog-nb`` command line, run in-process against a real store."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from catalog_nb.cli import main
from tests.conftest import Server


def _run(monkeypatch: pytest.MonkeyPatch, *argv: str, stdin: str = "") -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return main(list(argv))


def test_user_create_then_login_through_the_service(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], store_url: str,
    make_server: Callable[..., Server],
) -> None:
    assert _run(monkeypatch, "user", "create", "root", "--role", "Administrator",
                "--email", "root@example.org", "--password-stdin", "--db-url", store_url,
                stdin="root-password-1\n") == 0
    assert "Created user root" in capsys.readouterr().out
    assert _run(monkeypatch, "user", "create", "ana", "--db-url", store_url) == 0
    capsys.readouterr()
    assert _run(monkeypatch, "user", "list", "--db-url", store_url) == 0
    listing = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line for line in listing[1:]}
    assert set(rows) == {"root", "ana"}
    assert "Administrator" in rows["root"] and "root@example.org" in rows["root"]
    assert "Analyst" in rows["ana"] and " no " in rows["ana"]

    server = make_server(db_url=store_url, admin_password=None)
    http = server.session("root", "root-password-1")
    users = {u["name"]: u for u in http.get("/user").json()}
    assert users["root"]["admin"] is True
    assert users["ana"]["passwordSet"] is False
    events = http.post("/auditevent/search", json={"action": "CREATE"}).json()["list"]
    assert {e["objectName"] for e in events} >= {"root", "ana"}
    assert all(e["userName"].startswith("cli:") for e in events)


def test_set_password_replaces_the_old_one(
    monkeypatch: pytest.MonkeyPatch, store_url: str, make_server: Callable[..., Server]
) -> None:
    _run(monkeypatch, "user", "create", "boss", "--role", "Administrator", "--password-stdin",
         "--db-url", store_url, stdin="first-password\n")
    assert _run(monkeypatch, "user", "set-password", "boss", "--password-stdin",
                "--db-url", store_url, stdin="second-password\n") == 0
    server = make_server(db_url=store_url, admin_password=None)
    refused = server.anonymous().post("/login", json={"username": "boss",
                                                      "password": "first-password"})
    assert refused.status_code == 401
    server.session("boss", "second-password")


def test_bad_cli_input_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], store_url: str
) -> None:
    with pytest.raises(SystemExit, match="Unknown role"):
        _run(monkeypatch, "user", "create", "eve", "--role", "Wizard", "--db-url", store_url)
    with pytest.raises(SystemExit, match="no user named 'ghost'"):
        _run(monkeypatch, "user", "set-password", "ghost", "--password-stdin",
             "--db-url", store_url, stdin="long-enough-1\n")
    with pytest.raises(SystemExit, match="at least 8"):
        _run(monkeypatch, "user", "create", "eve", "--password-stdin", "--db-url", store_url,
             stdin="short\n")
    capsys.readouterr()
    _run(monkeypatch, "user", "list", "--db-url", store_url)
    assert "eve" not in capsys.readouterr().out
