"""The score of a discovered join condition: the measured precision of its evidence class.

A score is meant to be read as a probability: 0.9 means that about nine in ten conditions of
that score were true on the benchmarks the classes were measured on (TPC-H in three
representations and the demo lake; ``docs/relations-api.md``, "Scores").
"""

from __future__ import annotations

from catalog_nb.server.discovery.join_names import RANGE_NAME_SIMILARITY

#: Containment of the foreign side from which it counts as contained in the key.
CONTAINED = 0.95
#: Score of each evidence class (:func:`evidence_class`): the share of true conditions
#: among those discovered on TPC-H SF0.01 (three representations) and the demo lake (scale
#: 1, seed 7), smoothed toward a prior because the classes are small: (true + 10 * prior) /
#: (found + 10), priors 0.95, 0.85, 0.75, 0.8, 0.6. Measured (true/found): namesEqual 48/48,
#: namesAgree 14/14, thinSample 0/0, partial 4/4, namesDisagree 4/4. See
#: docs/relations-api.md ("Scores") for the threshold this supports.
CALIBRATION = {"namesEqual": 0.99, "namesAgree": 0.94, "thinSample": 0.75, "partial": 0.86,
               "namesDisagree": 0.71}
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
