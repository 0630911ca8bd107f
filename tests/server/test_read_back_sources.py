"""Data sources and jobs sent back as read (issue 17, docs/compatibility.md).

A DataSource as read goes back to ``PUT /datasource/{key}``: ``key``, ``type`` and
``timeOfCreation`` are ignored when they are the source's own and refused by name when changed;
``resourceCount`` and ``lastJob``, which move with its jobs, are always ignored. Posted as a new
source its read-only properties are assigned, but for ``type``. A Job as read goes back to
``POST /job`` to run it again: its state, progress, counts and times are the new job's own, but
a ``dataSourceName`` that is not its ``dataSourceKey``'s is refused by name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from tests.conftest import Http, Server
from tests.server.helpers import assert_error
from tests.server.source_helpers import create_source, run_job, wait_job

INVALID = ErrorCode.INVALID_PAYLOAD.value
SECRET = "rb-Pa55word"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("rbroot")
    for folder in ("sales", "hr"):
        (base / folder).mkdir()
        (base / folder / "a.csv").write_text("id,name\n1,x\n2,y\n")
    return base


@pytest.fixture(scope="module")
def rooted(make_server: Callable[..., Server], root: Path) -> Server:
    return make_server(data_roots=[root])


@pytest.fixture(scope="module")
def boss(rooted: Server) -> Http:
    return rooted.session()


def test_a_source_read_back_after_a_job(
    boss: Http, root: Path, unique: Callable[[str], str]
) -> None:
    source = create_source(boss, unique("rbs"), "FILE", str(root / "sales"), description="one")
    run_job(boss, source["key"], "BROWSE")
    read = boss.get(f"/datasource/{source['key']}").json()
    assert read["resourceCount"] == 1 and read["lastJob"]["state"] == "SUCCEEDED"
    response = boss.put(f"/datasource/{source['key']}", json={**read, "description": "two"})
    assert response.status_code == 200, response.text
    after = response.json()
    assert after["description"] == "two"
    assert {k: v for k, v in after.items() if k not in ("description", "timeOfLastChange")} == {
        k: v for k, v in read.items() if k not in ("description", "timeOfLastChange")}
    # the first read sent again: a stale timeOfLastChange, resourceCount and lastJob are older
    # reads, not changes
    stale = {**source, "description": "three"}  # as created: no resources, no job
    response = boss.put(f"/datasource/{source['key']}", json=stale)
    assert response.status_code == 200, response.text
    assert response.json()["resourceCount"] == 1 and response.json()["description"] == "three"


@pytest.mark.parametrize(("change", "named", "code"), [
    ({"key": "another"}, "key", INVALID),
    ({"type": "virtualfolder"}, "type", INVALID),
    ({"timeOfCreation": 1}, "timeOfCreation", INVALID),
    ({"sourceType": "SQL"}, "sourceType", ErrorCode.READ_ONLY_PROPERTY.value),
])
def test_a_changed_read_only_source_property_is_refused_by_name(
    boss: Http, root: Path, unique: Callable[[str], str], change: dict[str, Any], named: str,
    code: str,
) -> None:
    source = create_source(boss, unique("rbs"), "FILE", str(root / "hr"))
    response = boss.put(f"/datasource/{source['key']}",
                        json={**source, **change, "description": "x"})
    assert_error(response, 400, code, named)
    assert boss.get(f"/datasource/{source['key']}").json() == source  # nothing written


def test_an_sql_source_read_back_keeps_its_password(
    boss: Http, unique: Callable[[str], str]
) -> None:
    uri = f"postgresql+psycopg://reader:{SECRET}@db.invalid:5432/sales"
    source = create_source(boss, unique("rbsql"), "SQL", uri)
    assert SECRET not in source["uri"]
    response = boss.put(f"/datasource/{source['key']}",
                        json={**source, "uri": source["uri"].replace("sales", "sales2")})
    assert response.status_code == 200, response.text
    assert response.json()["uri"] == "postgresql+psycopg://reader:***@db.invalid:5432/sales2"
    # the password is still the stored one: the uri sent back unchanged changes nothing
    again = boss.put(f"/datasource/{source['key']}", json=response.json())
    assert again.status_code == 200 and again.json() == response.json()


def test_an_sql_source_copied_from_a_read_needs_its_password(
    boss: Http, unique: Callable[[str], str]
) -> None:
    uri = f"postgresql+psycopg://reader:{SECRET}@db.invalid:5432/sales?sslmode=disable"
    read = create_source(boss, unique("rbsql"), "SQL", uri)
    for masked in (read["uri"], "postgresql+psycopg://reader@db.invalid/sales?password=***"):
        name = unique("rbsqlcopy")
        body = assert_error(boss.post("/datasource", json={**read, "name": name, "uri": masked}),
                            400, INVALID, "***", "secret itself")
        assert body["fields"] == ["uri"]
        assert name not in boss.get("/datasource").text
    # with the password itself, the copy is a source like any other
    response = boss.post("/datasource", json={**read, "name": unique("rbsqlcopy"), "uri": uri})
    assert response.status_code == 201, response.text
    assert response.json()["uri"] == read["uri"]


def test_a_source_copied_from_a_read_is_created(
    boss: Http, root: Path, unique: Callable[[str], str]
) -> None:
    source = create_source(boss, unique("rbs"), "FILE", str(root / "sales"))
    run_job(boss, source["key"], "BROWSE")
    read = boss.get(f"/datasource/{source['key']}").json()
    copy = {**read, "name": unique("rbcopy"), "uri": str(root / "hr")}
    response = boss.post("/datasource", json=copy)
    assert response.status_code == 201, response.text
    made = response.json()
    assert made["key"] != source["key"] and made["uri"] == str((root / "hr").resolve())
    assert made["resourceCount"] == 0 and made["lastJob"] is None
    assert_error(boss.post("/datasource", json={**copy, "name": unique("c"), "type": "dataset"}),
                 400, INVALID, "type")


# ------------------------------------------------------------------------------------- jobs


def test_a_job_read_back_runs_again(boss: Http, root: Path, unique: Callable[[str], str]) -> None:
    source = create_source(boss, unique("rbj"), "FILE", str(root / "sales"))
    for job_type in ("BROWSE", "PROFILE", "DISCOVER"):
        done = run_job(boss, source["key"], job_type)
        assert done["engine"] == "local"
        response = boss.post("/job", json=done)
        assert response.status_code == 201, response.text
        again = response.json()
        assert again["key"] != done["key"] and again["state"] in ("QUEUED", "RUNNING",
                                                                  "SUCCEEDED")
        assert (again["jobType"], again["dataSourceKey"], again["resourcePath"]) == (
            job_type, source["key"], None)
        assert wait_job(boss, again["key"])["state"] == "SUCCEEDED"


def test_a_job_read_back_with_a_change(
    boss: Http, root: Path, unique: Callable[[str], str]
) -> None:
    source = create_source(boss, unique("rbj"), "FILE", str(root / "sales"))
    done = run_job(boss, source["key"], "BROWSE")
    # a writable property changed: the new job has it
    response = boss.post("/job", json={**done, "jobType": "PROFILE", "resourcePath": "a.csv"})
    assert response.status_code == 201, response.text
    profiled = wait_job(boss, response.json()["key"])
    assert (profiled["jobType"], profiled["resourcePath"], profiled["state"]) == (
        "PROFILE", "a.csv", "SUCCEEDED")
    # another source's name with this source's key: which one was meant? refused by name
    other = create_source(boss, unique("rbj2"), "FILE", str(root / "hr"))
    before = boss.get("/job", params={"dataSourceKey": source["key"]}).json()
    body = assert_error(boss.post("/job", json={**done, "dataSourceName": other["name"]}), 400,
                        INVALID, "dataSourceName")
    assert body["fields"] == ["dataSourceName"]
    assert boss.get("/job", params={"dataSourceKey": source["key"]}).json() == before
    # a BROWSE job read back still cannot ask for another engine
    assert_error(boss.post("/job", json={**done, "engine": "spark"}), 400, INVALID,
                 "PROFILE job")
