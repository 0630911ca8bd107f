"""Leak tests: a caller sees exactly the resources its roles grant, in every answer.

Three sources (A, B, C) and three Analysts: one granted source A, one granted a virtual folder
of B, one granted a data set over B and C; plus one granted nothing. Each must see exactly its
resources in lists, counts, by key, by path, in folders and data sets, and nothing else, with
the same 404 as for things that do not exist.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import pytest

from catalog_nb.contract import ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, assert_error, create_role, create_user
from tests.server.lake import profile_folder, resource_key, write_files

CSV = "id,value\n1,x\n2,y\n"


@dataclass
class World:
    names: dict[str, str]
    keys: dict[str, str]
    folders: dict[str, dict[str, Any]]
    datasets: dict[str, dict[str, Any]]
    users: dict[str, Http] = field(default_factory=dict)

    def key(self, server: Server, source: str, path: str) -> str:
        return resource_key(server.store, self.keys[source], path)


@pytest.fixture(scope="module")
def world(live_server: Server, admin: Http, tmp_path_factory: pytest.TempPathFactory) -> World:
    tag = uuid.uuid4().hex[:8]
    layouts = {
        "A": {"a/one.csv": CSV, "a/two.csv": CSV, "b/3.csv": CSV},
        "B": {"secret/x.csv": CSV, "secret/y.csv": CSV, "public/z.csv": CSV},
        "C": {"logs/app.jsonl": '{"a": 1}\n', "logs/web.jsonl": '{"a": 2}\n', "c.csv": CSV},
    }
    names, keys = {}, {}
    for label, files in layouts.items():
        names[label] = f"vis{label}-{tag}"
        folder = write_files(tmp_path_factory.mktemp(f"vis{label}"), files)
        keys[label] = profile_folder(live_server.store, names[label], folder)

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = admin.post(path, json={"name": f"{body.pop('name')}-{tag}", **body})
        assert response.status_code == 201, response.text
        made: dict[str, Any] = response.json()
        return made

    folders = {
        "public": post("/virtualfolder", {"name": "public", "dataSourceKey": keys["B"],
                                          "pathSpecs": [{"sourcePath": "public"}]}),
        "secret": post("/virtualfolder", {"name": "secret", "dataSourceKey": keys["B"],
                                          "pathSpecs": [{"sourcePath": "secret"}]}),
        "allB": post("/virtualfolder", {"name": "allB", "dataSourceKey": keys["B"]}),
        "onA": post("/virtualfolder", {"name": "onA", "dataSourceKey": keys["A"],
                                       "pathSpecs": [{"sourcePath": "a"}]}),
    }
    admin.put(f"/virtualfolder/{folders['allB']['key']}", json={"pathSpecs": [{}]})
    datasets = {
        "logs": post("/dataset", {"name": "logs", "dataSetPathSpecs": {
            keys["C"]: [{"includePattern": "*.jsonl"}],
            keys["B"]: [{"sourcePath": "secret", "includePattern": "x.csv"}]}}),
        "mixed": post("/dataset", {"name": "mixed", "dataSetPathSpecs": {
            keys["A"]: [{"sourcePath": "a"}], keys["B"]: [{"sourcePath": "secret"}]}}),
    }
    world = World(names, keys, folders, datasets)
    grants = {
        "src": {"dataSourceKeys": [keys["A"]]},
        "fold": {"virtualFolderKeys": [folders["public"]["key"]]},
        "ds": {"datasetKeys": [datasets["logs"]["key"]]},
        "nobody": {},
    }
    for who, granted in grants.items():
        role = create_role(admin, f"Vis-{who}-{tag}", "Analyst", **granted)
        user = f"vis-{who}-{tag}"
        create_user(admin, user, roles=[role["name"]])
        world.users[who] = live_server.session(user, PASSWORD)
    return world


def listing(http: Http, **params: Any) -> dict[str, Any]:
    response = http.get("/dataresource/metadata", params={"pageSize": 1000, **params})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def seen(http: Http, **params: Any) -> set[tuple[str, str]]:
    body = listing(http, **params)
    assert body["totalCount"] == len(body["list"])
    return {(r["dataSourceName"], r["resourcePath"]) for r in body["list"]}


def by_path(http: Http, source: str, path: str) -> Any:
    return http.get(f"/dataresource/source/{quote(source)}", params={"resourcePath": path})


def test_each_caller_lists_exactly_its_resources(world: World) -> None:
    a, b, c = (world.names[x] for x in "ABC")
    assert seen(world.users["src"]) == {(a, "a/one.csv"), (a, "a/two.csv"), (a, "b/3.csv")}
    assert seen(world.users["fold"]) == {(b, "public/z.csv")}
    assert seen(world.users["ds"]) == {(c, "logs/app.jsonl"), (c, "logs/web.jsonl"),
                                       (b, "secret/x.csv")}
    assert seen(world.users["nobody"]) == set()


def test_filters_never_reach_past_visibility(live_server: Server, world: World) -> None:
    hidden = world.key(live_server, "B", "secret/y.csv")
    for who in ("src", "fold", "ds", "nobody"):
        http = world.users[who]
        assert listing(http, propertyFilter=f"id:{hidden}")["totalCount"] == 0
        assert listing(http, propertyFilter="path:secret/y.csv")["totalCount"] == 0
    fold = world.users["fold"]
    assert listing(fold, propertyFilter=f"data_source:{world.names['B']}")["totalCount"] == 1
    assert listing(world.users["src"],
                   propertyFilter=f"data_source:{world.names['B']}")["totalCount"] == 0


def test_by_key_an_invisible_resource_is_exactly_like_a_missing_one(
    live_server: Server, world: World
) -> None:
    hidden = world.key(live_server, "B", "secret/y.csv")
    for who in ("src", "fold", "ds", "nobody"):
        http = world.users[who]
        invisible = assert_error(http.get(f"/dataresource/{hidden}"), 404,
                                 ErrorCode.RESOURCE_NOT_FOUND.value)
        missing = assert_error(http.get("/dataresource/" + "0" * 32), 404,
                               ErrorCode.RESOURCE_NOT_FOUND.value)
        assert invisible["message"].replace(hidden, "K") == missing["message"].replace("0" * 32,
                                                                                     "K")
    public = world.key(live_server, "B", "public/z.csv")
    assert world.users["fold"].get(f"/dataresource/{public}").status_code == 200
    assert world.users["src"].get(f"/dataresource/{public}").status_code == 404


def test_by_path_an_invisible_source_or_path_is_exactly_like_a_missing_one(world: World) -> None:
    b = world.names["B"]
    src, fold = world.users["src"], world.users["fold"]
    invisible = assert_error(by_path(src, b, "public/z.csv"), 404,
                             ErrorCode.DATA_SOURCE_NOT_FOUND.value)
    missing = assert_error(by_path(src, "no-such-src", "public/z.csv"), 404,
                           ErrorCode.DATA_SOURCE_NOT_FOUND.value)
    assert invisible["message"].replace(b, "S") == missing["message"].replace("no-such-src", "S")
    assert by_path(fold, b, "public/z.csv").status_code == 200
    hidden = assert_error(by_path(fold, b, "secret/x.csv"), 404,
                          ErrorCode.RESOURCE_NOT_FOUND.value)
    absent = assert_error(by_path(fold, b, "secret/none.csv"), 404,
                          ErrorCode.RESOURCE_NOT_FOUND.value)
    assert hidden["message"].replace("x.csv", "P") == absent["message"].replace("none.csv", "P")
    assert_error(by_path(fold, world.names["A"], "a/one.csv"), 404,
                 ErrorCode.DATA_SOURCE_NOT_FOUND.value)


def test_folders_show_only_what_the_caller_sees(world: World) -> None:
    def folder_names(http: Http) -> dict[str, int]:
        response = http.get("/virtualfolder")
        assert response.status_code == 200
        return {f["name"]: f["resourceCount"] for f in response.json()}

    mine = {f["name"] for f in world.folders.values()}
    assert {k: v for k, v in folder_names(world.users["src"]).items() if k in mine} == {
        world.folders["onA"]["name"]: 2}
    assert {k: v for k, v in folder_names(world.users["fold"]).items() if k in mine} == {
        world.folders["public"]["name"]: 1}
    assert not set(folder_names(world.users["ds"])) & mine
    assert not set(folder_names(world.users["nobody"])) & mine
    for key in (world.folders["secret"]["key"], world.folders["allB"]["key"]):
        for who in ("src", "fold", "ds"):
            http = world.users[who]
            assert_error(http.get(f"/virtualfolder/{key}"), 404,
                         ErrorCode.VIRTUAL_FOLDER_NOT_FOUND.value)
            assert_error(http.get("/dataresource/metadata", params={"virtualFolderKeys": key}),
                         404, ErrorCode.VIRTUAL_FOLDER_NOT_FOUND.value)


def test_a_resource_names_only_the_folders_the_caller_sees(world: World, admin: Http) -> None:
    b = world.names["B"]
    for_admin = by_path(admin, b, "public/z.csv").json()["dataSetVirtualFolders"]
    assert set(for_admin) >= {world.folders["public"]["name"], world.folders["allB"]["name"]}
    for_fold = by_path(world.users["fold"], b, "public/z.csv").json()["dataSetVirtualFolders"]
    assert for_fold == [world.folders["public"]["name"]]
    listed = listing(world.users["fold"], virtualFolderKeys=world.folders["public"]["key"])
    assert [r["resourcePath"] for r in listed["list"]] == ["public/z.csv"]


def test_datasets_count_only_what_the_caller_sees(world: World, admin: Http) -> None:
    logs, mixed = world.datasets["logs"], world.datasets["mixed"]
    assert admin.get(f"/dataset/{mixed['key']}").json()["resourceCount"] == 4
    partial = world.users["src"].get(f"/dataset/{mixed['key']}").json()
    assert partial["resourceCount"] == 2
    assert set(partial["dataSetPathSpecs"]) == {world.keys["A"]}
    granted = world.users["ds"].get(f"/dataset/{logs['key']}").json()
    assert granted["resourceCount"] == 3
    assert set(granted["dataSetPathSpecs"]) == {world.keys["B"], world.keys["C"]}
    for who, key in (("fold", logs["key"]), ("nobody", logs["key"]), ("ds", mixed["key"])):
        assert_error(world.users[who].get(f"/dataset/{key}"), 404,
                     ErrorCode.DATASET_NOT_FOUND.value)
    names = {d["name"] for d in world.users["ds"].get("/dataset").json()}
    assert logs["name"] in names and mixed["name"] not in names


def test_a_widened_grant_shows_more_at_once(world: World, admin: Http) -> None:
    public = world.folders["public"]
    before = seen(world.users["fold"])
    admin.put(f"/virtualfolder/{public['key']}",
              json={"pathSpecs": [{"sourcePath": "public"}, {"sourcePath": "secret",
                                                             "excludePattern": "y.*"}]})
    try:
        after = seen(world.users["fold"])
        assert after - before == {(world.names["B"], "secret/x.csv")}
    finally:
        admin.put(f"/virtualfolder/{public['key']}", json={"pathSpecs": public["pathSpecs"]})
    assert seen(world.users["fold"]) == before
