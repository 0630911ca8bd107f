"""Join discovery: fields whose values are (almost) contained in another field's values.

Works from the value sketches profiling keeps per field (``profiling/sketch.py``: the bottom-k
hashes of the distinct values), never from the data:

1. **Key candidates.** A field can be a join key when it is text or integer, has at least
   two distinct values, and is not free text (values longer than :data:`MAX_KEY_LENGTH`, or
   mostly several words: names, addresses, prose). Floating-point measures, integers named as
   measures (:data:`MEASURE_TOKENS`: ``order_count``, ``total``, ``delay_minutes``), dates,
   times, booleans and nested values are never keys, on either side. Names are read without
   their table's column prefix (``l_`` of TPC-H's ``l_orderkey``, :func:`table_prefix`) and
   with a glued ``key`` split off (``orderkey`` -> ``order``).
2. **Candidate pairs** of fields of at least ``join_min_distinct`` distinct values come from
   an inverted index ``hash -> fields`` (one sorted array of every such field's hashes, paired
   run by run with vector operations): two fields are compared only when they share at least
   :data:`MIN_SHARED` hashes, so the work grows with the number of fields times k. A hash held
   by more than :data:`MAX_POSTING` fields (``1``, ``2``... in every counter) says nothing
   about a particular pair and is not counted. A field of fewer distinct values (a nation's
   five region keys, a status of two) is paired by name instead (:func:`named_pairs`), with
   the keys of small tables sharing a name word. An incremental run (a PROFILE job) pairs only
   the fields of the resources it changed (and of their copies).
3. **A key side.** A pair joins only when one side is a key (unique in its resource: distinct
   count against value count) holding ``join_min_containment`` of the other side's values
   (on at least :data:`MIN_SAMPLE` hashes, :data:`MIN_SAMPLE_NAMED` when the names agree, any
   number when both sketches hold every value), or, when the names agree, whose own values
   are found in the other side (a subset of the customers against every order). Neither side
   unique (two foreign keys of one dimension, postcodes in two tables) is never a join.
   A side of fewer than ``join_min_distinct`` values joins only a small table's key whose name
   agrees, holding all of its values, both counted exactly.
   Integers inside a dense integer range (surrogate keys ``1..n``) are contained in it
   whatever they mean, so there containment proves nothing: when the contained side's range
   lies (for that share) inside the other's dense range, the pair is kept only when the names
   agree too (:func:`name_similarity` at least :data:`RANGE_NAME_SIMILARITY`); and integers
   whose name neither agrees with the key's nor reads as an identifier (``points``,
   ``wait``) are measures: overlap alone never makes them a foreign key.
   Fields tag discovery (or people) marked as personal attributes (:data:`ATTRIBUTE_TAGS`:
   phone numbers, postcodes, national ids, bank and card numbers...) are not join keys either:
   they are copied between tables, so their equal values prove nothing about matching rows.
   Tag discovery runs before join discovery in every job, so its suggestions count.
4. **Cardinality**: the key side is stored on the left, ``1:1`` or ``1:N``.
5. **Composite keys.** Profiling infers pairs of columns unique together while neither is
   alone and sketches their value pairs, and the pairs of identifier columns of every table
   (``profiling/keys.py``); a pair contained in another resource's composite key, each column
   named like the key column it maps onto, is one condition of two columns
   (:func:`composite_conditions`).
6. **Copies** (file lineage's COPY, SUBSET and PROJECTION edges, which run first) are lineage:
   no condition between two resources an inferred edge links, and a copy group's conditions
   with a partner are kept once per partner, in the partner's own data source where there is
   one (:func:`merge_copies`).
7. **Score** (0-1): the measured precision of the condition's evidence class
   (:data:`CALIBRATION`: names equal or agreeing, containment, the sample the estimate rests
   on), so that 0.9 means about nine in ten such conditions are true; :data:`DEFAULT_MIN_SCORE`
   is the documented floor of a readable join graph (``docs/relations-api.md``).

Declared foreign keys of SQL tables are stored as DECLARED with score 1.0 whatever the sketches
say, and a discovered pair they already cover is dropped. Self-joins (both sides in one
resource) are only ever declared. A full run replaces all earlier conditions in one
transaction; an incremental run, those with a side in a changed resource (and the declared ones).
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from catalog_nb.server.discovery import builtin
from catalog_nb.server.discovery.composite_joins import composite_conditions, pair_sides
from catalog_nb.server.discovery.join_copies import merge_copies, with_copies
from catalog_nb.server.discovery.join_names import (
    RANGE_NAME_SIMILARITY,
    name_similarity,
    name_tokens,
    same_word,
    singular,
    table_prefix,
    words,
)
from catalog_nb.server.discovery.join_scores import MIN_SAMPLE, calibrated, evidence_class
from catalog_nb.server.discovery.relation_report import StepReport
from catalog_nb.server.discovery.sketch_index import index_for
from catalog_nb.server.profiling.keys import MAX_KEY_LENGTH, id_like, wordy
from catalog_nb.server.profiling.sketch import ValueSketch
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import joins as join_store
from catalog_nb.server.store import lineage as lineage_store
from catalog_nb.server.store.joins import DECLARED, DISCOVERED, NewCondition

log = logging.getLogger(__name__)

#: Data types whose values can be keys.
KEY_TYPES = frozenset({"STRING", "LONG"})
#: Fields sharing fewer hashes are never compared.
MIN_SHARED = 3
#: Hashes held by more fields than this are not counted when pairing fields.
MAX_POSTING = 200
#: Pairs of hash runs counted per step of :func:`candidate_pairs` (bounds its memory).
PAIR_CHUNK = 2_000_000
#: Fewer hashes than MIN_SAMPLE will do when the names agree (a few dozen top customers against
#: thousands: only a handful of their hashes fall under the large side's threshold).
MIN_SAMPLE_NAMED = 3
#: A side is unique when its distinct count reaches this share of its value count.
UNIQUE_SHARE = 0.99
UNIQUE_SHARE_APPROXIMATE = 0.95
#: Fewest distinct values of a key field: one value (a constant) says nothing.
MIN_KEY_DISTINCT = 2
#: Containment a side of few distinct values needs (every value, counted exactly).
FEW_CONTAINMENT = 1.0

#: Built-in tags (``discovery.builtin``) of personal attributes: a field discovery or people
#: tagged so holds details people share or change (phones, postcodes, bank accounts...),
#: copied from table to table, so equal values there do not make rows match. Email addresses
#: are left out on purpose: they are the natural key of an account.
ATTRIBUTE_TAGS = tuple(f"builtin:{name}" for name in (
    "PhoneNumber", "NationalId", "PaymentCard", "IPAddress", "IBAN", "DateOfBirth", "PostalCode",
    "PersonName"))

#: Name parts of integer measures (counts, amounts, durations, sizes): such fields are never
#: keys, on either side.
MEASURE_TOKENS = frozenset({"count", "total", "sum", "qty", "quantity", "amount", "avg",
                            "average", "price", "cost", "salary", "revenue", "balance",
                            "delay", "duration", "minute", "second", "hour", "age", "weight",
                            "height", "length", "width", "size", "score",
                            "rating", "percent", "pct", "ratio", "rate", "tax", "discount",
                            "availqty", "headcount", "latency", "distance"})
#: Name words of labels (a department's name, a product's title): two labels of few values
#: share them without being one key, so they never pair fields of few values.
LABEL_TOKENS = frozenset({"name", "label", "title", "description", "comment", "note", "text"})



@dataclass
class KeyField:
    """A field that may be a join key, with what the comparison needs."""

    resource_key: str
    resource_path: str
    name: str
    sketch: ValueSketch
    distinct: float
    unique: bool
    #: (min, max) of an integer field, and whether it holds half its range's integers or more
    int_range: tuple[int, int] | None
    dense: bool
    tokens: frozenset[str]
    #: the data source the field's resource is in (copies are merged per source)
    source_key: str = ""
    #: whether the sketch holds every distinct value (then containment is exact)
    exact: bool = False
    #: whether the name reads as an identifier (``profiling.keys.id_like``)
    id_named: bool = False


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def key_field(row: Mapping[str, Any], min_distinct: int, prefix: str = "") -> KeyField | None:
    """The field as a join key candidate, or None when it cannot be one (see module doc);
    ``prefix`` is its table's column prefix (:func:`table_prefix`).

    ``row["sketch"]`` is the stored form or a decoded :class:`ValueSketch` (then ``row``
    says whether its sample is ``wordy``: see :mod:`.sketch_index`). Raises ValueError for a
    sketch that cannot be read.
    """
    if row["data_type"] not in KEY_TYPES or not row["sketch"]:
        return None
    props = dict(row["properties"] or {})
    values = _number(props.get("valueCount"))
    if values is not None and values <= 0:
        return None
    if row["data_type"] == "STRING":
        longest = _number(props.get("maxLength"))
        if longest is not None and longest > MAX_KEY_LENGTH:
            return None
    stored = row["sketch"]
    if isinstance(stored, ValueSketch):
        sketch, prose = stored, bool(row.get("wordy"))
    else:
        sketch = ValueSketch.from_dict(stored, with_sample=False)
        prose = wordy([str(v) for v in stored.get("sample") or []])
    if len(sketch.hashes) == 0:
        return None
    if row["data_type"] == "STRING" and prose:
        return None
    if row["data_type"] == "LONG" and MEASURE_TOKENS & {singular(w) for w in words(row["name"])}:
        return None
    distinct = _number(props.get("distinctCount"))
    if distinct is None:
        distinct = sketch.distinct_count()
    if distinct < min_distinct:
        return None
    share = UNIQUE_SHARE_APPROXIMATE if props.get("distinctCountApproximate") else UNIQUE_SHARE
    unique = values is not None and distinct >= share * values
    int_range: tuple[int, int] | None = None
    low, high = _number(props.get("min")), _number(props.get("max"))
    if row["data_type"] == "LONG" and low is not None and high is not None:
        int_range = (int(low), int(high))
    return KeyField(
        resource_key=row["resource_key"], resource_path=row["path"],
        name=row["name"], sketch=sketch, distinct=distinct, unique=unique, int_range=int_range,
        dense=int_range is not None and int_range[1] - int_range[0] + 1 <= 2 * distinct,
        tokens=name_tokens(row["name"], row["table_name"] or row["resource_name"], prefix),
        source_key=str(row.get("data_source_key") or ""),
        exact=not sketch.full,
        id_named=id_like(str(row["name"])),
    )


def _group_pairs(ids: np.ndarray, starts: np.ndarray, sizes: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(ids[i], ids[j])``, ``i < j``, inside each group ``[start, start + size)``
    of ``ids`` (all groups at once: no Python loop over groups)."""
    elements = int(sizes.sum())
    position = np.repeat(starts, sizes) + np.arange(elements) - np.repeat(
        np.cumsum(sizes) - sizes, sizes)
    # Each element pairs with the members after it in its group.
    after = np.repeat(starts + sizes - 1, sizes) - position
    first = np.repeat(position, after)
    offset = np.arange(int(after.sum())) - np.repeat(np.cumsum(after) - after, after) + 1
    return ids[first], ids[first + offset]


class Sketched(Protocol):
    """What :func:`candidate_pairs` reads of a field (or of a pair of columns)."""

    resource_key: str
    sketch: ValueSketch


def candidate_pairs(fields: Sequence[Sketched], focus: Set[str] | None = None,
                    ) -> list[tuple[int, int]]:
    """Pairs ``(a, b)``, ``a < b``, of fields (indexes into ``fields``) of different resources
    sharing at least :data:`MIN_SHARED` hashes; with ``focus``, only the pairs with a side in
    one of those resources.

    The inverted index is one sorted array of every field's hashes: the fields holding a hash
    are a run in it, pairs come from the runs (of at most :data:`MAX_POSTING` fields) and are
    counted with ``np.unique``, in chunks of about :data:`PAIR_CHUNK` pairs so memory stays
    bounded whatever the catalog.
    """
    if not fields:
        return []
    sizes = np.array([len(f.sketch.hashes) for f in fields], dtype=np.int64)
    every = np.concatenate([f.sketch.hashes for f in fields])
    ids = np.repeat(np.arange(len(fields), dtype=np.int64), sizes)
    order = np.argsort(every, kind="stable")  # stable: ids ascend within a run
    every, ids = every[order], ids[order]
    hashes, starts, counts = np.unique(every, return_index=True, return_counts=True)
    keep = (counts >= 2) & (counts <= MAX_POSTING)
    mine = np.array([focus is not None and f.resource_key in focus for f in fields], dtype=bool)
    if focus is not None:
        focus_hashes = np.unique(np.concatenate(
            [f.sketch.hashes for f, m in zip(fields, mine, strict=True) if m] or [every[:0]]))
        keep &= np.isin(hashes, focus_hashes, assume_unique=True)
    starts, counts = starts[keep], counts[keep]
    owner = np.unique([f.resource_key for f in fields], return_inverse=True)[1]
    found_codes, found_counts = [], []
    runs = np.cumsum(counts * (counts - 1) // 2)
    low = 0
    while low < len(starts):
        done = int(runs[low - 1]) if low else 0
        high = max(int(np.searchsorted(runs, done + PAIR_CHUNK, side="right")), low + 1)
        left, right = _group_pairs(ids, starts[low:high], counts[low:high])
        low = high
        wanted = owner[left] != owner[right]
        if focus is not None:
            wanted &= mine[left] | mine[right]
        unique, tally = np.unique(left[wanted] * len(fields) + right[wanted],
                                  return_counts=True)
        found_codes.append(unique)
        found_counts.append(tally)
    if not found_codes:
        return []
    codes, inverse = np.unique(np.concatenate(found_codes), return_inverse=True)
    totals = np.bincount(inverse, weights=np.concatenate(found_counts))
    chosen = codes[totals >= MIN_SHARED]
    return list(zip((chosen // len(fields)).tolist(), (chosen % len(fields)).tolist(),
                    strict=True))


def _range_explained(inner: KeyField, outer: KeyField, share: float) -> bool:
    """Whether ``inner`` lies in ``outer``'s dense integer range for at least ``share`` of its
    own range: its values are then found in ``outer`` whatever they mean."""
    if inner.int_range is None or outer.int_range is None or not outer.dense:
        return False
    (low, high), (outer_low, outer_high) = inner.int_range, outer.int_range
    inside = min(high, outer_high) - max(low, outer_low) + 1
    return inside >= share * (high - low + 1)


def _least_sample(a: KeyField, b: KeyField, named: bool) -> int:
    """Fewest hashes a containment estimate between ``a`` and ``b`` may rest on: any number
    when both sketches hold every value (the estimate is then exact)."""
    if a.exact and b.exact:
        return 1
    return MIN_SAMPLE_NAMED if named else MIN_SAMPLE


def compare(a: KeyField, b: KeyField, min_containment: float, min_distinct: int = 1
            ) -> NewCondition | None:
    """The join condition between two key fields, or None when they do not join.

    One side must be a key (unique in its resource) holding the other side's values; a pair
    where neither is unique (two foreign keys of one dimension, a postcode in two tables) is
    not a join. A side of fewer than ``min_distinct`` distinct values joins only a key whose
    name agrees and which holds every one of its values, both known exactly (small tables).
    """
    a_in_b, b_in_a = a.sketch.containment_in(b.sketch), b.sketch.containment_in(a.sketch)
    similarity = name_similarity(a.tokens, b.tokens)
    named = similarity >= RANGE_NAME_SIMILARITY
    least = _least_sample(a, b, named)
    few = min(a.distinct, b.distinct) < min_distinct
    if few and not (named and a.exact and b.exact):
        return None
    needed = FEW_CONTAINMENT if few else min_containment
    # (key, other, other in key, key in other) for each side that can be the key.
    # A key whose own values are found in the other side (a subset of customers against
    # every order) joins too, but only when the names agree: a column of small unique
    # numbers is found in many others.
    options = [(key, other, inside, back)
               for key, other, inside, back in ((a, b, b_in_a, a_in_b), (b, a, a_in_b, b_in_a))
               if key.unique and (
                   (inside.sample_size >= least and inside.value >= needed)
                   or (named and back.sample_size >= least and back.value >= needed))]
    if not options:
        return None
    if any(_range_explained(other, key, needed) for key, other, _, _ in options) and not named:
        return None
    if not named and any(other.int_range is not None and not other.id_named
                         for _, other, _, _ in options):
        return None  # integers found in a key, named neither like it nor as identifiers
    if len(options) == 2 and options[0][2].value == options[1][2].value:
        options.sort(key=lambda o: (o[0].resource_path, o[0].name))
    else:
        options.sort(key=lambda o: -o[2].value)
    left, right, right_in_left, left_in_right = options[0]
    cardinality = "1:1" if right.unique else "1:N"
    # A key whose values are found in the other side (options' second way) is scored by the
    # foreign side's containment too: that is what a join of its rows would keep.
    sample = max(right_in_left.sample_size, left_in_right.sample_size)
    exact = left.exact and right.exact
    score = calibrated(right_in_left.value, similarity, sample, exact)
    return NewCondition(
        left_key=left.resource_key, right_key=right.resource_key,
        left_cols=(left.name,), right_cols=(right.name,), origin=DISCOVERED,
        cardinality=cardinality, left_in_right=round(left_in_right.value, 4),
        right_in_left=round(right_in_left.value, 4), score=round(score, 4),
        stats={"leftDistinct": round(left.distinct), "rightDistinct": round(right.distinct),
               "sampleSize": sample, "nameSimilarity": round(similarity, 4),
               "evidence": evidence_class(right_in_left.value, similarity, sample, exact)},
    )


def declared(tables: Sequence[Mapping[str, Any]],
             sketches: Mapping[tuple[str, str], KeyField]) -> tuple[list[NewCondition], int]:
    """The declared foreign keys of SQL tables, and how many name a table the catalog lacks.

    The referred table is looked up in the same source by schema and name (case-insensitive).
    """
    by_name = {
        (t["data_source_key"], str(t["data_schema_name"] or "").lower(),
         str(t["table_name"]).lower()): t
        for t in tables
    }
    found: list[NewCondition] = []
    unknown = 0
    for table in tables:
        for fk in (table["extra"] or {}).get("foreignKeys") or []:
            referred = by_name.get((
                table["data_source_key"],
                str(fk.get("referredSchema") or table["data_schema_name"] or "").lower(),
                str(fk.get("referredTable") or "").lower(),
            ))
            columns = tuple(fk.get("columns") or ())
            referred_columns = tuple(fk.get("referredColumns") or ())
            if referred is None or not columns or len(columns) != len(referred_columns):
                unknown += 1
                continue
            found.append(_declared(referred, referred_columns, table, columns, sketches))
    return found, unknown


def _declared(referred: Mapping[str, Any], referred_columns: tuple[str, ...],
              table: Mapping[str, Any], columns: tuple[str, ...],
              sketches: Mapping[tuple[str, str], KeyField]) -> NewCondition:
    left = sketches.get((referred["key"], referred_columns[0]))
    right = sketches.get((table["key"], columns[0]))
    unique = False
    if len(columns) == 1:
        props = table["fields"].get(columns[0], {})
        values, distinct = _number(props.get("valueCount")), _number(props.get("distinctCount"))
        unique = bool(values and distinct is not None and distinct >= UNIQUE_SHARE * values)
    left_in_right = right_in_left = None
    stats: dict[str, Any] = {"nameSimilarity": 1.0}
    if len(columns) == 1 and left is not None and right is not None:
        l_in_r, r_in_l = left.sketch.containment_in(right.sketch), right.sketch.containment_in(
            left.sketch)
        left_in_right, right_in_left = round(l_in_r.value, 4), round(r_in_l.value, 4)
        stats = {"leftDistinct": round(left.distinct), "rightDistinct": round(right.distinct),
                 "sampleSize": max(l_in_r.sample_size, r_in_l.sample_size),
                 "nameSimilarity": round(name_similarity(left.tokens, right.tokens), 4)}
    return NewCondition(
        left_key=referred["key"], right_key=table["key"], left_cols=referred_columns,
        right_cols=columns, origin=DECLARED, cardinality="1:1" if unique else "1:N",
        left_in_right=left_in_right, right_in_left=right_in_left, score=1.0, stats=stats,
    )


def _sides(c: NewCondition) -> frozenset[tuple[str, tuple[str, ...]]]:
    return frozenset({(c.left_key, c.left_cols), (c.right_key, c.right_cols)})


def named_pairs(fields: Sequence[KeyField], few: Sequence[bool], focus: Set[str] | None = None
                ) -> list[tuple[int, int]]:
    """Pairs ``(a, b)``, ``a < b``, of a field of few distinct values and a key of a small
    table (unique, every value in its sketch) sharing a name word: the only partners such a
    field may have (its handful of values is found almost anywhere, and those hashes are too
    common for the inverted index). With ``focus``, only pairs with a side in it."""
    small_keys: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(fields):
        if item.unique and item.exact:
            for token in item.tokens - LABEL_TOKENS:
                small_keys[token].append(index)
    # A word meets the keys' words it abbreviates or is abbreviated by (dept / department):
    # looked up once per distinct word.
    matching: dict[str, list[str]] = {}

    def partners(token: str) -> list[str]:
        if token not in matching:
            matching[token] = [t for t in small_keys if same_word(token, t)]
        return matching[token]

    found: set[tuple[int, int]] = set()
    for index, item in enumerate(fields):
        if not few[index]:
            continue
        for token in item.tokens:
            for other in (o for t in partners(token) for o in small_keys[t]):
                partner = fields[other]
                if partner.resource_key == item.resource_key:
                    continue
                if focus is not None and item.resource_key not in focus \
                        and partner.resource_key not in focus:
                    continue
                found.add((min(index, other), max(index, other)))
    return sorted(found)


def _prefixes(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    names: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        names[row["resource_key"]].append(str(row["name"]))
    return {key: table_prefix(found) for key, found in names.items()}


def find(rows: Sequence[Mapping[str, Any]], tables: Sequence[Mapping[str, Any]],
         settings: Settings, attributes: Set[tuple[str, str]] = frozenset(),
         focus: Set[str] | None = None, links: Sequence[Mapping[str, Any]] = ()
         ) -> tuple[list[NewCondition], StepReport]:
    """Declared and discovered conditions over profiled ``rows`` (``store.joins`` shapes);
    pure, so it can be measured and tested without a store. ``attributes``: ``(resource key,
    field)`` of fields tagged as personal attributes (:data:`ATTRIBUTE_TAGS`), which take part
    in declared keys only. With ``focus`` (resource keys), only the discovered conditions with
    a side in those resources are returned (the declared ones are always all returned).
    ``links``: the inferred lineage edges with their kinds (:func:`merge_copies`)."""
    report = StepReport()
    fields: list[KeyField] = []
    all_sketched: dict[tuple[str, str], KeyField] = {}
    prefixes = _prefixes(rows)
    for row in rows:
        try:
            if row.get("error"):
                raise ValueError(row["error"])
            # Keys of declared constraints need their sketch whatever their distinct count.
            loose = key_field(row, 1, prefixes.get(row["resource_key"], ""))
            item = loose if loose is not None and loose.distinct >= MIN_KEY_DISTINCT else None
            if item is None and loose is not None:
                all_sketched[(loose.resource_key, loose.name)] = loose
        except (ValueError, KeyError, TypeError) as exc:
            report.errors.append({"path": row["path"],
                                  "message": f"Field '{row['name']}' skipped by join "
                                             f"discovery: unreadable value sketch ({exc})."})
            continue
        if item is not None:
            if (item.resource_key, item.name) not in attributes:
                fields.append(item)
            all_sketched[(item.resource_key, item.name)] = item
    conditions, unknown = declared(tables, all_sketched)
    taken = {_sides(c) for c in conditions}
    discovered: list[NewCondition] = []

    def keep(found: NewCondition | None) -> None:
        # A declared key, or a pair already found, is not found again.
        if found is not None and _sides(found) not in taken:
            taken.add(_sides(found))
            discovered.append(found)

    few = [f.distinct < settings.join_min_distinct for f in fields]
    rich = [i for i, f in enumerate(few) if not f]
    pairs = {(rich[a], rich[b]) for a, b in candidate_pairs([fields[i] for i in rich], focus)}
    pairs.update(named_pairs(fields, few, focus))
    for a, b in sorted(pairs):
        keep(compare(fields[a], fields[b], settings.join_min_containment,
                     settings.join_min_distinct))
    sides = pair_sides(rows, prefixes, attributes)
    for found in composite_conditions(sides, settings.join_min_containment,
                                      candidate_pairs(sides, focus)):
        keep(found)
    sources = {f.resource_key: f.source_key for f in fields}
    sources.update((s.resource_key, s.source_key) for s in sides)
    discovered, merged = merge_copies(discovered, links, sources)
    discovered.sort(key=lambda c: (-c.score, c.left_key, c.right_key, c.signature))
    report.counts = {"joinsDeclared": len(conditions), "joinsDiscovered": len(discovered)}
    over = (f"{len(fields)} key fields" if focus is None else
            f"the key fields of {len(focus)} changed resource(s) against {len(fields)}")
    report.summary = (f"Joins: {len(conditions)} declared, {len(discovered)} discovered"
                      f" over {over}.")
    if merged:
        report.summary += f" {merged} between or through copies merged."
    if unknown:
        report.summary += f" {unknown} declared key(s) name a table the catalog does not know."
    return conditions + discovered, report


def discover(store: Store, settings: Settings, changed: Set[str] | None = None) -> StepReport:
    """Rediscover the catalog's join conditions and store them: all of them (``changed`` is
    None: a DISCOVER job), or only those with a side in the ``changed`` resources or their
    copies, compared against every other field through the inverted index (what a PROFILE job
    ends with); the declared keys are re-read either way. Conditions between two unchanged
    resources are kept as stored. Runs after file lineage, whose COPY, SUBSET and PROJECTION
    edges it reads to merge copies.

    Example (what a PROFILE job that profiled one file does at its end)::

        report = discover(store, settings, changed={"3f2a..."})
        report.counts  # {"joinsDeclared": 5, "joinsDiscovered": 4}
    """
    started = time.perf_counter()
    with index_for(store).held() as index:
        with store.read() as conn:
            index.sync(conn)
            tables = join_store.sql_tables(conn)
            attributes = join_store.tagged_fields(conn, ATTRIBUTE_TAGS, builtin.SOURCE_NAME)
            links = lineage_store.inferred_links(conn)
        focus = None if changed is None else with_copies(changed, links)
        conditions, report = find(index.field_rows(), tables, settings, attributes, focus,
                                  links)
    with store.write() as conn:
        if focus is None:
            join_store.replace_all(conn, conditions)
        else:
            join_store.replace_touching(conn, conditions, focus)
    if changed is not None:
        report.counts = {"joinsDeclared": report.counts["joinsDeclared"],
                         "joinsDiscoveredChanged": report.counts["joinsDiscovered"]}
    log.info("join discovery: %s (%.2f s)", report.summary, time.perf_counter() - started)
    return report
