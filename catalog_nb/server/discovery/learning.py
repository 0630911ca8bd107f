"""Learning tags: how much a field resembles the fields people tagged (ACCEPTED associations).

For a field and a tag with ``learningEnabled``, the resemblance is the highest, over the fields
that carry an ACCEPTED association of the tag (the *examples*), of

    1 - (1 - values) * (1 - NAME_WEIGHT * name)

so the values decide and a similar name adds to them, but a name alone (at most
``NAME_WEIGHT``) stays under the default threshold (``discovery_min_learning_score``, 0.6):
``name``, ``label`` or ``dob`` mean different things in different tables.

* ``values`` is the best of two pieces of evidence from the profiling sketches
  (:mod:`catalog_nb.server.profiling.sketch`):

  - *value overlap* (rule ``learning:value-overlap``): the estimated containment of either
    field's distinct values in the other's, or their Jaccard similarity. A copy, a subset, an
    extract or a view of a tagged field holds its values. Each estimate counts at the lower
    bound of its Wilson interval (one standard deviation), so estimates resting on a handful
    of hashes count for less.
  - *value distribution* (rule ``learning:value-distribution``), for two temporal or two
    numeric fields: ``DISTRIBUTION_WEIGHT * (1 - KS)``, KS the Kolmogorov-Smirnov distance of
    the two raw samples. Two birth-date columns of different people share few exact days but
    spread over the same decades; hiring dates or order times do not.

* ``name`` (rule ``learning:name``) compares field names: the Dice coefficient of their tokens
  (split at non-alphanumerics and camelCase) or the trigram similarity of the names without
  separators (``birthdate`` and ``birth_date`` are one name), whichever is higher.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from catalog_nb.server.profiling.sketch import ValueSketch

NAME_WEIGHT = 0.5
DISTRIBUTION_WEIGHT = 0.9
#: Standard deviations below an overlap estimate that it is taken at (``lower_bound``).
WILSON_Z = 1.0
#: Fewest sampled values a distribution comparison needs on each side.
MIN_DISTRIBUTION_VALUES = 5
#: Least evidence for a rule to be named in ``rules``.
RULE_FLOOR = 0.3

_TEMPORAL = {"DATE", "TIMESTAMP"}
_NUMERIC = {"LONG", "DOUBLE"}
_TOKEN = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?")


def name_tokens(name: str) -> list[str]:
    """Lower-case tokens of a field name: ``customerEmail_2`` -> ``customer, email, 2``."""
    return [token.lower() for token in _TOKEN.findall(name)]


def _trigrams(text: str) -> set[str]:
    return {text[i:i + 3] for i in range(len(text) - 2)} if len(text) >= 3 else {text}


def name_similarity(a: str, b: str) -> float:
    """How alike two field names are, 0..1 (see the module docstring)."""
    ta, tb = name_tokens(a), name_tokens(b)
    if not ta or not tb:
        return 0.0
    dice = 2 * len(set(ta) & set(tb)) / (len(set(ta)) + len(set(tb)))
    ga, gb = _trigrams("".join(ta)), _trigrams("".join(tb))
    return max(dice, len(ga & gb) / len(ga | gb))


def _ordinal(text: str, family: str) -> float | None:
    if family == "numeric":
        try:
            number = float(text)
        except ValueError:
            return None
        return number if np.isfinite(number) else None
    found = _ISO.match(text.strip())
    if found is None:
        return None
    year, month, day, hour, minute, second = (int(g) if g else 0 for g in found.groups())
    try:
        days = dt.date(year, month, day).toordinal()
    except ValueError:
        return None
    return days + (hour * 3600 + minute * 60 + second) / 86_400


def family(data_type: str) -> str | None:
    """``temporal``, ``numeric`` or None: which fields' distributions can be compared."""
    if data_type in _TEMPORAL:
        return "temporal"
    if data_type in _NUMERIC:
        return "numeric"
    return None


@dataclass
class FieldView:
    """What discovery knows of one profiled field."""

    resource_key: str
    resource_path: str
    name: str
    data_type: str
    sketch: ValueSketch | None
    _ordered: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @cached_property
    def sample(self) -> list[str]:
        return self.sketch.sample if self.sketch is not None else []

    def ordered(self, kind: str) -> np.ndarray:
        """The sample as sorted numbers (dates as day ordinals), unparseable values dropped."""
        if kind not in self._ordered:
            values = [v for v in (_ordinal(t, kind) for t in self.sample) if v is not None]
            self._ordered[kind] = np.sort(np.asarray(values, dtype=float))
        return self._ordered[kind]


def lower_bound(share: float, support: int, z: float = WILSON_Z) -> float:
    """The Wilson score lower bound of a share measured on ``support`` hashes (0 for none).

    An estimate resting on 2 hashes (a field of 50 names against one of 3,000: few of the small
    field's hashes fall where the large sketch is complete) counts as 0.67 rather than 1.0,
    one resting on 256 as nearly itself.
    """
    if support <= 0 or share <= 0:
        return 0.0
    n, z2 = float(support), z * z
    centre = share + z2 / (2 * n)
    spread = z * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z2 / n))


def overlap(a: ValueSketch, b: ValueSketch) -> float:
    """Best of containment either way and Jaccard, each taken at its Wilson lower bound."""
    estimates = (a.containment_in(b), b.containment_in(a), a.jaccard(b))
    return max(lower_bound(e.value, e.sample_size) for e in estimates)


def distribution(a: FieldView, b: FieldView) -> float:
    """``1 - KS`` of two temporal or two numeric fields' samples (0 for other pairs)."""
    kind = family(a.data_type)
    if kind is None or kind != family(b.data_type):
        return 0.0
    xa, xb = a.ordered(kind), b.ordered(kind)
    if len(xa) < MIN_DISTRIBUTION_VALUES or len(xb) < MIN_DISTRIBUTION_VALUES:
        return 0.0
    grid = np.concatenate([xa, xb])
    cdf_a = np.searchsorted(xa, grid, side="right") / len(xa)
    cdf_b = np.searchsorted(xb, grid, side="right") / len(xb)
    return float(1.0 - np.max(np.abs(cdf_a - cdf_b)))


@dataclass(frozen=True)
class Resemblance:
    """A field's resemblance to a tag's examples, and the rules that made it."""

    score: float
    rules: tuple[str, ...]


def resemble(candidate: FieldView, example: FieldView) -> Resemblance:
    """The resemblance of ``candidate`` to one example field (module docstring)."""
    shared = 0.0
    if candidate.sketch is not None and example.sketch is not None:
        shared = overlap(candidate.sketch, example.sketch)
    spread = DISTRIBUTION_WEIGHT * distribution(candidate, example)
    values = max(shared, spread)
    name = name_similarity(candidate.name, example.name)
    score = 1.0 - (1.0 - values) * (1.0 - NAME_WEIGHT * name)
    value_rule = "learning:value-overlap" if shared >= spread else "learning:value-distribution"
    rules = []
    if values >= RULE_FLOOR:
        rules.append(value_rule)
    if name >= 0.5:
        rules.append("learning:name")
    if not rules:  # weak evidence all round (a low threshold): name what weighed most
        rules.append("learning:name" if NAME_WEIGHT * name > values else value_rule)
    return Resemblance(score, tuple(rules))


def best_resemblance(candidate: FieldView, examples: Sequence[FieldView]) -> Resemblance | None:
    """The highest resemblance to any example other than the candidate itself (None: none)."""
    best: Resemblance | None = None
    for example in examples:
        if (example.resource_key, example.name) == (candidate.resource_key, candidate.name):
            continue
        found = resemble(candidate, example)
        if best is None or found.score > best.score:
            best = found
    return best


class Examples:
    """The example fields of one learning tag, with a shortcut for fields unlike them all.

    Comparing every field of a large catalog with every example costs sketch operations per
    pair; most fields share no value with any example and are no temporal or numeric field
    either, so only names can make them resemble one. The union of the examples' hashes tells
    those apart at the cost of one lookup.
    """

    def __init__(self, views: Sequence[FieldView]) -> None:
        self.views = list(views)
        hashes = [v.sketch.hashes for v in self.views if v.sketch is not None]
        self._hashes = np.unique(np.concatenate(hashes)) if hashes else np.empty(0, np.uint64)

    def __bool__(self) -> bool:
        return bool(self.views)

    def best(self, candidate: FieldView) -> Resemblance | None:
        """What :func:`best_resemblance` answers, faster for fields unlike every example."""
        shares_values = candidate.sketch is not None and bool(
            np.isin(candidate.sketch.hashes, self._hashes, assume_unique=True).any())
        if shares_values or family(candidate.data_type) is not None:
            return best_resemblance(candidate, self.views)
        others = [v for v in self.views
                  if (v.resource_key, v.name) != (candidate.resource_key, candidate.name)]
        if not others:
            return None
        name = max(name_similarity(candidate.name, v.name) for v in others)
        return Resemblance(NAME_WEIGHT * name, ("learning:name",))
