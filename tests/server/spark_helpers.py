"""What the Spark engine's tests share: one local SparkSession per test process, a lake of
files that exercises what makes two engines disagree (see ``write_lake``), and the comparison of
a Spark job's stored profile with the local engine's (``assert_same_stored``)."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog_nb.server.spark_session import spark_session, stop_session
from tests.conftest import Http, Server
from tests.server.source_helpers import create_source, fields, resources, wait_job

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Spark runs in a JVM: without Java 17 these tests cannot run, and say so instead of failing on
#: a JVM that never starts (.ci/run installs it).
needs_java = pytest.mark.skipif(
    shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
    reason="Spark needs Java 17, and no java is on PATH nor JAVA_HOME set: "
           "apt-get install openjdk-17-jre-headless",
)

#: The master of the tests' one session; a server whose jobs run on threads of the test process
#: and names the same master reuses it (no second JVM).
MASTER = "local[2]"
#: Fewer rows than the lake's files hold, so that sampling matters.
SAMPLE_ROWS = 1000
#: Small chunks: files of several chunks, Parquet files of several parts.
CHUNK_ROWS = 512
ROWS = 4000

#: Stored columns that differ between two sources' copies of the same resource.
_OWN = {"key", "data_source_key", "resource_key", "collection_key", "created_ms", "updated_ms",
        "profiled_ms", "browsed_ms", "run_id", "status_details", "generation", "doc_id",
        "last_profiled_ms", "position_key", "detailed_status"}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """The test process's SparkSession (local[2], UI off, two shuffle partitions)."""
    session = spark_session(MASTER, conf={"spark.sql.shuffle.partitions": "2",
                                          "spark.default.parallelism": "2"})
    yield session
    stop_session()


def _row(i: int, rng: random.Random) -> dict[str, Any]:
    return {
        "id": i,
        "amount": None if i % 17 == 0 else round(rng.uniform(-50, 5000), 2),
        # numbers for most of the file, then codes: the column turns STRING late
        "code": str(i) if i < ROWS - 300 else f"X{i}",
        "mixed": rng.choice(["1", "2.5", "true", "abc", "", "7", "007"]),
        "day": (dt.date(2020, 1, 1) + dt.timedelta(days=i % 900)).isoformat(),
        "ts": f"2021-03-04 10:{i % 60:02d}:{i % 7:02d}",
        "name": rng.choice(["Alice", "bob", " Carol ", "DAVE", "Émile", None]),
        "flag": rng.choice(["true", "false", None]),
    }


def write_lake(root: Path, *, small: bool = False) -> dict[str, list[str]]:
    """CSV, JSON lines, Parquet (several row groups) and three collections (Hive-style Parquet
    partitions, numbered CSV files, CSV files whose column changes type) under ``root``;
    returns each collection's members.

    ``small``: the CSV file, the Parquet file and the collection whose type changes only, for
    the tests on a real cluster, where every resource costs a few stages: still a text part, a
    Parquet part, a counting pass, planned sample picks and a reading again in context."""
    rng = random.Random(7)
    rows = [_row(i, rng) for i in range(ROWS)]
    root.mkdir(parents=True, exist_ok=True)

    def csv_text(part: list[dict[str, Any]]) -> str:
        lines = [",".join(rows[0])]
        lines += [",".join("" if v is None else str(v) for v in r.values()) for r in part]
        return "\n".join(lines) + "\n"

    (root / "orders.csv").write_text(csv_text(rows), encoding="utf-8")
    table = pa.Table.from_pylist([{**r, "day": dt.date.fromisoformat(r["day"]),
                                   "code": r["code"]} for r in rows])
    pq.write_table(table, root / "orders.parquet", row_group_size=700)
    members: dict[str, list[str]] = {"shift": _write_shift(root)}
    if small:
        return members
    with (root / "events.jsonl").open("w", encoding="utf-8") as out:
        for r in rows:
            record = dict(r)
            if r["id"] % 3 == 0 and r["amount"] is not None:
                record["amount"] = int(r["amount"])  # ints among floats
            out.write(json.dumps(record) + "\n")
    members.update(sales=[], daily=[])
    for year in range(3):
        folder = root / "sales" / f"year={2022 + year}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(table.slice(year * 1400, 1400), folder / "part-0.parquet",
                       row_group_size=300)
        members["sales"].append(f"sales/year={2022 + year}/part-0.parquet")
    (root / "daily").mkdir(exist_ok=True)
    for day in range(4):
        name = f"daily/day-{day:02d}.csv"
        (root / name).write_text(csv_text(rows[day * 1000:(day + 1) * 1000]), encoding="utf-8")
        members["daily"].append(name)
    return members


def _write_shift(root: Path) -> list[str]:
    """A column of words, then files of numbers: read after the words they stay text (their
    sketch hashes "2.50", not 2.5), so Spark reads those files again in that light."""
    (root / "shift").mkdir(exist_ok=True)
    members = []
    for part, values in enumerate([["n/a", "none", "2.50"], ["2.50", "3.10", "4"], ["7", "8"]]):
        name = f"shift/v-{part:02d}.csv"
        (root / name).write_text("v,w\n" + "".join(f"{v},{i}\n" for i, v in
                                                   enumerate(values * 300)), encoding="utf-8")
        members.append(name)
    return members


def profile_job(http: Http, source_key: str, engine: str, *,
                timeout: float = 600) -> dict[str, Any]:
    """A PROFILE job of ``source_key`` on ``engine`` through HTTP, waited for: its final state."""
    response = http.post("/job", json={"jobType": "PROFILE", "dataSourceKey": source_key,
                                       "engine": engine})
    assert response.status_code == 201, response.text
    assert response.json()["engine"] == engine
    return wait_job(http, response.json()["key"], timeout=timeout)


def _mine(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items()
            if k not in _OWN and not k.endswith("_ms") and not k.startswith("time_of_")}


def assert_same_stored(server: Server, expected_source: str,
                       found_source: str) -> dict[str, dict[str, Any]]:
    """Assert that two sources of the same files hold the same stored profile, resource by
    resource and field by field (every property, the type, the sketch's bytes); returns the
    expected source's resources by path."""
    expected, found = resources(server, expected_source), resources(server, found_source)
    assert set(found) == set(expected)
    for path, row in expected.items():
        assert _mine(found[path]) == _mine(row), path
        mine, theirs = fields(server, row["key"]), fields(server, found[path]["key"])
        assert list(theirs) == list(mine), path
        for name, field in mine.items():
            assert _mine(theirs[name]) == _mine(field), (path, name)
    return expected


def assert_engines_agree(server: Server, lake: Path, unique: Callable[[str], str], *,
                         timeout: float = 600) -> dict[str, dict[str, Any]]:
    """Profile ``lake`` as two sources of ``server``, one PROFILE job on the local engine and
    one on Spark (the server's ``spark_master``), and assert that both succeed with the same
    counts and store the same profile; returns the resources by path."""
    http = server.session()
    local = create_source(http, unique("local"), "FILE", str(lake))
    on_spark = create_source(http, unique("spark"), "FILE", str(lake))
    first = profile_job(http, local["key"], "local", timeout=timeout)
    done = profile_job(http, on_spark["key"], "spark", timeout=timeout)
    assert first["state"] == done["state"] == "SUCCEEDED", done
    assert done["counts"] == first["counts"] and done["errors"] == []
    return assert_same_stored(server, local["key"], on_spark["key"])
