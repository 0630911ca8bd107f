"""The Spark engine over an object store: executors read the objects with the profiler's own
object-store readers (no Hadoop S3 connector), and the profile is the local engine's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from catalog_nb.server.profiling import files
from catalog_nb.server.profiling import spark as engine
from catalog_nb.server.profiling.locations import open_object_folder
from tests.objectstore.conftest import ObjectStore
from tests.server.profiling.test_spark_engine import assert_same
from tests.server.spark_helpers import CHUNK_ROWS, SAMPLE_ROWS, needs_java, spark, write_lake

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["spark"]  # the session fixture, used by name

pytestmark = needs_java


@pytest.mark.slow(seconds=60)
def test_objects_profile_on_spark_as_locally(spark: SparkSession, object_store: ObjectStore,
                                             tmp_path: Path) -> None:
    members = write_lake(tmp_path)
    bucket = object_store.bucket()
    for made in sorted(p for p in tmp_path.rglob("*") if p.is_file()):
        object_store.put(bucket, f"raw/{made.relative_to(tmp_path).as_posix()}",
                         made.read_bytes())
    root = open_object_folder(object_store.uri(bucket, "raw"))
    options = {"sample_rows": SAMPLE_ROWS, "chunk_rows": CHUNK_ROWS}
    for name in ("orders.csv", "orders.parquet"):
        assert_same(files.profile_file(name, root=root, **options),
                    engine.profile_file(spark, name, root=root, **options))
    kept = {"root": root, "members": members["sales"], **options}
    assert_same(files.profile_collection("sales", **kept),
                engine.profile_collection(spark, "sales", **kept))
