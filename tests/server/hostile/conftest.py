"""The hostile suite's own catalog: one server with a profiled CSV resource and a custom property,
shared by the cases that must prove nothing was written to real, populated rows."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Http, Server
from tests.server.source_helpers import create_source, run_job


@dataclass
class Target:
    """What hostile requests aim at: a server, its administrator, a user, a profiled resource."""

    server: Server
    admin: Http
    user_key: str
    resource: dict[str, Any]
    source: dict[str, Any]
    prop: str
    root: Path


@pytest.fixture(scope="session")
def target(make_server: Callable[..., Server],
           tmp_path_factory: pytest.TempPathFactory) -> Target:
    root = tmp_path_factory.mktemp("hostile-lake")
    (root / "people.csv").write_text(
        "id,email,name,amount\n"
        + "".join(f"{i},p{i}@example.com,Person {i},{i * 1.5}\n" for i in range(1, 41))
    )
    server = make_server(data_roots=[root])
    admin = server.session()
    user = admin.post("/user", json={"name": f"victim-{uuid.uuid4().hex[:6]}",
                                     "attributes": {"firstName": "Vic", "lastName": "Tim"}})
    assert user.status_code == 201, user.text
    source = create_source(admin, "hostile-files", "FILE", str(root))
    run_job(admin, source["key"], "PROFILE")
    listed = admin.get("/dataresource/metadata").json()["list"]
    resource = next(r for r in listed if r["name"] == "people.csv")
    prop = admin.post("/customproperty", json={"name": "hostile_note", "type": "STRING"})
    assert prop.status_code == 201, prop.text
    return Target(server, admin, user.json()["key"], resource, source, prop.json()["name"], root)
