"""Benchmark: discovered joins and copies on TPC-H, scored against its published foreign keys.

    python -m tests.benchmarks.tpch_relations [--scale 0.01] [--data DIR] [--keep DIR]

TPC-H is generated with the ``tpchgen-cli`` package (as in :mod:`.profile_tpch`) and loaded three
ways: CSV files, Parquet files, and an SQLite database of the same tables without declared keys.
The catalog service runs in this process (``EmbeddedServer``) with the three as data sources,
each profiled by a PROFILE job (which ends with relationship discovery); then what the service
answers over HTTP is scored:

* **joins** (``GET /joincondition``) against the benchmark's foreign keys: nine single-column
  ones and the composite ``lineitem(l_partkey, l_suppkey) -> partsupp``. A condition is true
  when its two sides are a foreign key's two column lists on the two tables (either orientation,
  whatever representation each side is in). Precision and recall are printed per representation
  (both sides in it), for the conditions mixing representations, and over all of them (across
  representations), with every false positive and miss by name. A condition between two copies
  of one table is a false positive: copies are lineage.
* **copies** (``GET /lineage``): for each table, whether its three representations are
  connected by inferred lineage edges, and of which kind.

Targets (issue 14): recall 1.0 of the single-column foreign keys and precision >= 0.9, per
representation and across; the composite key found; every copy a COPY lineage edge. Each line
prints "met" or "NOT met". Not a test: run it by hand and read the figures.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.csv as pa_csv

from catalog_nb.demo.embedded import EmbeddedServer
from tests.benchmarks.calibration import print_calibration
from tests.benchmarks.calibration import tally as evidence_tally
from tests.benchmarks.harness import PASSWORD, Api
from tests.benchmarks.profile_tpch import TABLES, ensure_tpch

#: The benchmark's foreign keys: (table, columns) -> (referenced table, columns).
FOREIGN_KEYS: list[tuple[str, tuple[str, ...], str, tuple[str, ...]]] = [
    ("nation", ("n_regionkey",), "region", ("r_regionkey",)),
    ("supplier", ("s_nationkey",), "nation", ("n_nationkey",)),
    ("customer", ("c_nationkey",), "nation", ("n_nationkey",)),
    ("partsupp", ("ps_partkey",), "part", ("p_partkey",)),
    ("partsupp", ("ps_suppkey",), "supplier", ("s_suppkey",)),
    ("orders", ("o_custkey",), "customer", ("c_custkey",)),
    ("lineitem", ("l_orderkey",), "orders", ("o_orderkey",)),
    ("lineitem", ("l_partkey",), "part", ("p_partkey",)),
    ("lineitem", ("l_suppkey",), "supplier", ("s_suppkey",)),
    ("lineitem", ("l_partkey", "l_suppkey"), "partsupp", ("ps_partkey", "ps_suppkey")),
]
REPRESENTATIONS = ("csv", "parquet", "sqlite")
RECALL_TARGET = 1.0
PRECISION_TARGET = 0.9

Side = tuple[str, tuple[str, ...]]  # (table, columns)


def load_sqlite(csv_folder: Path, target: Path) -> Path:
    """The CSV tables as one SQLite database, typed by Arrow, with no key declared."""
    if target.exists():
        target.unlink()
    with sqlite3.connect(target) as db:
        for table in TABLES:
            data = pa_csv.read_csv(csv_folder / f"{table}.csv")
            columns = ", ".join(f'"{name}"' for name in data.column_names)
            db.execute(f'CREATE TABLE "{table}" ({columns})')
            marks = ", ".join("?" * data.num_columns)
            rows = zip(*(data.column(i).to_pylist() for i in range(data.num_columns)),
                       strict=True)
            db.executemany(f'INSERT INTO "{table}" VALUES ({marks})',
                           ([v.isoformat() if hasattr(v, "isoformat") else v for v in row]
                            for row in rows))
    return target


def _table(path: str) -> str:
    """``orders.csv``, ``main.orders``, ``orders`` -> ``orders``."""
    name = path.rsplit("/", 1)[-1]
    for suffix in (".csv", ".parquet"):
        name = name.removesuffix(suffix)
    return name.rsplit(".", 1)[-1]


def _key(left: Side, right: Side) -> frozenset[Side]:
    return frozenset({left, right})


@dataclass
class Tally:
    """One group's figures: each condition counts once, recall over distinct foreign keys."""

    found: int
    true: int
    false: int
    missed: int
    precision: float
    recall: float
    composite: bool

    @property
    def f1(self) -> float:
        """The harmonic mean of precision and recall; 0 when both are."""
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


TRUTH = frozenset(_key((t, c), (rt, rc)) for t, c, rt, rc in FOREIGN_KEYS)
SINGLE = frozenset(_key((t, c), (rt, rc)) for t, c, rt, rc in FOREIGN_KEYS if len(c) == 1)
GROUPS = (*REPRESENTATIONS, "mixed", "all")


def tally(found: Iterable[frozenset[Side]]) -> Tally:
    """Score predicted conditions (as :func:`_key` pairs) against the foreign keys; shared
    with :mod:`.tpch_valentine` so both sides are scored by one rule."""
    found = list(found)
    pairs = set(found)
    true = sum(pair in TRUTH for pair in found)
    return Tally(found=len(found), true=true, false=len(found) - true,
                 missed=len(SINGLE - pairs),
                 precision=true / len(found) if found else 0.0,
                 recall=len(pairs & SINGLE) / len(SINGLE),
                 composite=bool(pairs & (TRUTH - SINGLE)))


def group_of(left_kind: str, right_kind: str) -> str:
    """The representation both sides are in, or "mixed"."""
    return left_kind if left_kind == right_kind else "mixed"


def score_joins(listed: list[dict[str, Any]], sources: dict[str, str]) -> bool:
    """Print precision and recall per representation and across; True when the targets hold."""
    truth, single = TRUTH, SINGLE
    composite = truth - single
    groups: dict[str, list[tuple[frozenset[Side], dict[str, Any]]]] = {}
    for condition in listed:
        left = (_table(condition["leftPath"]), tuple(condition["leftCols"]))
        right = (_table(condition["rightPath"]), tuple(condition["rightCols"]))
        group = group_of(sources[condition["leftSourceId"]], sources[condition["rightSourceId"]])
        groups.setdefault(group, []).append((_key(left, right), condition))
        groups.setdefault("all", []).append((_key(left, right), condition))
    print(f"\nJoins: {len(listed)} conditions answered by GET /joincondition; truth: "
          f"{len(single)} single-column foreign keys and {len(composite)} composite")
    print(f"{'sides':<10}{'found':>7}{'TP':>5}{'FP':>5}{'FN':>5}{'precision':>11}{'recall':>8}"
          f"{'composite':>11}  target")
    all_met = True
    details: list[str] = []
    for group in GROUPS:
        found = groups.get(group, [])
        pairs = {pair for pair, _ in found}
        false_found = [(pair, c) for pair, c in found if pair not in truth]
        figures = tally(pair for pair, _ in found)
        line = (f"{group:<10}{figures.found:>7}{figures.true:>5}{figures.false:>5}"
                f"{figures.missed:>5}{figures.precision:>11.2f}{figures.recall:>8.2f}"
                f"{'yes' if figures.composite else 'no':>11}")
        if group == "mixed":
            # Copies are merged: a table joins a partner's copy in another representation
            # only where its own representation lacks the partner, so this row has no target.
            print(f"{line}  (for the record)")
        else:
            met = (figures.recall >= RECALL_TARGET and figures.precision >= PRECISION_TARGET
                   and figures.composite)
            all_met &= met
            print(f"{line}  recall {RECALL_TARGET}, precision >= {PRECISION_TARGET}, composite:"
                  f" {'met' if met else 'NOT met'}")
        for _, c in sorted(false_found, key=lambda item: -item[1]["score"])[:25]:
            details.append(f"  FP {group:<8} {c['score']:.2f} {c['leftPath']}."
                           f"{'/'.join(c['leftCols'])} ~ {c['rightPath']}."
                           f"{'/'.join(c['rightCols'])} {c['joinCardinality']}")
        if len(false_found) > 25:
            details.append(f"  ... {len(false_found) - 25} more false positives in {group}")
        for pair in sorted(truth - pairs, key=sorted):
            details.append(f"  FN {group:<8} " + " ~ ".join(f"{t}.{'/'.join(c)}"
                                                             for t, c in sorted(pair)))
    print("\n".join(details) if details else "  (no false positive, no miss)")

    def is_true(c: dict[str, Any]) -> bool:
        return _key((_table(c["leftPath"]), tuple(c["leftCols"])),
                    (_table(c["rightPath"]), tuple(c["rightCols"]))) in truth

    print_calibration(evidence_tally(listed, is_true))
    return all_met


def score_copies(edges: Iterable[dict[str, Any]], sources: dict[str, str]) -> bool:
    """Print, per table, the inferred lineage edges between its representations; True when
    every table's three are connected by COPY edges."""
    linked: dict[str, list[tuple[str, str, str]]] = {table: [] for table in TABLES}
    for edge in edges:
        up, down = edge["upstream"], edge["downstream"]
        table = _table(up["path"])
        if table != _table(down["path"]) or table not in linked:
            continue
        kind = str((edge.get("evidence") or {}).get("kind") or "?")
        linked[table].append((sources[up["dataSourceKey"]], sources[down["dataSourceKey"]],
                              kind))
    print("\nCopies (inferred lineage between a table's representations):")
    all_met = True
    for table in TABLES:
        copies = {(a, b) for a, b, kind in linked[table] if kind.upper() == "COPY"}
        met = _connected(copies)
        all_met &= met
        shown = ", ".join(f"{a}->{b} {kind}" for a, b, kind in linked[table]) or "none"
        print(f"  {table:<10} {len(copies)} COPY of {len(linked[table])} edges ({shown}): "
              f"{'met' if met else 'NOT met'}")
    return all_met


def _connected(pairs: set[tuple[str, str]]) -> bool:
    """Whether the three representations are one component of these edges."""
    seen = {REPRESENTATIONS[0]}
    grew = True
    while grew:
        grew = False
        for a, b in pairs:
            if (a in seen) != (b in seen):
                seen |= {a, b}
                grew = True
    return seen == set(REPRESENTATIONS)


@dataclass
class Discovered:
    """What the catalog service answered about the three loaded representations."""

    conditions: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    sources: dict[str, str]  # data source key -> representation
    seconds: float  # profiling + discovery, the three PROFILE jobs


def load(scale: str, data: Path, folder: Path) -> tuple[Path, Path, Path]:
    """TPC-H at this scale as CSV and Parquet folders (cached under ``data``) and an SQLite
    database in ``folder``."""
    started = time.monotonic()
    csv_folder = ensure_tpch(data, scale, "csv")
    parquet_folder = ensure_tpch(data, scale, "parquet")
    database = load_sqlite(csv_folder, folder / "tpch.db")
    print(f"TPC-H SF{scale}: CSV {csv_folder}, Parquet {parquet_folder}, SQLite {database} "
          f"({time.monotonic() - started:.1f} s)")
    return csv_folder, parquet_folder, database


def discover(csv_folder: Path, parquet_folder: Path, database: Path,
             folder: Path) -> Discovered:
    """Profile the three representations through PROFILE jobs of an embedded catalog server
    and read back its join conditions and inferred lineage."""
    server = EmbeddedServer(folder / "catalog", admin_password=PASSWORD,
                            data_roots=[csv_folder, parquet_folder, folder]).start()
    try:
        api = Api(server.url)
        payloads = {
            "csv": {"name": "tpch_csv", "sourceType": "FILE", "uri": str(csv_folder)},
            "parquet": {"name": "tpch_parquet", "sourceType": "FILE", "uri": str(parquet_folder)},
            "sqlite": {"name": "tpch_sqlite", "sourceType": "SQL", "uri": f"sqlite:///{database}"},
        }
        sources: dict[str, str] = {}
        clock = time.monotonic()
        for kind, payload in payloads.items():
            key = api.post("/datasource", payload)["key"]
            sources[key] = kind
            job = api.run_job(key, "PROFILE")
            print(f"  {payload['name']}: {job['message']}")
        seconds = time.monotonic() - clock
        print(f"Profiling + discovery: {seconds:.1f} s")
        return Discovered(api.every("/joincondition"),
                          api.every("/lineage", lineageType="INFERRED"), sources, seconds)
    finally:
        server.stop()


def run(scale: str, data: Path, folder: Path) -> bool:
    started = time.monotonic()
    found = discover(*load(scale, data, folder), folder)
    joins_met = score_joins(found.conditions, found.sources)
    copies_met = score_copies(found.edges, found.sources)
    met = joins_met and copies_met
    print(f"\nall targets: {'met' if met else 'NOT met'} ({time.monotonic() - started:.1f} s)")
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", default="0.01", help="TPC-H scale factor (0.01 to 0.1)")
    parser.add_argument("--data", type=Path, default=Path.home() / ".cache/catalog_nb/tpch")
    parser.add_argument("--keep", type=Path, help="keep the catalog and database here")
    args = parser.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args.scale, args.data, args.keep.resolve())
        return 0
    with tempfile.TemporaryDirectory(prefix="tpch-relations-") as folder:
        run(args.scale, args.data, Path(folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
