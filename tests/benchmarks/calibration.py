"""The calibration table of join scores, printed by the join benchmarks.

A discovered condition's score is the measured precision of its evidence class
(``discovery/join_scores.py``: ``stats.evidence`` names the class). Each benchmark counts, per
class, its discovered conditions and the true ones among them, and prints them next to the
counts the scores were made from (``join_scores.MEASURED``); the two benchmarks' counts added
up are what ``MEASURED`` should hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from catalog_nb.server.discovery.join_scores import CALIBRATION, MEASURED, PRIORS

Tally = dict[str, tuple[int, int]]


def tally(conditions: Iterable[dict[str, Any]], is_true: Callable[[dict[str, Any]], bool]
          ) -> Tally:
    """(true, found) discovered conditions per evidence class (declared ones left out)."""
    counts: dict[str, list[int]] = {name: [0, 0] for name in PRIORS}
    for condition in conditions:
        if condition["joinStatState"] != "DECLARED":
            counted = counts.setdefault(condition["stats"].get("evidence") or "?", [0, 0])
            counted[0] += bool(is_true(condition))
            counted[1] += 1
    return {name: (true, found) for name, (true, found) in counts.items()}


def print_calibration(found: Tally) -> None:
    """The table: per class, this run's true/found and share, the score the class gets and
    the counts it was made from."""
    print("\nScore calibration (discovered conditions per evidence class, docs/relations-api.md"
          " \"Scores\"):")
    print(f"{'class':<15}{'found':>7}{'true':>6}{'share':>7}{'score':>7}   made from")
    for name, (true, count) in found.items():
        share = f"{true / count:.2f}" if count else "-"
        made = MEASURED.get(name)
        print(f"{name:<15}{count:>7}{true:>6}{share:>7}{CALIBRATION.get(name, 0.0):>7.2f}   "
              + (f"{made[0]}/{made[1]} (both benchmarks)" if made else "-"))
    above = [(t, c) for name, (t, c) in found.items() if CALIBRATION.get(name, 0.0) >= 0.9]
    true, count = sum(t for t, _ in above), sum(c for _, c in above)
    if count:
        print(f"conditions of the classes scoring 0.9 or more: {true}/{count} true "
              f"({true / count:.2f})")
