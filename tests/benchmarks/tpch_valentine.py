"""Benchmark: Valentine's schema matchers vs our join discovery, on the same TPC-H tables.

    python -m tests.benchmarks.tpch_valentine [--scale 0.01] [--data DIR] [--keep DIR]
        [--methods Coma,Cupid,...] [--threshold 0.5]

The data, its three representations and the truth are :mod:`.tpch_relations`' (TPC-H from
``tpchgen-cli`` as CSV, as Parquet, and as an SQLite database without declared keys; its nine
single-column foreign keys and the composite ``lineitem(l_partkey, l_suppkey) -> partsupp``),
and so is the scoring (:func:`.tpch_relations.tally`). In one run:

* **ours**: the three representations are profiled by PROFILE jobs of an embedded catalog
  server and ``GET /joincondition`` is scored, exactly as ``tpch_relations`` does;
* **Valentine** (``valentine``, the matching-methods benchmark of ICDE 2021): each table of
  each representation becomes a pandas frame read by pandas' own readers (24 frames at the 8
  tables; Parquet decimals as float64, see :mod:`.valentine_worker`), and ``valentine_match``
  runs each method over every pair of frames (276 pairs; DistributionBased one pair of frames
  at a time, see :mod:`.valentine_worker`):
  Coma (schema + instances; Valentine >= 1.0 ships a pure Python port of COMA 3.0, so it runs
  whether or not Java is installed), Cupid, DistributionBased, JaccardDistanceMatcher (exact
  value equality) and SimilarityFlooding, all with Valentine's defaults otherwise.

**From column matches to join predictions** (one rule for every method): Valentine scores
column pairs of two frames. Per pair of frames, the matches are made one to one greedily
(highest score first, each column used once, as a join condition pairs each column once), and
those scoring at least a threshold are predicted joins of one column each. The fixed threshold
is 0.5 (``--threshold``), the middle of Valentine's [0, 1] scale, chosen before looking. Two
more rows per method are thresholds chosen in hindsight, over every score the method produced:
"best", the one maximising its F1 across representations, and "best/group", each group of
sides (each representation, mixed, all) at its own best threshold, which is as generous to
Valentine as it gets (the thresholds are printed).
Valentine has no multi-column output, so where both column pairs of the composite key are
predicted on one pair of frames they count as the composite key found, each as a true
positive; one of them alone is an N:M join on part or supplier alone and is false, as it would
be for us.

**Copies**: the frames of one table in two representations are one table, so Valentine's
matches between them (``orders.o_orderkey`` of the CSV with that of the Parquet file, and every
other column with its copy) are false positives, as a join condition between copies is for
us: copies are lineage. They are counted in the "mixed" and "all" rows and shown apart in the
``copies`` column; the per-representation rows hold no copy at all.

Valentine runs in a virtual environment of its own under ``~/.cache/catalog_nb`` (built on the
first run from the package registry): it requires ``python-dateutil<3`` and the project's venv
has 4.x, which installing it there would downgrade. Its Coma and Cupid read NLTK's English
stopwords (and Cupid WordNet 3.0) from ``~/nltk_data``; Valentine downloads them on first use
and, where that fails (no network), the method is reported as not run with the reason.

Figures are precision, recall (of the single-column foreign keys) and F1 per group of sides,
the composite key, and seconds: ours for the three PROFILE jobs (profiling + discovery on the
service), Valentine's for ``valentine_match`` on frames already in memory. The machine's load
average is printed before and after. Not a test: run it by hand and read the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.benchmarks.profile_tpch import TABLES
from tests.benchmarks.tpch_relations import (
    FOREIGN_KEYS,
    GROUPS,
    Side,
    Tally,
    _key,
    _table,
    discover,
    group_of,
    load,
    tally,
)

METHODS = ("Coma", "Cupid", "DistributionBased", "JaccardDistanceMatcher", "SimilarityFlooding")
VENV = Path.home() / ".cache/catalog_nb/valentine-venv"
# Lower bounds only: the API used (valentine_match over a list of frames, df_names, ColumnPair
# keys, pure Python Coma) is Valentine 1.0's.
REQUIREMENTS = ("valentine>=1.0,<2", "pyarrow>=16")
REPO = Path(__file__).resolve().parents[2]

Match = tuple[str, str, str, str, float]  # frame, column, frame, column, score


def ensure_venv(venv: Path = VENV) -> Path:
    """Valentine's own venv (created and filled on first use); its Python executable."""
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"Creating Valentine's venv in {venv} (once) ...", flush=True)
        subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv",
                        str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS],
                       check=True)
    return python


def run_valentine(python: Path, csv_folder: Path, parquet_folder: Path, database: Path,
                  methods: list[str], folder: Path) -> dict[str, Any]:
    """Run :mod:`.valentine_worker` in Valentine's venv; its answer per method."""
    spec = folder / "valentine-spec.json"
    out = folder / "valentine-matches.json"
    spec.write_text(json.dumps({"csv": str(csv_folder), "parquet": str(parquet_folder),
                                "sqlite": str(database), "tables": TABLES,
                                "methods": methods}))
    subprocess.run([str(python), "-W", "ignore", "-m", "tests.benchmarks.valentine_worker",
                    str(spec), str(out)], cwd=REPO, check=True)
    answer: dict[str, Any] = json.loads(out.read_text())
    return answer


def one_to_one(matches: Iterable[Match]) -> list[Match]:
    """Per pair of frames, the greedy one-to-one subset: best score first, each column once."""
    by_pair: dict[tuple[str, str], list[Match]] = defaultdict(list)
    for match in matches:
        by_pair[(match[0], match[2])].append(match)
    kept: list[Match] = []
    for candidates in by_pair.values():
        used: set[tuple[str, str]] = set()
        for match in sorted(candidates, key=lambda m: (-m[4], m[1], m[3])):
            left, right = (match[0], match[1]), (match[2], match[3])
            if left not in used and right not in used:
                used |= {left, right}
                kept.append(match)
    return kept


def _split(frame: str) -> tuple[str, str]:
    """``csv:orders`` -> (``csv``, ``orders``)."""
    representation, table = frame.split(":", 1)
    return representation, _table(table)


def predictions(kept: list[Match], threshold: float) -> dict[str, list[frozenset[Side]]]:
    """The predicted joins at this threshold, as :func:`tpch_relations._key` pairs, per group
    of sides and "all"; composite key components found together become the composite."""
    chosen = [m for m in kept if m[4] >= threshold]
    predicted: dict[tuple[str, str], set[frozenset[Side]]] = defaultdict(set)
    keys: list[tuple[tuple[str, str], frozenset[Side]]] = []
    for left_frame, left_col, right_frame, right_col, _ in chosen:
        key = _key((_split(left_frame)[1], (left_col,)), (_split(right_frame)[1], (right_col,)))
        predicted[(left_frame, right_frame)].add(key)
        keys.append(((left_frame, right_frame), key))
    composites = [(t, c, rt, rc) for t, c, rt, rc in FOREIGN_KEYS if len(c) > 1]
    groups: dict[str, list[frozenset[Side]]] = defaultdict(list)
    for frames, key in keys:
        for table, cols, ref_table, ref_cols in composites:
            parts = {_key((table, (c,)), (ref_table, (r,))) for c, r in zip(cols, ref_cols,
                                                                              strict=True)}
            if key in parts and parts <= predicted[frames]:
                key = _key((table, cols), (ref_table, ref_cols))
        group = group_of(_split(frames[0])[0], _split(frames[1])[0])
        groups[group].append(key)
        groups["all"].append(key)
    return groups


def copies(found: list[frozenset[Side]]) -> int:
    """How many predictions pair a table with itself (a copy in another representation)."""
    return sum(len(key) == 1 for key in found)


@dataclass
class Row:
    """One method under one rule: its figures per group and its time."""

    name: str
    rule: str
    by_group: dict[str, Tally]
    copy_matches: int
    seconds: float
    thresholds: dict[str, float] = field(default_factory=dict)  # per group, when they differ


def valentine_rows(method: str, answer: dict[str, Any], threshold: float) -> list[Row]:
    """The method's figures at the fixed threshold, at its best threshold in hindsight across
    representations, and at each group's own best threshold in hindsight."""
    kept = one_to_one(tuple(m) for m in answer["matches"])
    seconds = answer["seconds"]
    figures: dict[float, dict[str, Tally]] = {}
    copy_matches: dict[float, int] = {}
    for tau in sorted({threshold} | {m[4] for m in kept}):
        groups = predictions(kept, tau)
        figures[tau] = {g: tally(groups.get(g, [])) for g in GROUPS}
        copy_matches[tau] = copies(groups.get("all", []))

    def best(group: str) -> float:
        # Ties go to the higher threshold: fewer predictions for the same F1.
        return max(figures, key=lambda tau: (figures[tau][group].f1, tau))

    overall = best("all")
    per_group = {g: best(g) for g in GROUPS}
    return [
        Row(method, f"fixed {threshold:.3f}", figures[threshold], copy_matches[threshold],
            seconds),
        Row(method, f"best {overall:.3f}", figures[overall], copy_matches[overall], seconds),
        Row(method, "best/group", {g: figures[t][g] for g, t in per_group.items()},
            copy_matches[per_group["all"]], seconds, per_group),
    ]


def print_rows(rows: list[Row]) -> None:
    """Across representations in full, then P/R/F1 per group of sides."""
    print("\nAcross representations (every pair of the 24 frames; matches between copies of "
          "one table are false positives):")
    print(f"{'method':<24}{'rule':<14}{'found':>7}{'TP':>6}{'FP':>6}{'copies':>8}"
          f"{'precision':>11}{'recall':>8}{'F1':>7}{'composite':>11}{'seconds':>9}")
    for r in (r for r in rows if not r.thresholds):
        a = r.by_group["all"]
        print(f"{r.name:<24}{r.rule:<14}{a.found:>7}{a.true:>6}{a.false:>6}{r.copy_matches:>8}"
              f"{a.precision:>11.2f}{a.recall:>8.2f}{a.f1:>7.2f}"
              f"{'yes' if a.composite else 'no':>11}{r.seconds:>9.1f}")
    print("\nPer group of sides: precision / recall / F1 (composite found: +); ours reports no "
          "mixed condition: a join is reported within each representation, not across copies")
    print(f"{'method':<24}{'rule':<14}" + "".join(f"{g:>18}" for g in GROUPS))
    for r in rows:
        cells = "".join(
            f"{t.precision:>7.2f}/{t.recall:.2f}/{t.f1:.2f}{'+' if t.composite else ' '}"
            if t.found else f"{'none found':>18}" for t in (r.by_group[g] for g in GROUPS))
        print(f"{r.name:<24}{r.rule:<14}{cells}")
    notes = [f"  {r.name} best/group thresholds: " + ", ".join(f"{g} {t:.3f}" for g, t in
                                                               r.thresholds.items())
             for r in rows if r.thresholds]
    if notes:
        print("\n".join(notes))


def run(scale: str, data: Path, folder: Path, methods: list[str], threshold: float) -> None:
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    java = shutil.which("java")
    print(f"Java: {java or 'not installed'}; not needed: Valentine >= 1.0's Coma is a pure "
          f"Python port of COMA 3.0")
    csv_folder, parquet_folder, database = load(scale, data, folder)

    print("\nOurs: three PROFILE jobs on an embedded catalog server")
    found = discover(csv_folder, parquet_folder, database, folder)
    ours: dict[str, list[frozenset[Side]]] = defaultdict(list)
    for c in found.conditions:
        key = _key((_table(c["leftPath"]), tuple(c["leftCols"])),
                   (_table(c["rightPath"]), tuple(c["rightCols"])))
        group = group_of(found.sources[c["leftSourceId"]], found.sources[c["rightSourceId"]])
        ours[group].append(key)
        ours["all"].append(key)
    rows = [Row("ours (catalog_nb)", "as served", {g: tally(ours.get(g, [])) for g in GROUPS},
                copies(ours["all"]), found.seconds)]

    print(f"\nValentine {', '.join(methods)} over {len(TABLES) * 3} frames "
          f"(venv {VENV}):", flush=True)
    answers = run_valentine(ensure_venv(), csv_folder, parquet_folder, database, methods,
                            folder)
    not_run: list[str] = []
    for method in methods:
        answer = answers.get(method, {"error": "no answer"})
        if "error" in answer:
            not_run.append(f"  {method}: not run - {answer['error']}")
            continue
        rows += valentine_rows(method, answer, threshold)
    print_rows(rows)
    if not_run:
        print("\n" + "\n".join(not_run))
    best = max((r for r in rows[1:] if not r.thresholds), key=lambda r: r.by_group["all"].f1,
               default=None)
    if best is not None:
        a, o = best.by_group["all"], rows[0].by_group["all"]
        print(f"\nBest Valentine method (hindsight F1 across representations): {best.name} "
              f"at {best.rule}: precision {a.precision:.2f}, recall {a.recall:.2f}, F1 "
              f"{a.f1:.2f}; ours: precision {o.precision:.2f}, recall {o.recall:.2f}, F1 "
              f"{o.f1:.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", default="0.01", help="TPC-H scale factor (0.01 to 0.1)")
    parser.add_argument("--data", type=Path, default=Path.home() / ".cache/catalog_nb/tpch")
    parser.add_argument("--keep", type=Path, help="keep the catalog, database and matches here")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"comma-separated, of {', '.join(METHODS)}")
    parser.add_argument("--threshold", type=float, default=0.5,
                        help="fixed score threshold for every Valentine method")
    args = parser.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    if unknown := set(methods) - set(METHODS):
        parser.error(f"unknown methods: {', '.join(sorted(unknown))}")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args.scale, args.data, args.keep.resolve(), methods, args.threshold)
        return 0
    with tempfile.TemporaryDirectory(prefix="tpch-valentine-") as folder:
        run(args.scale, args.data, Path(folder), methods, args.threshold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
