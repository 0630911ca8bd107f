"""connect(): URL and credentials from arguments, environment and netrc; the Catalog lifecycle."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import responses

import catalog_nb
from catalog_nb.client import Catalog, connect, errors
from catalog_nb.client.credentials import resolve
from tests.client.mocks import API, BASE, add_login, json_of, url_of


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No CATALOG_* variables and an empty netrc, whatever the machine running the tests has."""
    for name in ("CATALOG_URL", "CATALOG_USER", "CATALOG_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-such-netrc"))


def _login_body(mock: responses.RequestsMock) -> dict[str, str]:
    body: dict[str, str] = json_of(mock.calls[0])
    return body


def test_arguments(mock: responses.RequestsMock) -> None:
    add_login(mock)
    cat = connect(BASE + "/api/v2/", "admin", "pw-1")
    assert isinstance(cat, Catalog)
    assert cat.url == BASE and cat.username == "admin"
    assert _login_body(mock) == {"username": "admin", "password": "pw-1"}


def test_environment(mock: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATALOG_URL", BASE)
    monkeypatch.setenv("CATALOG_USER", "env-user")
    monkeypatch.setenv("CATALOG_PASSWORD", "env-pw")
    add_login(mock)
    cat = connect()
    assert cat.url == BASE and cat.username == "env-user"
    assert _login_body(mock) == {"username": "env-user", "password": "env-pw"}


def test_arguments_win_over_environment(
    mock: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CATALOG_URL", "http://elsewhere.test")
    monkeypatch.setenv("CATALOG_USER", "env-user")
    monkeypatch.setenv("CATALOG_PASSWORD", "env-pw")
    add_login(mock)
    connect(BASE, "arg-user", "arg-pw")
    assert _login_body(mock) == {"username": "arg-user", "password": "arg-pw"}


def test_netrc_by_host_and_port(
    mock: responses.RequestsMock, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text(
        "machine other.test login nobody password nothing\n"
        "machine catalog.test:8765 login net-user password net-pw\n"
    )
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("CATALOG_URL", BASE)
    add_login(mock)
    cat = connect()
    assert cat.username == "net-user"
    assert _login_body(mock) == {"username": "net-user", "password": "net-pw"}


def test_netrc_by_host_fills_only_the_password(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine catalog.test login admin password net-pw\n")
    monkeypatch.setenv("NETRC", str(netrc))
    monkeypatch.setenv("CATALOG_USER", "admin")
    settings = resolve(BASE, None, None)
    assert (settings.username, settings.password) == ("admin", "net-pw")
    assert "net-pw" not in repr(settings)


def test_netrc_password_of_another_login_is_ignored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine catalog.test login someone-else password theirs\n")
    monkeypatch.setenv("NETRC", str(netrc))
    with pytest.raises(errors.ConfigurationError, match="No password"):
        resolve(BASE, "admin", None)


def test_broken_netrc_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text("machine catalog.test login\n")
    monkeypatch.setenv("NETRC", str(netrc))
    with pytest.raises(errors.ConfigurationError, match="netrc"):
        resolve(BASE, None, None)


def test_missing_url() -> None:
    with pytest.raises(errors.ConfigurationError, match="CATALOG_URL") as info:
        connect(username="a", password="b")
    assert isinstance(info.value, ValueError)


def test_missing_credentials_names_the_places_to_look() -> None:
    with pytest.raises(errors.ConfigurationError) as info:
        connect(BASE)
    message = str(info.value)
    assert (
        "No username" in message and "CATALOG_USER" in message and "machine catalog.test" in message
    )


def test_missing_password_only() -> None:
    with pytest.raises(errors.ConfigurationError, match="No password"):
        connect(BASE, "admin")


def test_bad_url() -> None:
    with pytest.raises(errors.ConfigurationError, match="not an http"):
        connect("catalog.test:8765", "a", "b")


def test_repr_and_context_manager_logs_out(mock: responses.RequestsMock) -> None:
    add_login(mock)
    mock.add(responses.GET, API + "/logout", status=204)
    with connect(BASE, "admin", "pw") as cat:
        assert repr(cat) == f"<Catalog {BASE} as admin>"
    assert cat.closed
    assert repr(cat) == f"<Catalog {BASE} as admin (closed)>"
    assert [url_of(call) for call in mock.calls] == [API + "/login", API + "/logout"]
    with pytest.raises(errors.CatalogError, match="closed"):
        cat.version()
    cat.close()  # twice is fine


def test_close_survives_a_failing_logout(mock: responses.RequestsMock) -> None:
    add_login(mock)
    mock.add(responses.GET, API + "/logout", status=401, json={"message": "gone"})
    cat = connect(BASE, "admin", "pw")
    cat.close()
    assert cat.closed


def test_password_never_in_repr(mock: responses.RequestsMock) -> None:
    add_login(mock)
    cat = connect(BASE, "admin", "s3cret-pw")
    assert "s3cret-pw" not in repr(cat) + repr(cat.http) + repr(cat.api)


def test_package_face() -> None:
    assert catalog_nb.connect is connect
    assert catalog_nb.Catalog is Catalog
    assert catalog_nb.NotFoundError is errors.NotFoundError
    assert isinstance(catalog_nb.__version__, str)
    with pytest.raises(AttributeError):
        _ = catalog_nb.no_such_name


def test_importing_the_package_stays_light() -> None:
    code = (
        "import sys, catalog_nb, catalog_nb.contract; "
        "print(sorted(m for m in ('pandas', 'requests', 'catalog_nb.client') if m in sys.modules))"
    )
    root = Path(catalog_nb.__file__).parent.parent
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
