"""``/virtualfolder`` and ``/dataset``: CRUD, validation, and membership computed from paths."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from catalog_nb.server import profiling
from catalog_nb.server.store import ingest
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    Member,
    assert_error,
    audit_search,
    create_role,
    create_user,
)
from tests.server.lake import demo_files, profile_folder, write_files

Unique = Callable[[str], str]


@pytest.fixture(scope="module")
def lake(live_server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Keys of two sources: the demo lake's files and a small hand-made one."""
    small = write_files(tmp_path_factory.mktemp("fold"), {
        "x/1.csv": "a\n1\n", "x/2.csv": "a\n2\n", "x/skip.csv": "a\n3\n", "y/3.jsonl": '{"a":1}\n',
    })
    suffix = uuid.uuid4().hex[:8]
    return {
        "lake": profile_folder(live_server.store, f"fl-lake-{suffix}", demo_files()),
        "small": profile_folder(live_server.store, f"fl-small-{suffix}", small),
        "small_name": f"fl-small-{suffix}",
    }


def folder(http: Http, source: str, specs: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    body = {"name": f"vf-{uuid.uuid4().hex[:8]}", "dataSourceKey": source, "pathSpecs": specs,
            **extra}
    response = http.post("/virtualfolder", json=body)
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


def dataset(http: Http, specs: dict[str, list[dict[str, Any]]], **extra: Any) -> dict[str, Any]:
    body = {"name": f"ds-{uuid.uuid4().hex[:8]}", "dataSetPathSpecs": specs, **extra}
    response = http.post("/dataset", json=body)
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


def test_a_folder_counts_the_resources_its_paths_match(admin: Http, lake: dict[str, str]) -> None:
    made = folder(admin, lake["small"], [{"sourcePath": "x", "excludePattern": "skip*"},
                                         {"sourcePath": "/y/", "includePattern": "*.jsonl"}],
                  description="csv and json")
    assert set(made) == {"key", "type", "name", "description", "dataSourceKey", "dataSourceName",
                         "parentKey", "pathSpecs", "resourceCount", "timeOfCreation",
                         "timeOfLastChange"}
    assert made["type"] == "virtualfolder" and made["dataSourceName"] == lake["small_name"]
    assert made["resourceCount"] == 3 and made["parentKey"] is None
    assert made["pathSpecs"][0] == {"sourcePath": "x", "includePattern": None,
                                    "excludePattern": "skip*"}
    assert admin.get(f"/virtualfolder/{made['key']}").json() == made
    assert made in admin.get("/virtualfolder").json()
    members = admin.get("/dataresource/metadata",
                        params={"virtualFolderKeys": made["key"]}).json()
    assert sorted(r["resourcePath"] for r in members["list"]) == ["x/1.csv", "x/2.csv", "y/3.jsonl"]
    assert all(made["name"] in r["dataSetVirtualFolders"] for r in members["list"])


def test_update_changes_what_is_sent_and_membership_follows(
    admin: Http, lake: dict[str, str]
) -> None:
    made = folder(admin, lake["small"], [{"sourcePath": "x"}], description="keep")
    response = admin.put(f"/virtualfolder/{made['key']}",
                         json={"pathSpecs": [{"includePattern": "*.jsonl"}]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["resourceCount"] == 1 and body["description"] == "keep"
    assert body["name"] == made["name"]
    moved = admin.put(f"/virtualfolder/{made['key']}",
                      json={"dataSourceKey": lake["lake"], "pathSpecs": [{"sourcePath": "crm"}]})
    assert moved.json()["resourceCount"] == 2


@pytest.mark.parametrize(("body", "code", "named"), [
    ({"dataSourceKey": "nope"}, ErrorCode.UNKNOWN_REFERENCE, "nope"),
    ({"parentKey": "nope"}, ErrorCode.UNKNOWN_REFERENCE, "nope"),
    ({"pathSpecs": [{"sourcePath": "x", "colour": "red"}]}, ErrorCode.INVALID_PAYLOAD, "colour"),
    ({"pathSpecs": "x"}, ErrorCode.INVALID_PAYLOAD, "pathSpecs"),
    # read-only properties are ignored on create but for the type (issue 17, test_read_back.py)
    ({"resourceCount": 5, "type": "dataset"}, ErrorCode.INVALID_PAYLOAD, "type"),
    ({"name": ""}, ErrorCode.INVALID_PAYLOAD, "name"),
])
def test_bad_folders_are_400(
    admin: Http, lake: dict[str, str], body: dict[str, Any], code: ErrorCode, named: str
) -> None:
    payload = {"name": f"bad-{uuid.uuid4().hex[:8]}", "dataSourceKey": lake["small"], **body}
    assert_error(admin.post("/virtualfolder", json=payload), 400, code.value, named)


def test_a_folder_needs_a_source(admin: Http) -> None:
    assert_error(admin.post("/virtualfolder", json={"name": "orphan"}), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "dataSourceKey")


def test_parents_cannot_form_a_cycle(admin: Http, lake: dict[str, str]) -> None:
    top = folder(admin, lake["small"], [])
    middle = folder(admin, lake["small"], [], parentKey=top["key"])
    low = folder(admin, lake["small"], [], parentKey=middle["key"])
    assert low["parentKey"] == middle["key"]
    for key, parent in ((top["key"], low["key"]), (top["key"], top["key"])):
        assert_error(admin.put(f"/virtualfolder/{key}", json={"parentKey": parent}), 400,
                     ErrorCode.PARENT_CYCLE.value)
    detached = admin.put(f"/virtualfolder/{low['key']}", json={"parentKey": None})
    assert detached.status_code == 200 and detached.json()["parentKey"] is None
    nameless = admin.put(f"/virtualfolder/{low['key']}", json={"name": None})
    assert_error(nameless, 400, ErrorCode.INVALID_PAYLOAD.value, "name")
    assert nameless.json()["fields"] == ["name"]  # named as a tag's null properties are


def test_names_are_unique(admin: Http, lake: dict[str, str]) -> None:
    made = folder(admin, lake["small"], [])
    response = admin.post("/virtualfolder", json={"name": made["name"].upper(),
                                                  "dataSourceKey": lake["small"]})
    assert_error(response, 409, ErrorCode.DUPLICATE_NAME.value)
    ds = dataset(admin, {})
    assert_error(admin.post("/dataset", json={"name": ds["name"]}), 409,
                 ErrorCode.DUPLICATE_NAME.value)


def test_delete_refuses_parents_and_granted_folders(
    admin: Http, lake: dict[str, str], unique: Unique
) -> None:
    parent = folder(admin, lake["small"], [])
    child = folder(admin, lake["small"], [], parentKey=parent["key"])
    assert_error(admin.delete(f"/virtualfolder/{parent['key']}"), 409,
                 ErrorCode.FOLDER_HAS_CHILDREN.value, child["name"])
    role = create_role(admin, unique("Viewers"), "Analyst", virtualFolderKeys=[child["key"]])
    assert_error(admin.delete(f"/virtualfolder/{child['key']}"), 409,
                 ErrorCode.GRANTED_TO_ROLE.value, role["name"])
    admin.put(f"/user/role/{role['key']}", json={"virtualFolderKeys": []})
    assert admin.delete(f"/virtualfolder/{child['key']}").status_code == 204
    assert admin.delete(f"/virtualfolder/{parent['key']}").status_code == 204
    assert_error(admin.get(f"/virtualfolder/{parent['key']}"), 404,
                 ErrorCode.VIRTUAL_FOLDER_NOT_FOUND.value)
    assert_error(admin.delete(f"/virtualfolder/{parent['key']}"), 404,
                 ErrorCode.VIRTUAL_FOLDER_NOT_FOUND.value)


@pytest.mark.parametrize("level", ["Analyst", "Guest"])
def test_analysts_and_guests_do_not_write(
    members: dict[str, Member], admin: Http, lake: dict[str, str], level: str
) -> None:
    http = members[level].http
    made = folder(admin, lake["small"], [])
    ds = dataset(admin, {})
    attempts = [
        http.post("/virtualfolder", json={"name": "x", "dataSourceKey": lake["small"]}),
        http.put(f"/virtualfolder/{made['key']}", json={"description": "x"}),
        http.delete(f"/virtualfolder/{made['key']}"),
        http.post("/dataset", json={"name": "x"}),
        http.put(f"/dataset/{ds['key']}", json={"description": "x"}),
        http.delete(f"/dataset/{ds['key']}"),
    ]
    for response in attempts:
        assert_error(response, 403, ErrorCode.PERMISSION_DENIED.value)


def test_a_steward_curates_only_the_sources_it_sees_whole(
    live_server: Server, admin: Http, lake: dict[str, str], unique: Unique
) -> None:
    granted = folder(admin, lake["lake"], [{"sourcePath": "crm"}])
    role = create_role(admin, unique("Curators"), "Steward", dataSourceKeys=[lake["small"]],
                       virtualFolderKeys=[granted["key"]])
    name = unique("steward")
    create_user(admin, name, roles=[role["name"]])
    steward = live_server.session(name, PASSWORD)
    mine = folder(steward, lake["small"], [{"sourcePath": "x"}])
    assert mine["resourceCount"] == 3
    assert_error(steward.post("/virtualfolder", json={"name": unique("no"),
                                                      "dataSourceKey": lake["lake"]}),
                 400, ErrorCode.UNKNOWN_REFERENCE.value)
    # Seen through a grant, not whole: widening it would widen the grant itself.
    assert steward.get(f"/virtualfolder/{granted['key']}").json()["resourceCount"] == 2
    assert_error(steward.put(f"/virtualfolder/{granted['key']}", json={"pathSpecs": []}), 403,
                 ErrorCode.PERMISSION_DENIED.value)
    assert steward.delete(f"/virtualfolder/{mine['key']}").status_code == 204


def test_a_dataset_spans_sources(admin: Http, lake: dict[str, str]) -> None:
    made = dataset(admin, {lake["lake"]: [{"sourcePath": "crm"}, {"sourcePath": "hr"}],
                           lake["small"]: [{"includePattern": "*.jsonl"}]},
                   description="people data")
    assert set(made) == {"key", "type", "name", "description", "dataSetPathSpecs",
                         "resourceCount", "timeOfCreation", "timeOfLastChange"}
    assert made["type"] == "dataset" and made["resourceCount"] == 4
    assert made["dataSetPathSpecs"][lake["small"]] == [
        {"sourcePath": None, "includePattern": "*.jsonl", "excludePattern": None}]
    assert admin.get(f"/dataset/{made['key']}").json() == made
    assert made in admin.get("/dataset").json()
    member = admin.get(f"/dataresource/source/{lake['small_name']}",
                       params={"resourcePath": "y/3.jsonl"}).json()
    other = admin.get(f"/dataresource/source/{lake['small_name']}",
                      params={"resourcePath": "x/1.csv"}).json()
    assert member["dataSetMember"] is True and other["dataSetMember"] is False
    narrowed = admin.put(f"/dataset/{made['key']}",
                         json={"dataSetPathSpecs": {lake["small"]: [{"sourcePath": "x"}]}})
    assert narrowed.status_code == 200
    assert narrowed.json()["resourceCount"] == 3 and narrowed.json()["description"] == "people data"


def test_bad_datasets(admin: Http, lake: dict[str, str], unique: Unique) -> None:
    assert_error(admin.post("/dataset", json={"name": unique("d"),
                                              "dataSetPathSpecs": {"nope": []}}),
                 400, ErrorCode.UNKNOWN_REFERENCE.value, "nope")
    assert_error(admin.post("/dataset", json={"name": unique("d"),
                                              "dataSetPathSpecs": [{"sourcePath": "x"}]}), 400)
    made = dataset(admin, {})
    assert_error(admin.put(f"/dataset/{made['key']}", json={"dataSetPathSpecs": None}), 400,
                 ErrorCode.INVALID_PAYLOAD.value, "dataSetPathSpecs")
    assert_error(admin.get("/dataset/nope"), 404, ErrorCode.DATASET_NOT_FOUND.value)
    role = create_role(admin, unique("DsViewers"), "Analyst", datasetKeys=[made["key"]])
    assert_error(admin.delete(f"/dataset/{made['key']}"), 409,
                 ErrorCode.GRANTED_TO_ROLE.value, role["name"])
    admin.delete(f"/user/role/{role['key']}")
    assert admin.delete(f"/dataset/{made['key']}").status_code == 204
    assert_error(admin.get(f"/dataset/{made['key']}"), 404, ErrorCode.DATASET_NOT_FOUND.value)


def test_folder_and_dataset_writes_are_audited(admin: Http, lake: dict[str, str]) -> None:
    made = folder(admin, lake["small"], [])
    admin.put(f"/virtualfolder/{made['key']}", json={"description": "x"})
    admin.delete(f"/virtualfolder/{made['key']}")
    ds = dataset(admin, {})
    events = audit_search(admin, objectKey=made["key"]) + audit_search(admin, objectKey=ds["key"])
    assert {(e["action"], e["objectType"]) for e in events} >= {
        ("CREATE", "VIRTUAL_FOLDER"), ("UPDATE", "VIRTUAL_FOLDER"), ("DELETE", "VIRTUAL_FOLDER"),
        ("CREATE", "DATASET")}


def test_new_resources_join_matching_folders(
    live_server: Server, admin: Http, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = write_files(tmp_path_factory.mktemp("grow"), {"in/a.csv": "a\n1\n"})
    first = profile_folder(live_server.store, f"grow-{uuid.uuid4().hex[:8]}", root)
    made = folder(admin, first, [{"sourcePath": "in"}])
    assert made["resourceCount"] == 1
    write_files(root, {"in/b.csv": "a\n2\n"})
    with live_server.store.write() as conn:
        for resource in profiling.browse(root):
            ingest.record_browsed(conn, first, resource)
    assert admin.get(f"/virtualfolder/{made['key']}").json()["resourceCount"] == 2
