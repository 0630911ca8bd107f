"""The Spark engine computes the local engine's profile: every property, type and sketch.

A real SparkSession in local mode (one per test process: ``tests/server/spark_helpers.py``)
profiles the same files as the local engine; the results are compared field by field,
sketches by their serialised bytes (hashes and raw sample).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from catalog_nb.server.profiling import files
from catalog_nb.server.profiling import spark as engine
from catalog_nb.server.profiling.model import ResourceProfile, ResourceState
from tests.server.spark_helpers import CHUNK_ROWS, SAMPLE_ROWS, needs_java, spark, write_lake

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["spark"]  # the session fixture, used by name

pytestmark = [pytest.mark.slow(seconds=60), needs_java]


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    root = tmp_path_factory.mktemp("spark-lake")
    return root, write_lake(root)


def _facts(profile: ResourceProfile) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A profile as plain data: its properties, and each field with its sketch's bytes."""
    facts = {f.name: getattr(profile, f.name) for f in dataclasses.fields(profile)
             if f.name != "fields"}
    fields = [{"name": f.name, "type": f.data_type, "nullable": f.nullable,
               "properties": f.properties,
               "sketch": None if f.sketch is None else f.sketch.to_dict()}
              for f in profile.fields]
    return facts, fields


def assert_same(local: ResourceProfile, spark_made: ResourceProfile) -> None:
    assert local.state == ResourceState.OK.value, local.error_msg
    facts, fields = _facts(local)
    other_facts, other_fields = _facts(spark_made)
    assert other_facts == facts
    assert [f["name"] for f in other_fields] == [f["name"] for f in fields]
    for mine, theirs in zip(fields, other_fields, strict=True):
        for key in mine:  # one key at a time: a difference names the field and property
            assert theirs[key] == mine[key], (mine["name"], key)


@pytest.mark.parametrize("path", ["orders.csv", "events.jsonl", "orders.parquet"])
def test_a_file_profiles_the_same_on_spark(spark: SparkSession, lake: tuple[Path, Any],
                                           path: str) -> None:
    root, _ = lake
    local = files.profile_file(path, root=root, sample_rows=SAMPLE_ROWS, chunk_rows=CHUNK_ROWS)
    made = engine.profile_file(spark, path, root=root, sample_rows=SAMPLE_ROWS,
                               chunk_rows=CHUNK_ROWS)
    assert_same(local, made)
    assert local.row_count == 4000 and any(f.properties["sampled"] for f in local.fields)
    if path == "orders.csv":  # the late column, the dates and the mixed one, as the local engine
        kinds = {f.name: f.data_type.value for f in local.fields}
        assert kinds["code"] == "STRING" and kinds["day"] == "DATE"
        assert kinds["ts"] == "TIMESTAMP" and kinds["mixed"] == "STRING"
        assert local.fields[0].sketch is not None


@pytest.mark.parametrize("folder", ["sales", "daily", "shift"])
@pytest.mark.parametrize("profiled", [10, 2])
def test_a_collection_profiles_the_same_on_spark(spark: SparkSession, lake: tuple[Path, Any],
                                                 folder: str, profiled: int) -> None:
    root, members = lake
    options: dict[str, Any] = {"root": root, "members": members[folder],
                               "sample_rows": SAMPLE_ROWS, "chunk_rows": CHUNK_ROWS,
                               "max_profiled_members": profiled}
    local = files.profile_collection(folder, **options)
    assert_same(local, engine.profile_collection(spark, folder, **options))


def test_bad_files_fail_as_locally(spark: SparkSession, tmp_path: Path) -> None:
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    (tmp_path / "empty.csv").write_text("")
    for name in ("broken.parquet", "empty.csv"):
        local = files.profile_file(name, root=tmp_path)
        made = engine.profile_file(spark, name, root=tmp_path)
        assert made.state == local.state == ResourceState.ERROR.value
        assert made.error_msg == local.error_msg
