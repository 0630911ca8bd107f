"""Benchmark: profiling public data (TPC-H) side by side with pandas on the same files.

    python -m tests.benchmarks.profile_tpch [--scales 0.1,1] [--data DIR] [--engines]

TPC-H is generated with the ``tpchgen-cli`` package (``tpchgen-cli csv|parquet -s SF``), once,
into ``--data`` (default ``~/.cache/catalog_nb/tpch``), for each scale factor as CSV and as
Parquet; the 1,000,000 x 20 CSV of :mod:`.profile_csv` is added. For every file, each task in fresh
child processes:

* **ours**: ``profile_file`` (exact counts, min/max/mean, types, sketches, sample statistics);
* **anchor**: ``pandas.read_csv`` (``read_parquet``) + ``describe(include="all")`` + ``nunique()``;
* with ``--engines``, the engines considered for the profiler: Polars ``read_csv().describe()``
  and DuckDB ``SUMMARIZE``, for the record.

Every task runs at nice 10, the priority profiling has in the service (its job processes run
at nice 10, and the profiler's threads lower theirs to it wherever they run), so the anchor
competes with the machine's other tenants as the profiler does, and with the allocator settings
of a job process (``server/allocators.py``: freed memory kept for the next file). Files
under 100 MB are timed seven times in each of three processes per task and the best time kept
(a run of a few milliseconds or a tenth of a second says more about the machine's other tenants
than about the code; on this shared virtual machine the profiler's two threads are the first to
lose a core).
Prints seconds, the
ratio ours / pandas, MB/s and peak RSS per file, then each scale's CSV set
as a whole (MB/s, peak RSS), each line with its target and "met" or "NOT met", and the load
average before and after. Targets (issue 12): ratio <= 1.5 on every CSV, < 1 on every Parquet
file; TPC-H SF1 as CSV >= 100 MB/s with peak RSS < 1 GiB.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from catalog_nb.server.allocators import keep_freed_memory
from catalog_nb.server.profiling.threads import BACKGROUND_NICENESS
from tests.benchmarks.profile_csv import generate

TABLES = ["lineitem", "orders", "partsupp", "part", "customer", "supplier", "nation", "region"]
CSV_RATIO = 1.5
PARQUET_RATIO = 1.0
SF1_MB_PER_S = 100.0
RSS_LIMIT_MB = 1024.0
REPEAT_BELOW_BYTES = 100 * 2**20
REPEATS = 7
PROCESSES = 3


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _run(task: str, path: str, out: Any) -> None:
    # Every task at the priority profiling has in the service (a job process at nice 10): the
    # profiler's pool threads lower theirs to it wherever they run, so an anchor left at 0
    # would win every tie with the machine's other tenants that the profiler loses.
    os.nice(max(0, BACKGROUND_NICENESS - os.nice(0)))
    # ... and with a job process's allocator settings (Arrow's and Polars' came with the
    # environment :func:`measure` started the process with; glibc's are set here).
    keep_freed_memory()
    # Imports come before the clock: a running service (or notebook) has them loaded already.
    import duckdb
    import pandas as pd
    import polars as pl
    import polars_hash  # noqa: F401  (the profiler's hashing, imported on first use)

    from catalog_nb.server.profiling.files import profile_file

    parquet = path.endswith(".parquet")
    # The warm-up file first, for every task: what is measured is the steady state of a process
    # that has profiled before (first calls set up thread pools, compile patterns and grow the
    # memory pools; a job process keeps all of that from one job to the next).
    warm = Path(path).parent.parent / f"warm-up{Path(path).suffix}"
    if task == "ours":
        profile_file(warm)
    elif task == "pandas":
        warm_frame = (pd.read_parquet if parquet else pd.read_csv)(warm)
        warm_frame.describe(include="all")
        warm_frame.nunique()
    # Small files are timed several times and the best kept (for every task alike): one run of
    # a few milliseconds says more about the machine's other tenants than about the code.
    repeats = REPEATS if Path(path).stat().st_size < REPEAT_BELOW_BYTES else 1
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        if task == "ours":
            profile = profile_file(path)
            detail = f"{profile.row_count} rows {profile.error_msg or ''}"
        elif task == "pandas":
            frame = pd.read_parquet(path) if parquet else pd.read_csv(path)
            frame.describe(include="all")
            frame.nunique()
            detail = f"{len(frame)} rows"
        elif task == "polars":
            pl_frame = pl.read_parquet(path) if parquet else pl.read_csv(path)
            pl_frame.describe()
            detail = f"{pl_frame.height} rows"
        else:
            reader = "read_parquet" if parquet else "read_csv"
            duckdb.sql(f"SUMMARIZE SELECT * FROM {reader}('{path}')").fetchall()
            detail = ""
        seconds.append(time.perf_counter() - started)
    out.put({"seconds": min(seconds), "peak": _rss_mb(), "detail": detail})


def measure(task: str, path: Path) -> dict[str, Any]:
    """Run one task in fresh child processes (imports and memory of their own): the best time
    of :data:`PROCESSES` of them for a file under 100 MB, whose runs in one process can all be
    a third slower than in the next (where the threads land on this shared virtual machine),
    the highest peak RSS."""
    # The child inherits the environment: Arrow's and Polars' allocators read it as they load.
    keep_freed_memory()
    context = mp.get_context("spawn")
    results = []
    for _ in range(PROCESSES if path.stat().st_size < REPEAT_BELOW_BYTES else 1):
        queue = context.Queue()
        child = context.Process(target=_run, args=(task, str(path), queue))
        child.start()
        results.append(queue.get())
        child.join()
    best = min(results, key=lambda r: r["seconds"])
    return {**best, "peak": max(r["peak"] for r in results)}


def ensure_tpch(folder: Path, scale: str, fmt: str) -> Path:
    """The folder of TPC-H at ``scale`` as ``fmt`` (csv or parquet), generated if missing."""
    target = folder / f"sf{scale}-{fmt}"
    if not all((target / f"{t}.{fmt}").exists() for t in TABLES):
        tool = shutil.which("tpchgen-cli") or str(Path(sys.executable).with_name("tpchgen-cli"))
        print(f"generating TPC-H SF{scale} {fmt} in {target} ...", flush=True)
        subprocess.run([tool, fmt, "-s", scale, f"--output-dir={target}"], check=True,
                       stdout=subprocess.DEVNULL)
    return target


def ensure_data(folder: Path, scales: list[str]) -> None:
    """Generate what is missing: TPC-H per scale and format, and the 1,000,000 x 20 CSV."""
    for scale in scales:
        for fmt in ("csv", "parquet"):
            ensure_tpch(folder, scale, fmt)
    wide = folder / "generated" / "generated-1000000x20.csv"
    if not wide.exists():
        print(f"generating {wide} ...", flush=True)
        wide.parent.mkdir(exist_ok=True)
        generate(wide, 1_000_000, 20)
    # A table of its own (ids, codes, words, amounts, dates, prose) that takes every path a
    # TPC-H file takes once: enough rows for the bulk hashing, the pool and the sample, values
    # long enough to be cut. A job process that has profiled before is in that state.
    rows = 30_000
    if (folder / "warm-up.csv").exists() and pq.read_metadata(
            folder / "warm-up.parquet").num_rows == rows:
        return
    words = ["ironic", "final", "pending", "deposits", "sleep", "quickly", "furiously", "blithe"]
    warm = pa.table({
        "id": range(rows), "code": [f"C{i % 500:04d}" for i in range(rows)],
        "word": [f"w{i % 97}x" for i in range(rows)],
        "amount": [i / 7 for i in range(rows)],
        "day": [f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(rows)],
        "note": [" ".join(words[(i * j) % 8] for j in range(1, 6 + i % 7)) + f" {i}"
                 for i in range(rows)]})
    pa_csv.write_csv(warm, folder / "warm-up.csv")
    pq.write_table(warm, folder / "warm-up.parquet")


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(folder: Path, scales: list[str], engines: bool,
        formats: tuple[str, ...] = ("csv", "parquet")) -> bool:
    """Measure every file; print the table and the targets; True when every target is met."""
    print(f"load average before: {_load()}  (cores: {os.cpu_count()})")
    header = f"{'file':34} {'MB':>7} {'ours s':>7} {'pandas s':>8} {'ratio':>6} {'MB/s':>6} " \
             f"{'RSS MB':>7}  target"
    if engines:
        header += "      polars s  duckdb s"
    print(header)
    all_met = True
    files: list[tuple[str, Path]] = []
    for scale in scales:
        for fmt in formats:
            files += [(f"sf{scale}", folder / f"sf{scale}-{fmt}" / f"{t}.{fmt}") for t in TABLES]
    if "csv" in formats:
        files.append(("generated", folder / "generated" / "generated-1000000x20.csv"))
    totals: dict[str, list[float]] = {}
    for group, path in files:
        size = path.stat().st_size / 2**20
        ours = measure("ours", path)
        anchor = measure("pandas", path)
        ratio = ours["seconds"] / anchor["seconds"]
        parquet = path.suffix == ".parquet"
        limit = PARQUET_RATIO if parquet else CSV_RATIO
        met = ratio < limit if parquet else ratio <= limit
        all_met &= met
        name = f"{group}/{path.name}"
        line = (f"{name:34} {size:7.1f} {ours['seconds']:7.2f} {anchor['seconds']:8.2f} "
                f"{ratio:6.2f} {size / ours['seconds']:6.0f} {ours['peak']:7.0f}  "
                f"{'<' if parquet else '<='} {limit}: {_verdict(met)}")
        if engines:
            line += (f"  {measure('polars', path)['seconds']:8.2f}"
                     f"  {measure('duckdb', path)['seconds']:8.2f}")
        print(line, flush=True)
        if not parquet:
            total = totals.setdefault(group, [0.0, 0.0, 0.0])
            total[0] += size
            total[1] += ours["seconds"]
            total[2] = max(total[2], ours["peak"])
    for group, (size, seconds, peak) in totals.items():
        if not group.startswith("sf"):
            continue
        rate = size / seconds
        line = f"TPC-H {group.upper()} as CSV: {size:.0f} MB in {seconds:.1f} s = " \
               f"{rate:.0f} MB/s, " \
               f"peak RSS {peak:.0f} MB"
        if group == "sf1":
            met = rate >= SF1_MB_PER_S and peak < RSS_LIMIT_MB
            all_met &= met
            line += f"  (target >= {SF1_MB_PER_S:.0f} MB/s and < {RSS_LIMIT_MB:.0f} MB: " \
                    f"{_verdict(met)})"
        print(line)
    print(f"load average after: {_load()}")
    print(f"all targets: {_verdict(all_met)}")
    return all_met


def main(argv: list[str] | None = None) -> int:
    """Parse the options, generate what is missing, measure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scales", default="0.1,1", help="TPC-H scale factors, comma-separated")
    parser.add_argument("--data", type=Path, default=Path.home() / ".cache/catalog_nb/tpch")
    parser.add_argument("--engines", action="store_true", help="also time Polars and DuckDB")
    parser.add_argument("--formats", default="csv,parquet", help="csv, parquet or both")
    args = parser.parse_args(argv)
    args.data.mkdir(parents=True, exist_ok=True)
    scales = [s.strip() for s in args.scales.split(",") if s.strip()]
    ensure_data(args.data, scales)
    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    return 0 if run(args.data, scales, args.engines, formats) else 1


if __name__ == "__main__":
    sys.exit(main())
