"""Reading files into a TableProfiler: the machinery under :mod:`.files`.

One file or many (a collection's members) flow through :func:`feed_file` into one
:class:`~.stats.TableProfiler`; :func:`finish` turns what was read into the resource's
properties and applies the ragged-row rule (see :mod:`.files`).
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from catalog_nb.server.profiling.formats import (
    Encoding,
    check_text,
    detect_encoding,
    detect_format,
    read_head,
)
from catalog_nb.server.profiling.locations import DataFile, ObjectFolder, Stat
from catalog_nb.server.profiling.model import (
    DataType,
    FieldProfile,
    FileFormat,
    ProfilingError,
    ResourceProfile,
)
from catalog_nb.server.profiling.readers import (
    CSV_BLOCK_BYTES,
    Chunk,
    FooterStats,
    ReadCounter,
    ReadReport,
    csv_chunks,
    csv_dialect,
    json_records,
    jsonl_records,
    open_parquet,
    parquet_chunks,
    parquet_footer,
    parquet_schema,
    read_ahead,
    records_chunk,
)
from catalog_nb.server.profiling.sampling import json_number
from catalog_nb.server.profiling.stats import TableProfiler, iter_chunks

log = logging.getLogger(__name__)

RAGGED_ERROR_SHARE = 0.5
READ_AHEAD_MIN_BYTES = CSV_BLOCK_BYTES


def created_ms(stat: Stat) -> int:
    """A file's creation time in epoch milliseconds."""
    # Linux keeps no birth time in stat(); the inode change time is the closest it offers.
    birth = getattr(stat, "st_birthtime", None)
    return int((birth if birth is not None else stat.st_ctime) * 1000)


def set_file_times(profile: ResourceProfile, stat: Stat) -> None:
    """Copy size, creation and modification times from ``stat`` onto ``profile``."""
    profile.resource_size = stat.st_size
    profile.created_ms = created_ms(stat)
    profile.modified_ms = int(stat.st_mtime_ns // 1_000_000)


def locate_file(path: str | Path, root: str | Path | ObjectFolder | None) -> DataFile:
    """The file ``path`` names: :func:`locate`, or an object of an object-store ``root``
    (fetched at once when small: it is about to be read)."""
    if isinstance(root, ObjectFolder):
        return root.file(Path(path).as_posix(), whole=True)
    return locate(path, root)


def file_target(profile: ResourceProfile, path: str | Path,
                root: str | Path | ObjectFolder | None,
                file_format: str | None) -> tuple[DataFile, FileFormat] | None:
    """The file a profile of ``path`` reads and its format, its size and times set on
    ``profile``; None once ``profile`` has failed (not a data file, or empty). Both engines
    start a file's profile here."""
    target = locate_file(path, root)
    set_file_times(profile, target.stat())
    fmt = FileFormat(file_format) if file_format else detect_format(target)
    if fmt is None:
        profile.fail("Not a data file: the format is none of CSV, JSON, Parquet.")
        return None
    profile.file_format = fmt.value
    if profile.resource_size == 0:
        profile.fail("The file is empty: it has no header and no rows.")
        return None
    return target, fmt


def locate(path: str | Path, root: str | Path | None) -> Path:
    """The file system path of ``path`` (relative to ``root`` when given, never outside it)."""
    if root is None:
        return Path(path)
    base = Path(root).resolve()
    target = (base / path).resolve()
    if not target.is_relative_to(base):
        raise ProfilingError(f"{str(path)!r} lies outside the data source folder.")
    return target


def describe_error(exc: BaseException, file_format: str | None) -> str:
    """A sentence for ``errorMsg`` describing why a file could not be profiled."""
    if isinstance(exc, FileNotFoundError):
        return "The file no longer exists: it was moved or deleted after browsing."
    # An object store's refusal is an OSError without an errno too, but not bad content.
    if isinstance(exc, OSError) and "AWS Error NO_SUCH_KEY" in str(exc):
        return "The file no longer exists: it was moved or deleted after browsing."
    if isinstance(exc, OSError) and "AWS Error" in str(exc):
        return f"The object cannot be read from the store: {_printable(str(exc))}"
    # Arrow reports bad content (a corrupt Parquet footer...) as an OSError without an errno.
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"The file cannot be read: {exc.strerror or exc}."
    if isinstance(exc, OSError | pa.ArrowException | ValueError | csv.Error | UnicodeError):
        kind = (file_format or "data").upper()
        return f"The file cannot be parsed as {kind}: {_printable(str(exc))}"
    log.exception("unexpected error while profiling")
    return f"Unexpected error while profiling the file: {type(exc).__name__}: {exc}"


def _printable(text: str) -> str:
    """A parser's message with its control characters (bytes it quotes) escaped, stripped."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text).strip()


def feed_file(
    path: DataFile, fmt: FileFormat, profiler: TableProfiler, chunk_rows: int,
    profile: ResourceProfile, counter: ReadCounter | None = None,
) -> ReadReport:
    """Read one file into ``profiler``; describe its format on ``profile``.

    ``counter`` hears the bytes read, and ends at its start plus the file's size.
    """
    counter = counter or ReadCounter()
    size = path.stat().st_size
    end = counter.total + size
    report = ReadReport()
    chunks: Iterator[Chunk]
    if fmt is FileFormat.PARQUET:
        with open_parquet(path) as parquet:
            declared, _ = parquet_schema(parquet)
            for name, (data_type, nullable) in declared.items():
                profiler.declare(name, data_type, nullable)
            report.footer = parquet_footer(parquet)
            # Binary columns get no sketch and no sample: with their null counts in the footer,
            # there is nothing left to read them for.
            skip = frozenset(name for name, (data_type, _) in declared.items()
                             if data_type is DataType.BINARY and name in report.footer)
            chunks = parquet_chunks(parquet, size, chunk_rows, counter, skip)
            return _fold(chunks, profiler, counter, end, report, size)
    else:
        check_text(read_head(path))  # before scanning a large binary file for its encoding
        if _utf8_is_likely(path, fmt, profiler):
            # Arrow checks UTF-8 as it converts, so a CSV file whose head is UTF-8 is read as
            # such at once; only if a later byte is not UTF-8 is it read again after a scan
            # of the whole file (which costs as much as a second read).
            start = counter.total
            try:
                profile.encoding = "utf-8"
                report.text_format, report.encoding = fmt, Encoding("utf-8")
                chunks = _text_chunks(path, fmt, report.encoding, chunk_rows, report, profile,
                                      profiler, counter)
                return _fold(chunks, profiler, counter, end, report, size)
            except pa.ArrowInvalid as exc:
                if "UTF8" not in str(exc):
                    raise
            profiler.reset()
            report = ReadReport()
            counter.total = start
        encoding = detect_encoding(path)
        profile.encoding = encoding.name
        report.text_format, report.encoding = fmt, encoding
        if encoding.warning:
            report.warnings.append(encoding.warning)
        chunks = _text_chunks(path, fmt, encoding, chunk_rows, report, profile, profiler, counter)
    return _fold(chunks, profiler, counter, end, report, size)


def _fold(chunks: Iterator[Chunk], profiler: TableProfiler, counter: ReadCounter, end: int,
          report: ReadReport, size: int) -> ReadReport:
    # A file of one block has nothing to read while its chunk is folded in: a thread to read
    # ahead would only cost its start and hand-over (a third of the time of a 100 kB file).
    ahead = read_ahead(chunks) if size > READ_AHEAD_MIN_BYTES else chunks
    for columns, n_rows in ahead:
        profiler.add_chunk(columns, n_rows)
    counter.add(max(0, end - counter.total))
    return report


def fill_text_gaps(profiler: TableProfiler, files: list[tuple[DataFile, ReadReport]],
                   chunk_rows: int, profile: ResourceProfile) -> None:
    """Read text files again for the text ranges of columns that turned STRING late (rare: a
    column of numbers with words further down); nothing is read when there are none."""
    if not profiler.text_gaps():
        return
    for path, report in files:
        if report.text_format is None or report.encoding is None:
            continue  # Parquet: declared types, never a gap
        again = _text_chunks(path, report.text_format, report.encoding, chunk_rows, ReadReport(),
                             profile, profiler, ReadCounter())
        for columns, _ in read_ahead(again):
            profiler.add_texts(columns)


def _utf8_is_likely(path: DataFile, fmt: FileFormat, profiler: TableProfiler) -> bool:
    """A delimited file, not yet fed, whose head is plain UTF-8 (no byte order mark)."""
    if fmt not in (FileFormat.CSV, FileFormat.TSV) or profiler.row_count or profiler.names:
        return False
    head = read_head(path)
    if head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # only a character cut by the end of the head
    return True


def _text_chunks(
    path: DataFile,
    fmt: FileFormat,
    encoding: Encoding,
    chunk_rows: int,
    report: ReadReport,
    profile: ResourceProfile,
    profiler: TableProfiler,
    counter: ReadCounter,
) -> Iterator[Chunk]:
    if fmt in (FileFormat.CSV, FileFormat.TSV):
        dialect = csv_dialect(path, encoding)
        if not dialect.columns:
            raise ProfilingError("The file holds no delimited data (only blank lines).")
        profile.separator, profile.header = dialect.delimiter, dialect.header
        profile.header_row = 1 if dialect.header else 0
        profile.file_format = (FileFormat.TSV if dialect.delimiter == "\t" else fmt).value
        for name in dialect.columns:
            profiler.declare(name)
        return csv_chunks(path, dialect, encoding, chunk_rows, report, counter)
    records = (
        jsonl_records(path, encoding, report, counter)
        if fmt is FileFormat.JSONL
        else json_records(path, encoding, counter)
    )
    return (records_chunk(chunk) for chunk in iter_chunks(records, chunk_rows))


def finish(
    profile: ResourceProfile,
    profiler: TableProfiler,
    reports: list[ReadReport],
    sampled: bool | None = None,
) -> None:
    """Set row count and fields from ``profiler``; ProfilingError when too much was skipped."""
    rows = profiler.row_count
    ragged = sum(r.ragged_rows for r in reports)
    bad = sum(r.bad_records for r in reports)
    first = next((r.first_problem for r in reports if r.first_problem), None)
    if ragged and ragged > RAGGED_ERROR_SHARE * (rows + ragged):
        raise ProfilingError(
            f"{ragged} of {rows + ragged} rows have a different number of fields than the header "
            f"({len(profiler.names)}); the separator {profile.separator!r} is probably wrong or "
            f"the file is damaged (first: {first})."
        )
    if bad and bad > RAGGED_ERROR_SHARE * (rows + bad):
        raise ProfilingError(f"{bad} of {rows + bad} JSON records cannot be read (first: {first}).")
    warnings = [w for r in reports for w in r.warnings]
    if ragged:
        profile.extra["raggedRows"] = ragged
        warnings.append(f"{ragged} ragged row(s) skipped (first: {first}).")
    if bad:
        profile.extra["badRecords"] = bad
        warnings.append(f"{bad} unreadable JSON record(s) skipped (first: {first}).")
    if warnings:
        profile.extra["warnings"] = warnings
    profile.row_count = rows
    profile.fields = profiler.fields(sampled)
    profile.field_count = len(profile.fields)
    if profiler.keys:
        profile.extra["inferredKeys"] = profiler.keys.to_dict()
    if len(reports) == 1 and reports[0].footer:
        apply_footer(profile.fields, reports[0].footer, rows)


def apply_footer(fields: list[FieldProfile], footer: dict[str, FooterStats], rows: int) -> None:
    """Counts and ranges from a Parquet footer over what reading found (the footer is exact and
    covers columns that were not read)."""
    for item in fields:
        stats = footer.get(item.name)
        if stats is None:
            continue
        values = rows - stats.null_count
        item.properties.update(valueCount=values, nullCount=stats.null_count,
                               density=values / rows if rows else None)
        if stats.low is not None and item.data_type in (DataType.LONG, DataType.DOUBLE):
            cast = float if item.data_type is DataType.DOUBLE else int
            item.properties.update(min=json_number(cast(stats.low)),
                                   max=json_number(cast(stats.high)))


def profile_members(
    profile: ResourceProfile,
    members: list[str],
    root: str | Path | ObjectFolder | None,
    sample_rows: int,
    chunk_rows: int,
    max_profiled: int,
    counter: ReadCounter | None = None,
) -> None:
    """Fill a collection's profile from its members (see :func:`.files.profile_collection`)."""
    if not members:
        raise ProfilingError("The collection has no member files.")
    count = max(1, min(max_profiled, len(members)))
    step = (len(members) - 1) / max(1, count - 1)
    chosen = {round(i * step) for i in range(count)}
    profiler = TableProfiler(sample_rows)
    counter = counter or ReadCounter()
    reports: list[ReadReport] = []
    read: list[tuple[DataFile, ReadReport]] = []
    errors: list[dict[str, str]] = []
    counted_rows = 0
    stats: list[Stat] = []
    for index, member in enumerate(members):
        try:
            target = locate_file(member, root)
            stats.append(target.stat())
            fmt = detect_format(target)
            if fmt is None:
                raise ProfilingError("Not a data file: the format is none of CSV, JSON, Parquet.")
            profile.file_format = profile.file_format or fmt.value
            if index in chosen:
                reports.append(feed_file(target, fmt, profiler, chunk_rows, profile, counter))
                read.append((target, reports[-1]))
            else:
                counted_rows += count_rows(target, fmt, counter)
        except ProfilingError as exc:
            errors.append({"path": member, "errorMsg": str(exc)})
        except Exception as exc:  # noqa: BLE001 - a bad member is reported, the rest go on
            errors.append({"path": member, "errorMsg": describe_error(exc, profile.file_format)})
    if len(errors) == len(members):
        raise ProfilingError(f"No member of the collection can be read: {errors[0]['errorMsg']}")
    if errors:
        profile.extra["memberErrors"] = errors
    sampled = counted_rows > 0 or profiler.row_count > sample_rows
    fill_text_gaps(profiler, read, chunk_rows, profile)
    finish(profile, profiler, reports, sampled)
    set_collection_totals(profile, members, stats, counted_rows)


def set_collection_totals(profile: ResourceProfile, members: list[str], stats: list[Stat],
                          counted_rows: int) -> None:
    """A collection's totals over every member (both engines): rows (those only counted
    added), members, size and times."""
    profile.row_count = (profile.row_count or 0) + counted_rows
    profile.members = list(members)
    profile.partition_count = len(members)
    profile.resource_size = sum(s.st_size for s in stats)
    profile.created_ms = min((created_ms(s) for s in stats), default=None)
    profile.modified_ms = max((int(s.st_mtime_ns // 1_000_000) for s in stats), default=None)


def count_rows(path: DataFile, fmt: FileFormat, counter: ReadCounter | None = None) -> int:
    """Rows of a file that is counted but not profiled (Parquet: from the footer)."""
    counter = counter or ReadCounter()
    end = counter.total + path.stat().st_size
    try:
        return _count_rows(path, fmt, counter)
    finally:
        counter.add(max(0, end - counter.total))


def _count_rows(path: DataFile, fmt: FileFormat, counter: ReadCounter) -> int:
    if fmt is FileFormat.PARQUET:
        return parquet_schema(path)[1]
    encoding = detect_encoding(path)
    report = ReadReport()
    if fmt in (FileFormat.CSV, FileFormat.TSV):
        dialect = csv_dialect(path, encoding)
        return sum(n for _, n in csv_chunks(path, dialect, encoding, 65_536, report, counter))
    check_text(read_head(path))
    if fmt is FileFormat.JSONL:
        return sum(1 for _ in jsonl_records(path, encoding, report, counter))
    return sum(1 for _ in json_records(path, encoding, counter))
