"""Helpers of the tag tests: domains, tags and associations made via HTTP, members with grants.

``immutable_tag`` is the one exception: built-in rows come only from the service's first start,
so the tests write one straight through the store functions the service itself uses.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from catalog_nb.server.store import tag_domains as domain_store
from catalog_nb.server.store import tags as tag_store
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, Member, create_role, create_user
from tests.server.lake import profile_folder, resource_key, write_files

#: Small files, profiled for real: people.csv has the fields the association tests name.
FILES: dict[str, str | bytes] = {
    "people.csv": "id,email,phone,city\n1,a@x.org,555-0100,Oslo\n2,b@y.org,555-0101,Rome\n",
    "orders.csv": "order_id,amount\n10,3.5\n11,4.25\n",
    "notes/readme.jsonl": '{"text": "hello"}\n{"text": "world"}\n',
}


def name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_domain(http: Http, prefix: str = "dom", **fields: Any) -> dict[str, Any]:
    response = http.post("/tagdomain", json={"name": name(prefix), **fields})
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


def make_tag(http: Http, domain_key: str | None, tag_name: str, **fields: Any) -> dict[str, Any]:
    body = {"name": tag_name, **fields}
    if domain_key is not None:
        body["domainKey"] = domain_key
    response = http.post("/tag", json=body)
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


def associate(http: Http, resource: str, tag: str, **fields: Any) -> dict[str, Any]:
    response = http.post("/tagassociation", json={"resourceKey": resource, "tagKey": tag,
                                                  **fields})
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


def member(
    server: Server, admin: Http, level: str, *, domains: Sequence[str] = (),
    sources: Sequence[str] = (),
) -> Member:
    """A new user holding one new role of ``level`` granting these domains and sources."""
    role = create_role(admin, name(f"r-{level.lower()}"), level, domainKeys=list(domains),
                       dataSourceKeys=list(sources))
    who = name(level.lower())
    user = create_user(admin, who, roles=[role["name"]])
    return Member(who, user["key"], server.session(who, PASSWORD))


def small_source(server: Server, folder: Path) -> dict[str, str]:
    """Profile FILES under ``folder`` as a new source: its name, key and resource keys."""
    source = name("tagsrc")
    key = profile_folder(server.store, source, write_files(folder, FILES))
    return {
        "name": source, "key": key,
        "people": resource_key(server.store, key, "people.csv"),
        "orders": resource_key(server.store, key, "orders.csv"),
        "readme": resource_key(server.store, key, "notes/readme.jsonl"),
    }


def immutable_tag(server: Server, domain_key: str, tag_name: str, **values: Any) -> str:
    """Create a built-in (immutable) tag straight through the store; its key."""
    with server.store.write() as conn:
        row = tag_store.create_tag(conn, {"domain_key": domain_key, "name": tag_name, **values},
                                   immutable=True)
    return str(row["key"])


def immutable_domain(server: Server, prefix: str = "builtin") -> dict[str, Any]:
    """Create a built-in (immutable) domain straight through the store."""
    with server.store.write() as conn:
        return domain_store.create_domain(conn, {"name": name(prefix)}, immutable=True)
