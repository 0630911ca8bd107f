"""Jobs through HTTP: queueing, state and progress, permissions, listing, restart recovery."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update

from catalog_nb.server.jobs import REQUEUED_MESSAGE, STALE_MESSAGE, run_job
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.common import now_ms
from catalog_nb.server.store.schema import jobs
from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, assert_error, audit_search, create_role, create_user
from tests.server.source_helpers import create_source, resources, start_job, wait_job
from tests.server.source_helpers import run_job as run_http_job


def _files(folder: Path, count: int = 3) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"table_{chr(97 + i)}.csv").write_text(f"id,value\n{i},x{i}\n{i + 1},y\n")
    return folder


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("jobroot")


@pytest.fixture(scope="module")
def rooted(make_server: Callable[..., Server], root: Path) -> Server:
    # Some tests break job internals with monkeypatch: jobs run in this process.
    return make_server(data_roots=[root], job_workers=2, job_isolation="thread")


@pytest.fixture(scope="module")
def boss(rooted: Server) -> Http:
    return rooted.session()


@pytest.fixture
def source(boss: Http, root: Path, unique: Callable[[str], str]) -> dict[str, Any]:
    name = unique("src")
    return create_source(boss, name, "FILE", str(_files(root / name)))


def _member(server: Server, admin: Http, unique: Callable[[str], str], level: str = "Analyst",
            **role: Any) -> Http:
    made = create_role(admin, unique(f"role-{level}"), level, **role)
    name = unique("user")
    create_user(admin, name, roles=[made["name"]])
    return server.session(name, PASSWORD)


def test_a_browse_job_is_queued_runs_and_reports(boss: Http, source: dict[str, Any]) -> None:
    queued = start_job(boss, source["key"], "BROWSE")
    assert queued["jobType"] == "BROWSE" and queued["dataSourceKey"] == source["key"]
    assert queued["dataSourceName"] == source["name"] and queued["resourcePath"] is None
    assert queued["requestedBy"] == "admin" and queued["timeOfCreation"] > 0
    assert queued["counts"] == dict.fromkeys(
        ("created", "updated", "unchanged", "skipped", "errors"), 0)
    done = wait_job(boss, queued["key"])
    assert done["state"] == "SUCCEEDED", done
    assert done["progress"] == 1.0 and done["total"] == done["done"] == 3
    assert done["counts"]["created"] == 3 and done["errors"] == []
    assert done["startTime"] >= done["timeOfCreation"] and done["endTime"] >= done["startTime"]
    assert "3 resources (3 new" in done["message"]
    assert queued["engine"] == done["engine"] == "local" and queued["worker"] is None
    again = run_http_job(boss, source["key"], "BROWSE")
    assert again["counts"]["unchanged"] == 3 and again["counts"]["created"] == 0
    events = [e for e in audit_search(boss, action="RUN_JOB", objectType="JOB")
              if e["objectKey"] == queued["key"]]
    assert len(events) == 1 and events[0]["outcome"] == "SUCCESS"
    assert events[0]["objectName"] == f"BROWSE {source['name']}"


def test_jobs_are_listed_newest_first_and_filtered(boss: Http, source: dict[str, Any]) -> None:
    first = run_http_job(boss, source["key"], "BROWSE")
    second = run_http_job(boss, source["key"], "PROFILE")
    listed = boss.get("/job", params={"dataSourceKey": source["key"]}).json()
    assert [j["key"] for j in listed] == [second["key"], first["key"]]
    one = boss.get("/job", params={"dataSourceKey": source["key"], "limit": 1}).json()
    assert [j["key"] for j in one] == [second["key"]]
    failed = boss.get("/job", params={"dataSourceKey": source["key"], "state": "FAILED"})
    assert failed.status_code == 200 and failed.json() == []
    assert boss.get(f"/job/{first['key']}").json() == first
    for params in ({"limit": 0}, {"limit": 1001}, {"state": "DONE"}):
        assert_error(boss.get("/job", params=params), 400, "INVALID_PARAMETER")
    assert_error(boss.get("/job", params={"dataSourceKey": "nope"}), 404,
                 "DATA_SOURCE_NOT_FOUND")
    assert_error(boss.get("/job/nope"), 404, "JOB_NOT_FOUND")


@pytest.mark.parametrize(
    ("body", "code", "mention"),
    [
        ({"jobType": "BROWSE", "resourcePath": "table_a.csv"}, "INVALID_PAYLOAD", "PROFILE"),
        ({"jobType": "EXPLODE"}, "INVALID_PAYLOAD", "jobType"),
        ({"jobType": "PROFILE", "dataSourceName": "elsewhere"}, "INVALID_PAYLOAD",
         "dataSourceName"),
        ({"jobType": "PROFILE", "color": 1}, "INVALID_PAYLOAD", "color"),
        ({"jobType": "BROWSE", "engine": "spark"}, "INVALID_PAYLOAD", "PROFILE job"),
        ({"jobType": "DISCOVER", "engine": "local"}, "INVALID_PAYLOAD", "PROFILE job"),
        ({"jobType": "PROFILE", "engine": "hadoop"}, "INVALID_PAYLOAD", "engine"),
        ({"jobType": "BROWSE", "key": "k", "engine": "spark"}, "INVALID_PAYLOAD", "PROFILE job"),
    ],
)
def test_bad_job_requests_are_refused_and_create_no_job(
    boss: Http, source: dict[str, Any], body: dict[str, Any], code: str, mention: str
) -> None:
    response = boss.post("/job", json={"dataSourceKey": source["key"], **body})
    assert_error(response, 400, code, mention)
    assert boss.get("/job", params={"dataSourceKey": source["key"]}).json() == []


def test_who_may_run_jobs(
    rooted: Server, boss: Http, source: dict[str, Any], unique: Callable[[str], str]
) -> None:
    key = source["key"]
    # No role sees the source: 404, whatever the permissions.
    stranger = _member(rooted, boss, unique, "Steward", jobExecutionAllowed=True)
    body = {"jobType": "BROWSE", "dataSourceKey": key}
    assert_error(stranger.post("/job", json=body), 404, "DATA_SOURCE_NOT_FOUND")
    assert_error(boss.post("/job", json={**body, "dataSourceKey": "nope"}), 404,
                 "DATA_SOURCE_NOT_FOUND")
    # Sees the source, may not run jobs: 403.
    viewer = _member(rooted, boss, unique, "Analyst", dataSourceKeys=[key])
    assert_error(viewer.post("/job", json=body), 403, "PERMISSION_DENIED",
                 "jobExecutionAllowed")
    # One role sees the source, another may run jobs: not enough.
    split = create_role(boss, unique("exec"), "Analyst", jobExecutionAllowed=True)
    sees = create_role(boss, unique("sees"), "Analyst", dataSourceKeys=[key])
    name = unique("split")
    create_user(boss, name, roles=[split["name"], sees["name"]])
    assert_error(rooted.session(name, PASSWORD).post("/job", json=body), 403)
    # A role that sees the source and may run jobs.
    runner = _member(rooted, boss, unique, "Analyst", dataSourceKeys=[key],
                     jobExecutionAllowed=True)
    job = wait_job(runner, start_job(runner, key, "BROWSE")["key"])
    assert job["state"] == "SUCCEEDED" and job["requestedBy"] != "admin"
    # Reading jobs follows the source's visibility.
    assert_error(stranger.get(f"/job/{job['key']}"), 404, "JOB_NOT_FOUND")
    assert job["key"] not in {j["key"] for j in stranger.get("/job").json()}
    assert_error(stranger.get("/job", params={"dataSourceKey": key}), 404)
    assert job["key"] in {j["key"] for j in viewer.get("/job").json()}
    assert viewer.get(f"/job/{job['key']}").status_code == 200
    refused = [e for e in audit_search(boss, action="RUN_JOB", outcome="FAILURE")
               if e["objectName"] == f"BROWSE {source['name']}"]
    assert refused, "refused job requests are audited"


def test_jobs_of_one_source_queue_behind_each_other(
    rooted: Server, boss: Http, source: dict[str, Any]
) -> None:
    started = [start_job(boss, source["key"], kind) for kind in ("BROWSE", "PROFILE", "BROWSE")]
    finished = [wait_job(boss, job["key"]) for job in started]
    assert [j["state"] for j in finished] == ["SUCCEEDED"] * 3
    assert len(resources(rooted, source["key"])) == 3


def _seed_store(url: str, folder: Path) -> tuple[str, str, str, str]:
    """A store with a source, a job left RUNNING by a dead process, one RUNNING in a live
    process (its heartbeat is fresh), and a QUEUED one."""
    store = Store(url)
    store.migrate()
    with store.write() as conn:
        source = source_store.create_source(conn, {
            "name": "left-over", "source_type": "FILE", "uri": str(folder)})
        running = job_store.create(conn, "PROFILE", source["key"], None, "someone")
        alive = job_store.create(conn, "BROWSE", source["key"], None, "someone")
        queued = job_store.create(conn, "PROFILE", source["key"], None, "someone")
        long_ago = now_ms() - 3_600_000
        conn.execute(update(jobs).where(jobs.c.key == running["key"]).values(
            state="RUNNING", started_ms=long_ago, changed_ms=long_ago, done=1, total=5))
        conn.execute(update(jobs).where(jobs.c.key == alive["key"]).values(
            state="RUNNING", started_ms=now_ms(), changed_ms=now_ms()))
    store.dispose()
    return source["key"], running["key"], alive["key"], queued["key"]


def test_a_restart_fails_abandoned_jobs_and_runs_queued_ones(
    make_server: Callable[..., Server], store_url: str, tmp_path: Path
) -> None:
    folder = _files(tmp_path / "data")
    source_key, running, alive, queued = _seed_store(store_url, folder)
    server = make_server(db_url=store_url, data_roots=[tmp_path])
    try:
        http = server.session()
        abandoned = http.get(f"/job/{running}").json()
        assert abandoned["state"] == "FAILED" and abandoned["message"] == STALE_MESSAGE
        assert abandoned["endTime"] is not None
        # Another process sharing the store is still running this one: it is left alone.
        assert http.get(f"/job/{alive}").json()["state"] == "RUNNING"
        ran = wait_job(http, queued)
        assert ran["state"] == "SUCCEEDED" and ran["counts"]["created"] == 3, ran
        assert len(resources(server, source_key)) == 3
    finally:
        server.embedded.stop()


def test_a_stopping_worker_puts_its_job_back_in_the_queue(store_url: str, tmp_path: Path
                                                          ) -> None:
    folder = _files(tmp_path / "data")
    store = Store(store_url)
    store.migrate()
    try:
        with store.write() as conn:
            source = source_store.create_source(conn, {
                "name": "stopping", "source_type": "FILE", "uri": str(folder)})
            job = job_store.create(conn, "PROFILE", source["key"], None, "me")
        settings = Settings(data_roots=[tmp_path])
        stopped = run_job(store, settings, job["key"], should_stop=lambda: True)
        assert stopped is not None
        assert stopped["state"] == "QUEUED" and stopped["message"] == REQUEUED_MESSAGE
        assert run_job(store, settings, "no-such-job") is None
        final = run_job(store, settings, job["key"])
        assert final is not None and final["state"] == "SUCCEEDED", final
        assert run_job(store, settings, job["key"]) is None, "a finished job is not run twice"
    finally:
        store.dispose()


def test_the_service_stays_up_when_a_job_breaks(
    rooted: Server, boss: Http, source: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("simulated fault in browsing")

    monkeypatch.setattr("catalog_nb.server.job_work.browse", broken)
    job = run_http_job(boss, source["key"], "BROWSE", expect="FAILED")
    assert "unexpected error" in job["message"] and "simulated fault" in job["message"]
    monkeypatch.undo()
    assert run_http_job(boss, source["key"], "BROWSE")["state"] == "SUCCEEDED"


def test_a_job_whose_worker_falls_silent_is_failed_while_the_service_runs(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    server = make_server(data_roots=[tmp_path], job_heartbeat_seconds=0.1,
                         job_stale_seconds=0.5)
    with server.store.write() as conn:
        source = source_store.create_source(conn, {
            "name": "shared", "source_type": "FILE", "uri": str(_files(tmp_path / "d"))})
        orphan = job_store.create(conn, "BROWSE", source["key"], None, "other-process")
        # Another process claimed it, then died: its heartbeat stops now.
        assert job_store.claim(conn, orphan["key"])
    http = server.session()
    job = wait_job(http, orphan["key"], timeout=10)
    assert job["state"] == "FAILED" and job["message"] == STALE_MESSAGE
    # The service's own jobs keep their heartbeat and are never taken for dead.
    assert run_http_job(http, source["key"], "PROFILE")["state"] == "SUCCEEDED"
