"""A 1 GB CSV is profiled by ``catalog-nb profile`` in a child process with bounded memory.

The file (about 14 million rows) is written by repeating a block of varied lines. The child's
peak resident memory is read by a small wrapper process (``RUSAGE_CHILDREN`` of the wrapper, so
no other child of the test process can inflate it), and the stored row count must be exact.
The store plays no part in what is measured, so the test uses a SQLite store and runs in the
SQLite pass of the suite only.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from catalog_nb.server.store import Store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.schema import data_resources, resource_fields

TARGET_BYTES = 1024**3
# The profiler reads ahead while two threads fold columns in: Arrow's CSV reader keeps its blocks
# in flight beside the reservoir sample, and the process holds the whole service besides (about
# 170 MiB before reading). Issue 12 bounds profiling at 1 GiB; this leaves a margin under it.
PEAK_LIMIT_MB = 768
HEADER = "id,email,amount,region,day,code,note,flag\n"
_WRAPPER = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:])\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(done.returncode)\n"
)


def _block(lines: int = 2000) -> str:
    regions = ["north", "south", "east", "west", ""]
    rows = []
    for i in range(lines):
        note = f'"free text, with a comma {i % 13}"' if i % 3 else "plain"
        rows.append(
            f"{i},user{i % 977}@example.org,{(i * 7.31) % 5000:.2f},{regions[i % 5]},"
            f"2024-{1 + i % 12:02d}-{1 + i % 28:02d},AB-{i % 10000:04d},{note},"
            f"{'true' if i % 2 else 'false'}\n"
        )
    return "".join(rows)


def write_big_csv(path: Path, target: int = TARGET_BYTES) -> int:
    """Write about ``target`` bytes of CSV; returns the number of data rows."""
    block = _block()
    data = block.encode()
    per_block = block.count("\n")
    rows = 0
    with path.open("wb") as handle:
        handle.write(HEADER.encode())
        written = len(HEADER)
        while written < target:
            handle.write(data)
            written += len(data)
            rows += per_block
    return rows


@pytest.mark.slow
@pytest.mark.store_neutral
def test_a_1gb_csv_is_profiled_with_bounded_memory(tmp_path: Path) -> None:
    folder = tmp_path / "big"
    folder.mkdir()
    big = folder / "big.csv"
    try:
        started = time.perf_counter()
        rows = write_big_csv(big)
        written = time.perf_counter() - started
        size = big.stat().st_size
        assert size >= TARGET_BYTES
        url = f"sqlite:///{tmp_path / 'catalog.sqlite3'}"
        store = Store(url)
        store.migrate()
        with store.write() as conn:
            source = source_store.create_source(
                conn, {"name": "big", "source_type": "FILE", "uri": str(folder)})
        command = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "catalog_nb.cli",
                   "profile", "big", "--db-url", url, "--quiet"]
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
        seconds = time.perf_counter() - started
        assert done.returncode == 0, (done.stdout, done.stderr)
        peak_mb = int(done.stderr.strip().splitlines()[-1]) / 1024
        with store.read() as conn:
            row = conn.execute(select(data_resources).where(
                data_resources.c.data_source_key == source["key"])).mappings().one()
            found = conn.execute(select(resource_fields).where(
                resource_fields.c.resource_key == row["key"])).mappings().all()
        store.dispose()
        print(f"\n1 GB CSV: {size / 2**20:.0f} MiB, {rows:,} rows written in {written:.1f} s, "
              f"profiled in {seconds:.1f} s ({size / 2**20 / seconds:.0f} MiB/s, "
              f"{rows / seconds:,.0f} rows/s), peak RSS {peak_mb:.0f} MiB")
        assert row["status"] == "PROFILED", row["error_msg"]
        assert row["row_count"] == rows
        assert row["resource_size"] == size
        assert len(found) == 8
        by_name = {f["name"]: f for f in found}
        assert by_name["id"]["data_type"] == "LONG"
        assert by_name["amount"]["data_type"] == "DOUBLE"
        assert by_name["id"]["properties"]["sampled"] is True
        assert by_name["id"]["properties"]["valueCount"] == rows
        assert peak_mb < PEAK_LIMIT_MB, f"peak RSS {peak_mb:.0f} MiB"
    finally:
        big.unlink(missing_ok=True)
