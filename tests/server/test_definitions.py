"""The catalog definitions a process keeps (``store/definitions.py``): searches and resource
pages read the custom facets, the data sources' names, the virtual folders and the data sets
once per catalog generation, and see every change the moment it is committed."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, update

from catalog_nb.server.store import definitions
from catalog_nb.server.store import folders as folder_store
from catalog_nb.server.store.schema import data_sources
from catalog_nb.server.visibility import Visibility
from tests.conftest import Http, Server
from tests.server.helpers import counted_statements
from tests.server.search_helpers import Lake, build_lake, facet, post, search
from tests.server.tag_helpers import name

#: A statement reading one of the definitions' tables (not a join to one of them).
TABLES = ("custom_properties", "virtual_folders", "datasets", "data_sources")
DEFINITION_READ = re.compile(rf"\bFROM ({'|'.join(TABLES)})\b")


@pytest.fixture(scope="module")
def lake_server(make_server: Callable[..., Server],
                tmp_path_factory: pytest.TempPathFactory) -> tuple[Server, Lake, Http]:
    server = make_server()
    lake = build_lake(server, Path(tmp_path_factory.mktemp("definitions")))
    return server, lake, server.session()


def definition_reads(seen: list[str]) -> list[str]:
    """The statements among ``seen`` reading one of the definitions' tables."""
    return [s for s in seen if DEFINITION_READ.search(s)]


def _search_and_page(admin: Http, key: str) -> tuple[dict[str, Any], dict[str, Any]]:
    found = search(admin, "csv")
    response = admin.get(f"/dataresource/{key}")
    assert response.status_code == 200, response.text
    return found, response.json()


def test_definitions_are_read_once_per_change(lake_server: tuple[Server, Lake, Http]) -> None:
    server, lake, admin = lake_server
    key = lake.keys["customers.csv"]
    _search_and_page(admin, key)
    with counted_statements(server, TABLES) as seen:
        found, page = _search_and_page(admin, key)
        search(admin, "orders", facetSelections=[
            {"facetName": "virtualFolder", "facetCategories": [lake.folder]}])
    assert definition_reads(seen) == []
    assert f"cp.{lake.team}" in {f["name"] for f in found["facetResults"]}
    assert facet(found, "dataSource")["categoryCounts"].keys() == {lake.one, lake.two}

    # Each change is seen by the next request, which reads the definitions again, once.
    prop = name("region")
    post(admin, "/customproperty", {"name": prop, "type": "STRING", "facetAble": True})
    with counted_statements(server, TABLES) as seen:
        found, _ = _search_and_page(admin, key)
    reads = definition_reads(seen)
    assert f"cp.{prop}" in {f["name"] for f in found["facetResults"]}
    assert sorted(DEFINITION_READ.search(s).group(1) for s in reads) == [  # type: ignore[union-attr]
        "custom_properties", "data_sources", "datasets", "virtual_folders"]

    folder = name("customers")
    post(admin, "/virtualfolder", {"name": folder, "dataSourceKey": lake.one_key,
                                   "pathSpecs": [{"sourcePath": "customers.csv"}]})
    found, page = _search_and_page(admin, key)
    assert folder in page["dataSetVirtualFolders"]
    assert facet(found, "virtualFolder")["categoryCounts"].get(folder) == 1

    assert page["dataSetMember"] is False
    post(admin, "/dataset", {"name": name("people"), "dataSetPathSpecs": {
        lake.one_key: [{"sourcePath": "customers.csv"}]}})
    assert _search_and_page(admin, key)[1]["dataSetMember"] is True

    renamed = name("renamed")
    response = admin.put(f"/datasource/{lake.two_key}", json={"name": renamed})
    assert response.status_code == 200, response.text
    found, _ = _search_and_page(admin, key)
    assert facet(found, "dataSource")["categoryCounts"].keys() == {lake.one, renamed}
    lake.two = renamed


def test_a_transaction_that_changed_the_catalog_reads_its_own_definitions(
    lake_server: tuple[Server, Lake, Http],
) -> None:
    server, lake, _ = lake_server
    store = server.store
    with store.read() as conn:
        before = {f["name"] for f in definitions.folders(conn)}
    added = name("uncommitted")
    with store.write() as conn:
        folder_store.create_folder(conn, Visibility(everything=True), {
            "name": added, "data_source_key": lake.one_key, "path_specs": []})
        assert {f["name"] for f in definitions.folders(conn)} == before | {added}
        with store.read() as other:  # not committed: not in anyone else's
            assert {f["name"] for f in definitions.folders(other)} == before
    with store.read() as conn:
        assert {f["name"] for f in definitions.folders(conn)} == before | {added}


def test_a_change_behind_the_stores_back_shows_within_keep_seconds(
    lake_server: tuple[Server, Lake, Http], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A change made in SQL, past ``Store`` (which counts the generation), is read again after
    :data:`~definitions.KEEP_SECONDS` at the latest."""
    server, lake, _ = lake_server
    store = server.store
    with store.read() as conn:
        assert definitions.source_names(conn)[lake.one_key] == lake.one
    outside = create_engine(store.engine.url)
    try:
        with outside.begin() as conn:
            conn.execute(update(data_sources).where(data_sources.c.key == lake.one_key)
                         .values(name="typed-in-sql"))
        with store.read() as conn:  # kept: the generation did not move
            assert definitions.source_names(conn)[lake.one_key] == lake.one
        monkeypatch.setattr(definitions, "KEEP_SECONDS", 0.0)
        with store.read() as conn:
            assert definitions.source_names(conn)[lake.one_key] == "typed-in-sql"
    finally:
        with outside.begin() as conn:
            conn.execute(update(data_sources).where(data_sources.c.key == lake.one_key)
                         .values(name=lake.one))
        outside.dispose()
