"""PostgreSQL connections: the service and the CLI close theirs, and the suite's checks catch
whoever does not (``tests/conftest.py``). Runs against the real test cluster only."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from catalog_nb.cli import main
from catalog_nb.demo.embedded import EmbeddedServer
from tests.conftest import (
    ADMIN_PASSWORD,
    PG_URL,
    new_pg_database,
    open_connections,
    pg_databases,
)

pytestmark = pytest.mark.skipif(not PG_URL, reason="needs CATALOG_TEST_PG_URL")

ROOT = Path(__file__).resolve().parent.parent


def _database(url: str) -> str:
    return str(make_url(url).database)


def _applications(database: str) -> set[str]:
    return {app for _, app, _, _ in open_connections(database, wait=0)}


def test_a_stopped_server_has_closed_every_connection(tmp_path: Path) -> None:
    url, drop = new_pg_database("test_a_stopped_server_has_closed_every_connection")
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "people.csv").write_text("id,name\n1,ana\n2,bo\n")
    server = EmbeddedServer(tmp_path / "state", db_url=url, admin_password=ADMIN_PASSWORD,
                            data_roots=[tmp_path]).start()
    try:
        api = server.url + "/api/v2"
        http = requests.Session()
        assert http.post(api + "/login", json={"username": "admin", "password": ADMIN_PASSWORD},
                         timeout=30).status_code == 200
        source = http.post(api + "/datasource", json={"name": "people", "sourceType": "FILE",
                                                      "uri": str(folder)}, timeout=30).json()
        job = http.post(api + "/job", json={"jobType": "PROFILE",
                                            "dataSourceKey": source["key"]}, timeout=30).json()
        deadline = time.monotonic() + 60
        while job["state"] in ("QUEUED", "RUNNING") and time.monotonic() < deadline:
            time.sleep(0.05)
            job = http.get(api + f"/job/{job['key']}", timeout=30).json()
        assert job["state"] == "SUCCEEDED", job
        # Requests and job workers each have a pool, named so that a listing tells them apart.
        assert {"catalog-nb", "catalog-nb jobs"} <= _applications(_database(url))
        http.close()
    finally:
        server.stop()
    assert not server.running
    assert open_connections(_database(url)) == []
    drop()


def test_the_cli_in_process_closes_its_store(
    store_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("long-enough-1\n"))
    assert main(["user", "create", "ana", "--password-stdin", "--db-url", store_url]) == 0
    assert main(["user", "list", "--db-url", store_url]) == 0
    assert "ana" in capsys.readouterr().out
    assert open_connections(_database(store_url)) == []
    monkeypatch.setattr("sys.stdin", io.StringIO("long-enough-2\n"))
    with pytest.raises(SystemExit, match="no user named"):
        main(["user", "set-password", "ghost", "--password-stdin", "--db-url", store_url])
    assert open_connections(_database(store_url)) == []


def test_a_connection_left_open_fails_the_drop_and_names_its_holder() -> None:
    url, drop = new_pg_database("the leaky owner")
    engine = create_engine(url, connect_args={"application_name": "leaky-engine"})
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        # Returned to the engine's pool, so still open: the leak a test would commit.
        with pytest.raises(AssertionError) as failure:
            drop()
        message = str(failure.value)
        assert "the leaky owner left connections open" in message
        assert "leaky-engine" in message and _database(url) in message
        # The database is dropped all the same (FORCE ends the leaked connection).
        assert open_connections(_database(url)) == []
    finally:
        engine.dispose()


def _inner_run(
    tmp_path: Path, conftest: str, tests: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run a small pytest session on the suite's conftest (through ``conftest``), in a fresh
    process that is not an xdist worker; its tests write what they saw to ``seen.json``."""
    (tmp_path / "conftest.py").write_text(conftest)
    (tmp_path / "test_inner.py").write_text(tests)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["INNER_SEEN"] = str(tmp_path / "seen.json")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q",
         "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_inner.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    return done, tmp_path / "seen.json"


INNER_LIFETIMES = '''
import json, os
import pytest
from sqlalchemy.engine import make_url
from tests.conftest import open_connections, pg_databases

SEEN = {}

def _db(server):
    return make_url(server.embedded.settings.db_url).database

@pytest.fixture(scope="module")
def module_server(make_server):
    return make_server()

def test_first(module_server, make_server, server):
    SEEN["module"] = _db(module_server)
    SEEN["body"] = _db(make_server())
    SEEN["fixture"] = _db(server)

def test_second(module_server):
    # The module's server still serves; the test's own two are gone with their databases.
    assert _db(module_server) == SEEN["module"]
    assert open_connections(SEEN["module"], wait=0) != []
    assert not {SEEN["body"], SEEN["fixture"]} & pg_databases()
    with open(os.environ["INNER_SEEN"], "w") as out:
        json.dump(SEEN, out)
'''


def test_servers_live_as_long_as_the_test_or_fixture_that_started_them(tmp_path: Path) -> None:
    done, seen = _inner_run(tmp_path, "from tests.conftest import *  # noqa: F403\n",
                            INNER_LIFETIMES)
    assert done.returncode == 0, done.stdout + done.stderr
    databases = json.loads(seen.read_text())
    assert set(databases) == {"module", "body", "fixture"}
    assert not pg_databases() & set(databases.values())
    assert "peak" in done.stdout and "client connections on the test cluster" in done.stdout


INNER_BOUND_CONFTEST = '''
import tests.conftest

tests.conftest.MAX_CONNECTIONS = 6

from tests.conftest import *  # noqa: E402, F403
'''

INNER_HOG = '''
import time
from sqlalchemy import create_engine, text

def test_hog(store_url):
    engine = create_engine(store_url, pool_size=10,
                           connect_args={"application_name": "connection-hog"})
    held = [engine.connect() for _ in range(10)]
    for conn in held:
        conn.execute(text("SELECT 1"))
    time.sleep(1.5)  # three samples of the monitor
    for conn in held:
        conn.close()
    engine.dispose()
'''


def test_more_connections_than_the_bound_fail_the_test_with_a_listing(tmp_path: Path) -> None:
    done, _ = _inner_run(tmp_path, INNER_BOUND_CONFTEST, INNER_HOG)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed, 1 error" in done.stdout, done.stdout
    assert "more than the bound of 6" in done.stdout
    listing = done.stdout[done.stdout.index("more than the bound of 6"):]
    assert "connection-hog" in listing and "test_inner.py::test_hog" in listing
