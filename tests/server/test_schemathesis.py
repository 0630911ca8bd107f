"""Schemathesis over the whole API: no request, however malformed, gets a 5xx, and every answer
is the one the OpenAPI document describes.

Every operation of the service's own OpenAPI document (``/api/v2/openapi.json``, loaded from a
running server) is fuzzed twice, once with the administrator's session and once anonymously, in
two of schemathesis's phases:

* coverage: the boundary and invalid values the schema implies (missing and extra fields, wrong
  types, limits, unexpected methods and content types), every one of them; anonymously, only for
  the operations that take callers without a session (the others answer 401 to all of them);
* fuzzing: ``CATALOG_FUZZ_EXAMPLES`` (default 5) Hypothesis examples per operation, positive and
  negative, derandomized with the seed ``CATALOG_FUZZ_SEED`` (default 20250611), no shrinking.

Every answer must be below 500 (schemathesis's ``not_a_server_error``), every 4xx must carry
our JSON error body (``message`` and ``errorCode``), and every answer must conform to the
document (issue 17): its status is one the operation documents (``status_code_conformance``),
its body matches that status's schema (``response_schema_conformance``), its media type is a
documented one (``content_type_conformance``) and the headers the document requires are there
(``response_headers_conformance``). A failure names the operation and prints a curl command that
reproduces the request; the findings of a run are counted at the end, by check.

Both checks ride on the same requests, so the conformance costs no request of its own. The
administrator's run stays on both backends: what the document promises is the same on each, but
a fault (a 5xx) can be PostgreSQL's alone. The anonymous run is ``store_neutral``: nine in ten
of its requests are refused with 401 before any store is read, and the operations it can reach
(``/login`` and the public ones) are fuzzed by the administrator's run on PostgreSQL too.

The server is one of the module's own (the fuzzer leaves plenty of junk behind), on 127.0.0.1.
The logged-in run never sends ``/logout`` with the shared administrator session: those cases get a
session of their own, so the remaining cases stay logged in.

A larger run, locally::

    CATALOG_FUZZ_EXAMPLES=200 CATALOG_FUZZ_SEED=7 .venv/bin/python -m pytest \\
        tests/server/test_schemathesis.py -p no:xdist -s
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator

import pytest
import requests
import schemathesis
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from catalog_nb.contract import API_PREFIX, SESSION_COOKIE
from tests.conftest import Server

SEED = int(os.environ.get("CATALOG_FUZZ_SEED", "20250611"))
MAX_EXAMPLES = int(os.environ.get("CATALOG_FUZZ_EXAMPLES", "5"))
LOGIN = API_PREFIX + "/login"
LOGOUT = API_PREFIX + "/logout"
HTTP_METHODS = frozenset({"get", "put", "post", "delete", "patch", "head", "options"})

api = schemathesis.pytest.from_fixture("fuzz_schema")
anonymous_api = schemathesis.pytest.from_fixture("anonymous_schema")
#: A minute or two together: started first (tests/conftest.py), so no process waits on them.
pytestmark = pytest.mark.slow(seconds=60)


def error_body(ctx: schemathesis.CheckContext, response: schemathesis.Response,
               case: schemathesis.Case) -> bool | None:
    """A 4xx carries the service's JSON error body: ``message`` and ``errorCode``."""
    if response.status_code < 400:
        return None
    try:
        body = response.json()
    except ValueError:
        body = None
    if not (isinstance(body, dict) and isinstance(body.get("message"), str)
            and isinstance(body.get("errorCode"), str)):
        raise AssertionError(
            f"{response.status_code} without message and errorCode: {response.text[:300]!r}"
        )
    return None


CHECKS: list[schemathesis.CheckFunction] = [
    not_a_server_error, error_body, status_code_conformance, response_schema_conformance,
    content_type_conformance, response_headers_conformance,
]


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    # schemathesis 4.32.5's lazy schemas rename the running item through ``Node._nodeid``, which
    # pytest 9.2 no longer has: without it, every test here dies with an AttributeError.
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


class Tally:
    """What one run sent and got back, printed at the end (``-s`` or ``-rP`` shows it)."""

    def __init__(self) -> None:
        self.phases: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()
        #: Failed checks, by the operation and the first line of what schemathesis said.
        self.findings: Counter[str] = Counter()
        self.started = self.last = time.monotonic()

    def add(self, case: schemathesis.Case, response: schemathesis.Response) -> None:
        self.phases[case.meta.phase.name.value if case.meta is not None else "?"] += 1
        self.statuses[response.status_code] += 1
        self.last = time.monotonic()

    def validate(self, case: schemathesis.Case, response: schemathesis.Response) -> None:
        """Run :data:`CHECKS` on ``response``, counting what they find before it fails the test."""
        self.add(case, response)
        try:
            case.validate_response(response, checks=CHECKS)
        except Exception as exc:
            for failure in getattr(exc, "exceptions", None) or [exc]:
                title = getattr(failure, "title", None) or str(failure).strip().split("\n")[0]
                self.findings[f"{case.method} {case.path}: {title}"] += 1
            raise

    def summary(self, name: str) -> str:
        phases = ", ".join(f"{phase} {n}" for phase, n in sorted(self.phases.items()))
        statuses = ", ".join(f"{status}: {n}" for status, n in sorted(self.statuses.items()))
        return (f"schemathesis {name}: {self.phases.total()} requests ({phases}) in "
                f"{self.last - self.started:.0f}s; statuses {statuses} "
                f"(seed {SEED}, {MAX_EXAMPLES} examples per operation); "
                f"{len(self.findings)} findings"
                + "".join(f"\n  {finding} (x{n})" for finding, n in sorted(self.findings.items())))


@pytest.fixture(scope="module")
def tallies() -> Iterator[dict[str, Tally]]:
    found: dict[str, Tally] = {}
    yield found
    for name, tally in found.items():
        print("\n" + tally.summary(name))


@pytest.fixture
def tally(request: pytest.FixtureRequest, tallies: dict[str, Tally]) -> Tally:
    return tallies.setdefault(request.node.name, Tally())


@pytest.fixture(scope="module")
def fuzz_server(make_server: Callable[..., Server]) -> Server:
    return make_server()


def _session_paths(server: Server) -> list[str]:
    """The documented paths whose every operation refuses a caller without a session (401),
    found by asking each once, anonymously and without a body: what the service does, not what
    its routes' code says."""
    document = requests.get(f"{server.api}/openapi.json", timeout=30).json()
    refused: dict[str, list[bool]] = {}
    with _quiet_session() as session:
        for path, operations in document["paths"].items():
            for method in operations.keys() & HTTP_METHODS:
                url = server.url + re.sub(r"\{[^}]+\}", "x", path)
                status = session.request(method, url, timeout=30).status_code
                refused.setdefault(path, []).append(status == 401)
    paths = sorted(path for path, flags in refused.items() if all(flags))
    assert paths and len(paths) < len(refused), "expected both public and session operations"
    return paths


def _schema(server: Server, **extra: object) -> schemathesis.BaseSchema:
    config = schemathesis.Config.from_dict({
        "seed": SEED,
        "base-url": server.url,
        # Health checks judge Hypothesis strategies; this run only looks for server errors.
        "suppress-health-check": ["all"],
        "request-timeout": 60,
        "warnings": False,
        "generation": {
            "max-examples": MAX_EXAMPLES,
            "deterministic": True,
            # Shrinking a failure could cost more requests than the whole run; the unshrunk
            # request reproduces it all the same.
            "no-shrink": True,
            "database": "none",
        },
        "phases": {
            "examples": {"enabled": False},
            "stateful": {"enabled": False},
        },
        "checks": {"enabled": False, "not_a_server_error": {"enabled": True}},
        **extra,
    })
    return schemathesis.openapi.from_url(f"{server.url}{API_PREFIX}/openapi.json",
                                         config=config, timeout=30)


@pytest.fixture(scope="module")
def fuzz_schema(fuzz_server: Server) -> schemathesis.BaseSchema:
    return _schema(fuzz_server)


@pytest.fixture(scope="module")
def anonymous_schema(fuzz_server: Server) -> schemathesis.BaseSchema:
    """The schema of the anonymous run: the coverage phase's boundary values only where a
    caller without a session gets past authentication (login and the public operations). The
    others refuse every anonymous request with 401 before reading it: their thousands of
    boundary cases (nine in ten of this run's requests) all got that same 401, and their
    fuzzing phase still checks it."""
    return _schema(fuzz_server, operations=[{
        "include-path": _session_paths(fuzz_server),
        "phases": {"coverage": {"enabled": False}},
    }])


def _quiet_session() -> requests.Session:
    """A connection pool that never keeps a cookie a fuzzed answer sets (login, logout)."""
    session = requests.Session()
    session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    return session


@pytest.fixture(scope="module")
def wire() -> Iterator[requests.Session]:
    with _quiet_session() as session:
        yield session


@pytest.fixture(scope="module")
def admin_token(fuzz_server: Server) -> str:
    return _login(fuzz_server)


def _login(server: Server) -> str:
    token = server.session().cookies.get(SESSION_COOKIE)
    assert token
    return str(token)


@api.parametrize()
def test_logged_in_as_administrator(case: schemathesis.Case, fuzz_server: Server,
                                    admin_token: str, wire: requests.Session,
                                    tally: Tally) -> None:
    # Logging out would end the session every later case relies on: those get one of their own.
    token = _login(fuzz_server) if case.path == LOGOUT else admin_token
    response = case.call(session=wire, cookies={SESSION_COOKIE: token})
    if response.status_code == 401 and case.path != LOGIN:
        # Otherwise a case that ends the administrator's session would silently turn the rest
        # of this run into a second anonymous one.
        alive = wire.get(fuzz_server.api + "/version", cookies={SESSION_COOKIE: admin_token},
                         timeout=30)
        assert alive.status_code == 200, (
            f"the administrator's session no longer works (after {case.method} {case.path})"
        )
    tally.validate(case, response)


@pytest.mark.store_neutral
@anonymous_api.parametrize()
def test_anonymous(case: schemathesis.Case, wire: requests.Session, tally: Tally) -> None:
    response = case.call(session=wire)
    tally.validate(case, response)
