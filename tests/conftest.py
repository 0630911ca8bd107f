"""Shared fixtures: real catalog servers on 127.0.0.1 over a real store.

The store is a SQLite file in a temporary folder, or, when ``CATALOG_TEST_PG_URL`` names a
PostgreSQL server (an admin URL such as ``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``),
a fresh database created on it for each server and dropped afterwards. CI runs the whole suite
both ways.

Everything a test opens is closed when the test or fixture that opened it ends, whatever its
scope: ``make_server`` stops a server (and drops its database) when the fixture or test that
started it ends, ``store`` disposes its store, ``store_url`` drops its database. The whole suite
therefore holds a bounded number of PostgreSQL connections, and on PostgreSQL that is checked:

* dropping a database first waits for every connection to it to be gone; one left open fails
  the test that made the database, naming who holds it (``application_name``);
* every test process samples the cluster's client connections (``pg_stat_activity``) every
  half second; more than :data:`MAX_CONNECTIONS` at once, all test processes together, fails
  the test that was running, with a listing of who holds them. The peak is printed at the end.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import requests
from requests.adapters import HTTPAdapter
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from urllib3.util.retry import Retry

from catalog_nb.contract import API_PREFIX
from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.server import passwords
from catalog_nb.server.store import Store
from tests.client.shared_lake import SharedLake, profiled_lake

ADMIN_USER = "admin"
ADMIN_PASSWORD = "admin-password-1"
PG_URL = os.environ.get("CATALOG_TEST_PG_URL")

# Passwords are hashed at a sixteenth of the service's scrypt cost in the test processes (the
# servers the fixtures start run in them): at the real cost (n=2**14, ~50 ms a hash) hashing
# every server's administrator and every login was an eighth of the server tests' CPU. Hashes
# carry their parameters, so the code paths are the ones of a real service;
# tests/server/test_password_cost.py checks, in a process of its own, that the service itself
# hashes at the full cost. Django's test settings make the same trade.
passwords._SCRYPT_N = 2**10
passwords._DUMMY_HASH = passwords._stored_form(secrets.token_bytes(16), secrets.token_bytes(32))

# Every JVM the tests start (Spark's drivers, its standalone Master and Worker, executors and
# Spark Connect) compiles with the quick JIT only and collects with one thread: they live for
# seconds on a few thousand rows, where the optimising compiler's and parallel GC's threads cost
# more than they win. Measured on the Spark tests: their JVMs' CPU 93 s -> 49 s, the tests' wall
# 76 s -> 54 s. A setting of the caller's own is kept; the service's JVMs are not touched.
os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")

#: The test process (pytest-xdist's worker id), in database and connection names so that a
#: listing of connections says which process holds them.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
#: The most client connections the suite may hold on the cluster at once, all test processes
#: together (``scripts/test`` runs two). scripts/pg-cluster allows 200. A test process holds
#: its session's shared servers, the current module's and the current test's own (each server
#: keeps up to 5 idle request connections, 15 under a burst, and 2 for its jobs): the whole
#: suite peaked at 36 with two processes on a busy machine. The bound leaves room for that and
#: still fails long before PostgreSQL would refuse connections.
MAX_CONNECTIONS = 80
#: The connections of the tests' own engines (admin work, stores opened by tests).
TEST_APPLICATION = f"catalog-nb tests {WORKER}"


# -- PostgreSQL databases ------------------------------------------------------------------------

#: The databases this test process made and has not dropped yet: name -> who made it.
_DATABASES: dict[str, str] = {}


@cache
def _admin() -> Engine:
    """The cluster's admin database, through one kept connection (more only while the
    connection monitor's sample and another statement run at once).

    Kept, not made per statement: the monitor samples twice a second and a database's drop
    polls until its connections are gone, which made a few thousand connections a run, each
    a backend forked and authenticated by the server.
    """
    assert PG_URL
    return create_engine(PG_URL, pool_size=1, max_overflow=2, isolation_level="AUTOCOMMIT",
                         connect_args={"application_name": TEST_APPLICATION})


def pg_connections(database: str | None = None) -> list[tuple[str, str, str, int]]:
    """Client connections on the cluster (or to one database) as (database, application_name,
    state, count), this query's own left out."""
    with _admin().connect() as conn:
        rows = conn.execute(text(
            "SELECT coalesce(datname, ''), coalesce(application_name, ''), "
            "coalesce(state, ''), count(*) FROM pg_stat_activity "
            "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() "
            "AND (CAST(:database AS text) IS NULL OR datname = :database) "
            "GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2, 3"), {"database": database}).all()
    return [(str(d), str(a), str(s), int(n)) for d, a, s, n in rows]


def describe_connections(rows: list[tuple[str, str, str, int]]) -> str:
    """A listing of connections, one line per (database, application, state), with the test
    or fixture that made each database of this process."""
    lines = []
    for database, application, state, count in rows:
        owner = _DATABASES.get(database)
        made_by = f"  <- {owner}" if owner else ""
        lines.append(f"  {count:4d}  {database or '-'}  {application or '-'}  {state or '-'}"
                     f"{made_by}")
    return "\n".join(lines)


def pg_databases() -> set[str]:
    """The names of the databases on the test cluster."""
    with _admin().connect() as conn:
        return {str(name) for name in conn.execute(text("SELECT datname FROM pg_database"))
                .scalars()}


def open_connections(database: str, wait: float = 5.0) -> list[tuple[str, str, str, int]]:
    """The connections to ``database`` still open after up to ``wait`` seconds (a backend
    leaves pg_stat_activity a moment after its client closed the connection)."""
    deadline = time.monotonic() + wait
    left = pg_connections(database)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = pg_connections(database)
    return left


def new_pg_database(owner: str, prefix: str = "catalog_test",
                    template: str | None = None) -> tuple[str, Callable[[], None]]:
    """A fresh, empty database on the test cluster: its URL, and the function that drops it
    (``template``: a copy of that database instead, see :func:`migrated_template`).

    The drop waits a few seconds for every connection to the database to be closed and fails,
    naming them, when one stays open: whoever made the database left an engine undisposed or a
    server running. ``owner`` says who made it, in that failure and in the bound's listing.
    """
    assert PG_URL
    name = f"{prefix}_{WORKER}_{uuid.uuid4().hex[:12]}".lower()
    with _admin().connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'
                          + (f' TEMPLATE "{template}"' if template else "")))
    _DATABASES[name] = owner

    def drop() -> None:
        left = open_connections(name)
        try:
            with _admin().connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        finally:
            _DATABASES.pop(name, None)
        assert not left, (
            f"{owner} left connections open to its database {name} (engines not disposed, a "
            f"server not stopped):\n{describe_connections(left)}"
        )

    return make_url(PG_URL).set(database=name).render_as_string(hide_password=False), drop


@cache
def migrated_template() -> str:
    """A store at the latest schema version, made once per test process, that servers' stores
    are copied from: a SQLite file's path, or on PostgreSQL a database's name.

    Creating the schema costs a new store 0.1-0.3 s on SQLite and about 0.3 s on PostgreSQL,
    and the suite starts hundreds of servers; a copy costs a few milliseconds on SQLite, and
    ``CREATE DATABASE ... TEMPLATE`` less than creating the tables on PostgreSQL. The copy is
    the store the server would have made (its own start-up migrates it, finding nothing to do).
    """
    if PG_URL:
        url, _drop = new_pg_database("the servers' store template", prefix="catalog_template")
        _DATABASES.pop(make_url(url).database or "", None)  # dropped with the cluster
        with Store(url, application_name=TEST_APPLICATION) as store:
            store.migrate()
        return str(make_url(url).database)
    folder = Path(tempfile.mkdtemp(prefix=f"catalog-template-{WORKER}-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "catalog.sqlite3"
    with Store(f"sqlite:///{path}", application_name=TEST_APPLICATION) as store:
        store.migrate()
    leftovers = sorted(p.name for p in folder.iterdir() if p != path)
    assert not leftovers, f"the template store left {leftovers} beside its file"
    return str(path)


class ConnectionMonitor:
    """Samples the cluster's client connections in a daemon thread; keeps the peak, and the
    worst sample over ``bound`` until :meth:`take_excess` reports it (each as a total and a
    listing made when it was sampled, while the owners of the databases are still known)."""

    def __init__(self, bound: int, every: float = 0.5) -> None:
        self.bound = bound
        self.every = every
        self.peak = (0, "")
        self._excess: tuple[int | None, str] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pg-connection-monitor",
                                        daemon=True)

    def start(self) -> ConnectionMonitor:
        self.sample()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def sample(self) -> None:
        try:
            rows = pg_connections()
        except DBAPIError as exc:  # the cluster refusing a connection is an excess too
            self._over(None, f"  sampling failed: {exc}")
            return
        total = sum(r[3] for r in rows)
        if total > self.peak[0]:
            self.peak = (total, describe_connections(rows))
        if total > self.bound:
            self._over(total, describe_connections(rows))

    def take_excess(self) -> tuple[int | None, str] | None:
        """The worst sample over the bound since the last call (its total is None when the
        cluster refused the sampling connection), or None."""
        with self._lock:
            excess, self._excess = self._excess, None
        return excess

    def _over(self, total: int | None, listing: str) -> None:
        with self._lock:
            kept = self._excess
            if kept is None or (kept[0] is not None and (total is None or total > kept[0])):
                self._excess = (total, listing)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()


_MONITOR: ConnectionMonitor | None = None
#: Each test process's peak: in pytest-xdist's workeroutput, then in the controller's stash.
_PEAK_KEY = "catalog_pg_peak"
_PEAKS = pytest.StashKey[list[dict[str, Any]]]()


@pytest.fixture(scope="session", autouse=True)
def pg_connection_monitor(request: pytest.FixtureRequest) -> Iterator[None]:
    """On PostgreSQL, watch the cluster's connections for the whole session (see the module
    docstring); the peak goes to the end-of-run summary."""
    global _MONITOR
    if not PG_URL:
        yield
        return
    _MONITOR = ConnectionMonitor(MAX_CONNECTIONS).start()
    try:
        yield
    finally:
        _MONITOR.stop()
        peak = {"peak": _MONITOR.peak[0], "listing": _MONITOR.peak[1], "worker": WORKER}
        _MONITOR = None
        config = request.config
        if hasattr(config, "workeroutput"):
            config.workeroutput[_PEAK_KEY] = peak
        else:
            config.stash.setdefault(_PEAKS, []).append(peak)


@pytest.fixture(autouse=True)
def pg_connections_bounded() -> Iterator[None]:
    """Fails the test during which the cluster held more than MAX_CONNECTIONS connections."""
    yield
    if _MONITOR is None:
        return
    excess = _MONITOR.take_excess()
    if excess is not None:
        total, listing = excess
        pytest.fail(
            f"{'Too many' if total is None else total} client connections on the PostgreSQL test "
            f"cluster during this test, more than the bound of {MAX_CONNECTIONS} "
            f"(tests/conftest.py); who holds them, per database (<- the test or fixture of "
            f"process {WORKER} that made it):\n{listing}",
            pytrace=False,
        )


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: keep each worker's peak for the summary."""
    peak = getattr(node, "workeroutput", {}).get(_PEAK_KEY)
    if peak is not None:
        node.config.stash.setdefault(_PEAKS, []).append(peak)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    peaks = config.stash.get(_PEAKS, [])
    if not peaks:
        return
    top = max(peaks, key=lambda p: p["peak"])
    terminalreporter.write_sep("-", "PostgreSQL connections")
    terminalreporter.write_line(
        f"peak {top['peak']} client connections on the test cluster, all test processes "
        f"together (bound {MAX_CONNECTIONS}; seen by {top['worker']}):"
    )
    terminalreporter.write_line(top["listing"])


# -- which tests run on PostgreSQL ---------------------------------------------------------------

#: The fixtures through which a test reaches the store (every server and store fixture is built
#: on one of them). A test that uses neither, in a module that does not open PostgreSQL itself,
#: runs the same whatever the backend: ``scripts/test``'s PostgreSQL run, which goes on beside
#: its SQLite run, leaves it out (it says so with :data:`STORE_ONLY`).
BACKEND_FIXTURES = frozenset({"make_server", "store_url"})
#: Names a module uses when it opens PostgreSQL itself, past the fixtures.
_OPENS_POSTGRES = ("PG_URL", "new_pg_database")
#: The folders of the client's and the notebook's tests. They reach a server only through its
#: HTTP contract, which the server's own tests pin on both backends; run again on PostgreSQL,
#: they took a tenth of that run.
_CLIENT_SIDE = frozenset({"client", "notebook", "e2e"})
_TESTS = Path(__file__).resolve().parent
#: Set (to 1) for a run on PostgreSQL of only the tests that reach the store.
STORE_ONLY = "CATALOG_TEST_STORE_ONLY"


@cache
def _opens_postgres(path: Path) -> bool:
    try:
        source = path.read_text()
    except OSError:
        return True
    return any(name in source for name in _OPENS_POSTGRES)


def reaches_store(item: pytest.Item) -> bool:
    """Whether ``item`` can behave differently on PostgreSQL than on SQLite."""
    marked = getattr(item, "get_closest_marker", None)
    if marked is not None and marked("store_neutral") is not None:
        return False
    path = Path(str(item.path))
    if _opens_postgres(path):
        return True
    resolved = path.resolve()
    # A path outside tests/ is some test's own pytest run in a temporary folder.
    if resolved.is_relative_to(_TESTS) and _CLIENT_SIDE & set(
            resolved.relative_to(_TESTS).parts[:1]):
        return False
    return bool(BACKEND_FIXTURES & set(getattr(item, "fixturenames", ())))


def expected_seconds(item: pytest.Item) -> float:
    """How long a ``slow`` test is expected to take (its marker's ``seconds``, 30 when not
    said); 0 for the others."""
    marker = item.get_closest_marker("slow")
    return 0.0 if marker is None else float(marker.kwargs.get("seconds", 30))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The longest tests first (a stable sort keeps every other test where it was): started
    # last, the 300,000-key document alone kept one of scripts/test's two processes busy for
    # minutes after the other had finished (``--dist worksteal`` lets that one take the rest).
    items.sort(key=lambda item: -expected_seconds(item))
    # The suite runs once per backend (scripts/test): the tests that never reach the store run
    # in the SQLite run, and running them again took a third of the PostgreSQL run.
    if not _store_only():
        return
    kept = [item for item in items if reaches_store(item)]
    left = [item for item in items if not reaches_store(item)]
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def _store_only() -> bool:
    return bool(PG_URL) and os.environ.get(STORE_ONLY) == "1"


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # Files whose tests all never reach the store leave the PostgreSQL run nothing to do: that
    # is a pass (the SQLite run ran them), not pytest's "no tests collected".
    if _store_only() and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
        session.exitstatus = pytest.ExitCode.OK


# -- who started a server ------------------------------------------------------------------------

#: The fixtures being set up (innermost last) and the test being run: (label, addfinalizer).
_OWNERS: list[tuple[str, Callable[[Callable[[], object]], None]]] = []


class _Owners:
    """Keeps :data:`_OWNERS`. A plugin, not conftest hooks: pytest asks a conftest's hooks only
    about nodes under its folder, and session-scoped fixtures belong to the session node."""

    @pytest.hookimpl(wrapper=True)
    def pytest_fixture_setup(self, fixturedef: Any,
                             request: pytest.FixtureRequest) -> Generator[None]:
        label = f"fixture {fixturedef.argname} ({fixturedef.scope})"
        if request.node.nodeid:
            label += f" of {request.node.nodeid}"
        _OWNERS.append((label, request.addfinalizer))
        try:
            return (yield)
        finally:
            _OWNERS.pop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None]:
        _OWNERS.append((item.nodeid, item.addfinalizer))
        try:
            return (yield)
        finally:
            _OWNERS.pop()


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin("catalog-server-owners"):
        config.pluginmanager.register(_Owners(), "catalog-server-owners")


class Server:
    """A running catalog service for tests: its URL, its administrator and its store."""

    def __init__(self, embedded: EmbeddedServer) -> None:
        self.embedded = embedded
        self.url = embedded.url
        self.api = embedded.url + API_PREFIX
        self.admin_user = ADMIN_USER
        self.admin_password = ADMIN_PASSWORD

    @property
    def store(self) -> Store:
        store: Store = self.embedded.app.state.store
        return store

    def session(self, user: str = ADMIN_USER, password: str = ADMIN_PASSWORD) -> Http:
        """A requests session logged in as ``user``.

        A 503 (the store was busy: logins of one name at once wait on its throttle rows, and
        PostgreSQL's lock timeout can end the wait) is tried again after its ``Retry-After``,
        as the client library does; three in a row fail.
        """
        http = Http(self.api)
        for _ in range(3):
            response = http.post("/login", json={"username": user, "password": password})
            if response.status_code != 503:
                break
            time.sleep(float(response.headers.get("Retry-After", "1")))
        assert response.status_code == 200, response.text
        return http

    def anonymous(self) -> Http:
        return Http(self.api)


class Http(requests.Session):
    """A requests session whose paths are relative to the API base (``/api/v2``)."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base
        # uvicorn closes a connection idle for 5 s; a test that pauses longer (a busy machine)
        # may send on the closing socket and get ConnectionResetError. Resend idempotent
        # requests once after a connection or read error, as the catalog's own client does;
        # statuses are never retried, since tests assert on 429 and 503.
        stale_once = Retry(total=1, connect=1, read=1, status=0, other=0, redirect=0)
        for prefix in ("http://", "https://"):
            self.mount(prefix, HTTPAdapter(max_retries=stale_once))

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> Any:
        target = url.decode() if isinstance(url, bytes) else url
        if target.startswith("/"):
            target = self.base + target
        kwargs.setdefault("timeout", 30)
        return super().request(method, target, *args, **kwargs)


@pytest.fixture(scope="session")
def make_server(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Server]:
    """Start a fresh server on a fresh store (keyword arguments are Settings fields).

    The server is stopped, and its database dropped, when the fixture or test that started it
    ends: a module-scoped fixture's server lives for the module, one started in a test for that
    test only. Stopping fails the owner when the server does not stop or leaves connections open.
    """

    def start(**settings: Any) -> Server:
        if not _OWNERS:
            raise RuntimeError("make_server() is called from a fixture or a test only")
        owner, add_finalizer = _OWNERS[-1]
        data_dir: Path = tmp_path_factory.mktemp("catalog")
        drop = None
        if PG_URL and "db_url" not in settings:
            settings["db_url"], drop = new_pg_database(owner, template=migrated_template())
        elif "db_url" not in settings:
            shutil.copyfile(migrated_template(), data_dir / "catalog.sqlite3")
        settings.setdefault("admin_password", ADMIN_PASSWORD)
        try:
            embedded = EmbeddedServer(data_dir, admin_user=ADMIN_USER, **settings).start()
        except BaseException:
            if drop is not None:
                drop()
            raise

        def stop() -> None:
            embedded.stop(timeout=30)
            try:
                assert not embedded.running, (
                    f"the server {embedded.url} of {owner} did not stop within 30 s")
            finally:
                if drop is not None:
                    drop()

        add_finalizer(stop)
        return Server(embedded)

    return start


@pytest.fixture
def store_url(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a fresh, empty store on the backend under test."""
    if not PG_URL:
        yield f"sqlite:///{tmp_path / 'catalog.sqlite3'}"
        return
    url, drop = new_pg_database(request.node.nodeid)
    yield url
    drop()


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    """A migrated store on a fresh database, its connections closed when the test ends."""
    with Store(store_url, application_name=TEST_APPLICATION) as opened:
        opened.migrate()
        yield opened


@pytest.fixture(scope="session")
def live_server(make_server: Callable[..., Server]) -> Server:
    """One server shared by the whole session (tests must not depend on each other's data)."""
    return make_server()


@pytest.fixture
def server(make_server: Callable[..., Server]) -> Server:
    """A server of this test's own, on a fresh store."""
    return make_server()


@pytest.fixture
def admin(live_server: Server) -> Http:
    """The shared server's administrator, logged in."""
    return live_server.session()


@pytest.fixture
def unique() -> Callable[[str], str]:
    """Unique names, so tests on the shared server never collide."""
    return lambda prefix: f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def shared_lake(make_server: Callable[..., Server],
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedLake]:
    """The profiled demo lake shared by the live client tests that only read it
    (``tests.client.shared_lake`` says what they may write): built once per test process and
    backend; its server lives until the session ends."""
    lake = profiled_lake(make_server, tmp_path_factory, "shared-lake")
    yield lake
    lake.cat.close()
