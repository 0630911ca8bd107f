"""The sample-based half of the statistics, and feeding value sketches, in bulk.

* :class:`Reservoir`: which rows enter the bounded row sample (Algorithm R, fixed seed).
* :func:`sample_stats`: distinct count, most frequent values and patterns over a column's sampled
  values, with Arrow kernels (value counts, RE2 regex replacement) rather than Python loops.
* :func:`sketch_chunk`: one chunk's distinct values into a :class:`~.sketch.ValueSketch`, their
  canonical text built and normalised by Arrow; only the hashing runs per value in Python.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog_nb.server.profiling.inference import prepare_array, try_cast
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
    # value_text's rule for floats without its per-value type dispatch
    floats = values.to_pylist()
    texts = [
        None if v is None or v != v else str(int(v)) if v.is_integer() and abs(v) < 2**63
        else repr(v)
        for v in floats
    ]  # fmt: skip
    return pa.array(texts, pa.string())


def canonical_texts(values: pa.Array, data_type: DataType) -> pa.Array:
    """Values as the canonical text of :func:`.sketch.value_text`, in bulk where Arrow agrees.

    Arrow's casts of strings, integers, booleans and dates print exactly what ``value_text``
    prints, and timestamps are reshaped to its ISO form; floats are printed by Python (Arrow's
    shortest form differs from Python's for very large and very small numbers).
    """
    if pa.types.is_string(values.type):
        return values
    if pa.types.is_floating(values.type):
        return _float_texts(values.cast(pa.float64()))
    if pa.types.is_timestamp(values.type):
        # naive UTC microseconds, printed "2024-01-05 10:00:00.000000", made ISO like Python's
        text = values.cast(pa.timestamp("us"), safe=False).cast(pa.string())
        text = pc.replace_substring(text, " ", "T", max_replacements=1)
        return pc.replace_substring_regex(text, r"\.000000$", "")
    if data_type in (DataType.DOUBLE, DataType.TIMESTAMP):
        return _python_texts(values)
    return try_cast(values, pa.string()) or _python_texts(values)


def sketch_chunk(sketch: ValueSketch, typed: pa.Array, data_type: DataType) -> None:
    """Add a chunk's distinct non-null values to ``sketch``."""
    raw = canonical_texts(pc.unique(typed).drop_null(), data_type)
    encoded = pc.utf8_lower(pc.utf8_trim_whitespace(raw)).cast(pa.binary()).to_pylist()
    sketch.add_encoded(encoded, lambda index: str(raw[index].as_py()))


def shapes(texts: pa.Array) -> pa.Array:
    """Patterns of texts: uppercase letters -> ``A``, other letters -> ``a``, digits -> ``9``,
    anything else kept; runs are not collapsed; cut to 40 characters plus ``…``."""
    cut = pc.utf8_slice_codeunits(texts, 0, PATTERN_CHARS)
    shaped = _ascii_shapes(cut)
    if shaped is None:  # other scripts: Unicode classes, slower
        shaped = pc.replace_substring_regex(cut, r"\p{Lu}", "A")
        shaped = pc.replace_substring_regex(shaped, r"[\p{Ll}\p{Lt}\p{Lm}\p{Lo}]", "a")
        shaped = pc.replace_substring_regex(shaped, r"\p{Nd}", "9")
    longer = pc.greater(pc.utf8_length(texts), PATTERN_CHARS)
    marked = pc.binary_join_element_wise(shaped, pa.scalar(CUT_MARK), "")
    return pc.if_else(longer, marked, shaped)


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


def _top(values: pa.Array, limit: int) -> tuple[int, list[tuple[Any, int]]]:
    """Number of distinct values and the ``limit`` most frequent (ties by value)."""
    counts = pc.value_counts(values)
    table = pa.table({"value": counts.field("values"), "count": counts.field("counts")})
    top = table.sort_by([("count", "descending"), ("value", "ascending")]).slice(0, limit)
    return len(counts), list(zip(top["value"].to_pylist(), top["count"].to_pylist(), strict=True))


def _sample_array(sample: list[Any]) -> pa.Array:
    try:
        values = pa.array(sample)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        values = pa.array([value_text(v) for v in sample], pa.string())  # mixed Python types
    return prepare_array(values).drop_null()


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


def sample_stats(data_type: DataType, sample: list[Any]) -> dict[str, Any]:
    """``distinctCount``, ``mostFrequent`` and ``patterns`` over one column's sampled values."""
    values = _sample_array(sample)
    texts = canonical_texts(values, data_type)
    distinct, top = _top(_typed(values, texts, data_type), TOP_VALUES)
    _, top_shapes = _top(shapes(texts), TOP_PATTERNS)
    return {
        "distinctCount": distinct,
        "mostFrequent": [
            {"value": v[:SHOWN_CHARS] if isinstance(v, str) else json_number(v), "count": n}
            for v, n in top
        ],
        "patterns": [{"pattern": p, "count": n} for p, n in top_shapes],
    }


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
