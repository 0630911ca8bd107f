"""``catalog-nb profile``: the service's job code, run in-process from the command line."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from catalog_nb.cli import main
from catalog_nb.server.store import Store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.schema import audit_events, data_resources, jobs


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    (data / "crm").mkdir(parents=True)
    (data / "crm" / "customers.csv").write_text("id,email\n1,a@x.org\n2,b@x.org\n")
    (data / "crm" / "leads.csv").write_text("id,score\n1,0.5\n")
    (data / "events.jsonl").write_text('{"id": 1, "user": {"ip": "10.0.0.1"}}\n')
    return data


def _source(store: Store, name: str, uri: str, source_type: str = "FILE") -> dict[str, Any]:
    with store.write() as conn:
        return source_store.create_source(conn, {"name": name, "source_type": source_type,
                                                 "uri": uri})


def _resources(store: Store, source_key: str) -> dict[str, dict[str, Any]]:
    with store.read() as conn:
        rows = conn.execute(select(data_resources).where(
            data_resources.c.data_source_key == source_key)).mappings().all()
    return {str(r["path"]): dict(r) for r in rows}


def _last_job(store: Store) -> dict[str, Any]:
    with store.read() as conn:
        row = conn.execute(select(jobs).order_by(jobs.c.created_ms.desc())).mappings().first()
    assert row is not None
    return dict(row)


def test_profile_runs_a_recorded_job(
    store: Store, store_url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _source(store, "local files", str(folder))
    assert main(["profile", "local files", "--db-url", store_url, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("SUCCEEDED: Profiled 3 resources of data source 'local files'")
    stored = _resources(store, source["key"])
    assert {p: r["status"] for p, r in stored.items()} == dict.fromkeys(
        ("crm/customers.csv", "crm/leads.csv", "events.jsonl"), "PROFILED")
    assert stored["crm/customers.csv"]["row_count"] == 2
    job = _last_job(store)
    assert job["state"] == "SUCCEEDED" and job["requested_by"].startswith("cli:")
    assert job["key"] in out and job["progress"] == 1.0
    with store.read() as conn:
        event = conn.execute(select(audit_events).where(
            audit_events.c.object_key == job["key"])).mappings().one()
    assert event["action"] == "RUN_JOB" and event["user_name"].startswith("cli:")
    # Again: nothing changed, nothing is read.
    assert main(["profile", source["key"], "--db-url", store_url, "--quiet"]) == 0
    assert _last_job(store)["counts"]["unchanged"] == 3


def test_a_path_and_browse_only(
    store: Store, store_url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _source(store, "scoped", str(folder))
    assert main(["profile", "scoped", "--browse-only", "--db-url", store_url, "--quiet"]) == 0
    assert {r["status"] for r in _resources(store, source["key"]).values()} == {"BROWSED"}
    assert _last_job(store)["job_type"] == "BROWSE"
    assert main(["profile", "scoped", "crm", "--db-url", store_url, "--quiet",
                 "--sample-rows", "100"]) == 0
    statuses = {p: r["status"] for p, r in _resources(store, source["key"]).items()}
    assert statuses == {"crm/customers.csv": "PROFILED", "crm/leads.csv": "PROFILED",
                        "events.jsonl": "BROWSED"}
    assert "under 'crm'" in capsys.readouterr().out


def test_a_failing_job_exits_non_zero(
    store: Store, store_url: str, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _source(store, "doomed", str(folder))
    shutil.rmtree(folder)
    assert main(["profile", "doomed", "--db-url", store_url, "--quiet"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAILED: Cannot browse data source 'doomed'")
    assert _last_job(store)["state"] == "FAILED"
    assert main(["profile", "doomed", "nope.csv", "--db-url", store_url, "--quiet"]) == 1


def test_the_data_roots_apply_when_configured(
    store: Store, store_url: str, folder: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    _source(store, "fenced", str(folder))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("CATALOG_DATA_ROOTS", str(elsewhere))
    assert main(["profile", "fenced", "--db-url", store_url, "--quiet"]) == 1
    assert "outside the data roots" in capsys.readouterr().out


def test_usage_errors(store: Store, store_url: str, folder: Path) -> None:
    _source(store, "present", str(folder))
    with pytest.raises(SystemExit, match="There is no data source named 'absent'"):
        main(["profile", "absent", "--db-url", store_url])
    with pytest.raises(SystemExit, match="--browse-only"):
        main(["profile", "present", "crm", "--browse-only", "--db-url", store_url])


def test_the_console_command_runs_in_a_fresh_process(
    store: Store, store_url: str, folder: Path
) -> None:
    _source(store, "visible", str(folder))
    done = subprocess.run(
        [sys.executable, "-m", "catalog_nb.cli", "profile", "visible", "--db-url", store_url],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("SUCCEEDED:")
