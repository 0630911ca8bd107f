"""Benchmark: how the cost of join discovery grows with the number of fields.

    python -m tests.benchmarks.join_scaling [--sizes 500,1000,2000,4000,8000] [--values 400]

Builds synthetic catalogs of key-like fields the way profiling stores them (value sketches from
``profiling.sketch.build_sketch`` and the field properties join discovery reads): a fifth of the
fields are the "master" keys of their own domain (unique codes), three fifths hold a subset of
one master's values (foreign keys), the rest are unrelated unique codes. For each size it times
``discovery.joins.find`` (the whole step minus the store reads and writes) and prints the time,
the time per field, the candidate pairs the inverted index produced against the all-pairs
count, and how many of the planted joins were found.

Not a test: run it by hand, read the figures. Join discovery must grow with the number of
fields (times the sketch size k), not with their square: the time per field should stay about
flat while the all-pairs count grows linearly per field.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

from catalog_nb.server.discovery import joins
from catalog_nb.server.profiling.sketch import build_sketch
from catalog_nb.server.settings import Settings

FIELDS_PER_RESOURCE = 8


def _row(index: int, name: str, values: list[str]) -> dict[str, Any]:
    resource = f"r{index // FIELDS_PER_RESOURCE:05d}"
    distinct = len(set(values))
    return {
        "resource_key": resource, "name": name, "data_type": "STRING",
        "properties": {"valueCount": len(values), "distinctCount": distinct,
                       "maxLength": max(len(v) for v in values)},
        "sketch": build_sketch(values).to_dict(), "data_source_key": "bench",
        "path": f"bench/{resource}.csv", "resource_name": f"{resource}.csv",
        "resource_type": "resource_type_file", "table_name": None,
    }


def synthetic(count: int, values: int, seed: int = 11) -> tuple[list[dict[str, Any]], int]:
    """``count`` field rows and the number of planted (foreign key -> master) joins between
    two resources."""
    rng = random.Random(seed)
    masters: list[list[str]] = []
    homes: list[int] = []  # the resource number of each master
    rows: list[dict[str, Any]] = []
    planted = 0
    for index in range(count):
        kind = index % 5
        if kind == 0 or not masters:
            domain = len(masters)
            codes = [f"D{domain:05d}-{i:06d}" for i in range(values)]
            masters.append(codes)
            homes.append(index // FIELDS_PER_RESOURCE)
            rows.append(_row(index, f"domain{domain}_code", codes))
        elif kind in (1, 2, 3):
            domain = rng.randrange(len(masters))
            subset = rng.sample(masters[domain], values // 2)
            rows.append(_row(index, f"domain{domain}_code", subset))
            # Both sides in one resource would be a self-join, which is only ever declared.
            planted += homes[domain] != index // FIELDS_PER_RESOURCE
        else:
            noise = [f"N{index:06d}-{rng.getrandbits(40):x}" for _ in range(values)]
            rows.append(_row(index, f"ref{index}", noise))
    return rows, planted


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="500,1000,2000,4000,8000")
    parser.add_argument("--values", type=int, default=400, help="distinct values per master")
    args = parser.parse_args()
    settings = Settings()
    print(f"{'fields':>7} {'seconds':>8} {'ms/field':>9} {'pairs':>8} {'all pairs':>11} "
          f"{'found':>6} {'planted':>8}")
    for size in (int(s) for s in args.sizes.split(",")):
        rows, planted = synthetic(size, args.values)
        started = time.perf_counter()
        conditions, _report = joins.find(rows, [], settings)
        seconds = time.perf_counter() - started
        keyed = [joins.key_field(r, settings.join_min_distinct) for r in rows]
        pairs = len(joins.candidate_pairs([k for k in keyed if k is not None]))
        print(f"{size:>7} {seconds:>8.2f} {1000 * seconds / size:>9.3f} {pairs:>8} "
              f"{size * (size - 1) // 2:>11} {len(conditions):>6} {planted:>8}")


if __name__ == "__main__":
    main()
