"""Reading one data resource: ``GET /dataresource/{key}`` and ``/dataresource/source/{name}``.

The catalog content is the demo lake (files and SQL) and a few hand-made files, browsed and
profiled by the real profiling library and written by the real ingest (``tests.server.lake``).
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from catalog_nb.contract import ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import assert_error
from tests.server.lake import demo_files, profile_folder, profile_sql, write_files

REQUIRED_BOOLEANS = (
    "canAssociateTag", "canDisassociateTag", "canRunJob", "canAddOrRemoveResourceFromDataset",
    "canCreateHiveTableOrView", "permittedToRead", "dataPermitted", "dataSetRoot",
    "dataSetMember", "collectionRoot", "parquetBinaryAsString", "lastPartitionProfile",
    "favorite", "header",
)
REQUIRED_NUMBERS = (
    "partitionCount", "subscribersCount", "processedTime", "fieldCount", "curationCount",
    "headerRow", "rowCount", "dataSetSchemaVersion", "averageRating", "resourceSize",
    "usageCount", "ratingCount", "score",
)
OPTIONAL = (
    "key", "type", "description", "richDescription", "timeOfCreation", "timeOfLastChange",
    "restricted", "viewAble", "updateable", "customProperties",
    "timeOfResourceChange", "timeOfResourceCreation", "timeOfResourceAccess",
    "timeOfLastProfile", "timeOfLastRefresh", "landing", "dataSetId", "owner", "xmlRowTag",
    "xmlRootTag", "separator", "dataSourceName", "dataSourceType", "dataSourceUri",
    "dataSourceKey", "errorMsg", "resourcePath", "resourceState", "resourceType", "name",
    "tableName", "tableType", "databaseName", "dataSchemaName", "runId", "fileFormat",
    "fileFormatDisplay", "sensitivity", "status", "datasetVirtualFolderName",
    "logicalFolderContext", "dataSetRootResource", "browseContextDataset",
    "virtualFolderContextName", "allowedTagDomainKeys", "dataSetVirtualFolders",
    "joinResources", "partitionDefinition", "origins", "logicalFolders", "permToReadMap",
    "reportedFields", "dataSetPathSpecs", "experts", "joinConditions", "fields",
    "detailedStatus", "tagAssociationViewList",
)
EXTRAS = ("encoding", "collectionKey", "memberPaths", "sourceDetails", "inferredKeys")
FIELD_KEYS = {"name", "displayName", "description", "comment", "dataType", "nullable",
              "position", "properties", "tags"}


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def files(live_server: Server) -> tuple[str, str]:
    """(source name, key) of the demo lake's files, profiled."""
    name = _name("lake")
    return name, profile_folder(live_server.store, name, demo_files())


@pytest.fixture(scope="module")
def sql(live_server: Server) -> tuple[str, str]:
    """(source name, key) of the demo lake's database, stored with a password in its URI."""
    name = _name("lakesql")
    uri = "postgresql+psycopg://reader:s3cret-pw@db.example.com/sales"
    return name, profile_sql(live_server.store, name, uri)


@pytest.fixture(scope="module")
def odd(live_server: Server, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(source name, key) of hand-made files: junk, empty, a nested JSON lines file."""
    folder = write_files(tmp_path_factory.mktemp("odd"), {
        "junk.csv": os.urandom(2048).replace(b"\n", b"") + b"\x00",
        "empty.csv": "",
        "good.csv": "id,amount\n1,2.5\n2,\n3,4.0\n",
        "nested/events.jsonl": '{"id": 1, "user": {"ip": "10.0.0.1"}}\n{"id": 2}\n',
    })
    name = _name("odd")
    return name, profile_folder(live_server.store, name, folder)


def by_path(http: Http, source: str, path: str) -> dict[str, Any]:
    response = http.get(f"/dataresource/source/{quote(source)}", params={"resourcePath": path})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_a_file_resource_carries_every_property_of_the_spec(
    admin: Http, files: tuple[str, str]
) -> None:
    resource = by_path(admin, files[0], "crm/customers.csv")
    missing = [k for k in (*REQUIRED_BOOLEANS, *REQUIRED_NUMBERS, *OPTIONAL, *EXTRAS)
               if k not in resource]
    assert missing == []
    assert all(isinstance(resource[k], bool) for k in REQUIRED_BOOLEANS)
    assert all(isinstance(resource[k], int | float) and not isinstance(resource[k], bool)
               for k in REQUIRED_NUMBERS)
    assert resource["type"] == "dataresource"
    assert resource["dataSourceKey"] == files[1] and resource["dataSourceName"] == files[0]
    assert resource["resourceType"] == "resource_type_file"
    assert resource["fileFormat"] == "csv" and resource["fileFormatDisplay"] == "CSV"
    assert resource["header"] is True and resource["headerRow"] == 1
    assert resource["separator"] == "," and resource["encoding"]
    assert resource["rowCount"] > 0 and resource["resourceSize"] > 0
    assert resource["fieldCount"] == len(resource["fields"]) > 0
    assert resource["resourceState"] == "OK" and resource["status"] == "PROFILED"
    assert resource["timeOfLastProfile"] and resource["timeOfResourceChange"]
    assert {d["stageName"] for d in resource["detailedStatus"]} == {"browse", "profile"}
    assert resource["tagAssociationViewList"] == [] and resource["joinConditions"] == []
    assert resource["dataSourceUri"] == str(demo_files().resolve())


def test_fields_carry_profiling_properties_and_never_the_sketch(
    admin: Http, files: tuple[str, str]
) -> None:
    resource = by_path(admin, files[0], "crm/customers.csv")
    assert "sketch" not in json.dumps(resource).lower()
    for position, field in enumerate(resource["fields"]):
        assert set(field) == FIELD_KEYS
        assert field["position"] == position
        assert isinstance(field["nullable"], bool) and field["dataType"]
        props = {p["name"]: p for p in field["properties"]}
        assert all(set(p) == {"name", "value", "type"} for p in field["properties"])
        assert props["density"]["type"] == "DOUBLE" and 0 <= props["density"]["value"] <= 1
        assert props["valueCount"]["type"] == "LONG"
        assert props["distinctCount"]["type"] == "LONG"
        assert props["sampled"]["type"] == "BOOLEAN"
        if "patterns" in props:
            assert props["patterns"]["type"] == "ARRAY"
    types = {f["name"]: f["dataType"] for f in resource["fields"]}
    assert "LONG" in types.values() and "STRING" in types.values()


def test_by_key_and_by_path_answer_the_same_resource(admin: Http, files: tuple[str, str]) -> None:
    resource = by_path(admin, files[0], "finance/payments.parquet")
    response = admin.get(f"/dataresource/{resource['key']}")
    assert response.status_code == 200
    assert response.json() == resource
    assert resource["fileFormat"] == "parquet" and resource["fileFormatDisplay"] == "Parquet"


def test_source_names_are_case_insensitive_and_a_leading_slash_is_forgiven(
    admin: Http, files: tuple[str, str]
) -> None:
    plain = by_path(admin, files[0], "hr/employees.csv")
    assert by_path(admin, files[0].upper(), "/hr/employees.csv")["key"] == plain["key"]
    assert plain["separator"] == ";"


def test_a_collection_lists_its_members_and_members_name_their_collection(
    admin: Http, files: tuple[str, str]
) -> None:
    collection = by_path(admin, files[0], "sales/orders")
    assert collection["resourceType"] == "resource_type_collection"
    assert collection["collectionRoot"] is True
    assert collection["partitionCount"] == len(collection["memberPaths"]) > 1
    assert collection["memberPaths"] == sorted(collection["memberPaths"])
    member = by_path(admin, files[0], collection["memberPaths"][0])
    assert member["collectionKey"] == collection["key"]
    assert member["collectionRoot"] is False and member["memberPaths"] == []


def test_a_nested_json_file_has_dotted_field_names(admin: Http, odd: tuple[str, str]) -> None:
    resource = by_path(admin, odd[0], "nested/events.jsonl")
    assert [f["name"] for f in resource["fields"]] == ["id", "user.ip"]
    assert resource["fileFormatDisplay"] == "JSON Lines"


@pytest.mark.parametrize("path", ["junk.csv", "empty.csv"])
def test_files_that_cannot_be_parsed_are_errors_with_a_message(
    admin: Http, odd: tuple[str, str], path: str
) -> None:
    resource = by_path(admin, odd[0], path)
    assert resource["resourceState"] == "ERROR" and resource["status"] == "ERROR"
    assert resource["errorMsg"]
    assert resource["fields"] == [] and resource["rowCount"] == 0 and resource["fieldCount"] == 0


def test_a_table_names_its_database_schema_and_keys(admin: Http, sql: tuple[str, str]) -> None:
    table = by_path(admin, sql[0], "sales.orders")
    assert table["resourceType"] == "resource_type_table"
    assert table["dataSchemaName"] == "sales" and table["tableName"] == "orders"
    assert table["tableType"] and table["databaseName"]
    assert table["sourceDetails"]["primaryKey"]
    assert table["sourceDetails"]["foreignKeys"]
    assert table["rowCount"] > 0
    view = by_path(admin, sql[0], "sales.customer_revenue")
    assert view["resourceType"] == "resource_type_view"
    assert "select" in view["sourceDetails"]["viewDefinition"].lower()


def test_an_sql_password_never_leaves_the_service(admin: Http, sql: tuple[str, str]) -> None:
    table = by_path(admin, sql[0], "sales.orders")
    assert table["dataSourceType"] == "SQL"
    assert table["dataSourceUri"] == "postgresql+psycopg://reader:***@db.example.com/sales"
    listed = admin.get("/dataresource/metadata",
                       params={"propertyFilter": f"data_source:{sql[0]}"}).text
    assert "s3cret-pw" not in listed and "s3cret-pw" not in json.dumps(table)


def test_unknown_keys_sources_and_paths_are_404(admin: Http, files: tuple[str, str]) -> None:
    assert_error(admin.get("/dataresource/no-such-key"), 404,
                 ErrorCode.RESOURCE_NOT_FOUND.value, "no-such-key")
    assert_error(admin.get("/dataresource/source/no-such-source",
                           params={"resourcePath": "crm/customers.csv"}),
                 404, ErrorCode.DATA_SOURCE_NOT_FOUND.value, "no-such-source")
    assert_error(admin.get(f"/dataresource/source/{files[0]}",
                           params={"resourcePath": "crm/nope.csv"}),
                 404, ErrorCode.RESOURCE_NOT_FOUND.value, "crm/nope.csv")


def test_the_resource_path_is_required(admin: Http, files: tuple[str, str]) -> None:
    assert_error(admin.get(f"/dataresource/source/{files[0]}"), 400,
                 ErrorCode.INVALID_PARAMETER.value, "resourcePath")
    assert_error(admin.get(f"/dataresource/source/{files[0]}", params={"resourcePath": ""}),
                 400, ErrorCode.INVALID_PARAMETER.value)


def test_a_source_name_with_a_slash_is_reachable(live_server: Server, admin: Http,
                                                 tmp_path: Path) -> None:
    name = _name("team/a")
    profile_folder(live_server.store, name, write_files(tmp_path, {"a.csv": "x\n1\n"}))
    assert by_path(admin, name, "a.csv")["dataSourceName"] == name
