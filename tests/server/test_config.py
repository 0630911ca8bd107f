"""/config over HTTP: typed and validated properties that really configure the running service.

Every test runs on a server of its own (the values are the whole service's). Each writable
property family is proved through the service's behaviour after a PUT: sessions expire, logins
lock, search pages are refused or accepted, profiling samples fewer rows, PROFILE jobs skip
discovery. Stored values survive a restart and win over the environment; a second process on
the same store picks a change up by itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update

from catalog_nb.contract import ErrorCode
from catalog_nb.server.discovery import relations
from catalog_nb.server.discovery.relation_report import StepReport
from catalog_nb.server.runtime_config import PROPERTIES, RELOAD_SECONDS
from catalog_nb.server.settings import Settings
from catalog_nb.server.store.schema import config_values, sessions
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    assert_error,
    audit_search,
    create_role,
    create_user,
    session_token,
    token_hash,
)
from tests.server.source_helpers import create_source, run_job

WRITABLE = [p for p in PROPERTIES.values() if not p.read_only]
READ_ONLY = [p.name for p in PROPERTIES.values() if p.read_only]


def put(http: Http, name: str, value: Any) -> dict[str, Any]:
    response = http.put(f"/config/{name}", json={"value": value})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def value_of(http: Http, name: str) -> Any:
    response = http.get(f"/config/{name}")
    assert response.status_code == 200, response.text
    return response.json()["value"]


def stored_rows(server: Server) -> int:
    with server.store.read() as conn:
        return int(conn.execute(select(func.count()).select_from(config_values)).scalar_one())


def search(http: Http, size: int) -> Any:
    return http.post("/search/new", json={"pagingCriteria": {"start": 0, "size": size}})


# ---------------------------------------------------------------------------- reading


def test_every_property_is_listed_typed_with_its_bounds(
    make_server: Callable[..., Server]
) -> None:
    server = make_server(search_page_max=150, build="b-42")
    boss = server.session()
    listed = boss.get("/config")
    assert listed.status_code == 200, listed.text
    by_name = {p["name"]: p for p in listed.json()}
    assert list(by_name) == list(PROPERTIES)
    page = by_name["search.pageMax"]
    assert page == {
        "name": "search.pageMax", "value": 150, "type": "INTEGER",
        "description": page["description"], "readOnly": False, "defaultValue": 150,
        "minimum": 20, "maximum": 10_000, "changedBy": None, "timeOfLastChange": None,
    }
    assert by_name["service.build"]["value"] == "b-42" and by_name["service.build"]["readOnly"]
    assert by_name["session.idleTimeoutMinutes"]["value"] == 120.0
    assert by_name["discovery.afterProfile"] == {**by_name["discovery.afterProfile"],
                                                  "type": "BOOLEAN", "value": True}
    for prop in by_name.values():
        assert prop["description"] and prop["type"] in ("STRING", "INTEGER", "DOUBLE", "BOOLEAN")
    # Any signed-in user reads; nobody else.
    create_user(boss, "reader", roles=["Guest"])
    reader = server.session("reader", PASSWORD)
    assert reader.get("/config/search.pageMax").json()["value"] == 150
    assert_error(server.anonymous().get("/config"), 401)
    assert_error(boss.get("/config/no.such"), 404, ErrorCode.CONFIG_NOT_FOUND.value, "no.such")


def test_every_registry_bound_is_a_value_the_settings_accept() -> None:
    for prop in WRITABLE:
        for bound in (prop.minimum, prop.maximum):
            if bound is not None:
                value = int(bound) if prop.type == "INTEGER" else bound
                assert getattr(Settings(**{prop.field: value}), prop.field) == value, prop.name


# ---------------------------------------------------------------------------- refusing


@pytest.fixture(scope="module")
def refusals(make_server: Callable[..., Server]) -> Server:
    """One server for the refusal cases: a refusal changes nothing, so they can share it."""
    return make_server()


BAD_VALUES = [
    ("search.pageMax", "500"), ("search.pageMax", 250.5), ("search.pageMax", True),
    ("search.pageMax", 19), ("search.pageMax", 10_001), ("search.pageMax", {}),
    ("session.idleTimeoutMinutes", True), ("session.idleTimeoutMinutes", 0.5),
    ("session.idleTimeoutMinutes", "60"), ("discovery.afterProfile", 1),
    ("discovery.afterProfile", "false"), ("joins.minContainment", 1.5),
    ("joins.minContainment", -0.1), ("login.maxFailures", 0), ("profiling.sampleRows", 99),
    ("lineage.maxDepth", [3]), ("discovery.minLearningScore", {"v": 1}),
]


@pytest.mark.parametrize(("name", "value"), BAD_VALUES)
def test_values_of_the_wrong_type_or_out_of_range_are_400(
    name: str, value: Any, refusals: Server
) -> None:
    boss = refusals.session()
    before = value_of(boss, name)
    rows = stored_rows(refusals)
    body = assert_error(boss.put(f"/config/{name}", json={"value": value}), 400,
                        ErrorCode.INVALID_CONFIG_VALUE.value, name)
    prop = PROPERTIES[name]
    if prop.minimum is not None:
        low, high = (f"{b:.10g}" if b % 1 else str(int(b)) for b in (prop.minimum, prop.maximum))
        assert f"between {low} and {high}" in body["message"]
        assert body["minimum"] == prop.minimum and body["maximum"] == prop.maximum
    assert value_of(boss, name) == before and stored_rows(refusals) == rows


def test_read_only_unknown_forbidden_and_malformed_changes_are_refused(
    server: Server, fresh_admin: Http
) -> None:
    for name in READ_ONLY:
        before = value_of(fresh_admin, name)
        for sent in ("other", 3, None):
            assert_error(fresh_admin.put(f"/config/{name}", json={"value": sent}), 400,
                         ErrorCode.READ_ONLY_CONFIG.value, name)
        assert value_of(fresh_admin, name) == before
    assert_error(fresh_admin.put("/config/no.such", json={"value": 1}), 404,
                 ErrorCode.CONFIG_NOT_FOUND.value)
    assert_error(fresh_admin.put("/config/search.pageMax", json={}), 400,
                 ErrorCode.INVALID_PAYLOAD.value)
    assert_error(fresh_admin.put("/config/search.pageMax", json={"value": 50, "x": 1}), 400,
                 ErrorCode.INVALID_PAYLOAD.value)
    assert_error(fresh_admin.put("/config/search.pageMax", data="{", headers={
        "Content-Type": "application/json"}), 400, ErrorCode.MALFORMED_JSON.value)
    # No create, no delete (the spec's table): the properties are the service's own.
    assert_error(fresh_admin.post("/config", json={"name": "x", "value": 1}), 405)
    assert_error(fresh_admin.delete("/config/search.pageMax"), 405)
    role = create_role(fresh_admin, "Stewards-all", "Steward", metadataAccessOption="ALL")
    create_user(fresh_admin, "stew", roles=[role["name"]])
    steward = server.session("stew", PASSWORD)
    assert_error(steward.put("/config/search.pageMax", json={"value": 500}), 403,
                 ErrorCode.PERMISSION_DENIED.value, "Administrator")
    assert value_of(fresh_admin, "search.pageMax") == 100
    assert stored_rows(server) == 0


# ------------------------------------------------------------------- taking effect


def test_search_page_max_decides_which_pages_are_given(server: Server, fresh_admin: Http) -> None:
    assert_error(search(fresh_admin, 250), 400, ErrorCode.INVALID_PARAMETER.value, "100")
    changed = put(fresh_admin, "search.pageMax", 300)
    assert changed["value"] == 300 and changed["changedBy"] == "admin"
    assert changed["timeOfLastChange"] > 0 and changed["defaultValue"] == 100
    assert search(fresh_admin, 250).status_code == 201
    put(fresh_admin, "search.pageMax", 40.0)  # a whole number sent as a JSON float is an INTEGER
    assert value_of(fresh_admin, "search.pageMax") == 40
    assert_error(search(fresh_admin, 41), 400, ErrorCode.INVALID_PARAMETER.value, "40")
    assert search(fresh_admin, 40).status_code == 201


def test_the_idle_timeout_expires_sessions_idle_longer(server: Server, fresh_admin: Http) -> None:
    create_user(fresh_admin, "idler", roles=["Guest"])
    idler = server.session("idler", PASSWORD)
    token = session_token(idler)
    # The session was last seen 90 seconds ago (the clock of the store, not a sleep).
    with server.store.write() as conn:
        conn.execute(update(sessions).where(sessions.c.token_hash == token_hash(token))
                     .values(last_seen_ms=sessions.c.last_seen_ms - 90_000))
    assert idler.get("/version").status_code == 200  # 120 minutes idle allowed
    with server.store.write() as conn:
        conn.execute(update(sessions).where(sessions.c.token_hash == token_hash(token))
                     .values(last_seen_ms=sessions.c.last_seen_ms - 90_000))
    put(fresh_admin, "session.idleTimeoutMinutes", 1)
    assert_error(idler.get("/version"), 401, ErrorCode.SESSION_EXPIRED.value)
    assert fresh_admin.get("/version").status_code == 200  # an active session lives on


def test_the_session_lifetime_ends_sessions_older_than_it(
    server: Server, fresh_admin: Http
) -> None:
    create_user(fresh_admin, "elder", roles=["Guest"])
    elder = server.session("elder", PASSWORD)
    # Logged in 20 minutes ago, and active since (the clock of the store, not a sleep).
    with server.store.write() as conn:
        conn.execute(update(sessions).where(
            sessions.c.token_hash == token_hash(session_token(elder)))
            .values(created_ms=sessions.c.created_ms - 20 * 60_000))
    assert elder.get("/version").status_code == 200
    put(fresh_admin, "session.maxLifetimeHours", 0.25)
    assert_error(elder.get("/version"), 401, ErrorCode.SESSION_EXPIRED.value)
    assert fresh_admin.get("/version").status_code == 200


def test_login_max_failures_locks_a_user_name_sooner(server: Server, fresh_admin: Http) -> None:
    create_user(fresh_admin, "clumsy", roles=["Guest"])
    put(fresh_admin, "login.maxFailures", 2)
    put(fresh_admin, "login.lockoutSeconds", 600)
    anonymous = server.anonymous()
    for _ in range(2):
        wrong = anonymous.post("/login", json={"username": "clumsy", "password": "wrong-pass"})
        assert wrong.status_code == 401
    locked = anonymous.post("/login", json={"username": "clumsy", "password": PASSWORD})
    assert_error(locked, 429, ErrorCode.LOGIN_THROTTLED.value)
    assert 590 <= int(locked.headers["Retry-After"]) <= 600


def _csv(folder: Path, rows: int) -> Path:
    folder.mkdir(parents=True)
    lines = "".join(f"{i},name-{i % 37}\n" for i in range(rows))
    (folder / "data.csv").write_text("id,name\n" + lines)
    return folder


def _sample(boss: Http, source_key: str) -> dict[str, Any]:
    listed = boss.get("/dataresource/metadata", params={
        "propertyFilter": f"id:{_keys(boss, source_key)}", "views": "viewFields"}).json()
    field = listed["list"][0]["fields"][0]
    return {p["name"]: p["value"] for p in field["properties"]}


def _keys(boss: Http, source_key: str) -> str:
    sources = boss.get(f"/datasource/{source_key}").json()
    listed = boss.get("/dataresource/metadata",
                      params={"propertyFilter": f"data_source:{sources['name']}"}).json()
    return ";".join(r["key"] for r in listed["list"])


def test_profiling_sample_rows_bounds_what_profiling_samples(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    # Jobs run in child processes: the stored configuration reaches them too.
    server = make_server(data_roots=[tmp_path])
    boss = server.session()
    put(boss, "discovery.afterProfile", False)
    put(boss, "relations.afterProfile", False)
    before = create_source(boss, "before", "FILE", str(_csv(tmp_path / "a", 1000)))
    run_job(boss, before["key"])
    whole = _sample(boss, before["key"])
    assert whole["sampleSize"] == 1000 and whole["sampled"] is False
    put(boss, "profiling.sampleRows", 100)
    after = create_source(boss, "after", "FILE", str(_csv(tmp_path / "b", 1000)))
    run_job(boss, after["key"])
    part = _sample(boss, after["key"])
    assert part["sampleSize"] == 100 and part["sampled"] is True
    assert part["valueCount"] == whole["valueCount"] == 1000  # counts still see every row


def test_discovery_switches_and_thresholds_are_read_by_each_job(
    make_server: Callable[..., Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[dict[str, Any]] = []

    def probe(store: Any, settings: Settings, changed: Any = None) -> StepReport:
        # Stands in for the join and lineage steps: what they would read, when they run.
        seen.append({p.name: getattr(settings, p.field) for p in WRITABLE})
        return StepReport(counts={"probeRuns": 1}, summary="probed.")

    monkeypatch.setattr(relations, "STEPS", (("probe", probe),))
    server = make_server(data_roots=[tmp_path], job_isolation="thread")
    boss = server.session()
    first = create_source(boss, "first", "FILE", str(_csv(tmp_path / "a", 200)))
    counts = run_job(boss, first["key"])["counts"]
    assert counts.get("resourcesExamined") == 1 and counts.get("probeRuns") == 1, counts
    assert seen[-1]["joins.minContainment"] == 0.8 and seen[-1]["lineage.maxNodes"] == 500

    put(boss, "joins.minContainment", 0.35)
    put(boss, "lineage.maxNodes", 42)
    put(boss, "discovery.minLearningScore", 0.9)
    put(boss, "discovery.afterProfile", False)
    second = create_source(boss, "second", "FILE", str(_csv(tmp_path / "b", 200)))
    counts = run_job(boss, second["key"])["counts"]
    assert not counts.get("resourcesExamined") and counts.get("probeRuns") == 1, counts
    assert seen[-1]["joins.minContainment"] == 0.35 and seen[-1]["lineage.maxNodes"] == 42
    assert seen[-1]["discovery.minLearningScore"] == 0.9

    put(boss, "relations.afterProfile", False)
    runs = len(seen)
    third = create_source(boss, "third", "FILE", str(_csv(tmp_path / "c", 200)))
    counts = run_job(boss, third["key"])["counts"]
    assert len(seen) == runs and not counts.get("probeRuns"), counts


# ---------------------------------------------------------------- storing and sharing


def test_stored_values_survive_a_restart_and_win_over_the_environment(
    make_server: Callable[..., Server], store_url: str
) -> None:
    first = make_server(db_url=store_url)
    boss = first.session()
    put(boss, "search.pageMax", 300)
    put(boss, "joins.minContainment", 0.5)
    first.embedded.stop()
    second = make_server(db_url=store_url, search_page_max=120)
    again = second.session()
    shown = again.get("/config/search.pageMax").json()
    assert shown["value"] == 300 and shown["defaultValue"] == 120
    assert shown["changedBy"] == "admin"
    assert value_of(again, "joins.minContainment") == 0.5
    assert search(again, 250).status_code == 201
    reset = put(again, "search.pageMax", None)
    assert reset["value"] == 120 and reset["changedBy"] is None
    assert_error(search(again, 250), 400, ErrorCode.INVALID_PARAMETER.value)
    assert stored_rows(second) == 1


def test_a_change_made_through_another_process_takes_effect_here(
    make_server: Callable[..., Server], store_url: str
) -> None:
    one = make_server(db_url=store_url)
    two = make_server(db_url=store_url)
    boss_one, boss_two = one.session(), two.session()
    assert_error(search(boss_two, 250), 400)
    put(boss_one, "search.pageMax", 300)
    deadline = time.monotonic() + RELOAD_SECONDS + 5
    while search(boss_two, 250).status_code != 201:
        assert time.monotonic() < deadline, "the other process never applied the change"
        time.sleep(0.2)
    put(boss_one, "search.pageMax", None)
    assert value_of(boss_two, "search.pageMax") == 100  # GET /config re-reads at once


def test_config_changes_are_audited(server: Server, fresh_admin: Http) -> None:
    put(fresh_admin, "lineage.maxDepth", 7)
    fresh_admin.put("/config/lineage.maxDepth", json={"value": 0})
    events = audit_search(fresh_admin, objectType="CONFIG")
    assert [(e["action"], e["outcome"], e["objectKey"]) for e in events[:2]] == [
        ("UPDATE", "FAILURE", "lineage.maxDepth"), ("UPDATE", "SUCCESS", "lineage.maxDepth")]
    assert "7" in events[1]["message"] and "10" in events[1]["message"]
