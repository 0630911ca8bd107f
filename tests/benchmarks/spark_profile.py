"""Benchmark: the Spark engine (``local[2]``) against the local engine on TPC-H files.

    python -m tests.benchmarks.spark_profile [--scale 0.1|1] [--data DIR] [--master local[2]]

TPC-H at ``--scale`` (default 0.1; ``--scale 1`` for SF1) as CSV and as Parquet, generated once
by ``tpchgen-cli`` into ``--data`` (default ``~/.cache/catalog_nb/tpch``, shared with
:mod:`.profile_tpch`), on local disk. For every file:

* **anchor**: the local engine (``profiling.files.profile_file``), in this process;
* **spark**: the Spark engine (``profiling.spark.profile_file``) on one session started once
  (its start-up is printed on its own: a job process pays it once, then keeps the session).

Both run in the same process one after the other, file by file, so the machine's other tenants
weigh on both alike; each figure is the best of ``--repeats`` runs. Printed per file: seconds of
each, the ratio spark / local, and whether the two profiles are identical (every property and
sketch, as the tests compare them); then each format's totals and the load average before and
after. No target: the figures say what Spark costs or gains on one machine, where it has no
cores the local engine does not use already (its place is a cluster).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from catalog_nb.server.profiling import files
from catalog_nb.server.profiling import spark as engine
from catalog_nb.server.profiling.model import ResourceProfile
from catalog_nb.server.spark_session import spark_session, stop_session
from tests.benchmarks.profile_tpch import TABLES, ensure_tpch


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _facts(profile: ResourceProfile) -> Any:
    facts = {f.name: getattr(profile, f.name) for f in dataclasses.fields(profile)
             if f.name != "fields"}
    return facts, [(f.name, f.data_type, f.nullable, f.properties,
                    None if f.sketch is None else f.sketch.to_dict()) for f in profile.fields]


def _best(run: Callable[[], ResourceProfile], repeats: int) -> tuple[float, ResourceProfile]:
    best, made = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        made = run()
        best = min(best, time.perf_counter() - started)
    assert made is not None
    return best, made


def run(folder: Path, scale: str, master: str, repeats: int) -> bool:
    """Measure every table in both formats; True when every profile was the same."""
    targets = {fmt: ensure_tpch(folder, scale, fmt) for fmt in ("csv", "parquet")}
    print(f"load average before: {_load()}  (cores: {os.cpu_count()})")
    started = time.perf_counter()
    session = spark_session(master, conf={"spark.sql.shuffle.partitions": "2"})
    print(f"Spark session on {master}: started in {time.perf_counter() - started:.1f} s")
    same_everywhere = True
    # Warm-up: the executors' Python workers import the profiler once.
    warm = targets["parquet"] / "region.parquet"
    engine.profile_file(session, warm.name, root=warm.parent)
    files.profile_file(warm.name, root=warm.parent)
    print(f"{'file':28} {'MB':>7} {'local s':>8} {'spark s':>8} {'ratio':>6}  same profile")
    for fmt in ("csv", "parquet"):
        target = targets[fmt]
        totals = [0.0, 0.0, 0.0]
        for table in TABLES:
            path = target / f"{table}.{fmt}"
            size = path.stat().st_size / 2**20
            times = repeats if size < 50 else 1
            local_s, local = _best(partial(files.profile_file, path.name, root=path.parent),
                                   times)
            spark_s, made = _best(
                partial(engine.profile_file, session, path.name, root=path.parent), times)
            same = _facts(local) == _facts(made)
            same_everywhere &= same
            totals[0] += size
            totals[1] += local_s
            totals[2] += spark_s
            print(f"sf{scale}/{path.name:22} {size:7.1f} {local_s:8.2f} {spark_s:8.2f} "
                  f"{spark_s / local_s:6.2f}  {'yes' if same else 'NO'}", flush=True)
        print(f"TPC-H SF{scale} as {fmt}: {totals[0]:.0f} MB, local {totals[1]:.1f} s "
              f"({totals[0] / totals[1]:.0f} MB/s), spark {totals[2]:.1f} s "
              f"({totals[0] / totals[2]:.0f} MB/s), ratio {totals[2] / totals[1]:.2f}")
    stop_session()
    print(f"load average after: {_load()}")
    print(f"every profile the same: {'yes' if same_everywhere else 'NO'}")
    return same_everywhere


def main(argv: list[str] | None = None) -> int:
    """Parse the options, generate what is missing, measure."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", default="0.1", help="TPC-H scale factor (0.1 or 1)")
    parser.add_argument("--data", type=Path, default=Path.home() / ".cache/catalog_nb/tpch")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    args.data.mkdir(parents=True, exist_ok=True)
    return 0 if run(args.data, args.scale, args.master, args.repeats) else 1


if __name__ == "__main__":
    sys.exit(main())
