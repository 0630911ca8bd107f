"""Data sources, custom property definitions, virtual folders and data sets (mocked service)."""

from __future__ import annotations

from pathlib import PurePosixPath

import pandas as pd
import pytest
import responses

from catalog_nb.client import Catalog, NotFoundError
from catalog_nb.client.resources.folders import DATASET_COLUMNS, FOLDER_COLUMNS, path_spec
from catalog_nb.client.resources.properties import CUSTOM_PROPERTY_COLUMNS
from catalog_nb.client.resources.sources import SOURCE_COLUMNS
from tests.client.mocks import API, json_of
from tests.client.resource_mocks import DEFINITIONS, FOLDERS, SOURCES, add_lists, calls_to

DATASET = {
    "key": "ds-1",
    "name": "Customers",
    "description": None,
    "dataSetPathSpecs": {"src-sql": [{"sourcePath": "sales.customers"}], "src-files": []},
    "resourceCount": 3,
    "timeOfCreation": 1704067200000,
    "timeOfLastChange": 1704067200000,
}


def _names(columns: tuple) -> list[str]:
    return [column.name for column in columns]


# -- data sources ------------------------------------------------------------------------------


def test_sources_frame(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/datasource", json=SOURCES)
    frame = cat.sources()
    assert list(frame.columns) == _names(SOURCE_COLUMNS)
    files, sql = frame.iloc[0], frame.iloc[1]
    assert files["last_job_state"] == "SUCCEEDED" and files["exclude"] == ["tmp/**"]
    assert str(files["last_job_end"]) == "2024-01-01 00:01:00+00:00"
    assert sql["last_job_state"] is pd.NA and sql["resource_count"] == 5
    assert cat.sources(as_frame=False) == SOURCES


def test_empty_sources_keep_columns(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/datasource", json=[])
    frame = cat.sources()
    assert frame.empty and list(frame.columns) == _names(SOURCE_COLUMNS)
    assert str(frame["created"].dtype) == "datetime64[ns, UTC]"


def test_source_by_name_any_case_or_key(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/datasource", json=SOURCES)
    assert cat.source("DEMO_FILES")["key"] == "src-files"
    assert cat.source("src-sql")["name"] == "demo_sql"
    with pytest.raises(NotFoundError, match="you can see: demo_files, demo_sql") as exc:
        cat.source("nope")
    assert exc.value.error_code == "DATA_SOURCE_NOT_FOUND"


def test_create_source_body(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.POST, API + "/datasource", json=SOURCES[0], status=201)
    cat.create_source("lake", PurePosixPath("/data/lake"), include="*.csv", description="d")
    cat.create_source("db", "sqlite:///x.sqlite3", "sql", exclude=["tmp_*", "scratch.*"])
    assert [json_of(call) for call in calls_to(mock, "POST", "/datasource")] == [
        {
            "name": "lake",
            "sourceType": "FILE",
            "uri": "/data/lake",
            "description": "d",
            "includePatterns": ["*.csv"],
        },
        {
            "name": "db",
            "sourceType": "SQL",
            "uri": "sqlite:///x.sqlite3",
            "excludePatterns": ["tmp_*", "scratch.*"],
        },
    ]


def test_update_source_resolves_the_name(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/datasource", json=SOURCES)
    mock.add(responses.PUT, API + "/datasource/src-sql", json=SOURCES[1])
    cat.update_source("demo_sql", description="ops db", include=[])
    (call,) = calls_to(mock, "PUT", "/datasource/src-sql")
    assert json_of(call) == {"description": "ops db", "includePatterns": []}


# -- custom property definitions ---------------------------------------------------------------


def test_custom_properties_frame(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/customproperty", json=DEFINITIONS)
    frame = cat.custom_properties()
    assert list(frame.columns) == _names(CUSTOM_PROPERTY_COLUMNS)
    assert frame.query("facet_able")["name"].tolist() == ["sensitivity", "pii"]


def test_create_and_update_custom_property(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.POST, API + "/customproperty", json=DEFINITIONS[0], status=201)
    mock.add(responses.GET, API + "/customproperty", json=DEFINITIONS)
    mock.add(responses.PUT, API + "/customproperty/cp2", json=DEFINITIONS[1])
    cat.create_custom_property("sensitivity", "string", display_name="Sensitivity", facet_able=True)
    cat.update_custom_property("retention_days", type="number", facet_able=False)
    assert json_of(calls_to(mock, "POST", "/customproperty")[0]) == {
        "name": "sensitivity",
        "type": "STRING",
        "facetAble": True,
        "displayName": "Sensitivity",
    }
    assert json_of(calls_to(mock, "PUT", "/customproperty/cp2")[0]) == {
        "type": "NUMBER",
        "facetAble": False,
    }
    with pytest.raises(ValueError, match="unknown custom property type 'colour'"):
        cat.create_custom_property("x", "colour")


# -- virtual folders ---------------------------------------------------------------------------


def test_path_spec_forms() -> None:
    assert path_spec("crm") == {"sourcePath": "crm"}
    assert path_spec({"path": "hr", "exclude": "*.tmp"}) == {
        "sourcePath": "hr",
        "excludePattern": "*.tmp",
    }
    assert path_spec({"includePattern": "*.csv"}) == {"sourcePath": "", "includePattern": "*.csv"}
    with pytest.raises(TypeError, match="unknown path specification key 'glob'"):
        path_spec({"glob": "*"})


def test_virtual_folders_frame(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/virtualfolder", json=FOLDERS)
    frame = cat.virtual_folders()
    assert list(frame.columns) == _names(FOLDER_COLUMNS)
    assert frame.loc[0, "source"] == "demo_files" and frame.loc[0, "resource_count"] == 2


def test_create_virtual_folder_bodies(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    mock.add(responses.POST, API + "/virtualfolder", json=FOLDERS[0], status=201)
    cat.create_virtual_folder("CRM csv", "demo_files", source_path="crm", include="*.csv")
    cat.create_virtual_folder(
        "Money", "src-files", ["finance", {"source_path": "sales"}], parent="Customer data"
    )
    cat.create_virtual_folder("All", "demo_sql", description="everything")
    assert [json_of(call) for call in calls_to(mock, "POST", "/virtualfolder")] == [
        {
            "name": "CRM csv",
            "dataSourceKey": "src-files",
            "pathSpecs": [{"sourcePath": "crm", "includePattern": "*.csv"}],
        },
        {
            "name": "Money",
            "dataSourceKey": "src-files",
            "parentKey": "vf-1",
            "pathSpecs": [{"sourcePath": "finance"}, {"sourcePath": "sales"}],
        },
        {
            "name": "All",
            "description": "everything",
            "dataSourceKey": "src-sql",
            "pathSpecs": [{"sourcePath": ""}],
        },
    ]


def test_update_and_delete_virtual_folder(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    mock.add(responses.PUT, API + "/virtualfolder/vf-1", json=FOLDERS[0])
    mock.add(responses.DELETE, API + "/virtualfolder/vf-1", status=204)
    cat.update_virtual_folder("customer DATA", include="*.parquet")
    cat.update_virtual_folder("vf-1", name="Customers")
    cat.delete_virtual_folder("Customer data")
    bodies = [json_of(call) for call in calls_to(mock, "PUT", "/virtualfolder/vf-1")]
    assert bodies == [
        {"pathSpecs": [{"sourcePath": "crm", "includePattern": "*.parquet"}]},
        {"name": "Customers"},
    ]
    assert len(calls_to(mock, "DELETE", "/virtualfolder/vf-1")) == 1


def test_shortcut_update_of_a_folder_with_several_specs_is_refused(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    two = {**FOLDERS[0], "pathSpecs": [{"sourcePath": "a"}, {"sourcePath": "b"}]}
    mock.add(responses.GET, API + "/virtualfolder", json=[two])
    with pytest.raises(ValueError, match="has 2 path specifications; pass path_specs="):
        cat.update_virtual_folder("Customer data", include="*.csv")
    mock.add(responses.PUT, API + "/virtualfolder/vf-1", json=two)
    cat.update_virtual_folder("Customer data", path_specs=[])
    assert json_of(calls_to(mock, "PUT", "/virtualfolder/vf-1")[0]) == {"pathSpecs": []}


def test_unknown_folder_is_not_found(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    with pytest.raises(NotFoundError) as exc:
        cat.virtual_folder("nope")
    assert exc.value.error_code == "VIRTUAL_FOLDER_NOT_FOUND"


# -- data sets ---------------------------------------------------------------------------------


def test_datasets_frame(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    mock.add(responses.GET, API + "/dataset", json=[DATASET])
    frame = cat.datasets()
    assert list(frame.columns) == _names(DATASET_COLUMNS)
    assert frame.loc[0, "sources"] == ["demo_files", "demo_sql"]
    assert frame.loc[0, "source_keys"] == ["src-files", "src-sql"]
    assert frame.loc[0, "path_specs"] == DATASET["dataSetPathSpecs"]


def test_empty_datasets_skip_the_source_lookup(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/dataset", json=[])
    frame = cat.datasets()
    assert frame.empty and list(frame.columns) == _names(DATASET_COLUMNS)
    assert calls_to(mock, "GET", "/datasource") == []


def test_dataset_writes(mock: responses.RequestsMock, cat: Catalog) -> None:
    add_lists(mock)
    mock.add(responses.GET, API + "/dataset", json=[DATASET])
    mock.add(responses.POST, API + "/dataset", json=DATASET, status=201)
    mock.add(responses.PUT, API + "/dataset/ds-1", json=DATASET)
    mock.add(responses.DELETE, API + "/dataset/ds-1", status=204)
    cat.create_dataset(
        "Customers",
        {"demo_sql": ["sales.customers"], "src-files": {"source_path": "crm", "include": "*.csv"}},
    )
    cat.update_dataset("customers", description="All about customers")
    cat.update_dataset("ds-1", specs={"demo_files": "crm"})
    cat.delete_dataset("Customers")
    assert json_of(calls_to(mock, "POST", "/dataset")[0]) == {
        "name": "Customers",
        "dataSetPathSpecs": {
            "src-sql": [{"sourcePath": "sales.customers"}],
            "src-files": [{"sourcePath": "crm", "includePattern": "*.csv"}],
        },
    }
    assert [json_of(call) for call in calls_to(mock, "PUT", "/dataset/ds-1")] == [
        {"description": "All about customers"},
        {"dataSetPathSpecs": {"src-files": [{"sourcePath": "crm"}]}},
    ]
    assert len(calls_to(mock, "DELETE", "/dataset/ds-1")) == 1
