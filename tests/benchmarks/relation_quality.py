"""Benchmark: discovered joins and inferred lineage on the demo lake, scored against its truth.

    python -m tests.benchmarks.relation_quality [--scale 1.0] [--seed 7] [--keep DIR]

Builds the demo lake (``catalog_nb.demo.lake.build_lake``), starts the catalog service in this
process (``EmbeddedServer``) with the lake as its data root, registers the lake's two sources
and profiles them through ``POST /job`` (each PROFILE job ends with relationship discovery),
then reads what the service answers over HTTP and scores it:

* **joins** (``GET /joincondition``) against ``truth.joins``, as issue 14 defines a join (a
  key side holding the other side's values; copies are lineage; one join per pair of
  partners): each condition's sides are named by their copy groups (the truth's derivations,
  ``LakeTruth.original``), so a condition matches a truth join when it names the same two
  partners and column lists, in either orientation; the conditions naming one pair of partners
  count once, and a condition between two copies of one table is a false positive. Declared
  keys and discovered ones are scored apart (declared against the truth joins marked
  ``declared_fk``, discovered against the rest), precision and recall also per score floor;
  the cardinality of each true positive is checked (flipped to the truth's orientation);
* **inferred lineage** (``GET /lineage``, ``lineageType=INFERRED``) against
  ``truth.derivations``: an edge matches when it goes from the derivation's source to the
  derived resource (direction matters), and an edge the other way is reported as reversed;
* **view lineage** (``lineageType=FACTUAL``, table level) against ``truth.views``.

Last, each discovery step is run once more directly over the service's store and timed.
Prints tables, F1 figures and every false positive and miss by name. Not a test: run it by
hand and read the figures.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from catalog_nb.demo.lake import build_lake
from catalog_nb.demo.truth import JoinTruth, LakeTruth
from catalog_nb.server.discovery.relations import STEPS
from catalog_nb.server.store import Store
from tests.benchmarks.calibration import print_calibration, tally
from tests.benchmarks.harness import lake_main, profiled_demo

Side = tuple[str, tuple[str, ...]]
Pair = frozenset[Side]
Edge = tuple[str, str]  # (upstream, downstream) resource names as the truth names them
SCORE_FLOORS = (0.0, 0.6, 0.7, 0.8, 0.9)
_FLIP = {"1:N": "N:1", "N:1": "1:N"}


def _pr(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _row(label: str, truth: int, found: int, tp: int) -> tuple[float, float, float]:
    precision, recall, f1 = _pr(tp, found - tp, truth - tp)
    print(f"{label:<24}{truth:>6}{found:>7}{tp:>5}{found - tp:>5}{truth - tp:>5}"
          f"{precision:>11.2f}{recall:>8.2f}{f1:>7.3f}")
    return precision, recall, f1


def _header(first: str) -> None:
    print(f"{first:<24}{'truth':>6}{'found':>7}{'TP':>5}{'FP':>5}{'FN':>5}"
          f"{'precision':>11}{'recall':>8}{'F1':>7}")


def _pair(left: str, left_cols: Iterable[str], right: str, right_cols: Iterable[str]) -> Pair:
    return frozenset({(left, tuple(left_cols)), (right, tuple(right_cols))})


def _partners(truth: LakeTruth, c: dict[str, Any]) -> Pair:
    """The condition's two sides named by their copy groups (:meth:`LakeTruth.original`)."""
    return frozenset({truth.original(c["leftPath"], c["leftCols"]),
                      truth.original(c["rightPath"], c["rightCols"])})


def score_joins(truth: LakeTruth, listed: list[dict[str, Any]]) -> float:
    """Print the join tables; returns the F1 of all joins (declared and discovered).

    Scored as issue 14 defines a join, as the truth lists them: each condition's sides are
    named by their copy groups, so the conditions naming one pair of partners (the orders of a
    folder and of the database, each with its customers) are one join, and a condition
    between two copies of one table is a false positive (copies are lineage)."""
    expected: dict[Pair, JoinTruth] = {
        _pair(j.left, j.left_columns, j.right, j.right_columns): j for j in truth.joins}
    found: dict[Pair, dict[str, Any]] = {}
    between_copies = []
    for c in sorted(listed, key=lambda c: -c["score"]):
        pair = _partners(truth, c)
        if len(pair) == 1 or (len({side[0] for side in pair}) == 1
                              and c["joinStatState"] != "DECLARED"):
            between_copies.append(c)
            continue
        found.setdefault(pair, c)  # the best condition of each pair of partners
    declared_truth = {p for p, j in expected.items() if j.declared_fk}
    other_truth = set(expected) - declared_truth
    declared = {p for p, c in found.items() if c["joinStatState"] == "DECLARED"}
    discovered = set(found) - declared
    print(f"\nJoins: {len(expected)} in the truth ({len(declared_truth)} declared foreign keys),"
          f" {len(listed)} answered by GET /joincondition: {len(found)} pairs of partners,"
          f" {len(between_copies)} between copies of one table")
    _header("origin")
    _row("declared", len(declared_truth), len(declared), len(declared & declared_truth))
    _row("discovered", len(other_truth), len(discovered) + len(between_copies),
         len(discovered & other_truth))
    _, _, f1 = _row("all", len(expected), len(found) + len(between_copies),
                    len(set(found) & set(expected)))
    print("\nDiscovered joins by score floor:")
    _header("score >=")
    for floor in SCORE_FLOORS:
        kept = {p for p in discovered if found[p]["score"] >= floor}
        copies = sum(1 for c in between_copies if c["score"] >= floor)
        _row(f"{floor:.1f}", len(other_truth), len(kept) + copies, len(kept & other_truth))
    right = wrong = 0
    mistakes = []
    for pair in set(found) & set(expected):
        j, c = expected[pair], found[pair]
        ours = c["joinCardinality"]
        if truth.original(c["leftPath"], c["leftCols"]) != (j.left, j.left_columns):
            ours = _FLIP.get(ours, ours)
        if ours == j.cardinality:
            right += 1
        else:
            wrong += 1
            mistakes.append(f"  cardinality {j.left}.{'/'.join(j.left_columns)} -> {j.right}."
                            f"{'/'.join(j.right_columns)}: truth {j.cardinality}, found {ours}")
    total = right + wrong
    print(f"\nCardinality of true positives: {right}/{total} right"
          f" ({right / total if total else 0:.2f})")
    details = mistakes
    for c in between_copies:
        details.append(f"  FP copies    {c['score']:.2f} {c['leftPath']}.{'/'.join(c['leftCols'])}"
                       f" ~ {c['rightPath']}.{'/'.join(c['rightCols'])}")
    for pair in sorted(set(found) - set(expected), key=lambda p: -found[p]["score"]):
        c = found[pair]
        details.append(f"  FP {c['joinStatState'].lower():<10} {c['score']:.2f} "
                       f"{c['leftPath']}.{'/'.join(c['leftCols'])} ~ "
                       f"{c['rightPath']}.{'/'.join(c['rightCols'])} {c['joinCardinality']}")
    for pair in sorted(set(expected) - set(found), key=lambda p: sorted(p)):
        j = expected[pair]
        details.append(f"  FN {'declared' if j.declared_fk else 'discover':<10} {j.left}."
                       f"{'/'.join(j.left_columns)} ~ {j.right}.{'/'.join(j.right_columns)} "
                       f"(containment {j.left_in_right:.2f} / {j.right_in_left:.2f})")
    print("\n".join(details) if details else "  (no false positive, no miss)")
    print_calibration(tally(listed, lambda c: _partners(truth, c) in expected))
    return f1


def _edges(listed: list[dict[str, Any]]) -> dict[Edge, dict[str, Any]]:
    return {(e["upstream"]["path"], e["downstream"]["path"]): e for e in listed}


def score_lineage(label: str, expected: set[Edge], listed: list[dict[str, Any]]) -> float:
    """Print one lineage table (direction matters); returns its F1."""
    found = _edges(listed)
    print(f"\n{label}: {len(expected)} in the truth, {len(found)} answered by GET /lineage")
    _header("edges")
    _, _, f1 = _row("all", len(expected), len(found), len(set(found) & expected))
    details = []
    for edge in sorted(set(found) - expected):
        reversed_ = (edge[1], edge[0]) in expected
        details.append(f"  FP {edge[0]} -> {edge[1]}"
                       f"{' (reversed)' if reversed_ else ''} score {found[edge]['score']}")
    details += [f"  FN {up} -> {down}" for up, down in sorted(expected - set(found))]
    print("\n".join(details) if details else "  (no false positive, no miss)")
    return f1


def time_steps(store: Store, settings: Any) -> None:
    """Run each discovery step once more over the store and print how long it took."""
    print("\nDiscovery steps run again over the whole catalog:")
    for name, step in STEPS:
        clock = time.perf_counter()
        try:
            report = step(store, settings)
        except Exception as exc:  # noqa: BLE001 - a failing step is a figure to read too
            print(f"  {name:<14} FAILED after {time.perf_counter() - clock:.3f} s: {exc}")
            continue
        print(f"  {name:<14}{time.perf_counter() - clock:>8.3f} s  {report.summary}")


def run(scale: float, seed: int, folder: Path) -> None:
    started = time.monotonic()
    lake = folder / "lake"
    truth = build_lake(lake, seed=seed, scale=scale)
    columns = sum(len(r.columns) for r in truth.resources)
    print(f"Demo lake: scale {scale}, seed {seed}, {len(truth.resources)} resources, "
          f"{columns} columns, {len(truth.joins)} joins, {len(truth.derivations)} derivations, "
          f"{len(truth.views)} views ({time.monotonic() - started:.1f} s)")
    with profiled_demo(lake, folder) as (server, api, _keys):
        listed = api.every("/joincondition")
        join_f1 = score_joins(truth, listed)
        inferred = {(d.source, d.derived) for d in truth.derivations}
        lineage_f1 = score_lineage("Inferred lineage (INFERRED)", inferred,
                                   api.every("/lineage", lineageType="INFERRED"))
        views = {(table, v.view) for v in truth.views for table in v.tables}
        view_f1 = score_lineage("View lineage (FACTUAL, table level)", views,
                                api.every("/lineage", lineageType="FACTUAL"))
        time_steps(server.app.state.store, server.settings)
        print(f"\nF1: joins {join_f1:.3f}, inferred lineage {lineage_f1:.3f}, "
              f"view lineage {view_f1:.3f} (total {time.monotonic() - started:.1f} s)")

def main(argv: list[str] | None = None) -> int:
    return lake_main(run, __doc__.split("\n")[0], "relation-quality-", argv)


if __name__ == "__main__":
    sys.exit(main())
