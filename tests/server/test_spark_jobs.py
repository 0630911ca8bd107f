"""PROFILE jobs with engine spark through HTTP: the same stored profile as the local engine's,
and a Spark master that cannot be reached failing the job while the service stays up.

A Spark job's profiles are stored by the ingest every PROFILE job uses, which the local
engine's tests check on every backend: the engines' comparison is about what Spark computes,
so the PostgreSQL run leaves it to the SQLite run (``store_neutral``; it costs a JVM and a
minute). What is Spark's own in the store, the engine of a source and of its jobs, is checked on
every backend by the unreachable master's test."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import Server
from tests.server.source_helpers import create_source, wait_job
from tests.server.spark_helpers import (
    MASTER,
    SAMPLE_ROWS,
    assert_engines_agree,
    needs_java,
    profile_job,
    spark,
    write_lake,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["spark"]  # the session fixture, used by name

pytestmark = needs_java


@pytest.mark.slow(seconds=180)
@pytest.mark.store_neutral
def test_a_spark_job_stores_the_local_engines_profile(
        spark: SparkSession, make_server: Callable[..., Server], tmp_path: Path,
        unique: Callable[[str], str]) -> None:
    write_lake(tmp_path / "lake")
    # Jobs on threads of this process, on the session the tests already hold (no second JVM).
    server = make_server(data_roots=[tmp_path], job_isolation="thread", spark_master=MASTER,
                         profile_sample_rows=SAMPLE_ROWS, discovery_after_profile=False,
                         relations_after_profile=False)
    expected = assert_engines_agree(server, tmp_path / "lake", unique)
    assert len(expected) >= 7
    assert sum(row["status"] == "PROFILED" for row in expected.values()) >= 6


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_spark_master_fails_the_job_and_the_service_stays_up(
        make_server: Callable[..., Server], tmp_path: Path, unique: Callable[[str], str]) -> None:
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "t.csv").write_text("id,name\n1,a\n2,b\n")
    master = f"spark://127.0.0.1:{_closed_port()}"
    # Jobs in their own process, as served: a Spark failure must not take the service along.
    server = make_server(data_roots=[tmp_path], spark_master=master)
    http = server.session()
    # Spark as the source's default engine: the job names none.
    source = create_source(http, unique("lake"), "FILE", str(tmp_path / "lake"), engine="spark")
    started = time.monotonic()
    response = http.post("/job", json={"jobType": "PROFILE", "dataSourceKey": source["key"]})
    assert response.status_code == 201, response.text
    job = wait_job(http, response.json()["key"], timeout=60)
    assert time.monotonic() - started < 30
    assert job["state"] == "FAILED" and job["engine"] == "spark"
    message = job["message"]
    assert "Spark master" in message and "cannot be reached" in message and master in message
    assert "Exception" not in message and "\tat " not in message and "py4j" not in message
    # The service answers, and the same source profiles with the local engine.
    assert http.get("/version").status_code == 200
    local = profile_job(http, source["key"], "local")
    assert local["state"] == "SUCCEEDED", local
