"""A column's first few values read in Python: the profiler's fast path for short chunks.

A wide document (one JSON object of 300,000 keys) is a chunk of one row and as many columns.
Each Arrow call costs a few microseconds whatever its size, and the Arrow path makes a dozen
per column (type, range, canonical text, normalising, hashing, sample statistics), so such a
chunk spends its time in call overhead. Up to :data:`FEW_ROWS` values, the column is read here
from its Python values instead, by the same rules with the same results.

The Python path only takes what it reads exactly as Arrow does, and says so by returning None
for the rest, which then goes the Arrow way: dates and text that may hold them, CSV text that
may hold numbers or booleans, non-ASCII text (Arrow and Python lower-case a few letters
differently), several floats (Arrow sums them pairwise), integers whose sum a float could not
hold exactly, and any other Arrow type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from catalog_nb.server.profiling.inference import ASCII_BLANKS, DATE_START, Column
from catalog_nb.server.profiling.model import DataType
from catalog_nb.server.profiling.sketch import FEW_VALUES, value_text

#: Up to this many values a fresh column's chunk is read in Python (see the module docstring).
FEW_ROWS = FEW_VALUES
#: Integers a float64 holds exactly: Arrow refuses to cast larger ones, and sums of integers
#: within it are exact whatever the order of the additions.
_EXACT_FLOAT_INT = 2**53
_SEPARATORS = frozenset("\x1c\x1d\x1e\x1f")
#: Lower-cased substrings of the texts Arrow would read as a float or a boolean without a digit.
_WORDS = ("nan", "inf", "true", "false")


@dataclass
class FewChunk:
    """What a chunk's non-null values add to a fresh column's statistics."""

    data_type: DataType
    count: int
    #: numbers of a LONG or DOUBLE chunk; ``total`` their sum as Arrow makes it (None: no sum)
    numbers: list[Any] | None = None
    total: float | None = None
    #: texts of a STRING chunk (for the text range)
    texts: list[str] | None = None
    #: canonical texts and their normalised form (for the sketch); None when not sketched
    raws: list[str] | None = None
    normalised: list[str] | None = None


def read_few(col: Column, present: list[Any]) -> FewChunk | None:
    """A fresh column's chunk from its non-null Python values ``present`` (at least one) and
    Arrow array ``col.values`` (prepared); None when the Arrow path must read it."""
    arrow_type = col.values.type
    if col.kind is not None:
        if col.kind in (DataType.ARRAY, DataType.STRUCT, DataType.BINARY):
            return FewChunk(col.kind, len(present))
        return None
    if pa.types.is_string(arrow_type):
        return _texts(present, col.infer)
    if pa.types.is_boolean(arrow_type):
        raws = [str(value_text(value)) for value in present]
        return FewChunk(DataType.BOOLEAN, len(present), raws=raws, normalised=raws)
    if pa.types.is_integer(arrow_type):
        # Beyond it Arrow refuses the float cast, or may round the sum otherwise
        if sum(abs(value) for value in present) > _EXACT_FLOAT_INT:
            return None
        raws = [str(value) for value in present]
        return FewChunk(DataType.LONG, len(present), numbers=present, total=float(sum(present)),
                        raws=raws, normalised=raws)
    if pa.types.is_float64(arrow_type) and len(present) == 1 and math.isfinite(present[0]):
        raws = [str(value_text(present[0]))]
        return FewChunk(DataType.DOUBLE, 1, numbers=present, total=present[0], raws=raws,
                        normalised=raws)
    return None


def _texts(present: list[str], infer: str) -> FewChunk | None:
    # Arrow normalises ASCII texts with ASCII kernels only when its whole buffer is ASCII,
    # and its Unicode trimming also strips \x1c-\x1f: texts without those normalise alike
    # either way.
    if not all(text.isascii() and not _SEPARATORS.intersection(text) for text in present):
        return None
    if infer == "temporal" and DATE_START.match(present[0]):
        return None
    if infer == "all" and any(_may_be_typed(text) for text in present):
        return None
    normalised = [text.strip(ASCII_BLANKS).lower() for text in present]
    return FewChunk(DataType.STRING, len(present), texts=present, raws=present,
                    normalised=normalised)


def _may_be_typed(text: str) -> bool:
    """Whether CSV type inference might read an ASCII text as a number, boolean or date: every
    one of those holds a digit or a word of :data:`_WORDS`."""
    lower = text.lower()
    return any(c.isdigit() for c in text) or any(word in lower for word in _WORDS)


def few_texts(values: pa.Array, data_type: DataType) -> tuple[list[Any], list[str]] | None:
    """``sample_stats``' typed values and canonical texts of a few sampled values, read in
    Python (None when the Arrow path must make them)."""
    present = [value for value in values.to_pylist() if value is not None]
    if not present:
        return [], []
    arrow_type = values.type
    if pa.types.is_string(arrow_type):
        if data_type in (DataType.LONG, DataType.DOUBLE, DataType.BOOLEAN):
            return None  # the texts are parsed as the type: Arrow's rules
        return present, present
    if pa.types.is_boolean(arrow_type):
        if data_type in (DataType.LONG, DataType.DOUBLE):
            return None
        texts = [str(value_text(value)) for value in present]
        return (present if data_type is DataType.BOOLEAN else texts), texts
    if pa.types.is_integer(arrow_type):
        if any(abs(value) > _EXACT_FLOAT_INT for value in present):
            return None
        texts = [str(value) for value in present]
        if data_type is DataType.LONG:
            return present, texts
        if data_type is DataType.DOUBLE:
            return [float(value) for value in present], texts
        return texts, texts
    if pa.types.is_float64(arrow_type) and data_type is not DataType.LONG and all(
            math.isfinite(value) for value in present):
        texts = [str(value_text(value)) for value in present]
        return (present if data_type is DataType.DOUBLE else texts), texts
    return None
