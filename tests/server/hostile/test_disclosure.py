"""Small disclosures to non-administrators: other roles' grant lists, and administrator-only
configuration (``service.dataRoots``).

A viewer holds one role granting one data source and one tag domain; another role ("insiders")
grants that source, a hidden one, virtual folders and data sets on both, and a second domain.
Reading roles, the viewer sees every role, but in each grant list only the keys their own roles
grant (for data sources, folders and data sets: what they may see); administrators see
everything as before. ``GET /config`` leaves administrator-only properties out for everyone
else, and ``GET /config/{name}`` of one answers exactly as for a name that does not exist.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, assert_error, create_role, create_user
from tests.server.source_helpers import create_source

GRANTS = ("dataSourceKeys", "virtualFolderKeys", "datasetKeys", "domainKeys")


def _made(http: Http, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post(path, json=body)
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("disclosure")
    found = [base / "lake-one", base / "lake-two"]
    for root in found:
        (root / "data").mkdir(parents=True)
    return found


@pytest.fixture(scope="module")
def world(make_server: Callable[..., Server], roots: list[Path]) -> dict[str, Any]:
    """The server, its administrator, a viewer, and the keys both roles grant."""
    server = make_server(data_roots=roots)
    boss = server.session()
    keys: dict[str, str] = {}
    for label, root in (("shown", roots[0]), ("hidden", roots[1])):
        keys[label] = create_source(boss, _name(label), "FILE", str(root / "data"))["key"]
        keys[f"folder-{label}"] = _made(boss, "/virtualfolder", {
            "name": _name(f"vf-{label}"), "dataSourceKey": keys[label]})["key"]
        keys[f"dataset-{label}"] = _made(boss, "/dataset", {
            "name": _name(f"ds-{label}"),
            "dataSetPathSpecs": {keys[label]: [{"sourcePath": "/"}]}})["key"]
    keys["domain-mine"] = _made(boss, "/tagdomain", {"name": _name("mine")})["key"]
    keys["domain-other"] = _made(boss, "/tagdomain", {"name": _name("other")})["key"]
    viewers = create_role(boss, _name("viewers"), "Guest", dataSourceKeys=[keys["shown"]],
                          domainKeys=[keys["domain-mine"]])
    insiders = create_role(
        boss, _name("insiders"), "Steward",
        dataSourceKeys=[keys["shown"], keys["hidden"]],
        virtualFolderKeys=[keys["folder-shown"], keys["folder-hidden"]],
        datasetKeys=[keys["dataset-shown"], keys["dataset-hidden"]],
        domainKeys=[keys["domain-mine"], keys["domain-other"]],
    )
    everything = create_role(boss, _name("everything"), "Analyst", metadataAccessOption="ALL",
                             domainKeys=[keys["domain-mine"]])
    viewer = _name("viewer")
    create_user(boss, viewer, roles=[viewers["name"]])
    wide = _name("wide")
    create_user(boss, wide, roles=[everything["name"]])
    return {"server": server, "boss": boss, "viewer": server.session(viewer, PASSWORD),
            "wide": server.session(wide, PASSWORD), "keys": keys, "viewers": viewers,
            "insiders": insiders, "roots": roots}


HIDDEN = ("hidden", "folder-hidden", "dataset-hidden", "domain-other")


def _role_reads(http: Http, role: dict[str, Any]) -> list[dict[str, Any]]:
    """The role as GET /user/role, /user/role/{key} and /user/role/byname show it."""
    listed = http.get("/user/role")
    assert listed.status_code == 200, listed.text
    found = [r for r in listed.json() if r["key"] == role["key"]]
    assert len(found) == 1
    by_key = http.get(f"/user/role/{role['key']}")
    by_name = http.get("/user/role/byname", params={"name": role["name"]})
    assert by_key.status_code == 200 and by_name.status_code == 200, (by_key.text, by_name.text)
    return [found[0], by_key.json(), by_name.json()]


def test_a_non_administrator_sees_only_the_grants_their_roles_give(world: dict[str, Any]
                                                                   ) -> None:
    keys = world["keys"]
    for shown in _role_reads(world["viewer"], world["insiders"]):
        assert shown["dataSourceKeys"] == [keys["shown"]]
        assert shown["virtualFolderKeys"] == [keys["folder-shown"]]
        assert shown["datasetKeys"] == [keys["dataset-shown"]]
        assert shown["domainKeys"] == [keys["domain-mine"]]
        # Everything else about the role is as the administrator sees it.
        rest = {k: v for k, v in shown.items() if k not in GRANTS}
        assert rest == {k: v for k, v in world["insiders"].items() if k not in GRANTS}
    for path in ("/user/role", f"/user/role/{world['insiders']['key']}"):
        text = world["viewer"].get(path).text
        assert not [label for label in HIDDEN if keys[label] in text], path


def test_a_non_administrator_sees_their_own_roles_whole(world: dict[str, Any]) -> None:
    for shown in _role_reads(world["viewer"], world["viewers"]):
        assert {k: shown[k] for k in GRANTS} == {k: world["viewers"][k] for k in GRANTS}
    mine = world["viewer"].get("/user/list/roles").json()
    assert [r["key"] for r in mine] == [world["viewers"]["key"]]


def test_metadata_access_all_sees_every_source_but_only_its_own_domains(
    world: dict[str, Any]
) -> None:
    keys = world["keys"]
    for shown in _role_reads(world["wide"], world["insiders"]):
        assert sorted(shown["dataSourceKeys"]) == sorted([keys["shown"], keys["hidden"]])
        assert sorted(shown["virtualFolderKeys"]) == sorted(
            [keys["folder-shown"], keys["folder-hidden"]])
        assert sorted(shown["datasetKeys"]) == sorted(
            [keys["dataset-shown"], keys["dataset-hidden"]])
        assert shown["domainKeys"] == [keys["domain-mine"]]


def test_administrators_see_every_grant(world: dict[str, Any]) -> None:
    for shown in _role_reads(world["boss"], world["insiders"]):
        assert shown == world["insiders"]


def _names(http: Http) -> list[str]:
    response = http.get("/config")
    assert response.status_code == 200, response.text
    return [p["name"] for p in response.json()]


def test_data_roots_are_shown_to_administrators_only(world: dict[str, Any]) -> None:
    boss, viewer = world["boss"], world["viewer"]
    shown = os.pathsep.join(str(r) for r in world["roots"])
    assert "service.dataRoots" in _names(boss)
    assert boss.get("/config/service.dataRoots").json()["value"] == shown
    visible = _names(viewer)
    assert "service.dataRoots" not in visible and "search.pageMax" in visible
    listed = viewer.get("/config").text
    assert "dataRoots" not in listed and str(world["roots"][0]) not in listed
    # Exactly the answer of a property that does not exist, so the name does not leak either.
    hidden = assert_error(viewer.get("/config/service.dataRoots"), 404, "CONFIG_NOT_FOUND")
    absent = assert_error(viewer.get("/config/service.noSuch"), 404, "CONFIG_NOT_FOUND")
    assert hidden["message"] == absent["message"].replace("service.noSuch", "service.dataRoots")
    for body in (hidden, absent):
        assert "dataRoots" not in str({k: v for k, v in body.items() if k != "message"})
        assert str(world["roots"][0]) not in str(body)
    assert "service.dataRoots" not in absent["message"]
    assert "search.pageMax" in absent["message"]
    assert viewer.get("/config/search.pageMax").status_code == 200
