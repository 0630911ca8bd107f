"""The sample-based half of the statistics, and feeding value sketches, in bulk.

* :class:`Reservoir`: which rows enter the bounded row sample (Algorithm R, fixed seed).
* :func:`sample_stats`: distinct count, most frequent values and patterns over a column's sampled
  values, with Arrow kernels (value counts, RE2 regex replacement) rather than Python loops.
* :func:`sketch_chunk`: one chunk's distinct values into a :class:`~.sketch.ValueSketch`, their
  canonical text built and normalised by Arrow; only the hashing runs per value in Python.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog_nb.server.profiling import few
from catalog_nb.server.profiling.inference import arrow_data_type, prepare_array, try_cast
from catalog_nb.server.profiling.model import DataType
from catalog_nb.server.profiling.sketch import ValueSketch, value_text

SAMPLE_SEED = 20240131
TOP_VALUES = 10
TOP_PATTERNS = 5
PATTERN_CHARS = 40
SHOWN_CHARS = 100
CUT_MARK = "…"
_SHAPE_TABLE = np.arange(256, dtype=np.uint8)
_SHAPE_TABLE[ord("A") : ord("Z") + 1] = ord("A")
_SHAPE_TABLE[ord("a") : ord("z") + 1] = ord("a")
_SHAPE_TABLE[ord("0") : ord("9") + 1] = ord("9")


def json_number(value: Any) -> Any:
    """A float JSON can carry: NaN -> None, infinities -> their text."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else str(value)
    return value


def _python_texts(values: pa.Array) -> pa.Array:
    return pa.array([value_text(v) for v in values.to_pylist()], pa.string())


def _float_texts(values: pa.Array) -> pa.Array:
    """``value_text`` of floats in bulk: integral ones as integers, the rest by Arrow's shortest
    round-trip digits where its layout is Python's, and by Python's ``repr`` elsewhere.

    Arrow and Python print the same digits; they differ only in when they switch to an
    exponent, so values Arrow prints with an exponent or below 1e-4 go through ``repr``.
    """
    floats = values.cast(pa.float64())
    floats = pc.if_else(pc.is_nan(floats), pa.scalar(None, pa.float64()), floats)
    magnitude = pc.abs(floats)
    integral = pc.and_(pc.equal(pc.floor(floats), floats), pc.less(magnitude, 2.0**63))
    as_int = pc.if_else(integral, floats, pa.scalar(None, pa.float64()))
    int_texts = as_int.cast(pa.int64()).cast(pa.string())
    arrow_texts = floats.cast(pa.string())
    python_layout = pc.and_(
        pc.invert(pc.match_substring(arrow_texts, "e")), pc.greater_equal(magnitude, 1e-4)
    )
    texts = pc.if_else(integral, int_texts, arrow_texts)
    odd = pc.and_kleene(pc.invert(integral), pc.invert(python_layout)).fill_null(False)
    if pc.any(odd).as_py():
        reprs = [repr(v) for v in floats.filter(odd).to_pylist()]
        texts = pc.replace_with_mask(texts, odd, pa.array(reprs, pa.string()))
    return texts


def canonical_texts(values: pa.Array, data_type: DataType) -> pa.Array:
    """Values as the canonical text of :func:`.sketch.value_text`, in bulk.

    Arrow's casts of strings, integers, booleans and dates print exactly what ``value_text``
    prints; timestamps are reshaped to its ISO form and floats printed by :func:`_float_texts`.
    """
    if pa.types.is_string(values.type):
        return values
    if pa.types.is_decimal(values.type):
        # Arrow's decimal -> float cast divides by the scale in floating point (9987.71
        # becomes 9987.710000000001) where Python's float(Decimal) rounds correctly; through
        # the exact decimal text a Parquet DECIMAL sketches as the same CSV column does.
        return _float_texts(values.cast(pa.string()).cast(pa.float64()))
    if pa.types.is_floating(values.type):
        return _float_texts(values)
    if pa.types.is_timestamp(values.type):
        # naive UTC microseconds, printed "2024-01-05 10:00:00.000000", made ISO like Python's
        text = values.cast(pa.timestamp("us"), safe=False).cast(pa.string())
        text = pc.replace_substring(text, " ", "T", max_replacements=1)
        return pc.replace_substring_regex(text, r"\.000000$", "")
    if data_type in (DataType.DOUBLE, DataType.TIMESTAMP):
        return _python_texts(values)
    return try_cast(values, pa.string()) or _python_texts(values)


def sketch_chunk(sketch: ValueSketch, typed: pa.Array, data_type: DataType) -> None:
    """Add a chunk's non-null values to ``sketch``.

    Every value is hashed and the hashes deduplicated, not the texts: on TPC-H's lineitem,
    hashing all 600,000 comments (17 ms) costs a tenth of finding the distinct ones first.
    """
    raw = canonical_texts(typed.drop_null(), data_type)
    if pa.types.is_string(typed.type):
        sketch.add_texts(raw)
    else:
        # Canonical texts of typed values are ASCII without blanks and, but for the ``T`` of a
        # timestamp, without capitals: normalising them is at most an ASCII lower-casing.
        sketch.add_texts(raw, pc.ascii_lower(raw) if data_type is DataType.TIMESTAMP else raw)


def shapes(texts: pa.Array) -> pa.Array:
    """Patterns of texts: uppercase letters -> ``A``, other letters -> ``a``, digits -> ``9``,
    anything else kept; runs are not collapsed; cut to 40 characters plus ``…``."""
    if (pc.max(pc.binary_length(texts)).as_py() or 0) <= PATTERN_CHARS:
        # no value is longer in bytes, so none in characters: nothing to cut or mark
        return _unicode_shapes(texts) if (plain := _ascii_shapes(texts)) is None else plain
    cut = pc.utf8_slice_codeunits(texts, 0, PATTERN_CHARS)
    shaped = _ascii_shapes(cut)
    if shaped is None:
        shaped = _unicode_shapes(cut)
    longer = pc.greater(pc.utf8_length(texts), PATTERN_CHARS)
    marked = pc.binary_join_element_wise(shaped, pa.scalar(CUT_MARK), "")
    return pc.if_else(longer, marked, shaped)


def _unicode_shapes(texts: pa.Array) -> pa.Array:
    """Shapes by Unicode character classes (other scripts than ASCII; slower)."""
    shaped = pc.replace_substring_regex(texts, r"\p{Lu}", "A")
    shaped = pc.replace_substring_regex(shaped, r"[\p{Ll}\p{Lt}\p{Lm}\p{Lo}]", "a")
    return pc.replace_substring_regex(shaped, r"\p{Nd}", "9")


def _ascii_shapes(texts: pa.Array) -> pa.Array | None:
    """Shapes by a byte lookup table over the string data, when it is all ASCII (else None)."""
    validity, offsets, data = texts.buffers()
    if data is None or len(data) == 0:
        return texts
    raw = np.frombuffer(data, dtype=np.uint8)
    if raw.max() >= 0x80:
        return None
    mapped = pa.py_buffer(_SHAPE_TABLE[raw].tobytes())
    return pa.StringArray.from_buffers(
        len(texts), offsets, mapped, validity, texts.null_count, texts.offset
    )


def pattern_of(text: str) -> str:
    """The pattern of one value (see :func:`shapes`): ``AB-12`` -> ``AA-99``."""
    return str(shapes(pa.array([text], pa.string()))[0].as_py())


def _counts(values: pa.Array, weights: pa.ChunkedArray | None = None) -> pa.Table:
    """Each distinct value (in order of first appearance) and how often it occurs, or the sum of
    its ``weights``: columns ``value`` and ``count``. ``values`` holds no null.

    By dictionary code and NumPy rather than ``pc.value_counts``, which is up to 4x slower on
    mostly distinct values (a key column of 100,000 rows: 21 ms against 6).
    """
    encoded = pc.dictionary_encode(values)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    if weights is None:
        sums = np.bincount(codes, minlength=len(encoded.dictionary))
    else:
        sums = np.bincount(codes, weights=weights.to_numpy(), minlength=len(encoded.dictionary))
    return pa.table({"value": encoded.dictionary, "count": pa.array(sums.astype(np.int64))})


def _top(table: pa.Table, limit: int) -> list[tuple[Any, int]]:
    """The ``limit`` most frequent values of a :func:`_counts` table (ties by value)."""
    # Values are distinct, so (count, value) orders them totally: a top-k selection gives
    # exactly what sorting everything would, without sorting everything.
    keys = [("count", "descending"), ("value", "ascending")]
    top = table.take(pc.select_k_unstable(table, k=limit, sort_keys=keys)).sort_by(keys)
    return list(zip(top["value"].to_pylist(), top["count"].to_pylist(), strict=True))


#: Up to this many values (or distinct texts), the sample statistics are counted in Python:
#: each Arrow call has a fixed cost that dominates for the one-value columns of a wide document.
FEW_SHAPES = 256
_ASCII_SHAPE = str.maketrans(
    {**dict.fromkeys(map(chr, range(ord("A"), ord("Z") + 1)), "A"),
     **dict.fromkeys(map(chr, range(ord("a"), ord("z") + 1)), "a"),
     **dict.fromkeys(map(chr, range(ord("0"), ord("9") + 1)), "9")})


def _tally(values: list[Any]) -> dict[Any, int]:
    """How often each value occurs, as ``Counter`` counts (a Counter costs more to make than
    counting a wide document's one value)."""
    counts: dict[Any, int] = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def _few_stats(typed: list[Any], texts: list[str]) -> tuple[
    int, list[tuple[Any, int]], list[tuple[Any, int]]
]:
    """:func:`sample_stats`' counts over a few values, in Python (the same results)."""
    counts = _tally(typed)
    if texts and all(t.isascii() for t in texts):
        cut = [t[:PATTERN_CHARS].translate(_ASCII_SHAPE) for t in texts]
        patterns = _tally([c + CUT_MARK if len(t) > PATTERN_CHARS else c
                           for c, t in zip(cut, texts, strict=True)])
    else:  # other scripts: Arrow's Unicode classes, so both paths shape alike
        patterns = _tally(shapes(pa.array(texts, pa.string())).to_pylist())

    def top(found: dict[Any, int], limit: int) -> list[tuple[Any, int]]:
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))[:limit]

    return len(counts), top(counts, TOP_VALUES), top(patterns, TOP_PATTERNS)


def _regroup(keys: pa.Array, counts: pa.ChunkedArray) -> pa.Table:
    """``counts`` summed per key (a :func:`_counts` table); keys may repeat, never null."""
    if len(keys) <= FEW_SHAPES:
        summed: Counter[Any] = Counter()
        for key, count in zip(keys.to_pylist(), counts.to_pylist(), strict=True):
            summed[key] += count
        return pa.table({"value": pa.array(list(summed), keys.type),
                         "count": pa.array(list(summed.values()), pa.int64())})
    return _counts(keys, counts)


def _typed(values: pa.Array, texts: pa.Array, data_type: DataType) -> pa.Array:
    """Sampled values as the field's type for counting (text when they will not convert)."""
    targets = {DataType.LONG: pa.int64(), DataType.DOUBLE: pa.float64()}
    if data_type in targets:
        source = pc.utf8_trim_whitespace(values) if pa.types.is_string(values.type) else values
        return try_cast(source, targets[data_type]) or texts
    if data_type is DataType.BOOLEAN:
        if pa.types.is_boolean(values.type):
            return values
        if pa.types.is_string(values.type):
            return pc.equal(pc.utf8_lower(pc.utf8_trim_whitespace(values)), "true")
    return texts


def _numbers_of_texts(values: pa.Array, data_type: DataType) -> pa.Array | None:
    """Texts of a LONG or DOUBLE field as its numbers, when every one converts (else None)."""
    if data_type not in (DataType.LONG, DataType.DOUBLE) or not pa.types.is_string(values.type):
        return None
    numbers = _typed(values, values, data_type)
    return None if numbers is values else numbers


#: Share of distinct values (of all values) from which numbers read as text are converted
#: before they are counted (see :func:`sample_stats`).
MOSTLY_DISTINCT = 0.9


def sample_stats(data_type: DataType, sample: pa.Array,
                 distinct_share: float = 0.0) -> dict[str, Any]:
    """``distinctCount``, ``mostFrequent`` and ``patterns`` over one column's sampled values.

    ``distinct_share``: the column's share of distinct values as far as the caller knows (its
    sketch's estimate over its value count), which chooses the cheaper way to count; the
    figures are the same either way.
    """
    if len(sample) <= few.FEW_ROWS and (read := few.few_texts(sample, data_type)) is not None:
        # a wide document's one-value columns: their values read without an Arrow call
        distinct, top, top_shapes = _few_stats(*read)
        return _stats_dict(distinct, top, top_shapes)
    values = prepare_array(sample).drop_null()
    if len(values) <= FEW_SHAPES:
        texts = canonical_texts(values, data_type)
        typed = _typed(values, texts, data_type)
        distinct, top, top_shapes = _few_stats(typed.to_pylist(), texts.to_pylist())
    elif distinct_share >= MOSTLY_DISTINCT and (
            numbers := _numbers_of_texts(values, data_type)) is not None:
        # Numbers read as text (CSV) that are mostly distinct (keys, amounts): counting the
        # texts, then converting the distinct ones and counting them again, would count
        # everything twice; the values are converted once and counted once instead, and the
        # patterns counted from every text's shape (short: cheap to shape). With few distinct
        # values the other way is cheaper: it converts only those.
        counts = _counts(numbers)
        distinct = len(counts)
        top = _top(counts, TOP_VALUES)
        top_shapes = _top(_counts(shapes(values)), TOP_PATTERNS)
    else:
        # One counting pass over the sample; texts and typed values are then made of the
        # distinct values only, their counts summed where two values print or parse alike.
        raw = _counts(values)
        found, times = raw.column("value").combine_chunks(), raw.column("count")
        texts = canonical_texts(found, data_type)
        typed = _typed(found, texts, data_type)
        counts = raw if typed is found else _regroup(typed, times)
        distinct = len(counts)
        top = _top(counts, TOP_VALUES)
        top_shapes = _top(_regroup(shapes(texts), times), TOP_PATTERNS)
    return _stats_dict(distinct, top, top_shapes)


def _stats_dict(distinct: int, top: list[tuple[Any, int]],
                top_shapes: list[tuple[Any, int]]) -> dict[str, Any]:
    return {
        "distinctCount": distinct,
        "mostFrequent": [
            {"value": v[:SHOWN_CHARS] if isinstance(v, str) else json_number(v), "count": n}
            for v, n in top
        ],
        "patterns": [{"pattern": p, "count": n} for p, n in top_shapes],
    }


class Picks(Protocol):
    """What chooses a table profiler's sampled rows, chunk by chunk (:class:`Reservoir`)."""

    def offer(self, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
        """Chunk-row indices to keep (ascending) and their slots."""
        ...


class Reservoir:
    """Algorithm R over a stream of rows: which rows of each chunk enter which slot.

    One uniform draw per row after the reservoir is full (``Generator.random`` consumes exactly
    one 64-bit word per value), so the sample is the same however the stream is chunked.
    """

    def __init__(self, capacity: int, seed: int = SAMPLE_SEED) -> None:
        self.capacity = capacity
        self.seen = 0
        self._rng = np.random.default_rng(seed)

    def offer(self, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
        """Chunk-row indices to keep (ascending) and their slots (each slot at most once)."""
        start = self.seen
        self.seen += n_rows
        fill = max(0, min(n_rows, self.capacity - start))
        rows = np.arange(fill, dtype=np.int64)
        slots = rows + start
        rest = n_rows - fill
        if rest <= 0:
            return rows, slots
        positions = np.arange(start + fill, start + n_rows, dtype=np.int64)
        draws = (self._rng.random(rest) * (positions + 1)).astype(np.int64)
        keep = draws < self.capacity
        all_rows = np.concatenate([rows, positions[keep] - start])
        all_slots = np.concatenate([slots, draws[keep]])
        # A later row overwrites an earlier one in the same slot: keep the last, so that every
        # slot appears once and a vectorised assignment is well defined.
        _, last = np.unique(all_slots[::-1], return_index=True)
        chosen = np.sort(len(all_slots) - 1 - last)
        return all_rows[chosen], all_slots[chosen]


def plan_picks(capacity: int, counts: list[int], seed: int = SAMPLE_SEED
               ) -> list[tuple[np.ndarray, np.ndarray]]:
    """The rows a :class:`Reservoir` over parts of ``counts`` rows, read one after the other,
    holds at the end: for each part, its row indices (ascending) and their slots.

    Rows that a later row replaced are left out, so each slot is named once overall: a part
    read on its own (the Spark engine) keeps only the rows of the final sample. The choice is
    the reservoir's, which is the same however the stream is chunked.
    """
    reservoir = Reservoir(capacity, seed)
    owner = np.full(capacity, -1, dtype=np.int64)  # slot -> part of its last write
    position = np.zeros(capacity, dtype=np.int64)  # slot -> row of that part
    for part, count in enumerate(counts):
        rows, slots = reservoir.offer(count)
        owner[slots] = part
        position[slots] = rows
    plans = []
    for part in range(len(counts)):
        slots = np.flatnonzero(owner == part)
        rows = position[slots]
        order = np.argsort(rows, kind="stable")
        plans.append((rows[order], slots[order]))
    return plans


class PlannedPicks:
    """:class:`Picks` of one part from :func:`plan_picks`: each chunk's share of its rows."""

    def __init__(self, rows: np.ndarray, slots: np.ndarray) -> None:
        self._rows, self._slots = rows, slots
        self.seen = 0

    def offer(self, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
        """The planned rows among the next ``n_rows`` (chunk-row indices) and their slots."""
        start, self.seen = self.seen, self.seen + n_rows
        low, high = np.searchsorted(self._rows, [start, self.seen])
        return self._rows[low:high] - start, self._slots[low:high]


class RowSample:
    """The reservoir's rows of every column, kept as Arrow arrays (never Python objects).

    Each chunk adds one part: the slots its kept rows go to (shared by every column, so the
    bookkeeping of which write wins a slot is done once per table, not once per column) and each
    column's values for them. A later write to a slot replaces an earlier one. Parts are compacted
    when they hold more than twice the capacity, so memory stays bounded whatever the number of
    rows. A column first seen late has nulls in the slots written before it.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._slots: list[np.ndarray] = []
        self._values: dict[str, list[pa.Array | None]] = {}
        self._held = 0
        self._arranged = False
        self._order: np.ndarray | None = None

    def add_column(self, name: str) -> None:
        """Make room for a column (nulls in every slot written so far)."""
        self._values.setdefault(name, [None] * len(self._slots))

    def put(self, slots: np.ndarray, values: Mapping[str, pa.Array | None]) -> None:
        """Write one chunk's kept rows: ``values`` by column name, each holding ``len(slots)``
        values (a column missing or None: nulls)."""
        if not len(slots):
            return
        self._arranged = False
        self._slots.append(slots)
        for name, parts in self._values.items():
            parts.append(values.get(name))
        self._held += len(slots)
        if self._held > 2 * self.capacity:
            slots, keep = self._plan()
            for name, parts in self._values.items():
                joined = self._joined(parts)
                self._values[name] = [joined if keep is None else joined.take(pa.array(keep))]
            self._slots, self._held = [slots], len(slots)

    def merge(self, other: RowSample) -> None:
        """Append ``other``'s writes after this sample's (its later writes win a slot)."""
        for name in other._values:
            self.add_column(name)
        count = len(other._slots)
        for name, parts in self._values.items():
            parts.extend(other._values.get(name, [None] * count))
        self._slots.extend(other._slots)
        self._held += other._held
        self._arranged = False

    def _plan(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The slots held, ascending, and for each the position of its last write in the
        concatenated parts (None: the parts hold each slot once, in order)."""
        if not self._slots:
            return np.empty(0, np.int64), None
        slots = np.concatenate(self._slots)
        if len(slots) <= self.capacity and (np.diff(slots) > 0).all():
            return slots, None  # still filling: every slot written once, in order
        last = np.full(self.capacity, -1, dtype=np.int64)
        base = 0
        for part in self._slots:  # a part holds each slot at most once; later parts win
            last[part] = np.arange(base, base + len(part), dtype=np.int64)
            base += len(part)
        held = np.flatnonzero(last >= 0)
        return held, last[held]

    def _joined(self, parts: list[pa.Array | None]) -> pa.Array:
        return _concat([pa.nulls(len(slots)) if part is None else part
                        for slots, part in zip(self._slots, parts, strict=True)])

    def arrange(self, size: int) -> None:
        """Fix what :meth:`values` returns: the ``size`` first slots, in slot order."""
        slots, keep = self._plan()
        self._arranged = True
        if keep is None and len(slots) == size and (size == 0 or slots[-1] == size - 1):
            self._order = None  # the parts as they are
            return
        positions = np.arange(len(slots), dtype=np.int64) if keep is None else keep
        order = np.full(size, -1, dtype=np.int64)
        inside = slots < size
        order[slots[inside]] = positions[inside]
        self._order = order

    def values(self, name: str, as_stored: bool = False) -> pa.Array:
        """One column's values in the slots :meth:`arrange` fixed (null where none was written).

        ``as_stored``: a column held in one part, in slot order, comes as that part, not copied
        (its buffers may then hold more than its values: none of the value-wise kernels mind,
        but code reading the raw buffers would). Once arranged, safe to call from several
        threads at once.
        """
        if not self._arranged:
            raise RuntimeError("RowSample.values() before arrange()")
        parts = self._values[name]
        if as_stored and self._order is None and len(parts) == 1 and parts[0] is not None:
            return parts[0]
        joined = self._joined(self._values[name]) if self._slots else pa.nulls(0)
        if self._order is None:
            return joined
        return joined.take(pa.array(self._order, mask=self._order < 0))


def _concat(parts: list[pa.Array]) -> pa.Array:
    """One array of ``parts``; parts of different types (JSON's mixed columns) become text."""
    types = {p.type for p in parts if not pa.types.is_null(p.type)}
    if not types:
        return pa.concat_arrays(parts) if len(parts) > 1 else parts[0]
    if len(types) == 1:
        target = types.pop()
        return pa.concat_arrays([p.cast(target) if pa.types.is_null(p.type) else p
                                 for p in parts])
    texts = [
        p.cast(pa.string()) if pa.types.is_null(p.type)
        else canonical_texts(p, arrow_data_type(p.type) or DataType.STRING)
        for p in parts
    ]
    return pa.concat_arrays(texts)
