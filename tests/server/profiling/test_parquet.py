"""Parquet without reading everything: footer statistics, unread columns, corrupt footers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog_nb.server.profiling import readers
from catalog_nb.server.profiling.files import profile_file
from catalog_nb.server.profiling.model import DataType


def _table(rows: int = 5_000) -> pa.Table:
    return pa.table({
        "id": pa.array(range(rows), pa.int64()),
        "amount": pa.array([None if i % 10 == 0 else i / 8 for i in range(rows)]),
        "code": pa.array([f"c{i % 50}" for i in range(rows)]),
        "who": pa.array([{"name": f"n{i % 10}", "age": None if i % 4 else i % 70}
                         for i in range(rows)]),
        "tags": pa.array([[i, i + 1] if i % 3 else None for i in range(rows)]),
    })


def test_footer_statistics_are_read_and_match_the_data(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(_table(), path, row_group_size=700)
    footer = readers.parquet_footer(path)
    assert footer["amount"].null_count == 500
    assert (footer["id"].low, footer["id"].high) == (0, 4_999)
    assert footer["who.age"].null_count == 3_750
    assert "tags.list.element" not in footer and "tags" not in footer  # element-level counts
    profile = profile_file(path)
    assert profile.state == "OK", profile.error_msg
    amount = profile.field("amount").properties
    assert (amount["nullCount"], amount["valueCount"], amount["min"], amount["max"]) == (
        500, 4_500, 0.125, 4_999 / 8)
    assert profile.field("who.age").properties["nullCount"] == 3_750
    assert profile.field("tags").properties["nullCount"] == 1_667  # read: not in the footer


def test_same_profile_with_and_without_footer_statistics(tmp_path: Path) -> None:
    with_stats, without = tmp_path / "with.parquet", tmp_path / "without.parquet"
    pq.write_table(_table(), with_stats, row_group_size=700)
    pq.write_table(_table(), without, row_group_size=700, write_statistics=False)
    assert readers.parquet_footer(without) == {}
    one, other = profile_file(with_stats), profile_file(without)
    for field in one.fields:
        assert field.properties == other.field(field.name).properties, field.name
        assert field.data_type == other.field(field.name).data_type


_PEAK = """
import json, sys
import pyarrow as pa
from catalog_nb.server.profiling.files import profile_file
profile = profile_file(sys.argv[1])
blob = profile.field("blob")
print(json.dumps({"peak": pa.default_memory_pool().max_memory(), "state": profile.state,
                  "nulls": blob.properties["nullCount"], "type": blob.data_type.value}))
"""


def _peak(path: Path) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True,
                          text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("statistics", [True, False])
def test_binary_columns_are_not_read_when_the_footer_counts_them(
    tmp_path: Path, statistics: bool
) -> None:
    # 40 MB of blobs beside a small id column: Arrow's allocation peak tells whether they
    # were read (it is measured in a fresh process, so nothing else counts).
    rows = 400
    blobs = pa.array([bytes([i % 256]) * 100_000 if i % 5 else None for i in range(rows)])
    table = pa.table({"id": pa.array(range(rows)), "blob": blobs})
    path = tmp_path / "blobs.parquet"
    pq.write_table(table, path, compression="none", write_statistics=statistics)
    found = _peak(path)
    assert found["state"] == "OK" and found["type"] == DataType.BINARY.value
    assert found["nulls"] == 80
    if statistics:
        assert isinstance(found["peak"], int) and found["peak"] < 8_000_000, found
    else:  # without footer counts the blobs must be read, which the peak shows
        assert isinstance(found["peak"], int) and found["peak"] > 30_000_000, found


def _good(tmp_path: Path) -> bytes:
    path = tmp_path / "good.parquet"
    pq.write_table(_table(500), path)
    return path.read_bytes()


@pytest.mark.parametrize("damage", ["truncated", "footer-length", "footer-bytes", "no-magic"])
def test_corrupt_footer_is_a_clear_error(tmp_path: Path, damage: str) -> None:
    data = _good(tmp_path)
    length = int.from_bytes(data[-8:-4], "little")
    if damage == "truncated":
        broken = data[: len(data) // 2]
    elif damage == "footer-length":
        broken = data[:-8] + (len(data) * 4).to_bytes(4, "little") + b"PAR1"
    elif damage == "footer-bytes":
        start = len(data) - 8 - length
        broken = data[:start] + bytes(b ^ 0x5A for b in data[start:-8]) + data[-8:]
    else:
        broken = data[:-4] + b"XXXX"
    path = tmp_path / "broken.parquet"
    path.write_bytes(broken)
    profile = profile_file(path)
    assert profile.state == "ERROR", damage
    assert "PARQUET" in (profile.error_msg or "") or "Not a data file" in (
        profile.error_msg or ""), profile.error_msg
    assert profile.fields == []
