"""One profiled demo lake behind a real server, shared by the live client tests.

The lake (scale 0.05) is registered as its two data sources and profiled through the client,
so resources, statistics, lineage, join conditions and overlap come from the service's own
processing and discovery (it runs at the end of every PROFILE job). Built once per test process
and backend, by the session fixture ``shared_lake`` of ``tests/conftest.py``: the client's
resource, search, key, lineage, join and coverage modules all read it. The facet-search
panel's tests profile a lake of their own: their first page of matches must stay the lake's.

What they write never changes what another asserts: new objects of their own under unique names
(roles, users, custom properties, folders, data sets, a tag domain and its tag), jobs that find
the lake unchanged, tag associations, and edits of ``hr/employees.csv``, which no other module
reads. Modules that write more than that (``test_live_tags``, ``test_arrow_frame``) profile a
lake of their own with :func:`profiled_catalog`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from catalog_nb.client import Catalog, connect
from catalog_nb.demo.lake import build_lake, lake_sources
from catalog_nb.demo.truth import LakeTruth

FILES, SQL = "demo_files", "demo_sql"


@dataclass
class SharedLake:
    """The catalog (admin), the lake's truth, its server and folder, the PROFILE jobs that
    profiled it (by source name), and resource keys by lake name."""

    cat: Catalog
    truth: LakeTruth
    server: Any
    root: Path
    profiles: dict[str, pd.Series]
    keys: dict[str, str] = field(default_factory=dict)

    def key(self, name: str) -> str:
        """The key of a lake resource: a file path (``crm/customers.csv``) or ``schema.table``."""
        if name not in self.keys:
            source = FILES if "/" in name else SQL
            self.keys[name] = str(self.cat.resource(source, name)["key"])
        return self.keys[name]


def profiled_lake(
    make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory, name: str
) -> SharedLake:
    """A fresh server whose data roots hold a new demo lake, its two sources registered and
    profiled through the client."""
    root = tmp_path_factory.mktemp(name)
    truth = build_lake(root / "acme", scale=0.05)
    server = make_server(data_roots=[root])
    cat = connect(server.url, server.admin_user, server.admin_password, progress=False)
    profiles: dict[str, pd.Series] = {}
    for source in lake_sources(root / "acme"):
        cat.create_source(source["name"], source["uri"], source["sourceType"],
                          description=source["description"])
        # Polled at most every 250 ms, as wait_job polls (tests/server/source_helpers.py).
        job = cat.profile(source["name"], timeout=300, poll_interval=0.25)
        assert job["state"] == "SUCCEEDED", job.to_dict()
        profiles[source["name"]] = job
    return SharedLake(cat, truth, server, root / "acme", profiles)


def profiled_catalog(
    make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory, name: str
) -> tuple[Catalog, LakeTruth, Any]:
    """A lake of its own, as :func:`profiled_lake` makes it: ``(admin catalog, truth, server)``.
    For modules that write to their catalog; the others share the ``shared_lake`` fixture."""
    lake = profiled_lake(make_server, tmp_path_factory, name)
    return lake.cat, lake.truth, lake.server
