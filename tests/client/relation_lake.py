"""One profiled demo lake behind a real server, shared by the live relation tests.

The lake (scale 0.05) is registered as its two data sources and profiled through the client,
so lineage, join conditions and overlap come from the service's own discovery (it runs at the
end of every PROFILE job). Built once per test process, by the session fixture ``relation_lake``
of ``tests/client/conftest.py``: the lineage, join and coverage modules all read it (only the
coverage tests write, and only tag associations).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from catalog_nb.client import Catalog, connect
from catalog_nb.demo.lake import build_lake, lake_sources
from catalog_nb.demo.truth import LakeTruth

FILES, SQL = "demo_files", "demo_sql"


@dataclass
class RelationLake:
    """The catalog (admin), the lake's truth, and resource keys by lake name."""

    cat: Catalog
    truth: LakeTruth
    server: Any
    keys: dict[str, str] = field(default_factory=dict)

    def key(self, name: str) -> str:
        """The key of a lake resource: a file path (``crm/customers.csv``) or ``schema.table``."""
        if name not in self.keys:
            source = FILES if "/" in name else SQL
            self.keys[name] = str(self.cat.resource(source, name)["key"])
        return self.keys[name]


def profiled_catalog(
    make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory, name: str
) -> tuple[Catalog, LakeTruth, Any]:
    """A fresh server whose data roots hold a new demo lake, its two sources registered and
    profiled through the client: ``(admin catalog, truth, server)``. For modules that write to
    their catalog; read-only ones share the ``relation_lake`` fixture."""
    root = tmp_path_factory.mktemp(name)
    truth = build_lake(root / "acme", scale=0.05)
    server = make_server(data_roots=[root])
    cat = connect(server.url, server.admin_user, server.admin_password, progress=False)
    for source in lake_sources(root / "acme"):
        cat.create_source(source["name"], source["uri"], source["sourceType"],
                          description=source["description"])
        job = cat.profile(source["name"], timeout=300, poll_interval=0.05)
        assert job["state"] == "SUCCEEDED", job.to_dict()
    return cat, truth, server
