"""Join discovery: fields whose values are (almost) contained in another field's values.

Works from the value sketches profiling keeps per field (``profiling/sketch.py``: the bottom-k
hashes of the distinct values), never from the data:

1. **Key candidates.** A field can be a join key when it is text or integer, has at least
   ``join_min_distinct`` distinct values, and is not free text (values longer than
   :data:`MAX_KEY_LENGTH`, or mostly several words: names, addresses, prose). Floating-point
   measures, integers named as measures (:data:`MEASURE_TOKENS`: ``order_count``,
   ``total``), dates, times, booleans and nested values are never keys.
2. **Candidate pairs** come from an inverted index ``hash -> fields`` (one sorted array of
   every key field's hashes, paired run by run with vector operations): two fields are compared
   only when they share at least :data:`MIN_SHARED` hashes, so the work grows with the number
   of fields times k. A hash held by more than :data:`MAX_POSTING` fields (``1``, ``2``... in
   every counter) says nothing about a particular pair and is not counted. An incremental run
   (a PROFILE job) pairs only the fields of the resources it changed.
3. **Containment** of each side in the other is estimated from the sketches; a pair is kept
   when one direction reaches ``join_min_containment`` on at least :data:`MIN_SAMPLE` hashes
   (:data:`MIN_SAMPLE_NAMED` when the names agree).
   Integers inside a dense integer range (surrogate keys ``1..n``) are contained in it
   whatever they mean, so there containment proves nothing: when the contained side's range
   lies (for that share) inside the other's dense range, the pair is kept only when the names
   agree too (:func:`name_similarity` at least :data:`RANGE_NAME_SIMILARITY`).
4. **Cardinality** from uniqueness (distinct count against value count) of each side; the
   unique side is stored on the left: ``1:1``, ``1:N`` or ``N:M``. An ``N:M`` pair (neither
   side unique) is kept only when the names agree: without a key on either side, shared
   values (postcodes, cities) show two fields of one kind, not rows that match.
   Fields tag discovery (or people) marked as personal attributes (:data:`ATTRIBUTE_TAGS`:
   phone numbers, postcodes, national ids, bank and card numbers...) are not join keys either:
   they are copied between tables, so their equal values prove nothing about matching rows.
   Tag discovery runs before join discovery in every job, so its suggestions count.
5. **Score** (0-1): containment (0.5), one side unique (0.2), name similarity (0.2) and the
   number of hashes the estimate rests on (0.1, full at 64).

Declared foreign keys of SQL tables are stored as DECLARED with score 1.0 whatever the sketches
say, and a discovered pair they already cover is dropped. Self-joins (both sides in one
resource) are only ever declared. A full run replaces all earlier conditions in one
transaction; an incremental run, those with a side in a changed resource (and the declared ones).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np

from catalog_nb.server.discovery import builtin
from catalog_nb.server.discovery.relation_report import StepReport
from catalog_nb.server.discovery.sketch_index import index_for, wordy
from catalog_nb.server.profiling.sketch import ValueSketch
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import joins as join_store
from catalog_nb.server.store.joins import DECLARED, DISCOVERED, NewCondition

log = logging.getLogger(__name__)

#: Data types whose values can be keys.
KEY_TYPES = frozenset({"STRING", "LONG"})
#: Text longer than this (at its longest) is content, not a key.
MAX_KEY_LENGTH = 64
#: Fields sharing fewer hashes are never compared.
MIN_SHARED = 3
#: Hashes held by more fields than this are not counted when pairing fields.
MAX_POSTING = 200
#: Pairs of hash runs counted per step of :func:`candidate_pairs` (bounds its memory).
PAIR_CHUNK = 2_000_000
#: Least number of hashes a containment estimate must rest on; fewer will do when the names
#: agree (a few dozen top customers against thousands: only a handful of their hashes fall
#: under the large side's threshold).
MIN_SAMPLE = 8
MIN_SAMPLE_NAMED = 3
#: Name similarity two dense integer ranges need to be kept.
RANGE_NAME_SIMILARITY = 0.5
#: A side is unique when its distinct count reaches this share of its value count.
UNIQUE_SHARE = 0.99
UNIQUE_SHARE_APPROXIMATE = 0.95
#: Sample size at which the estimate counts fully in the score.
FULL_SAMPLE = 64
#: Name parts that say "identifier" but not of what: a field named only by them is read with
#: its resource's name ("id" of "customers" is the customer id).
GENERIC_TOKENS = frozenset({"id", "no", "nr", "num", "number", "key", "code", "ref", "fk", "pk",
                            "uid", "uuid"})

#: Built-in tags (``discovery.builtin``) of personal attributes: a field discovery or people
#: tagged so holds details people share or change (phones, postcodes, bank accounts...),
#: copied from table to table, so equal values there do not make rows match. Email addresses
#: are left out on purpose: they are the natural key of an account.
ATTRIBUTE_TAGS = tuple(f"builtin:{name}" for name in (
    "PhoneNumber", "NationalId", "PaymentCard", "IPAddress", "IBAN", "DateOfBirth", "PostalCode",
    "PersonName"))

#: Name parts of integer measures (counts, amounts): such fields are never keys.
MEASURE_TOKENS = frozenset({"count", "total", "sum", "qty", "quantity", "amount", "avg",
                            "average", "price", "cost", "salary", "revenue", "balance"})

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")


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


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _singular(word: str) -> str:
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def name_tokens(field: str, resource: str) -> frozenset[str]:
    """The meaningful words of a field's name; a generic name (``id``, ``code``) borrows its
    resource's name (``customers.csv`` -> ``customer``).

    >>> sorted(name_tokens("id", "customer_contacts"))
    ['contact', 'customer']
    """
    # A nested field is named by its last part's words plus its parents' (session.user).
    words = [_singular(w) for w in _words(field)]
    meaningful = [w for w in words if w not in GENERIC_TOKENS]
    if not meaningful:
        stem = _EXTENSION.sub("", resource.rsplit("/", 1)[-1])
        meaningful = [_singular(w) for w in _words(stem) if w not in GENERIC_TOKENS]
    return frozenset(meaningful)


def _same_word(a: str, b: str) -> bool:
    """Equal words, or an abbreviation of at least three letters (``emp`` / ``employee``)."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return len(short) >= 3 and long_.startswith(short)


def name_similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Share of the longer word set matched by the other (0-1).

    >>> name_similarity(frozenset({"emp"}), frozenset({"employee"}))
    1.0
    """
    if not a or not b:
        return 0.0
    matched = sum(1 for x in a if any(_same_word(x, y) for y in b))
    return matched / max(len(a), len(b))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def key_field(row: Mapping[str, Any], min_distinct: int) -> KeyField | None:
    """The field as a join key candidate, or None when it cannot be one (see module doc).

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
    if row["data_type"] == "LONG" and MEASURE_TOKENS & {_singular(w) for w in _words(row["name"])}:
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
        tokens=name_tokens(row["name"], row["table_name"] or row["resource_name"]),
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


def candidate_pairs(fields: Sequence[KeyField], focus: Set[str] | None = None,
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


def compare(a: KeyField, b: KeyField, min_containment: float) -> NewCondition | None:
    """The join condition between two key fields, or None when they do not join."""
    a_in_b, b_in_a = a.sketch.containment_in(b.sketch), b.sketch.containment_in(a.sketch)
    similarity = name_similarity(a.tokens, b.tokens)
    least = MIN_SAMPLE_NAMED if similarity >= RANGE_NAME_SIMILARITY else MIN_SAMPLE
    usable = [e for e in (a_in_b, b_in_a) if e.sample_size >= least]
    best = max((e.value for e in usable), default=0.0)
    if best < min_containment:
        return None
    explained = ((a_in_b.value >= min_containment and _range_explained(a, b, min_containment))
                 or (b_in_a.value >= min_containment
                     and _range_explained(b, a, min_containment)))
    if explained and similarity < RANGE_NAME_SIMILARITY:
        return None
    # The unique side on the left; otherwise the side holding the other's values.
    if a.unique != b.unique:
        flip = b.unique
    elif a_in_b.value != b_in_a.value:
        flip = a_in_b.value > b_in_a.value
    else:
        flip = (b.resource_path, b.name) < (a.resource_path, a.name)
    left, right = (b, a) if flip else (a, b)
    left_in_right, right_in_left = (b_in_a, a_in_b) if flip else (a_in_b, b_in_a)
    if left.unique and right.unique:
        cardinality = "1:1"
    elif left.unique:
        cardinality = "1:N"
    else:
        cardinality = "N:M"
        # Neither side is a key: shared values (postcodes, cities, account numbers copied
        # around) say the fields hold the same kind of thing, not that rows match. Such a pair
        # is a join only when the names say it is the same key (customer_id on both sides).
        if similarity < RANGE_NAME_SIMILARITY:
            return None
    sample = max((e.sample_size for e in usable), default=0)
    score = (0.5 * best + 0.2 * (left.unique or right.unique) + 0.2 * similarity
             + 0.1 * min(1.0, sample / FULL_SAMPLE))
    return NewCondition(
        left_key=left.resource_key, right_key=right.resource_key,
        left_cols=(left.name,), right_cols=(right.name,), origin=DISCOVERED,
        cardinality=cardinality, left_in_right=round(left_in_right.value, 4),
        right_in_left=round(right_in_left.value, 4), score=round(score, 4),
        stats={"leftDistinct": round(left.distinct), "rightDistinct": round(right.distinct),
               "sampleSize": sample, "nameSimilarity": round(similarity, 4)},
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


def find(rows: Sequence[Mapping[str, Any]], tables: Sequence[Mapping[str, Any]],
         settings: Settings, attributes: Set[tuple[str, str]] = frozenset(),
         focus: Set[str] | None = None) -> tuple[list[NewCondition], StepReport]:
    """Declared and discovered conditions over profiled ``rows`` (``store.joins`` shapes);
    pure, so it can be measured and tested without a store. ``attributes``: ``(resource key,
    field)`` of fields tagged as personal attributes (:data:`ATTRIBUTE_TAGS`), which take part
    in declared keys only. With ``focus`` (resource keys), only the discovered conditions with
    a side in those resources are returned (the declared ones are always all returned)."""
    report = StepReport()
    fields: list[KeyField] = []
    all_sketched: dict[tuple[str, str], KeyField] = {}
    for row in rows:
        try:
            if row.get("error"):
                raise ValueError(row["error"])
            # Keys of declared constraints need their sketch whatever their distinct count.
            loose = key_field(row, 1)
            item = loose if loose is not None and loose.distinct >= settings.join_min_distinct \
                else None
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
    for a, b in candidate_pairs(fields, focus):
        found = compare(fields[a], fields[b], settings.join_min_containment)
        if found is not None and _sides(found) not in taken:
            taken.add(_sides(found))
            discovered.append(found)
    discovered.sort(key=lambda c: (-c.score, c.left_key, c.right_key, c.signature))
    report.counts = {"joinsDeclared": len(conditions), "joinsDiscovered": len(discovered)}
    over = (f"{len(fields)} key fields" if focus is None else
            f"the key fields of {len(focus)} changed resource(s) against {len(fields)}")
    report.summary = (f"Joins: {len(conditions)} declared, {len(discovered)} discovered"
                      f" over {over}.")
    if unknown:
        report.summary += f" {unknown} declared key(s) name a table the catalog does not know."
    return conditions + discovered, report


def discover(store: Store, settings: Settings, changed: Set[str] | None = None) -> StepReport:
    """Rediscover the catalog's join conditions and store them: all of them (``changed`` is
    None: a DISCOVER job), or only those with a side in the ``changed`` resources, compared
    against every other field through the inverted index (what a PROFILE job ends with);
    the declared keys are re-read either way. Conditions between two unchanged resources are
    kept as stored.

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
        conditions, report = find(index.field_rows(), tables, settings, attributes, changed)
    with store.write() as conn:
        if changed is None:
            join_store.replace_all(conn, conditions)
        else:
            join_store.replace_touching(conn, conditions, changed)
    if changed is not None:
        report.counts = {"joinsDeclared": report.counts["joinsDeclared"],
                         "joinsDiscoveredChanged": report.counts["joinsDiscovered"]}
    log.info("join discovery: %s (%.2f s)", report.summary, time.perf_counter() - started)
    return report
