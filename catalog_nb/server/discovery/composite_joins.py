"""Composite join conditions: a pair of columns contained in another table's composite key.

Profiling (``profiling/keys.py``) infers pairs of columns unique together while neither is
alone and sketches their value pairs, and sketches the pairs of each table's identifier
columns; the sketches ride on the first column's sketch (``ValueSketch.pairs``). Here a pair
whose value pairs are contained in a composite key of another resource, each column named like
the key column it maps onto, becomes one condition of two columns
(``lineitem(l_partkey, l_suppkey) -> partsupp(ps_partkey, ps_suppkey)``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from catalog_nb.server.discovery.join_names import (
    RANGE_NAME_SIMILARITY,
    name_similarity,
    name_tokens,
)
from catalog_nb.server.discovery.join_scores import MIN_SAMPLE, calibrated, evidence_class
from catalog_nb.server.profiling.sketch import ValueSketch
from catalog_nb.server.store.joins import DISCOVERED, NewCondition


@dataclass
class PairSide:
    """Two columns of one resource taken together (a composite key, or a pair of identifiers
    that may refer to one), with the sketch of their value pairs (``profiling.keys``)."""

    resource_key: str
    source_key: str
    names: tuple[str, str]
    tokens: tuple[frozenset[str], frozenset[str]]
    sketch: ValueSketch
    unique: bool


def pair_sides(rows: Sequence[Mapping[str, Any]], prefixes: Mapping[str, str],
               attributes: Set[tuple[str, str]] = frozenset()) -> list[PairSide]:
    """The column pairs profiling sketched, from the fields' sketches (``ValueSketch.pairs``);
    pairs holding a personal attribute are left out, like single attribute fields."""
    found = []
    for row in rows:
        stored = row["sketch"]
        if not stored or row.get("error"):
            continue
        sketch = (stored if isinstance(stored, ValueSketch)
                  else ValueSketch.from_dict(stored, with_sample=False))
        key = str(row["resource_key"])
        table = row["table_name"] or row["resource_name"]
        prefix = prefixes.get(key, "")
        for other, pair in sketch.pairs.items():
            names = (str(row["name"]), other)
            if any((key, name) in attributes for name in names) or not len(pair.sketch.hashes):
                continue
            found.append(PairSide(
                resource_key=key, source_key=str(row.get("data_source_key") or ""), names=names,
                tokens=(name_tokens(names[0], table, prefix), name_tokens(names[1], table, prefix)),
                sketch=pair.sketch, unique=pair.unique))
    return found


def _mapping(fk: PairSide, key: PairSide) -> tuple[tuple[int, int], float] | None:
    """How ``fk``'s columns map onto ``key``'s (by name), and the weaker name agreement."""
    best: tuple[tuple[int, int], float] | None = None
    for order in ((0, 1), (1, 0)):
        agreement = min(name_similarity(fk.tokens[0], key.tokens[order[0]]),
                        name_similarity(fk.tokens[1], key.tokens[order[1]]))
        if agreement >= RANGE_NAME_SIMILARITY and (best is None or agreement > best[1]):
            best = (order, agreement)
    return best


def composite_conditions(sides: Sequence[PairSide], min_containment: float,
                         candidates: Iterable[tuple[int, int]]) -> list[NewCondition]:
    """Two-column conditions: a pair of columns whose value pairs are contained in a composite
    key of another resource, each column named like the key column it maps onto (two columns'
    values meet by chance far less than one's, but a pair of small counters would still).
    ``candidates``: index pairs of ``sides`` sharing hashes (``joins.candidate_pairs``, which
    also applies an incremental run's focus), so sides are never compared all with all."""
    found = []
    for one, two in candidates:
        for key, fk in ((sides[one], sides[two]), (sides[two], sides[one])):
            if not key.unique or key.resource_key == fk.resource_key:
                continue
            mapped = _mapping(fk, key)
            if mapped is None:
                continue
            order, agreement = mapped
            exact = not fk.sketch.full and not key.sketch.full
            inside = fk.sketch.containment_in(key.sketch)
            if inside.sample_size < (1 if exact else MIN_SAMPLE) or inside.value < min_containment:
                continue
            back = key.sketch.containment_in(fk.sketch)
            found.append(NewCondition(
                left_key=key.resource_key, right_key=fk.resource_key,
                left_cols=(key.names[order[0]], key.names[order[1]]), right_cols=fk.names,
                origin=DISCOVERED, cardinality="1:1" if fk.unique else "1:N",
                left_in_right=round(back.value, 4), right_in_left=round(inside.value, 4),
                score=round(calibrated(inside.value, agreement, inside.sample_size, exact), 4),
                stats={"leftDistinct": round(key.sketch.distinct_count()),
                       "rightDistinct": round(fk.sketch.distinct_count()),
                       "sampleSize": inside.sample_size, "nameSimilarity": round(agreement, 4),
                       "evidence": evidence_class(inside.value, agreement, inside.sample_size,
                                                  exact),
                       "composite": True}))
    return found
