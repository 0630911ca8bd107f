"""Chunked file readers: every reader yields ``(columns, n_rows)`` chunks of bounded size.

* CSV/TSV: Arrow's streaming CSV reader, every column as text (types are inferred per chunk by
  :mod:`.stats`), in blocks of 4 MB (cut, never glued, to at most ``chunk_rows`` rows). It reads
  from a Python file object, because given a path Arrow reads the whole file ahead into memory;
  progress counts the bytes of the rows handed out. Files that are not plain UTF-8 go through a
  transcoding stream (decode with the detected codec, re-encode as UTF-8) so Arrow only ever
  sees UTF-8.
* JSON lines: line by line; a line longer than ``MAX_RECORD_CHARS`` is a bad record, not a reason
  to hold it in memory.
* JSON arrays: streamed element by element with ``json.JSONDecoder.raw_decode`` over a sliding
  buffer, so an array of any length is read in bounded memory (one element may be at most
  ``MAX_RECORD_CHARS``). A top-level object is one record and must fit ``MAX_DOCUMENT_BYTES``.
* Parquet: schema, row count and, where every row group has them, each column's null count
  and min/max from the footer (:func:`parquet_footer`); values by record batches of
  ``chunk_rows`` (Arrow reads one row group at a time) of only the columns that need reading;
  struct columns flattened to dotted names like JSON.

Ragged CSV rows (a field count other than the header's) and undecodable JSON records are
skipped and counted in :class:`ReadReport`; the caller decides when there are too many.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import queue
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from catalog_nb.server.profiling.formats import (
    BLOCK_BYTES,
    HEAD_BYTES,
    Dialect,
    Encoding,
    check_text,
    flatten,
    head_text,
    read_head,
    sniff_dialect,
)
from catalog_nb.server.profiling.inference import Column, arrow_data_type, python_column
from catalog_nb.server.profiling.locations import DataFile, open_stream
from catalog_nb.server.profiling.model import DataType, FileFormat, ProfilingError, ReadProgress
from catalog_nb.server.profiling.threads import run_in_background

Chunk = tuple[dict[str, Column], int]
_T = TypeVar("_T")
Declared = dict[str, tuple[DataType, bool | None]]

NULL_VALUES = ["", "NULL", "null", "NA", "N/A", "n/a", "NaN", "nan", "None", "#N/A"]
MAX_RECORD_CHARS = 16 * 1024 * 1024
CSV_BLOCK_BYTES = 4 * 1024 * 1024
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
SCHEMA_RECORDS = 100


@dataclass
class FooterStats:
    """A Parquet column's statistics from the footer, summed over every row group."""

    null_count: int
    low: Any = None
    high: Any = None


@dataclass
class ReadReport:
    """What a reader had to skip: ragged CSV rows, bad JSON records (first one described).

    ``footer`` holds a Parquet file's footer statistics by field name; ``text_format`` and
    ``encoding`` say how a text file was read.
    """

    ragged_rows: int = 0
    bad_records: int = 0
    first_problem: str | None = None
    warnings: list[str] = field(default_factory=list)
    footer: dict[str, FooterStats] = field(default_factory=dict)
    #: How a text file was read (format and encoding), to read it again the same way.
    text_format: FileFormat | None = None
    encoding: Encoding | None = None

    def bad(self, where: str) -> None:
        self.bad_records += 1
        self.first_problem = self.first_problem or where


class ReadCounter:
    """Bytes read so far from a file, for progress; ``on_read`` hears each new total."""

    def __init__(self, on_read: ReadProgress | None = None, start: int = 0) -> None:
        self.total = start
        self.on_read = on_read

    def add(self, count: int) -> None:
        self.total += count
        if self.on_read is not None and count:
            self.on_read(self.total)


class _Counted(io.RawIOBase):
    """A file's raw byte stream that reports how far it has been read."""

    def __init__(self, path: DataFile, counter: ReadCounter) -> None:
        self._fh: Any = open_stream(path, buffering=0)
        self._counter = counter

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        size = self._fh.readinto(target) or 0
        self._counter.add(size)
        return size

    def close(self) -> None:
        self._fh.close()
        super().close()


class _Transcoder(io.RawIOBase):
    """A byte stream that decodes a file with any codec and hands out UTF-8."""

    def __init__(self, path: DataFile, encoding: Encoding, counter: ReadCounter) -> None:
        self._fh = _Counted(path, counter)
        self._decoder = codecs.getincrementaldecoder(encoding.name)(errors=encoding.errors)
        self._buffer = bytearray()
        self._eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, target: Any) -> int:
        view = memoryview(target)
        while len(self._buffer) < len(view) and not self._eof:
            block = self._fh.read(BLOCK_BYTES)
            self._eof = not block
            text = self._decoder.decode(block, final=self._eof)
            self._buffer += text.encode("utf-8", "surrogatepass")
        size = min(len(view), len(self._buffer))
        view[:size] = self._buffer[:size]
        del self._buffer[:size]
        return size

    def close(self) -> None:
        self._fh.close()
        super().close()


def csv_dialect(path: DataFile, encoding: Encoding) -> Dialect:
    """Sniff a CSV file's dialect from its head (ProfilingError when it looks binary)."""
    check_text(read_head(path))
    text, truncated = head_text(path, encoding)
    return sniff_dialect(text, truncated)


def csv_chunks(
    path: DataFile, dialect: Dialect, encoding: Encoding, chunk_rows: int, report: ReadReport,
    counter: ReadCounter | None = None,
) -> Iterator[Chunk]:
    """CSV chunks of at most ``chunk_rows`` rows; every column is text to be inferred."""
    counter = counter or ReadCounter()
    names = dialect.columns

    def skip(row: Any) -> str:
        report.ragged_rows += 1
        if report.first_problem is None:
            report.first_problem = (
                f"expected {row.expected_columns} fields, found {row.actual_columns}: "
                f"{row.text[:80]!r}"
            )
        return "skip"

    # Arrow reads ahead of what it parses, so bytes are counted by the rows handed out (their
    # text plus one separator per field), not by what Arrow has pulled from the file.
    source: Any = (
        open_stream(path)
        if encoding.name == "utf-8" and encoding.errors == "strict"
        else _Transcoder(path, encoding, ReadCounter())
    )
    with source:
        reader = pa_csv.open_csv(
            source,
            read_options=pa_csv.ReadOptions(
                column_names=names,
                skip_rows=1 if dialect.header else 0,
                # Arrow reads ahead of the consumer whatever we do, so the block size bounds
                # memory; rows longer than a block cannot be read.
                block_size=CSV_BLOCK_BYTES,
                # Parsing stays on the read-ahead thread: the pool folds columns on the other
                # core, and Arrow's own threads would only compete with it (and hold more).
                use_threads=False,
            ),
            parse_options=pa_csv.ParseOptions(
                delimiter=dialect.delimiter, newlines_in_values=True, invalid_row_handler=skip
            ),
            convert_options=pa_csv.ConvertOptions(
                column_types={name: pa.string() for name in names},
                null_values=NULL_VALUES,
                strings_can_be_null=True,
            ),
        )
        try:
            for part in at_most(reader, chunk_rows):
                columns = {n: Column(part.column(i), infer="all") for i, n in enumerate(names)}
                counter.add(_text_bytes(part))
                yield columns, part.num_rows
        finally:
            reader.close()


def _text_bytes(batch: pa.RecordBatch) -> int:
    """About how many bytes of a delimited file a batch of its text columns came from: the
    span of each column's offsets (no pass over the values) plus one separator per field."""
    text = 0
    for column in batch.columns:
        offsets = np.frombuffer(column.buffers()[1], dtype=np.int32)
        text += int(offsets[column.offset + len(column)] - offsets[column.offset])
    return text + batch.num_rows * max(1, batch.num_columns)


def read_ahead(chunks: Iterator[_T], depth: int = 1) -> Iterator[_T]:
    """``chunks``, produced on a thread of their own up to ``depth`` ahead of the consumer.

    Parsing the next block overlaps with folding in the current one (both release the GIL).
    Errors reach the consumer in order; a consumer that stops early stops the producer.
    """
    handoff: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def offer(item: tuple[bool, Any]) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        run_in_background()
        try:
            for chunk in chunks:
                if not offer((True, chunk)):
                    return
            offer((False, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            offer((False, exc))
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="catalog-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            more, item = handoff.get()
            if more:
                yield item
            elif item is None:
                return
            else:
                raise item
    finally:
        stop.set()
        thread.join()


def at_most(batches: Iterable[pa.RecordBatch], rows: int) -> Iterator[pa.RecordBatch]:
    """The batches, those longer than ``rows`` cut into slices (zero-copy; never glued)."""
    for batch in batches:
        for start in range(0, batch.num_rows, rows):
            yield batch.slice(start, rows)


def _lines(fh: TextIO) -> Iterator[tuple[int, str | None]]:
    """(line number, line) pairs; None for a line too long to hold (its rest is skipped)."""
    number = 0
    while True:
        line = fh.readline(MAX_RECORD_CHARS + 1)
        if not line:
            return
        number += 1
        if len(line) > MAX_RECORD_CHARS and not line.endswith("\n"):
            while (rest := fh.readline(MAX_RECORD_CHARS)) and not rest.endswith("\n"):
                pass
            yield number, None
            continue
        yield number, line


def records_chunk(records: list[dict[str, Any]]) -> Chunk:
    """A chunk from flattened records (columns in order of first appearance)."""
    names = dict.fromkeys(name for record in records for name in record)
    return {n: python_column([r.get(n) for r in records]) for n in names}, len(records)


def _record(value: Any) -> dict[str, Any]:
    return flatten(value) if isinstance(value, dict) else {"value": value}


def _open_text(path: DataFile, encoding: Encoding, counter: ReadCounter | None) -> TextIO:
    raw = io.BufferedReader(_Counted(path, counter or ReadCounter()), BLOCK_BYTES)
    return io.TextIOWrapper(raw, encoding=encoding.name, errors=encoding.errors)


def jsonl_records(
    path: DataFile, encoding: Encoding, report: ReadReport, counter: ReadCounter | None = None
) -> Iterator[dict[str, Any]]:
    """Flattened records of a JSON lines file; bad lines are counted in ``report``."""
    with _open_text(path, encoding, counter) as fh:
        for number, line in _lines(fh):
            if line is None:
                report.bad(f"line {number} is longer than {MAX_RECORD_CHARS} characters")
                continue
            if not line.strip():
                continue
            try:
                yield _record(json.loads(line))
            except ValueError as exc:
                report.bad(f"line {number}: {exc}")


def json_records(
    path: DataFile, encoding: Encoding, counter: ReadCounter | None = None
) -> Iterator[dict[str, Any]]:
    """Flattened records of a JSON document: the elements of a top-level array, else itself."""
    with _open_text(path, encoding, counter) as fh:
        start = fh.read(HEAD_BYTES)
        if start.lstrip("\ufeff \t\r\n").startswith("["):
            yield from (_record(v) for v in iter_json_array(io.StringIO(start), fh))
            return
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            raise ProfilingError(
                f"The JSON document is not an array and is larger than "
                f"{MAX_DOCUMENT_BYTES // 2**20} MB; store it as JSON lines to profile it."
            )
        yield _record(json.loads(start + fh.read()))


def iter_json_array(*parts: TextIO) -> Iterator[Any]:
    """The elements of a JSON array read from ``parts`` in turn, in bounded memory."""
    decoder = json.JSONDecoder()
    streams = iter(parts)
    current = next(streams)
    buffer, pos, eof = "", 0, False

    def more() -> bool:
        nonlocal buffer, pos, eof, current
        while True:
            block = current.read(BLOCK_BYTES)
            if block:
                buffer, pos = buffer[pos:] + block, 0
                return True
            following = next(streams, None)
            if following is None:
                eof = True
                return False
            current = following

    def skip_blanks() -> str:
        nonlocal pos
        while True:
            while pos < len(buffer) and buffer[pos] in "\ufeff \t\r\n":
                pos += 1
            if pos < len(buffer):
                return buffer[pos]
            if not more():
                return ""

    if skip_blanks() != "[":
        raise ValueError("not a JSON array")
    pos += 1
    if skip_blanks() == "]":
        return
    while True:
        skip_blanks()
        try:
            value, end = decoder.raw_decode(buffer, pos)
            complete = end < len(buffer) or eof  # a number cut by the buffer end must wait
        except json.JSONDecodeError:
            complete = False
            if eof:
                raise
        if not complete:
            if len(buffer) - pos > MAX_RECORD_CHARS:
                raise ProfilingError(
                    "A JSON array element is not valid JSON or is larger than "
                    f"{MAX_RECORD_CHARS // 2**20} MB."
                )
            more()
            continue
        yield value
        pos = end
        separator = skip_blanks()
        if separator == "]":
            return
        if separator != ",":
            raise ValueError(f"expected ',' or ']' in the JSON array, found {separator!r}")
        pos += 1


def _flat_fields(schema: pa.Schema | pa.StructType, prefix: str = "") -> Declared:
    declared: Declared = {}
    for index in range(len(schema) if isinstance(schema, pa.Schema) else schema.num_fields):
        item = schema.field(index)
        if pa.types.is_struct(item.type) and item.type.num_fields:
            declared.update(_flat_fields(item.type, f"{prefix}{item.name}."))
        else:
            declared[f"{prefix}{item.name}"] = (
                arrow_data_type(item.type) or DataType.STRING,
                item.nullable,
            )
    return declared


def parquet_schema(source: DataFile | pq.ParquetFile) -> tuple[Declared, int]:
    """Flattened field types and the row count of a Parquet file, from its footer."""
    with _opened(source) as parquet:
        return _flat_fields(parquet.schema_arrow), parquet.metadata.num_rows


@contextlib.contextmanager
def _opened(source: DataFile | pq.ParquetFile) -> Iterator[pq.ParquetFile]:
    """The Parquet file ``source`` names, opened here (and closed after), or ``source`` itself:
    reading a small file's footer three times costs more than reading its values."""
    if isinstance(source, pq.ParquetFile):
        yield source
        return
    with open_parquet(source) as parquet:
        yield parquet


@contextlib.contextmanager
def open_parquet(source: DataFile) -> Iterator[pq.ParquetFile]:
    """A Parquet file opened (and closed after): a local path as it always was, an object
    through a random-access file (footer first, then only the column chunks read, nearby
    ranges coalesced into one request by ``pre_buffer``)."""
    if isinstance(source, Path):
        with pq.ParquetFile(source) as parquet:
            yield parquet
        return
    with source.random_access() as raw, pq.ParquetFile(raw, pre_buffer=True) as parquet:
        yield parquet


def parquet_footer(source: DataFile | pq.ParquetFile) -> dict[str, FooterStats]:
    """Null counts and min/max of the columns whose every row group has them in the footer.

    Leaves inside lists are left out: their null counts count elements, not rows. Min/max are
    kept only where the footer holds both for every row group, and only for numbers, dates and
    timestamps (writers may cut long strings' min/max).
    """
    with _opened(source) as parquet:
        meta = parquet.metadata
        found: dict[str, FooterStats] = {}
        for index in range(meta.num_columns):
            name = meta.schema.column(index).path
            if ".list." in f".{name}." or ".key_value." in f".{name}.":
                continue
            stats = [meta.row_group(g).column(index).statistics for g in range(meta.num_row_groups)]
            if not stats or any(s is None or not s.has_null_count for s in stats):
                continue
            footer = FooterStats(sum(s.null_count for s in stats))
            ranges = [(s.min, s.max) for s in stats if s.has_min_max]
            kind = meta.schema.column(index).physical_type
            if ranges and len(ranges) == len(stats) and kind in ("INT32", "INT64", "FLOAT",
                                                                   "DOUBLE"):
                footer.low = min(low for low, _ in ranges)
                footer.high = max(high for _, high in ranges)
            found[name] = footer
        return found


def parquet_chunks(
    source: DataFile | pq.ParquetFile, size: int, chunk_rows: int,
    counter: ReadCounter | None = None, skip: frozenset[str] = frozenset(),
) -> Iterator[Chunk]:
    """Record batches of a Parquet file of ``size`` bytes, struct columns flattened to dotted
    names. Top-level columns named in ``skip`` are not read at all.
    """
    counter = counter or ReadCounter()
    with _opened(source) as parquet:
        wanted = [n for n in parquet.schema_arrow.names if n not in skip]
        # progress in bytes, by the share of rows read: the columns are compressed unevenly
        rows = max(1, parquet.metadata.num_rows)
        start, done = counter.total, 0
        batches = parquet.iter_batches(batch_size=chunk_rows, columns=wanted) if wanted else (
            pa.record_batch([pa.nulls(n)], names=["_"]).select([]) for n in _row_groups(parquet)
        )
        for batch in batches:
            done += batch.num_rows
            counter.add(start + size * done // rows - counter.total)
            table = pa.Table.from_batches([batch])
            while any(pa.types.is_struct(t) and t.num_fields for t in table.schema.types):
                table = table.flatten()
            yield {n: Column(table.column(n)) for n in table.column_names}, table.num_rows


def _row_groups(parquet: pq.ParquetFile) -> Iterator[int]:
    """Row counts of the row groups (for a file none of whose columns is read)."""
    for group in range(parquet.metadata.num_row_groups):
        yield parquet.metadata.row_group(group).num_rows


def quick_schema(path: DataFile, file_format: FileFormat) -> tuple[Any, ...] | None:
    """A cheap signature of a file's schema (for grouping partitions); None when unreadable."""
    try:
        if file_format is FileFormat.PARQUET:
            declared, _ = parquet_schema(path)
            return tuple((name, kind.value) for name, (kind, _) in declared.items())
        encoding = Encoding("utf-8", "replace")
        if file_format in (FileFormat.CSV, FileFormat.TSV):
            dialect = csv_dialect(path, encoding)
            return (dialect.delimiter, dialect.header, tuple(dialect.columns))
        check_text(read_head(path))
        if file_format is FileFormat.JSONL:
            records = jsonl_records(path, encoding, ReadReport())
        else:
            records = json_records(path, encoding)
        names: dict[str, None] = {}
        for count, record in enumerate(records):
            names.update(dict.fromkeys(record))
            if count + 1 >= SCHEMA_RECORDS:
                break
        return tuple(sorted(names))
    except (OSError, ValueError, ProfilingError, pa.ArrowException):
        return None
