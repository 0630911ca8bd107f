"""The real product's paths as aliases of the spec's (issue 17, docs/compatibility.md):
``/role...`` beside ``/user/role...``, ``PUT /dataresource?virtualFolderName=&resourcePath=``,
``GET /logout`` answering ``{redirectUrl, message}``, and a trailing slash or a leading ``/`` on
a ``resourcePath`` naming the same route / resource."""

from __future__ import annotations

import uuid

import pytest

from catalog_nb.contract import API_PREFIX, ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, assert_error, create_user
from tests.server.lake import profile_folder, write_files


@pytest.fixture(scope="module")
def small(live_server: Server, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The name of a small profiled FILE source."""
    folder = write_files(tmp_path_factory.mktemp("paths"), {
        "x/1.csv": "a\n1\n", "y/3.csv": "a\n3\n",
    })
    name = f"pp-{uuid.uuid4().hex[:8]}"
    profile_folder(live_server.store, name, folder)
    return name


def test_role_paths_are_aliases(admin: Http) -> None:
    name = f"alias-{uuid.uuid4().hex[:8]}"
    made = admin.post("/role", json={"name": name, "accessLevel": "Guest"})
    assert made.status_code == 201, made.text
    key = made.json()["key"]
    assert admin.get(f"/role/{key}").json() == admin.get(f"/user/role/{key}").json()
    assert admin.get("/role/byname", params={"name": name}).json()["key"] == key
    assert key in {r["key"] for r in admin.get("/role").json()}
    changed = admin.put(f"/role/{key}", json={"description": "via alias"})
    assert changed.status_code == 200 and changed.json()["description"] == "via alias"
    assert admin.delete(f"/role/{key}").status_code == 204
    assert_error(admin.get(f"/user/role/{key}"), 404)


def test_aliases_stay_out_of_the_openapi_document(admin: Http) -> None:
    paths = admin.get("/openapi.json").json()["paths"]
    assert f"{API_PREFIX}/user/role/{{role_key}}" in paths
    assert not any(p.startswith(f"{API_PREFIX}/role") for p in paths)
    assert f"{API_PREFIX}/dataresource" not in paths


def test_put_dataresource_by_virtual_folder(admin: Http, small: str) -> None:
    source_key = admin.get(f"/dataresource/source/{small}",
                           params={"resourcePath": "x/1.csv"}).json()["dataSourceKey"]
    folder = admin.post("/virtualfolder", json={
        "name": f"vf-{uuid.uuid4().hex[:8]}", "dataSourceKey": source_key,
        "pathSpecs": [{"sourcePath": "x"}]}).json()
    response = admin.put("/dataresource", params={
        "virtualFolderName": folder["name"], "resourcePath": "/x/1.csv"},
        json={"description": "set through the folder"})
    assert response.status_code == 200, response.text
    assert response.json()["description"] == "set through the folder"
    # the same resource as the spec's path answers it
    again = admin.get(f"/dataresource/source/{small}", params={"resourcePath": "x/1.csv"})
    assert again.json()["description"] == "set through the folder"
    # outside the folder: 404; a data source's name is its root folder
    assert_error(admin.put("/dataresource", params={
        "virtualFolderName": folder["name"], "resourcePath": "y/3.csv"}, json={}), 404,
        ErrorCode.RESOURCE_NOT_FOUND.value, folder["name"])
    root = admin.put("/dataresource", params={"virtualFolderName": small,
                                              "resourcePath": "y/3.csv"},
                     json={"description": "root"})
    assert root.status_code == 200, root.text
    assert_error(admin.put("/dataresource", params={"resourcePath": "y/3.csv"}, json={}), 400)


def test_get_logout_answers_json(live_server: Server, admin: Http) -> None:
    name = f"out-{uuid.uuid4().hex[:8]}"
    create_user(admin, name)
    http = live_server.session(name, PASSWORD)
    response = http.get("/logout")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"redirectUrl", "message"} and body["message"]
    assert_error(http.get("/user/_me"), 401)


def test_a_trailing_slash_names_the_same_route(admin: Http) -> None:
    for path in ("/tag/", "/user/role/", "/role/", "/tagdomain/", "/user/_me/", "/version/"):
        response = admin.get(path, allow_redirects=False)
        assert response.status_code == 200, (path, response.status_code, response.text)
        assert response.json() == admin.get(path.rstrip("/")).json(), path
    user = create_user(admin, f"slash-{uuid.uuid4().hex[:8]}")
    response = admin.put(f"/user/{user['key']}/", json={"description": "slash"},
                         allow_redirects=False)
    assert response.status_code == 204, response.text
    assert admin.get(f"/user/{user['key']}").json()["description"] == "slash"
    made = admin.post("/tagdomain/", json={"name": f"sl{uuid.uuid4().hex[:8]}"},
                      allow_redirects=False)
    assert made.status_code == 201, made.text
    assert_error(admin.get("/no/such/route/", allow_redirects=False), 404)


def test_a_leading_slash_on_a_resource_path_names_the_same_resource(
    admin: Http, small: str
) -> None:
    plain = admin.get(f"/dataresource/source/{small}", params={"resourcePath": "x/1.csv"})
    slashed = admin.get(f"/dataresource/source/{small}", params={"resourcePath": "/x/1.csv"})
    assert slashed.status_code == 200 and slashed.json()["key"] == plain.json()["key"]
    put = admin.put(f"/dataresource/source/{small}", params={"resourcePath": "/x/1.csv"},
                    json={"owner": "someone"})
    assert put.status_code == 200 and put.json()["key"] == plain.json()["key"]
    for path in ("/tagassociation/byresource", "/user/permit/resource"):
        params = {"sourceName": small, "dataSourceName": small, "resourcePath": "/x/1.csv"}
        one = admin.get(path, params=params)
        assert one.status_code == 200, (path, one.text)
        assert one.json() == admin.get(path, params={**params, "resourcePath": "x/1.csv"}).json()
