"""Inferred keys of a profiled table, and the column-pair sketches composite joins need.

Join discovery works from sketches, never from the data, so what a multi-column join needs
is computed here, while the rows are at hand:

* **Unique columns**: non-null everywhere and as many distinct values as rows (exact counts
  only). The inferred primary key is the first of them whose name reads as an identifier
  (``id``, ``key``, ``code``, ``no``...), else the first of them.
* **Composite keys**: pairs of columns unique together while neither is alone (``ps_partkey``
  and ``ps_suppkey``; a date and a station code). Only when the profile saw every row (a
  pair unique in a sample may repeat outside it), over at most :data:`MAX_KEY_COLUMNS`
  candidate columns: non-null, text (of key length), integer or date, at least two distinct
  values, identifier-like names first. A pair whose distinct counts multiply to fewer than
  the rows cannot be unique and is not counted.
* **Pair sketches**: a bottom-k sketch (:mod:`.sketch`) of each composite key's value pairs,
  and of the pairs of up to :data:`MAX_ID_COLUMNS` identifier-like or date columns, identifiers
  first (the foreign side: ``l_partkey`` with ``l_suppkey``, a day with a station code).
  A pair's hash is made of its two values' hashes, the smaller first
  (:func:`.sketch.pair_hashes`), so a pair sketch does not depend on the order of the columns
  (``(3, 5)`` and ``(5, 3)`` meet: a small price for comparing pairs whose column order
  differs between tables). They travel on the first column's sketch (``ValueSketch.pairs``),
  so they are stored and read with the sketches, no new table.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from catalog_nb.server.profiling.model import DataType, FieldProfile
from catalog_nb.server.profiling.sketch import (
    DEFAULT_K,
    PairSketch,
    ValueSketch,
    hash_texts,
    pair_hashes,
)

#: Columns tried two by two for composite keys.
MAX_KEY_COLUMNS = 6
#: Identifier-like and date columns whose pairs are sketched as possible composite foreign
#: keys.
MAX_ID_COLUMNS = 3
#: Longest text (characters) of a key column (join discovery reads it too).
MAX_KEY_LENGTH = 64
#: Share of sampled values with a blank above which text is names or prose, not keys.
MAX_WORDY_SHARE = 0.5
_KEY_TYPES = frozenset({DataType.STRING, DataType.LONG, DataType.DATE})
_ID_WORD = re.compile(r"(^|[^A-Za-z])(id|key|code|no|nr|num|ref)$", re.IGNORECASE)
_ID_CAMEL = re.compile(r"[a-z](Id|ID|Key|Code|No|Nr|Num|Ref)$")


def id_like(name: str) -> bool:
    """Whether a column's name reads as an identifier: ``..._id``, ``customerId``, or a
    glued ``key`` (TPC-H's ``l_partkey``).

    >>> id_like("l_partkey"), id_like("customerId"), id_like("store_code"), id_like("valid")
    (True, True, True, False)
    """
    last = name.rsplit(".", 1)[-1]
    return bool(_ID_WORD.search(last) or _ID_CAMEL.search(last)
                or last.lower().endswith("key"))


@dataclass
class KeyInference:
    """What :func:`infer_keys` found: column names."""

    unique: list[str] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    composite: list[tuple[str, str]] = field(default_factory=list)
    pairs: dict[tuple[str, str], PairSketch] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in the resource's ``extra["inferredKeys"]``."""
        return {"primaryKey": list(self.primary_key), "uniqueColumns": list(self.unique),
                "compositeKeys": [list(pair) for pair in self.composite]}

    def __bool__(self) -> bool:
        return bool(self.unique or self.composite)


def _exact_unique(item: FieldProfile, rows: int) -> bool:
    props = item.properties
    if item.data_type not in _KEY_TYPES or (item.data_type is DataType.STRING and _text(item)):
        return False  # a unique comment, name or amount is no key
    return (not props.get("distinctCountApproximate") and rows > 0
            and props.get("valueCount") == rows and props.get("distinctCount") == rows)


def wordy(sample: Collection[str]) -> bool:
    """Whether most sampled values hold a blank: names, addresses, prose rather than codes
    (the one rule profiling's key inference and join discovery read text by).

    >>> wordy(["Ada Lovelace", "Alan Turing", "X1"]), wordy(["A-1", "B-2"])
    (True, False)
    """
    many = sum(1 for v in sample if " " in v.strip())
    return bool(sample) and many / len(sample) > MAX_WORDY_SHARE


def _text(item: FieldProfile) -> bool:
    """Whether a text field holds prose or names rather than codes: long values, or most
    sampled values holding a blank (``Ada Lovelace``)."""
    if (item.properties.get("maxLength") or 0) > MAX_KEY_LENGTH:
        return True
    return wordy(item.sketch.sample if item.sketch is not None else [])


def _candidate(item: FieldProfile, rows: int) -> bool:
    props = item.properties
    if item.data_type not in _KEY_TYPES or props.get("valueCount") != rows:
        return False
    if item.data_type is DataType.STRING and _text(item):
        return False
    distinct = props.get("distinctCount")
    return isinstance(distinct, int | float) and 2 <= distinct < rows


def infer_keys(fields: Sequence[FieldProfile], texts: Callable[[FieldProfile], pa.Array],
               rows: int, complete: bool, k: int = DEFAULT_K,
               each: Callable[[Callable[[Any], Any], list[Any]], list[Any]] | None = None,
               ) -> KeyInference:
    """The keys of a table of ``rows`` rows whose profile is ``fields``; ``texts(field)`` gives
    a field's canonical texts over the profiled rows (every row when ``complete``, else a
    sample: then no composite key is inferred, and identifier pairs are sketched from the
    sample)."""
    found = KeyInference()
    found.unique = [f.name for f in fields if _exact_unique(f, rows)]
    if found.unique:
        found.primary_key = [next((n for n in found.unique if id_like(n)), found.unique[0])]
    if rows < 2:
        return found
    candidates = sorted((f for f in fields if _candidate(f, rows)),
                        key=lambda f: not id_like(f.name))
    # A pair unique in a sample may repeat outside it: composite keys need every row, while
    # the foreign side's pairs are sketched from the sample too (its pairs are pairs of the
    # table: their containment in a key holds as for the whole).
    tried = candidates[:MAX_KEY_COLUMNS] if complete else []
    cache: dict[str, pa.Array] = {}

    def of(item: FieldProfile) -> pa.Array:
        if item.name not in cache:
            cache[item.name] = texts(item)
        return cache[item.name]

    coded: dict[str, np.ndarray] = {}

    def codes(item: FieldProfile) -> np.ndarray:
        if item.name not in coded:
            encoded = pc.dictionary_encode(of(item)).indices
            coded[item.name] = encoded.to_numpy(zero_copy_only=False).astype(np.int64)
        return coded[item.name]

    position = {f.name: i for i, f in enumerate(fields)}

    def in_order(items: list[FieldProfile]) -> list[FieldProfile]:
        # Pairs are named in the table's column order, whatever the order they were tried in.
        return sorted(items, key=lambda f: position[f.name])

    paired: dict[tuple[str, str], tuple[FieldProfile, FieldProfile]] = {}
    for one, two in combinations(in_order(tried), 2):
        if float(one.properties["distinctCount"]) * float(two.properties["distinctCount"]) < rows:
            continue
        # Counted on dictionary codes (integers, not joined texts), in column order: the
        # sketched form makes (1, 2) and (2, 1) one pair.
        first, second = codes(one), codes(two)
        combined = first * (int(second.max(initial=0)) + 1) + second
        # pandas' hash table: 1 ms for 80,000 pairs, where Arrow's count_distinct takes 6
        if len(pd.unique(combined)) == rows:
            found.composite.append((one.name, two.name))
            paired[(one.name, two.name)] = (one, two)
    ids = [f for f in candidates
           if id_like(f.name) or f.data_type is DataType.DATE][:MAX_ID_COLUMNS]
    for one, two in combinations(in_order(ids), 2):
        paired.setdefault((one.name, two.name), (one, two))
    # ``each`` may share the work among threads (the profiler's pool): Arrow, the hashing and
    # the sorting let go of the interpreter lock. First each column's value hashes, then each
    # pair's sketch from them.
    columns = list({item.name: item for pair in paired.values() for item in pair}.values())
    hashed = dict(zip((c.name for c in columns),
                      (each or _in_turn)(lambda item: hash_texts(of(item).fill_null("")),
                                         columns), strict=True))

    def sketch(pair: tuple[FieldProfile, FieldProfile]) -> ValueSketch:
        """The sketch of the two fields' value pairs, rows with a null left out (candidates
        have none today: this keeps a pair with a null from hashing as if it were text)."""
        one, two = pair
        both = np.ones(len(hashed[one.name]), dtype=bool)
        for item in pair:
            if of(item).null_count:
                both &= np.asarray(of(item).is_valid())
        return ValueSketch(k=k, sample_limit=0).add_hashes(
            pair_hashes(hashed[one.name][both], hashed[two.name][both]))

    composite = set(found.composite)
    names = list(paired)
    sketches = (each or _in_turn)(sketch, [paired[n] for n in names])
    for pair, made in zip(names, sketches, strict=True):
        found.pairs[pair] = PairSketch(made, pair in composite)
    return found


def _in_turn(work: Callable[[Any], Any], items: list[Any]) -> list[Any]:
    return [work(item) for item in items]
