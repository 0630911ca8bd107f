"""Column statistics with bounded memory, fed chunk by chunk.

Two kinds of statistics, so that a 1 GB file never has to sit in memory:

* **Streaming, exact** over every row read: row count, null/value counts, min/max, mean, string
  length range, the inferred type, and the value sketch (:mod:`.sketch`). Each chunk is reduced
  to a few numbers with Arrow compute kernels and merged; merging is associative, so the result
  does not depend on how the rows were cut into chunks.
* **Sample-based** over a bounded reservoir sample of rows (default 100,000, Algorithm R with a
  fixed seed, one uniform draw per row so the sample does not depend on chunking either):
  distinct counts when every row fits the sample, most frequent values and patterns. The sample
  is kept as Arrow arrays (:class:`~.sampling.RowSample`), never as Python objects.

Types are read per chunk by :mod:`.inference` and joined across chunks. The columns of a chunk
are folded in on a small pool of threads (Arrow's and Polars' kernels release the GIL), so
profiling uses every core while the reader parses the next block.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any, TypeVar

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from catalog_nb.server.profiling import few
from catalog_nb.server.profiling.inference import (
    Column,
    arrow_data_type,
    infer_text,
    is_text_type,
    join_types,
    prepare_array,
    python_column,
    try_cast,
)
from catalog_nb.server.profiling.keys import KeyInference, infer_keys
from catalog_nb.server.profiling.model import DataType, FieldProfile
from catalog_nb.server.profiling.sampling import (
    SAMPLE_SEED,
    SHOWN_CHARS,
    Picks,
    Reservoir,
    RowSample,
    canonical_texts,
    json_number,
    sample_stats,
    sketch_chunk,
)
from catalog_nb.server.profiling.sketch import (
    DEFAULT_K,
    ValueSketch,
    normalise_texts,
    value_text,
)
from catalog_nb.server.profiling.threads import run_in_background

DEFAULT_SAMPLE_ROWS = 100_000
SAMPLED_VALUE_CHARS = 1000
_SCALARS = {
    DataType.STRING, DataType.LONG, DataType.DOUBLE, DataType.BOOLEAN, DataType.DATE,
    DataType.TIMESTAMP,
}  # fmt: skip
_NO_SAMPLE = {DataType.BINARY, DataType.ARRAY, DataType.STRUCT}
_T = TypeVar("_T")
_R = TypeVar("_R")
#: A column whose distinct values are fewer than this share of its values is deduplicated
#: before sketching (judged by its sketch so far).
DISTINCT_FIRST_SHARE = 0.2
#: Below this many values in a chunk, or this many per column, threads cost more than they save.
PARALLEL_MIN_CELLS = 20_000
PARALLEL_MIN_ROWS = 1_000


@cache
def _pool() -> ThreadPoolExecutor:
    """The threads that fold columns in, shared by every profiler of the process."""
    return ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1),
                              thread_name_prefix="catalog-profile",
                              initializer=run_in_background)


def _each(work: Callable[[_T], _R], items: list[_T], cells: int,
          costs: Sequence[float] | None = None) -> list[_R]:
    """``work`` over ``items``, results in order; on the pool when each item has enough cells
    to share (a wide document's thousands of one-value columns would only make the threads
    wait). ``costs`` (one per item, any unit) start the dearest items first: a long text
    column started last would keep one thread busy after the other ran out of work."""
    if len(items) > 1 and cells >= PARALLEL_MIN_CELLS and cells >= PARALLEL_MIN_ROWS * len(items):
        order = list(range(len(items)))
        if costs is not None:
            order.sort(key=lambda i: -costs[i])
        futures = {i: _pool().submit(work, items[i]) for i in order}
        return [futures[i].result() for i in range(len(items))]  # the first failure raises
    return [work(item) for item in items]


def _nbytes(column: Column | pa.Array) -> int:
    """The size of a chunk's column in memory (its buffers), a cheap measure of its cost."""
    values = column.values if isinstance(column, Column) else column
    return int(values.nbytes) if hasattr(values, "nbytes") else 0


def _longest_bytes(texts: pa.Array) -> int:
    """The length in bytes of the longest of some texts (0 when there are none)."""
    if len(texts) <= few.FEW_ROWS:  # two Arrow calls cost more than a few encodings
        return max((len(t.encode()) for t in texts.to_pylist() if t is not None), default=0)
    return int(pc.max(pc.binary_length(texts)).as_py() or 0)


def _as_naive_utc(value: Any) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        return dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _merge_min(current: Any, new: Any) -> Any:
    return new if current is None or (new is not None and new < current) else current


def _merge_max(current: Any, new: Any) -> Any:
    return new if current is None or (new is not None and new > current) else current


class ColumnAccumulator:
    """Streaming statistics of one column; :meth:`update` with each chunk, then :meth:`result`.

    ``declared`` fixes the reported type (Parquet, SQL); without it the type is inferred.
    """

    def __init__(
        self,
        name: str,
        declared: DataType | None = None,
        declared_nullable: bool | None = None,
        sketch_k: int = DEFAULT_K,
    ) -> None:
        self.name = name
        self.declared = declared
        self.declared_nullable = declared_nullable
        self.type: DataType | None = None
        self.value_count = 0
        self.num_min: Any = None
        self.num_max: Any = None
        self.num_sum = 0.0
        self.num_count = 0
        self.time_min: dt.datetime | None = None
        self.time_max: dt.datetime | None = None
        self.text_min: str | None = None
        self.text_max: str | None = None
        self.len_min: int | None = None
        self.len_max: int | None = None
        self.text_gap = False  # typed chunks whose texts were not looked at
        self.sketch = ValueSketch(k=sketch_k)
        self._resumed = False  # continues rows read elsewhere (see :meth:`resume`)

    def update(self, column: Column | pa.Array) -> DataType | None:
        """Fold one chunk in; returns the chunk's type (None when all of it is null)."""
        col = column if isinstance(column, Column) else Column(column)
        values = prepare_array(col.values)
        fresh = self.value_count == 0 and not self._resumed
        self.value_count += len(values) - values.null_count
        if values.null_count == len(values):
            return None
        if fresh and len(values) <= few.FEW_ROWS:
            found = few.read_few(Column(values, col.infer, col.kind),
                                 [v for v in values.to_pylist() if v is not None])
            if found is not None:
                return self._few(found)
        chunk_type, typed = self._chunk_type(col, values)
        self.type = join_types(self.type, chunk_type)
        if chunk_type in (DataType.LONG, DataType.DOUBLE):
            self._numbers(typed)
        elif chunk_type in (DataType.DATE, DataType.TIMESTAMP):
            self._times(typed)
        if chunk_type is DataType.STRING:
            self._texts(values)
        elif self.declared is None and chunk_type not in _NO_SAMPLE:
            # A typed chunk's texts only matter if a later chunk makes the column STRING; that
            # is rare, and then the file is read again for them (see :meth:`add_texts`).
            self.text_gap = True
        if chunk_type in _SCALARS:
            # A column seen to repeat its values has them made distinct before they are
            # printed and hashed; one of mostly distinct values is hashed whole, as finding
            # the distinct strings costs more than hashing them all.
            seen = self.value_count - (len(values) - values.null_count)
            repeats = seen > 0 and self.sketch.distinct_count() < DISTINCT_FIRST_SHARE * seen
            sketch_chunk(self.sketch, pc.unique(typed) if repeats else typed, chunk_type)
        return chunk_type

    def resume(self, data_type: DataType | None) -> None:
        """Go on as if earlier rows, read elsewhere, had made the column ``data_type``: a chunk's
        type is read in the light of the type so far (:func:`.inference.infer_text`), so a part
        of a file profiled on its own (the Spark engine) must know it to read as one stream."""
        self.type = data_type
        self._resumed = data_type is not None

    def merge(self, other: ColumnAccumulator) -> None:
        """Fold in the statistics of the rows that follow this accumulator's (another part of
        the same column, read elsewhere); the sum of means is added as one number (callers
        that need the stream's exact float sum add the parts' chunk sums in order)."""
        self.type = join_types(self.type, other.type)
        self.value_count += other.value_count
        self.num_min = _merge_min(self.num_min, other.num_min)
        self.num_max = _merge_max(self.num_max, other.num_max)
        self.num_sum += other.num_sum
        self.num_count += other.num_count
        self.time_min = _merge_min(self.time_min, other.time_min)
        self.time_max = _merge_max(self.time_max, other.time_max)
        self.text_min = _merge_min(self.text_min, other.text_min)
        self.text_max = _merge_max(self.text_max, other.text_max)
        self.len_min = _merge_min(self.len_min, other.len_min)
        self.len_max = _merge_max(self.len_max, other.len_max)
        self.text_gap = self.text_gap or other.text_gap
        self.sketch.merge(other.sketch)

    def _few(self, found: few.FewChunk) -> DataType:
        """:meth:`update`'s work on a fresh column's few values, read in Python (:mod:`.few`)."""
        chunk_type = found.data_type
        self.type = chunk_type
        if found.numbers is not None:
            self.num_min, self.num_max = min(found.numbers), max(found.numbers)
            if found.total is not None:
                self.num_sum += found.total
                self.num_count += found.count
        if found.texts is not None:
            lengths = [len(text) for text in found.texts]
            self.len_min, self.len_max = min(lengths), max(lengths)
            self.text_min, self.text_max = min(found.texts), max(found.texts)
        elif self.declared is None and chunk_type not in _NO_SAMPLE:
            self.text_gap = True
        if found.raws is not None and found.normalised is not None:
            self.sketch.add_few_texts(found.raws, found.normalised)
        return chunk_type

    def _chunk_type(self, col: Column, values: pa.Array) -> tuple[DataType, pa.Array]:
        if col.kind is not None:
            return col.kind, values
        natural = arrow_data_type(values.type) or DataType.STRING
        if natural is DataType.STRING and not pa.types.is_string(values.type):
            values = try_cast(values, pa.string()) or pa.array(
                [value_text(v) for v in values.to_pylist()], pa.string()
            )
        if natural is DataType.STRING and col.infer != "none":
            return infer_text(values, self.type, temporal_only=col.infer == "temporal")
        return natural, values

    def _numbers(self, typed: pa.Array) -> None:
        low, high = pc.min_max(typed).values()
        self.num_min = _merge_min(self.num_min, low.as_py())
        self.num_max = _merge_max(self.num_max, high.as_py())
        floats = try_cast(typed, pa.float64())
        if floats is not None:
            total = pc.sum(floats).as_py()
            self.num_sum += total or 0.0
            self.num_count += len(floats) - floats.null_count

    def _times(self, typed: pa.Array) -> None:
        low, high = pc.min_max(typed).values()
        if low.is_valid:
            self.time_min = _merge_min(self.time_min, _as_naive_utc(low.as_py()))
            self.time_max = _merge_max(self.time_max, _as_naive_utc(high.as_py()))

    def add_texts(self, values: pa.Array) -> None:
        """Fold a chunk's texts into the text range again (min/max: reading twice is harmless)."""
        if values.null_count < len(values):
            self._texts(values)

    def _texts(self, values: pa.Array) -> None:
        texts = values if pa.types.is_string(values.type) else try_cast(values, pa.string())
        if texts is None:
            return
        low, high = pc.min_max(pc.utf8_length(texts)).values()
        self.len_min = _merge_min(self.len_min, low.as_py())
        self.len_max = _merge_max(self.len_max, high.as_py())
        first, last = pc.min_max(texts).values()
        self.text_min = _merge_min(self.text_min, first.as_py())
        self.text_max = _merge_max(self.text_max, last.as_py())

    @property
    def data_type(self) -> DataType:
        """The reported type: declared, else inferred (STRING when nothing was seen)."""
        return self.declared or self.type or DataType.STRING

    def result(
        self, row_count: int, sample: pa.Array, sample_size: int, sampled: bool
    ) -> FieldProfile:
        """The field's profile; ``sample`` holds this column's values of the sampled rows."""
        data_type = self.data_type
        nulls = row_count - self.value_count
        props: dict[str, Any] = {
            "density": self.value_count / row_count if row_count else None,
            "valueCount": self.value_count,
            "nullCount": nulls,
        }
        props.update(self._range(data_type))
        if data_type not in _NO_SAMPLE:
            share = self.sketch.distinct_count() / self.value_count if self.value_count else 0.0
            props.update(sample_stats(data_type, sample, share))
        exact = not sampled and data_type not in _NO_SAMPLE
        if not exact:
            estimate = None
            if data_type in _SCALARS:
                estimate = round(min(self.sketch.distinct_count(), self.value_count))
            props["distinctCount"] = estimate
        props["distinctCountApproximate"] = not exact and self.sketch.full
        props["sampled"] = sampled
        props["sampleSize"] = sample_size
        nullable = self.declared_nullable if self.declared_nullable is not None else nulls > 0
        sketch = self.sketch if data_type in _SCALARS else None
        return FieldProfile(self.name, data_type, nullable, props, sketch)

    def _range(self, data_type: DataType) -> dict[str, Any]:
        if data_type in (DataType.LONG, DataType.DOUBLE):
            low, high = self.num_min, self.num_max
            if data_type is DataType.DOUBLE and low is not None:
                low, high = float(low), float(high)
            mean = self.num_sum / self.num_count if self.num_count else None
            return {
                "min": json_number(low) if low is not None else None,
                "max": json_number(high) if high is not None else None,
                "mean": json_number(mean) if mean is not None else None,
            }
        if data_type in (DataType.DATE, DataType.TIMESTAMP):
            def iso(value: dt.datetime | None) -> str | None:
                if value is None:
                    return None
                return value.date().isoformat() if data_type is DataType.DATE else value.isoformat()

            return {"min": iso(self.time_min), "max": iso(self.time_max)}
        if data_type is DataType.STRING:
            return {
                "min": None if self.text_min is None else self.text_min[:SHOWN_CHARS],
                "max": None if self.text_max is None else self.text_max[:SHOWN_CHARS],
                "minLength": self.len_min,
                "maxLength": self.len_max,
            }
        return {}


class TableProfiler:
    """Profiles a table fed as chunks of columns; columns may come and go between chunks."""

    def __init__(
        self,
        sample_rows: int = DEFAULT_SAMPLE_ROWS,
        declared: Mapping[str, tuple[DataType, bool | None]] | None = None,
        sketch_k: int = DEFAULT_K,
        seed: int = SAMPLE_SEED,
        picks: Callable[[], Picks] | None = None,
    ) -> None:
        self.sample_rows = sample_rows
        self._initial = dict(declared or {})
        self._sketch_k = sketch_k
        self._seed = seed
        #: which rows enter the sample: a fresh reservoir by default; the Spark engine passes
        #: the rows a reservoir over the whole stream chose in its part (:class:`.PlannedPicks`)
        self._picks = picks
        self.reset()

    def reset(self) -> None:
        """Forget every row fed (to read the same data again another way)."""
        self.row_count = 0
        self._declared = dict(self._initial)
        self._reservoir: Picks = (Reservoir(self.sample_rows, self._seed) if self._picks is None
                                  else self._picks())
        self._columns: dict[str, ColumnAccumulator] = {}
        self._sample = RowSample(self.sample_rows)
        #: the keys :meth:`fields` inferred (:mod:`.keys`)
        self.keys = KeyInference()
        for name in self._declared:
            self._column(name)

    def _column(self, name: str) -> ColumnAccumulator:
        if name not in self._columns:
            declared, nullable = self._declared.get(name, (None, None))
            self._columns[name] = ColumnAccumulator(name, declared, nullable, self._sketch_k)
            self._sample.add_column(name)
        return self._columns[name]

    def declare(
        self, name: str, data_type: DataType | None = None, nullable: bool | None = None
    ) -> None:
        """Make sure a column exists (in this order), optionally with a fixed type."""
        if data_type is not None:
            self._declared[name] = (data_type, nullable)
        self._column(name)

    def resume(self, types: Mapping[str, DataType]) -> None:
        """Go on after rows read elsewhere that gave these columns these types (see
        :meth:`ColumnAccumulator.resume`); the columns are made now, in this order."""
        for name, data_type in types.items():
            self._column(name).resume(data_type)

    def merge(self, other: TableProfiler) -> None:
        """Fold in a profiler of the rows that follow this one's (the Spark engine's parts, in
        stream order): columns in order of first appearance, statistics merged, the sample's
        writes appended after this one's (``other`` must have chosen its rows from the same
        stream: see :class:`.PlannedPicks`)."""
        for name, accumulator in other._columns.items():
            if name in self._columns:
                self._columns[name].merge(accumulator)
            else:
                self._columns[name] = accumulator
                self._sample.add_column(name)
        self._sample.merge(other._sample)
        self.row_count += other.row_count

    def column(self, name: str) -> ColumnAccumulator:
        """The accumulator of a column seen so far (KeyError when it was not)."""
        return self._columns[name]

    def add_chunk(self, columns: Mapping[str, Column | pa.Array], n_rows: int) -> None:
        """Fold a chunk of ``n_rows`` rows in (each column holds ``n_rows`` values)."""
        rows, slots = self._reservoir.offer(n_rows)
        take = pa.array(rows, pa.int64())
        prefix = len(rows) > 0 and int(rows[-1]) == len(rows) - 1  # rows 0..n-1, ascending
        work = [(self._column(name), column) for name, column in columns.items()]

        def fold(item: tuple[ColumnAccumulator, Column | pa.Array]) -> pa.Array | None:
            """The column's statistics updated; returns its values of the sampled rows."""
            accumulator, column = item
            col = column if isinstance(column, Column) else Column(column)
            col.values = prepare_array(col.values)
            chunk_type = accumulator.update(col)
            if not len(rows) or chunk_type in _NO_SAMPLE:
                return None
            # While the reservoir fills, it takes a prefix of the chunk: a zero-copy slice
            values = (col.values.slice(0, len(rows)) if prefix else col.values.take(take))
            # Cut only when some value is longer (in bytes, read off the offsets) than the cut
            # in characters: cutting copies every value.
            if pa.types.is_string(values.type) and _longest_bytes(values) > SAMPLED_VALUE_CHARS:
                values = pc.utf8_slice_codeunits(values, 0, SAMPLED_VALUE_CHARS)
            return values

        sampled = _each(fold, work, n_rows * len(work),
                        [_nbytes(column) for _, column in work])
        self._sample.put(slots, {acc.name: values
                                 for (acc, _), values in zip(work, sampled, strict=True)})
        self.row_count += n_rows

    def text_gaps(self) -> list[str]:
        """Columns that turned STRING after typed chunks whose texts were not looked at: their
        text range needs a second read (:meth:`add_texts`)."""
        return [name for name, acc in self._columns.items()
                if acc.text_gap and acc.data_type is DataType.STRING]

    def add_texts(self, columns: Mapping[str, Column | pa.Array]) -> None:
        """Second read of the same rows: only the text ranges of :meth:`text_gaps` columns."""
        for name in self.text_gaps():
            column = columns.get(name)
            if column is not None:
                values = column.values if isinstance(column, Column) else column
                self._columns[name].add_texts(prepare_array(values))

    @property
    def names(self) -> list[str]:
        """Column names in order of first appearance."""
        return list(self._columns)

    def fields(self, sampled: bool | None = None) -> list[FieldProfile]:
        """Every column's profile. ``sampled`` overrides whether the rows fed were a sample."""
        size = min(self.row_count, self.sample_rows)
        was_sampled = self.row_count > self.sample_rows if sampled is None else sampled

        self._sample.arrange(size)

        def result(name: str) -> FieldProfile:
            # one value-wise use: a one-part sample need not be copied (a wide document's)
            sample = self._sample.values(name, as_stored=True)
            return self._columns[name].result(self.row_count, sample, size, was_sampled)

        # Long texts cost most to count and shape (values longer than 40 characters are cut).
        fields = _each(result, list(self._columns), size * len(self._columns),
                       [acc.len_max or 0 for acc in self._columns.values()])
        self.keys = infer_keys(fields, self._key_texts, self.row_count, not was_sampled,
                               self._sketch_k,
                               each=lambda work, items: _each(work, items, size * len(items)))
        for (first, second), pair in self.keys.pairs.items():
            owner = next(f for f in fields if f.name == first)
            if owner.sketch is not None:
                owner.sketch.pairs[second] = pair
        return fields

    def _key_texts(self, item: FieldProfile) -> pa.Array:
        """A field's sampled values as the normalised canonical texts sketches hash."""
        values = self._sample.values(item.name)
        return normalise_texts(canonical_texts(values, item.data_type).cast(pa.string()))


def profile_frame(
    frame: pd.DataFrame,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    infer_types: bool = False,
    chunk_rows: int = 50_000,
) -> list[FieldProfile]:
    """Profile a pandas DataFrame (column names as text). ``infer_types`` treats string columns
    as CSV text (numbers, booleans and dates inside strings are recognised)."""
    profiler = TableProfiler(sample_rows)
    for start in range(0, max(len(frame), 1), chunk_rows):
        part = frame.iloc[start : start + chunk_rows]
        profiler.add_chunk({str(c): _series_column(part[c], infer_types) for c in part}, len(part))
    return profiler.fields()


def profile_series(series: pd.Series, sample_rows: int = DEFAULT_SAMPLE_ROWS) -> FieldProfile:
    """Profile one pandas Series (see :func:`profile_frame`)."""
    name = str(series.name) if series.name is not None else "value"
    return profile_frame(series.to_frame(name), sample_rows)[0]


def _series_column(series: pd.Series, infer_types: bool) -> Column:
    if series.dtype == object:
        column = python_column(series.where(series.notna(), None).tolist())
    else:
        column = Column(pa.Array.from_pandas(series))
    if infer_types and is_text_type(column.values.type):
        column.infer = "all"
    return column


def iter_chunks(values: Iterable[Any], size: int) -> Iterable[list[Any]]:
    """Lists of up to ``size`` items (the readers' chunking helper)."""
    chunk: list[Any] = []
    for value in values:
        chunk.append(value)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
