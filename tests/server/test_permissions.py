"""``/user/permit/source`` and ``/user/permit/resource``, driven by the roles' grants.

No endpoint creates data sources yet, so the lake (two sources, four resources, a virtual folder
and a data set) is written straight into the store; every grant goes through ``PUT /user/role``.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import insert

from catalog_nb.contract import ErrorCode
from catalog_nb.server.profiling import ResourceProfile
from catalog_nb.server.store import ingest, schema
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, assert_error, create_role, create_user

NOT_FOUND = ErrorCode.DATA_SOURCE_NOT_FOUND.value

SALES_CSV = "/sales/2024/q1.csv"
SALES_SECRET = "/sales/secret-pay.csv"
SALES_JSON = "/sales/q1.json"
HR_CSV = "/hr/staff.csv"
PATHS = [SALES_CSV, SALES_SECRET, SALES_JSON, HR_CSV]


@dataclass
class Lake:
    source: str
    hidden: str
    source_key: str
    users: dict[str, str] = field(default_factory=dict)  # who -> user name
    roles: dict[str, dict[str, Any]] = field(default_factory=dict)
    sessions: dict[str, Http] = field(default_factory=dict)


def _key() -> str:
    return uuid.uuid4().hex


def _insert_lake(server: Server, source: str, hidden: str) -> tuple[str, str, str]:
    now = int(time.time() * 1000)
    times = {"created_ms": now, "changed_ms": now}
    source_key, hidden_key, folder_key, dataset_key = _key(), _key(), _key(), _key()
    with server.store.write() as conn:
        for key, name in ((source_key, source), (hidden_key, hidden)):
            conn.execute(insert(schema.data_sources).values(
                key=key, name=name, name_fold=name.casefold(), source_type="FILE",
                uri=f"/data/{name}", include_patterns=[], exclude_patterns=[], **times))
        # Resources come into existence the way browsing records them.
        for owner in (source_key, hidden_key):
            for path in PATHS:
                found = ResourceProfile(path=path, name=path.rsplit("/", 1)[-1])
                ingest.record_browsed(conn, owner, found)
        conn.execute(insert(schema.virtual_folders).values(
            key=folder_key, name=f"sales-{folder_key[:8]}", name_fold=f"sales-{folder_key[:8]}",
            data_source_key=source_key, parent_key=None,
            path_specs=[{"sourcePath": "/sales", "includePattern": "*.csv",
                         "excludePattern": "secret*"}], **times))
        conn.execute(insert(schema.datasets).values(
            key=dataset_key, name=f"people-{dataset_key[:8]}",
            name_fold=f"people-{dataset_key[:8]}",
            path_specs={source_key: [{"sourcePath": "/hr"}]}, **times))
    return source_key, folder_key, dataset_key


@pytest.fixture(scope="module")
def lake(live_server: Server, admin: Http) -> Lake:
    tag = uuid.uuid4().hex[:8]
    found = Lake(source=f"Sales-Lake-{tag}", hidden=f"Hidden-Lake-{tag}", source_key="")
    found.source_key, folder, dataset = _insert_lake(live_server, found.source, found.hidden)
    plan = {
        # who: (access level, grants written with PUT /user/role after creating the role)
        "all": ("Analyst", {"metadataAccessOption": "ALL"}),
        "source": ("Steward", {"dataSourceKeys": [found.source_key]}),
        "folder": ("Steward", {"virtualFolderKeys": [folder]}),
        "dataset": ("Steward", {"datasetKeys": [dataset]}),
        "none": ("Steward", {}),
        "analyst": ("Analyst", {"dataSourceKeys": [found.source_key]}),
    }
    for who, (level, grants) in plan.items():
        role = create_role(admin, f"perm-{who}-{tag}", level)
        if grants:
            response = admin.put(f"/user/role/{role['key']}", json=grants)
            assert response.status_code == 200, response.text
            role = response.json()
        name = f"perm-{who}-{tag}"
        create_user(admin, name, roles=[role["name"]])
        found.users[who] = name
        found.roles[who] = role
        found.sessions[who] = live_server.session(name, PASSWORD)
    return found


def permit_source(http: Http, source: str) -> Any:
    return http.get("/user/permit/source", params={"dataSourceName": source})


def permit_resource(http: Http, source: str, path: str) -> Any:
    return http.get("/user/permit/resource",
                    params={"dataSourceName": source, "resourcePath": path})


def view(answer: dict[str, bool], lake: Lake) -> dict[str, bool]:
    """The answer for the lake's users and the administrator."""
    names = {**lake.users, "admin": "admin"}
    return {who: answer[name] for who, name in names.items()}


def test_permit_source_answers_every_user(admin: Http, lake: Lake) -> None:
    response = permit_source(admin, lake.source)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert set(answer) == {u["name"] for u in admin.get("/user").json()}
    assert all(isinstance(v, bool) for v in answer.values())
    assert view(answer, lake) == {
        "admin": True, "all": True, "source": True, "analyst": True,
        "folder": False, "dataset": False, "none": False,
    }
    # The source name is case-insensitive.
    assert permit_source(admin, lake.source.upper()).json() == answer


@pytest.mark.parametrize(
    ("path", "seen_by"),
    [
        (SALES_CSV, {"folder"}),
        (SALES_SECRET, set()),  # excluded by the folder's excludePattern
        (SALES_JSON, set()),  # not matched by its includePattern
        (HR_CSV, {"dataset"}),
    ],
)
def test_permit_resource_follows_folders_and_data_sets(
    admin: Http, lake: Lake, path: str, seen_by: set[str]
) -> None:
    response = permit_resource(admin, lake.source, path)
    assert response.status_code == 200, response.text
    always = {"admin", "all", "source", "analyst"}
    expected = {who: who in always | seen_by for who in [*lake.users, "admin"]}
    assert view(response.json(), lake) == expected


def test_grants_are_read_from_the_roles_at_each_call(admin: Http, lake: Lake) -> None:
    role = lake.roles["none"]
    granted = admin.put(f"/user/role/{role['key']}", json={"dataSourceKeys": [lake.source_key]})
    assert granted.status_code == 200
    try:
        assert permit_source(admin, lake.source).json()[lake.users["none"]] is True
        assert permit_resource(admin, lake.source, HR_CSV).json()[lake.users["none"]] is True
    finally:
        revoked = admin.put(f"/user/role/{role['key']}", json={"dataSourceKeys": []})
        assert revoked.status_code == 200
    assert permit_source(admin, lake.source).json()[lake.users["none"]] is False


def test_a_steward_asks_about_what_they_see(lake: Lake) -> None:
    steward = lake.sessions["source"]
    assert permit_source(steward, lake.source).status_code == 200
    assert permit_resource(steward, lake.source, HR_CSV).status_code == 200
    # The other source is invisible to them: 404, exactly as for a source that does not exist.
    hidden = assert_error(permit_source(steward, lake.hidden), 404, NOT_FOUND)
    ghost = assert_error(permit_source(steward, "no-such-source"), 404, NOT_FOUND)
    assert hidden["message"].replace(lake.hidden, "X") == ghost["message"].replace(
        "no-such-source", "X")
    assert_error(permit_resource(steward, lake.hidden, HR_CSV), 404, NOT_FOUND)


def test_a_steward_granted_part_of_a_source_asks_about_that_part_only(lake: Lake) -> None:
    folder = lake.sessions["folder"]
    assert_error(permit_source(folder, lake.source), 404, NOT_FOUND)
    assert permit_resource(folder, lake.source, SALES_CSV).status_code == 200
    assert_error(permit_resource(folder, lake.source, HR_CSV), 404, NOT_FOUND)
    nothing = lake.sessions["none"]
    assert_error(permit_source(nothing, lake.source), 404, NOT_FOUND)
    assert_error(permit_resource(nothing, lake.source, SALES_CSV), 404, NOT_FOUND)


@pytest.mark.parametrize("who", ["analyst", "all"])
def test_an_analyst_may_not_ask(lake: Lake, who: str) -> None:
    http = lake.sessions[who]
    assert_error(permit_source(http, lake.source), 403, ErrorCode.PERMISSION_DENIED.value)
    assert_error(permit_resource(http, lake.source, SALES_CSV), 403,
                 ErrorCode.PERMISSION_DENIED.value)


def test_unknown_sources_and_resources_are_404(admin: Http, lake: Lake) -> None:
    assert_error(permit_source(admin, "no-such-source"), 404, NOT_FOUND)
    assert_error(permit_resource(admin, "no-such-source", SALES_CSV), 404, NOT_FOUND)
    assert_error(permit_resource(admin, lake.source, "/no/such.csv"), 404,
                 ErrorCode.RESOURCE_NOT_FOUND.value)


def test_the_query_parameters_are_required(admin: Http, lake: Lake) -> None:
    code = ErrorCode.INVALID_PARAMETER.value
    assert_error(admin.get("/user/permit/source"), 400, code, "dataSourceName")
    assert_error(admin.get("/user/permit/resource", params={"dataSourceName": lake.source}),
                 400, code, "resourcePath")
