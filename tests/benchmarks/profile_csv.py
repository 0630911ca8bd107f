"""Benchmark: profile a generated CSV and compare with ``pandas.read_csv`` on the same file.

    python -m tests.benchmarks.profile_csv [--rows 1000000] [--cols 20] [--keep DIR]

Generates a CSV of ``--rows`` rows and ``--cols`` mixed columns (ids, amounts, categories, emails,
dates, timestamps, booleans, codes, zip codes with leading zeros, free text, with nulls) in a
temporary folder, then runs, each in a fresh child process so the figures do not pollute each
other: ``profile_file`` (every statistic and sketch) and ``pandas.read_csv`` (parsing only).
Prints seconds, rows/s, MB/s and peak resident memory (``ru_maxrss`` of the child, and its growth
over the child's baseline after imports). Not a test: run it by hand, read the figures.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv

_KINDS = ["id", "amount", "category", "email", "date", "timestamp", "flag", "code", "zip", "text"]


def _column(kind: str, rows: int, rng: np.random.Generator, start: int) -> pa.Array:
    nulls = rng.random(rows) < 0.05
    if kind == "id":
        return pa.array(np.arange(start + 1, start + rows + 1))
    if kind == "amount":
        return pa.array(np.round(rng.gamma(2.0, 50.0, rows), 2), mask=nulls)
    if kind == "category":
        names = np.array(["north", "south", "east", "west", "central", "online"])
        return pa.array(names[rng.integers(0, len(names), rows)], mask=nulls)
    if kind == "email":
        users = rng.integers(0, rows // 2 + 1, rows)
        domains = np.array(["example.com", "mail.org", "corp.net"])[rng.integers(0, 3, rows)]
        local = np.char.add(np.char.add("user", users.astype(str)), "@")
        return pa.array(np.char.add(local, domains), mask=nulls)
    if kind == "date":
        days = rng.integers(0, 3650, rows).astype("timedelta64[D]") + np.datetime64("2015-01-01")
        return pa.array(days.astype(str), mask=nulls)
    if kind == "timestamp":
        seconds = rng.integers(0, 10**8, rows).astype("timedelta64[s]")
        stamps = (np.datetime64("2020-01-01T00:00:00") + seconds).astype(str)
        return pa.array(np.char.replace(stamps, "T", " "), mask=nulls)
    if kind == "flag":
        return pa.array(rng.random(rows) < 0.3, mask=nulls)
    if kind == "code":
        letters = np.array(list("ABCDEFGHJK"))[rng.integers(0, 10, (rows, 2))]
        prefix = np.char.add(letters[:, 0], letters[:, 1])
        digits = np.char.zfill(rng.integers(0, 10000, rows).astype(str), 4)
        return pa.array(np.char.add(np.char.add(prefix, "-"), digits))
    if kind == "zip":
        return pa.array(np.char.zfill(rng.integers(0, 100000, rows).astype(str), 5), mask=nulls)
    words = np.array(["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing"])
    picks = words[rng.integers(0, len(words), (rows, 3))]
    return pa.array(np.char.add(np.char.add(picks[:, 0], " "), picks[:, 1]), mask=nulls)


def generate(path: Path, rows: int, cols: int, seed: int = 7) -> None:
    """Write the benchmark CSV in slices of 100,000 rows (bounded memory here too)."""
    rng = np.random.default_rng(seed)
    names = [f"{_KINDS[i % len(_KINDS)]}_{i}" for i in range(cols)]
    with pa_csv.CSVWriter(path, pa.schema([(n, pa.string()) for n in names])) as writer:
        for start in range(0, rows, 100_000):
            count = min(100_000, rows - start)
            arrays = [
                _column(_KINDS[i % len(_KINDS)], count, rng, start).cast(pa.string())
                for i in range(cols)
            ]
            writer.write_batch(pa.record_batch(arrays, names=names))


def _rss_mb() -> float:
    scale = 1024 if sys.platform != "darwin" else 1024 * 1024  # Linux says KiB, macOS bytes
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def _run(task: str, path: str, options: dict[str, Any], out: Any) -> None:
    if task == "profile":
        from catalog_nb.server.profiling.files import profile_file

        baseline = _rss_mb()
        started = time.perf_counter()
        profile = profile_file(path, **options)
        seconds = time.perf_counter() - started
        rows = profile.row_count or 0
        detail = f"state={profile.state} fields={profile.field_count} {profile.error_msg or ''}"
    else:
        import pandas as pd

        baseline = _rss_mb()
        started = time.perf_counter()
        frame = pd.read_csv(path)
        seconds = time.perf_counter() - started
        rows = len(frame)
        detail = f"columns={frame.shape[1]}"
    peak = _rss_mb()
    out.put({"seconds": seconds, "rows": rows, "peak": peak, "base": baseline, "detail": detail})


def measure(task: str, path: Path, options: dict[str, Any]) -> dict[str, Any]:
    """Run one task in a fresh child process and return its figures."""
    context = mp.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_run, args=(task, str(path), options, queue))
    child.start()
    result: dict[str, Any] = queue.get()
    child.join()
    return result


def main(argv: list[str] | None = None) -> None:
    """Generate, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--cols", type=int, default=20)
    parser.add_argument("--sample-rows", type=int, default=100_000)
    parser.add_argument("--chunk-rows", type=int, default=50_000)
    parser.add_argument("--keep", type=Path, help="write the CSV here and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"bench_{args.rows}x{args.cols}.csv"
        started = time.perf_counter()
        generate(path, args.rows, args.cols)
        size_mb = path.stat().st_size / 2**20
        print(f"generated {path.name}: {size_mb:.1f} MB in {time.perf_counter() - started:.1f} s")
        options = {"sample_rows": args.sample_rows, "chunk_rows": args.chunk_rows}
        print(f"{'task':<18}{'seconds':>9}{'rows/s':>12}{'MB/s':>8}{'peak MB':>9}{'+base MB':>10}")
        for label, task in (("profile_file", "profile"), ("pandas.read_csv", "pandas")):
            r = measure(task, path, options)
            print(
                f"{label:<18}{r['seconds']:>9.2f}{r['rows'] / r['seconds']:>12,.0f}"
                f"{size_mb / r['seconds']:>8.1f}{r['peak']:>9.0f}{r['peak'] - r['base']:>10.0f}"
                f"   {r['detail']}"
            )


if __name__ == "__main__":
    main()
