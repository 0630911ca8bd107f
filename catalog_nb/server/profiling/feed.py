"""Reading files into a TableProfiler: the machinery under :mod:`.files`.

One file or many (a collection's members) flow through :func:`feed_file` into one
:class:`~.stats.TableProfiler`; :func:`finish` turns what was read into the resource's
properties and applies the ragged-row rule (see :mod:`.files`).
"""

from __future__ import annotations

import csv
import logging
import os
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
from catalog_nb.server.profiling.model import FileFormat, ProfilingError, ResourceProfile
from catalog_nb.server.profiling.readers import (
    Chunk,
    ReadReport,
    csv_chunks,
    csv_dialect,
    json_records,
    jsonl_records,
    parquet_chunks,
    parquet_schema,
    records_chunk,
)
from catalog_nb.server.profiling.stats import TableProfiler, iter_chunks

log = logging.getLogger(__name__)

RAGGED_ERROR_SHARE = 0.5


def created_ms(stat: os.stat_result) -> int:
    """A file's creation time in epoch milliseconds."""
    # Linux keeps no birth time in stat(); the inode change time is the closest it offers.
    birth = getattr(stat, "st_birthtime", None)
    return int((birth if birth is not None else stat.st_ctime) * 1000)


def set_file_times(profile: ResourceProfile, stat: os.stat_result) -> None:
    """Copy size, creation and modification times from ``stat`` onto ``profile``."""
    profile.resource_size = stat.st_size
    profile.created_ms = created_ms(stat)
    profile.modified_ms = int(stat.st_mtime_ns // 1_000_000)


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
    if isinstance(exc, OSError):
        return f"The file cannot be read: {exc.strerror or exc}."
    if isinstance(exc, pa.ArrowException | ValueError | csv.Error | UnicodeError):
        kind = (file_format or "data").upper()
        return f"The file cannot be parsed as {kind}: {exc}"
    log.exception("unexpected error while profiling")
    return f"Unexpected error while profiling the file: {type(exc).__name__}: {exc}"


def feed_file(
    path: Path, fmt: FileFormat, profiler: TableProfiler, chunk_rows: int, profile: ResourceProfile
) -> ReadReport:
    """Read one file into ``profiler``; describe its format on ``profile``."""
    report = ReadReport()
    chunks: Iterator[Chunk]
    if fmt is FileFormat.PARQUET:
        declared, _ = parquet_schema(path)
        for name, (data_type, nullable) in declared.items():
            profiler.declare(name, data_type, nullable)
        chunks = parquet_chunks(path, chunk_rows)
    else:
        check_text(read_head(path))  # before scanning a large binary file for its encoding
        encoding = detect_encoding(path)
        profile.encoding = encoding.name
        if encoding.warning:
            report.warnings.append(encoding.warning)
        chunks = _text_chunks(path, fmt, encoding, chunk_rows, report, profile, profiler)
    for columns, n_rows in chunks:
        profiler.add_chunk(columns, n_rows)
    return report


def _text_chunks(
    path: Path,
    fmt: FileFormat,
    encoding: Encoding,
    chunk_rows: int,
    report: ReadReport,
    profile: ResourceProfile,
    profiler: TableProfiler,
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
        return csv_chunks(path, dialect, encoding, chunk_rows, report)
    records = (
        jsonl_records(path, encoding, report)
        if fmt is FileFormat.JSONL
        else json_records(path, encoding)
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


def profile_members(
    profile: ResourceProfile,
    members: list[str],
    root: str | Path | None,
    sample_rows: int,
    chunk_rows: int,
    max_profiled: int,
) -> None:
    """Fill a collection's profile from its members (see :func:`.files.profile_collection`)."""
    if not members:
        raise ProfilingError("The collection has no member files.")
    count = max(1, min(max_profiled, len(members)))
    step = (len(members) - 1) / max(1, count - 1)
    chosen = {round(i * step) for i in range(count)}
    profiler = TableProfiler(sample_rows)
    reports: list[ReadReport] = []
    errors: list[dict[str, str]] = []
    counted_rows = 0
    stats: list[os.stat_result] = []
    for index, member in enumerate(members):
        try:
            target = locate(member, root)
            stats.append(target.stat())
            fmt = detect_format(target)
            if fmt is None:
                raise ProfilingError("Not a data file: the format is none of CSV, JSON, Parquet.")
            profile.file_format = profile.file_format or fmt.value
            if index in chosen:
                reports.append(feed_file(target, fmt, profiler, chunk_rows, profile))
            else:
                counted_rows += count_rows(target, fmt)
        except ProfilingError as exc:
            errors.append({"path": member, "errorMsg": str(exc)})
        except Exception as exc:  # noqa: BLE001 - a bad member is reported, the rest go on
            errors.append({"path": member, "errorMsg": describe_error(exc, profile.file_format)})
    if len(errors) == len(members):
        raise ProfilingError(f"No member of the collection can be read: {errors[0]['errorMsg']}")
    if errors:
        profile.extra["memberErrors"] = errors
    sampled = counted_rows > 0 or profiler.row_count > sample_rows
    finish(profile, profiler, reports, sampled)
    profile.row_count = (profile.row_count or 0) + counted_rows
    profile.members = list(members)
    profile.partition_count = len(members)
    profile.resource_size = sum(s.st_size for s in stats)
    profile.created_ms = min((created_ms(s) for s in stats), default=None)
    profile.modified_ms = max((int(s.st_mtime_ns // 1_000_000) for s in stats), default=None)


def count_rows(path: Path, fmt: FileFormat) -> int:
    """Rows of a file that is counted but not profiled (Parquet: from the footer)."""
    if fmt is FileFormat.PARQUET:
        return parquet_schema(path)[1]
    encoding = detect_encoding(path)
    report = ReadReport()
    if fmt in (FileFormat.CSV, FileFormat.TSV):
        dialect = csv_dialect(path, encoding)
        return sum(n for _, n in csv_chunks(path, dialect, encoding, 65_536, report))
    check_text(read_head(path))
    if fmt is FileFormat.JSONL:
        return sum(1 for _ in jsonl_records(path, encoding, report))
    return sum(1 for _ in json_records(path, encoding))
