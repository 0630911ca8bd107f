"""What every hostile case asserts: a 4xx with a JSON error, the service still answering, and
nothing written to the store.

``StoreState`` counts the rows of every catalog table (and fingerprints users, roles and tags), so
"nothing written" is checked against the store itself, not against what the API happens to show.
Tables that a refused request may legitimately touch are left out: the audit trail (a refusal
may record its own event), sessions and login failures (a login attempt counts itself).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import requests
from sqlalchemy import func, select

from catalog_nb.server.store import schema
from tests.conftest import Http, Server
from tests.server.helpers import assert_error

#: Tables a refused request may still write to, each for a reason given in the module docstring.
MAY_CHANGE = frozenset({"audit_events", "sessions", "login_failures", "login_throttle"})
#: Tables whose contents, not only their row counts, must stay the same.
FINGERPRINTED = ("users", "roles", "user_roles", "role_grants", "tags", "tag_domains",
                 "data_sources", "data_resources", "resource_fields", "config_values")


@dataclass(frozen=True)
class StoreState:
    counts: dict[str, int]
    prints: dict[str, str]

    @classmethod
    def of(cls, server: Server) -> StoreState:
        counts: dict[str, int] = {}
        prints: dict[str, str] = {}
        with server.store.read() as conn:
            for name, table in schema.metadata.tables.items():
                if name in MAY_CHANGE:
                    continue
                counts[name] = int(
                    conn.execute(select(func.count()).select_from(table)).scalar_one()
                )
            for name in FINGERPRINTED:
                table = schema.metadata.tables[name]
                rows = conn.execute(select(table)).mappings().all()
                text = json.dumps(
                    sorted(json.dumps(dict(r), sort_keys=True, default=str) for r in rows)
                )
                prints[name] = hashlib.sha256(text.encode()).hexdigest()
        return cls(counts, prints)

    def assert_same(self, server: Server) -> None:
        after = StoreState.of(server)
        changed = {k for k in self.counts if self.counts[k] != after.counts.get(k)}
        changed |= {k for k in self.prints if self.prints[k] != after.prints.get(k)}
        assert not changed, f"a refused request wrote to {sorted(changed)}"


def still_answering(server: Server, http: Http | None = None) -> None:
    """The service answers a fresh login and a read, and the caller's own session still works."""
    fresh = server.session()
    for session in (fresh, http) if http is not None else (fresh,):
        response = session.get("/user/_me")
        assert response.status_code == 200, response.text
        response = session.get("/user")
        assert response.status_code == 200, response.text


def refused(
    server: Server,
    response: requests.Response,
    status: int,
    code: str | None = None,
    *mentions: str,
    before: StoreState | None = None,
    http: Http | None = None,
) -> dict[str, Any]:
    """A 4xx JSON error of ``status``/``code``; the service still answers; nothing was written."""
    assert 400 <= status < 500
    body = assert_error(response, status, code, *mentions)
    still_answering(server, http)
    if before is not None:
        before.assert_same(server)
    return body
