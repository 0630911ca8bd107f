"""The score of a discovered join condition: the measured precision of its evidence class.

A score is meant to be read as a probability: 0.9 means that about nine in ten conditions of
that score were true on the benchmarks the classes were measured on (TPC-H in three
representations and the demo lake; ``docs/relations-api.md``, "Scores").
"""

from __future__ import annotations

from catalog_nb.server.discovery.join_names import RANGE_NAME_SIMILARITY

#: Containment of the foreign side from which it counts as contained in the key.
CONTAINED = 0.95
#: Prior precision of each evidence class (:func:`evidence_class`), what the class's evidence
#: is worth before any data: names equal and values contained is near proof; partial
#: containment or disagreeing names much less.
PRIORS = {"namesEqual": 0.95, "namesAgree": 0.85, "thinSample": 0.75, "partial": 0.8,
          "namesDisagree": 0.6}
#: (true, found) discovered conditions of each class on the benchmarks: TPC-H SF0.01 in three
#: representations (``tests.benchmarks.tpch_relations``) and the demo lake at scale 1, seed 7
#: (``tests.benchmarks.relation_quality``), against issue 14's truth; both print these counts.
MEASURED = {"namesEqual": (48, 48), "namesAgree": (14, 14), "thinSample": (0, 0),
            "partial": (1, 4), "namesDisagree": (4, 4)}
#: Weight of a class's prior, in conditions: the classes are small, so a few conditions must
#: not swing the score to 0 or 1.
PRIOR_WEIGHT = 10
#: The score of each class: its measured precision smoothed toward its prior,
#: ``(true + PRIOR_WEIGHT * prior) / (found + PRIOR_WEIGHT)``. See docs/relations-api.md
#: ("Scores") for the threshold this supports.
CALIBRATION = {name: round((MEASURED[name][0] + PRIOR_WEIGHT * prior)
                           / (MEASURED[name][1] + PRIOR_WEIGHT), 2)
               for name, prior in PRIORS.items()}
#: Least score of the conditions a join graph shows by default (about nine in ten true).
DEFAULT_MIN_SCORE = 0.85
#: Sample size at which the estimate counts fully in the score.
FULL_SAMPLE = 64
#: Least number of hashes a containment estimate must rest on (single columns and column
#: pairs alike), unless both sketches hold every value: then it is exact.
MIN_SAMPLE = 8


def evidence_class(containment: float, similarity: float, sample: int, exact: bool) -> str:
    """The class of evidence behind a discovered condition (see :data:`CALIBRATION`):
    ``containment`` is the foreign side's containment in the key."""
    if similarity < RANGE_NAME_SIMILARITY:
        return "namesDisagree"
    if not exact and sample < FULL_SAMPLE:
        return "thinSample"
    if containment < CONTAINED:
        return "partial"
    return "namesEqual" if similarity >= 0.99 else "namesAgree"


def calibrated(containment: float, similarity: float, sample: int, exact: bool) -> float:
    """The score of a discovered condition: the measured precision of its evidence class
    (:data:`CALIBRATION`), lowered a little as the foreign side's containment falls so that
    candidates of one class are ordered by it."""
    base = CALIBRATION[evidence_class(containment, similarity, sample, exact)]
    return max(0.0, base - 0.05 * (1.0 - containment))
