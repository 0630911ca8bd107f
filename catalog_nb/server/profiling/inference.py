"""Reading a column's type: Arrow types, JSON/SQL values and text that may hold typed values.

Type inference (``infer="all"``, used for CSV text) looks at each chunk on its own and joins the
chunks' types: LONG + DOUBLE = DOUBLE, DATE + TIMESTAMP = TIMESTAMP, anything else mixed = STRING.
Numbers with a leading zero (``007``) and integers too large for 64 bits stay STRING, so zip codes
and long identifiers keep their text. Booleans are ``true``/``false`` in any case (``0``/``1``
are numbers); dates and timestamps are ISO-8601 only, because ``01/02/2024`` is ambiguous.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from catalog_nb.server.profiling.model import DataType
from catalog_nb.server.profiling.sketch import FEW_VALUES, value_text

Inference = Literal["all", "temporal", "none"]

#: How a text that may be a date or a timestamp starts.
DATE_START = re.compile(r"\s*\d{4}-\d{2}-\d{2}")
#: What Arrow's ASCII trimming strips (Python's ``str.strip()`` strips \x1c-\x1f too).
ASCII_BLANKS = " \t\n\v\f\r"


@dataclass
class Column:
    """One column of one chunk: its values and how to read their type.

    ``infer``: ``all`` (text that may hold numbers, booleans, dates: CSV), ``temporal`` (strings
    that may hold dates: JSON strings) or ``none`` (the Arrow type says it). ``kind`` overrides the
    type (the JSON reader passes arrays as JSON text with ``kind=ARRAY``).
    """

    values: pa.Array
    infer: Inference = "none"
    kind: DataType | None = None


def arrow_data_type(arrow_type: pa.DataType) -> DataType | None:
    """The catalog type of an Arrow type (None for the null type)."""
    t = arrow_type.value_type if pa.types.is_dictionary(arrow_type) else arrow_type
    if pa.types.is_null(t):
        return None
    checks: list[tuple[Any, DataType]] = [
        (pa.types.is_boolean, DataType.BOOLEAN),
        (pa.types.is_integer, DataType.LONG),
        (pa.types.is_floating, DataType.DOUBLE),
        (pa.types.is_decimal, DataType.DOUBLE),
        (pa.types.is_date, DataType.DATE),
        (pa.types.is_timestamp, DataType.TIMESTAMP),
        (pa.types.is_binary, DataType.BINARY),
        (pa.types.is_large_binary, DataType.BINARY),
        (pa.types.is_fixed_size_binary, DataType.BINARY),
        (pa.types.is_list, DataType.ARRAY),
        (pa.types.is_large_list, DataType.ARRAY),
        (pa.types.is_fixed_size_list, DataType.ARRAY),
        (pa.types.is_struct, DataType.STRUCT),
        (pa.types.is_map, DataType.STRUCT),
    ]
    for check, data_type in checks:
        if check(t):
            return data_type
    return DataType.STRING  # strings, times of day, durations, intervals


def join_types(a: DataType | None, b: DataType | None) -> DataType | None:
    """The narrowest type holding both (None = no non-null value seen yet)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    pair = {a, b}
    if pair == {DataType.LONG, DataType.DOUBLE}:
        return DataType.DOUBLE
    if pair == {DataType.DATE, DataType.TIMESTAMP}:
        return DataType.TIMESTAMP
    return DataType.STRING


def python_column(values: list[Any]) -> Column:
    """A chunk column from Python values (JSON records, SQL rows, pandas object columns)."""
    kinds = {type(v) for v in values if v is not None}
    try:
        if not kinds:
            return Column(pa.nulls(len(values)))
        if kinds <= {bool}:
            return Column(pa.array(values, pa.bool_()))
        if kinds <= {int}:
            return Column(pa.array(values, pa.int64()))
        if kinds <= {int, float}:
            return Column(pa.array(values, pa.float64()))
        if kinds <= {str}:
            return Column(pa.array(values, pa.string()), infer="temporal")
        if kinds <= {list, tuple}:
            return Column(_json_texts(values), kind=DataType.ARRAY)
        if kinds <= {dict}:
            return Column(_json_texts(values), kind=DataType.STRUCT)
        if len(kinds) == 1:  # dates, decimals, bytes...: let Arrow type them
            return Column(pa.array(values))
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        pass  # out-of-range integers, odd objects: fall back to text below
    texts = [v if v is None or isinstance(v, str) else _text(v) for v in values]
    return Column(pa.array(texts, pa.string()))


def _text(value: Any) -> str | None:
    if isinstance(value, list | tuple | dict):
        return json.dumps(value, default=str, ensure_ascii=False)
    return value_text(value)


def _json_texts(values: list[Any]) -> pa.Array:
    return pa.array([None if v is None else _text(v) for v in values], pa.string())


def is_text_type(arrow_type: pa.DataType) -> bool:
    """Whether an Arrow type holds strings (any of Arrow's string layouts)."""
    return bool(
        pa.types.is_string(arrow_type)
        or pa.types.is_large_string(arrow_type)
        or pa.types.is_string_view(arrow_type)
    )


def prepare_array(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """One contiguous array, dictionaries decoded, strings in Arrow's plain ``string`` layout."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    if is_text_type(values.type) and not pa.types.is_string(values.type):
        values = values.cast(pa.string())
    return values


def try_cast(values: pa.Array, target: pa.DataType) -> pa.Array | None:
    try:
        return values.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


#: Values a cast is first tried on: a failing cast costs fifty times a succeeding one in Arrow,
#: so a chunk of text is only cast whole when its first values convert.
PROBE_VALUES = 64


def _probe_cast(values: pa.Array, target: pa.DataType) -> pa.Array | None:
    """``values`` cast to ``target``, or None; a cheap probe of the first values first."""
    head = values.slice(0, PROBE_VALUES).drop_null()
    if len(head) and try_cast(head, target) is None:
        return None
    return try_cast(values, target)


def _any(mask: pa.Array) -> bool:
    return bool(pc.any(mask).as_py())


def _all(mask: pa.Array) -> bool:
    return bool(pc.all(mask).as_py())


def _booleans(texts: pa.Array) -> bool:
    """Whether every non-null text is ``true`` or ``false`` (any case)."""
    return _all(pc.is_in(pc.utf8_lower(texts.drop_null()), pa.array(["true", "false"])))


def _ends(texts: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per value: where it starts in the data, its length in bytes, whether it is valid, and the
    data padded with 3 zero bytes (so reading 3 bytes past any start is safe)."""
    validity, offsets, data = texts.buffers()
    bounds = np.frombuffer(offsets, dtype=np.int32)[texts.offset: texts.offset + len(texts) + 1]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    valid = (texts.is_valid().to_numpy(zero_copy_only=False) if validity is not None
             else np.ones(len(texts), dtype=bool))
    return bounds[:-1], np.diff(bounds), valid, np.concatenate([raw, np.zeros(3, np.uint8)])


_ASCII_BLANKS = np.zeros(256, dtype=bool)
_ASCII_BLANKS[[ord(blank) for blank in ASCII_BLANKS]] = True
_ASCII_BLANKS[0x80:] = True  # a multi-byte character may be a Unicode blank: look closer


def _maybe_blank_ends(texts: pa.Array) -> bool:
    """Whether some value may start or end with a blank (bytes read with NumPy, no copy)."""
    if len(texts) == 0:
        return False
    if len(texts) <= FEW_VALUES:
        # A character's first UTF-8 byte is the table's index: the character itself when
        # ASCII, 0x80 or more otherwise.
        return any(_ASCII_BLANKS[min(ord(text[0]), 0x80)] or _ASCII_BLANKS[min(ord(text[-1]), 0x80)]
                   for text in texts.to_pylist() if text)
    starts, lengths, valid, data = _ends(texts)
    filled = valid & (lengths > 0)
    first = data[starts[filled]]
    last = data[(starts + lengths - 1)[filled]]
    return bool(_ASCII_BLANKS[first].any() or _ASCII_BLANKS[last].any())


def _has_leading_zero(texts: pa.Array) -> bool:
    """Whether a number is written with a leading zero (``007``, ``-01.5``; ``0.5`` is not).

    Read off the first three bytes of each value with NumPy: a regex over every value costs ten
    times as much.
    """
    if len(texts) == 0:
        return False
    starts, lengths, valid, data = _ends(texts)

    def byte(at: int) -> np.ndarray:
        return np.where(lengths > at, data[starts + at], 0)

    first, second, third = byte(0), byte(1), byte(2)
    zero, nine = np.uint8(ord("0")), np.uint8(ord("9"))
    signed = (first == ord("+")) | (first == ord("-"))
    plain = (first == zero) & (second >= zero) & (second <= nine)
    after_sign = signed & (second == zero) & (third >= zero) & (third <= nine)
    return bool(((plain | after_sign) & valid).any())


def _integer_texts_only(texts: pa.Array) -> bool:
    """Whether every text is an integer (digits only): such numbers beyond 64 bits stay text."""
    if _any(pc.greater_equal(pc.find_substring(texts, "."), 0)):
        return False  # the common case, decided without a regex
    return _all(pc.match_substring_regex(texts, r"^[+-]?[0-9]+$"))


def infer_text(
    values: pa.Array, so_far: DataType | None, temporal_only: bool = False
) -> tuple[DataType, pa.Array]:
    """The type of a chunk of strings and the chunk cast to it.

    ``so_far`` is the column's type from earlier chunks: casts whose result could not change the
    joined type are skipped (after a LONG chunk only numbers matter; anything else makes STRING).
    """
    if so_far is DataType.STRING:
        return DataType.STRING, values
    # Arrow's casts refuse surrounding blanks; trimming copies every value, so it is only done
    # when some value may start or end with one.
    trimmed = pc.utf8_trim_whitespace(values) if _maybe_blank_ends(values) else values
    if not temporal_only and so_far in (None, DataType.LONG, DataType.DOUBLE):
        integers = None if so_far is DataType.DOUBLE else _probe_cast(trimmed, pa.int64())
        if integers is not None and not _has_leading_zero(trimmed):
            return DataType.LONG, integers
        floats = None if integers is not None else _probe_cast(trimmed, pa.float64())
        # Integers beyond 64 bits parse as floats but lose digits: keep them as text. (After a
        # DOUBLE chunk the integer cast was skipped: integers that fit are numbers still.)
        if (floats is not None and not _has_leading_zero(trimmed)) and (
            not _integer_texts_only(trimmed.drop_null())
            or (so_far is DataType.DOUBLE and try_cast(trimmed, pa.int64()) is not None)
        ):
            return DataType.DOUBLE, floats
        if so_far is not None:
            return DataType.STRING, values
    if not temporal_only and so_far in (None, DataType.BOOLEAN) and _booleans(
        trimmed.slice(0, PROBE_VALUES)
    ):
        lower = pc.utf8_lower(trimmed)
        if _booleans(lower):
            return DataType.BOOLEAN, pc.equal(lower, "true")
        if so_far is not None:
            return DataType.STRING, values
    if so_far in (None, DataType.DATE, DataType.TIMESTAMP):
        first = next((v for v in trimmed.drop_null().slice(0, 1).to_pylist()), "")
        if DATE_START.match(first):
            for data_type, target in (
                (DataType.DATE, pa.date32()),
                (DataType.TIMESTAMP, pa.timestamp("us")),
                (DataType.TIMESTAMP, pa.timestamp("us", "UTC")),
            ):
                typed = _probe_cast(trimmed, target)
                if typed is not None:
                    return data_type, typed
    return DataType.STRING, values
