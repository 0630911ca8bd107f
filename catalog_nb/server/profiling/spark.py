"""The Spark engine: files and collections profiled on a Spark cluster, to the same profile.

Design. Spark distributes *our* reading and statistics code, not its own SQL aggregates: the
local engine's statistics depend on details no Spark aggregate reproduces (a chunk's type is
read in the light of the type so far, the sketch hashes each value's canonical text and keeps
the first raw text of each hash, the sample is the reservoir's), so the engine cuts the work
into *parts* that Spark runs as tasks, each with the local engine's reader and
:class:`~.stats.TableProfiler`, and merges the parts on the driver in stream order:

* **Parts**: a text file (CSV/TSV/JSON) is one part; a Parquet file with more rows than one
  chunk is cut into ranges of whole chunks (``chunk_rows`` rows each, as the local reader's
  batches are), read by row groups. A collection's members are parts in member order; the
  members the local engine only counts are counted by tasks too.
* **Sample**: the reservoir (Algorithm R) chooses rows by their position in the stream only.
  With the row count of every part known (Parquet footers; a counting pass for text files when
  there are several), the driver runs the reservoir over the counts (:func:`.sampling.plan_picks`)
  and each part keeps exactly its rows of the final sample: the same rows as the local engine.
  A lone part simply runs the reservoir itself.
* **Merge** (:meth:`TableProfiler.merge`): counts, ranges, lengths, sketches (:meth:`merge`
  keeps the first raw text of a hash), types joined by the local engine's rule. Float sums
  are added chunk by chunk in stream order, as one stream adds them, so means agree to the bit.
* **Type context**: a chunk's type depends on the column's type so far (after a STRING chunk,
  numbers stay text in the sketch). A part whose first type of a column differs from the type
  the parts before it gave is read again, resumed with that type (:meth:`TableProfiler.resume`)
  - rare: a column that changes type between files or far into a file.
* **Text ranges** of a column that turned STRING after typed parts are read in a last pass
  (the local engine reads the files again for them too: :func:`.feed.fill_text_gaps`).
* The driver then runs :func:`.feed.finish`: fields, sample statistics and key inference are
  the local engine's own code over the merged profiler.

Tasks run through ``DataFrame.mapInArrow`` over ``range(n)`` with one row per partition, which
works on a classic session (``local[N]``, ``spark://``) and on Spark Connect alike (a real
standalone cluster and a real Spark Connect server: ``tests/server/test_spark_cluster.py``).
Executors import ``catalog_nb`` (installed on a cluster's workers) and read the files by their
paths, so the files must be visible to them (a shared mount, or object storage through the
profiler's readers). A task's own failure (a bad file) comes back as that part's error,
exactly as the local engine reports it; a failure of Spark itself raises
:class:`SparkUnavailable`.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from catalog_nb.contract import ResourceType
from catalog_nb.server.profiling.feed import (
    count_rows,
    describe_error,
    feed_file,
    file_target,
    fill_text_gaps,
    finish,
    locate,
    locate_file,
    set_collection_totals,
)
from catalog_nb.server.profiling.files import (
    DEFAULT_CHUNK_ROWS,
    MAX_PROFILED_MEMBERS,
    browse,
)
from catalog_nb.server.profiling.formats import detect_format
from catalog_nb.server.profiling.inference import Column, join_types
from catalog_nb.server.profiling.locations import (
    DataFile,
    Folder,
    ObjectFile,
    ObjectFolder,
    Stat,
)
from catalog_nb.server.profiling.model import (
    DataType,
    FileFormat,
    ProfilingError,
    ReadProgress,
    ResourceProfile,
)
from catalog_nb.server.profiling.readers import (
    ReadReport,
    open_parquet,
    parquet_footer,
    parquet_schema,
)
from catalog_nb.server.profiling.sampling import PlannedPicks, plan_picks
from catalog_nb.server.profiling.stats import DEFAULT_SAMPLE_ROWS, TableProfiler
from catalog_nb.server.spark_session import SparkUnavailable, first_line

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Parts per Parquet file: about this many per task slot of the cluster (a little more than
#: one, so a slow part does not leave the other slots idle at the end).
PARTS_PER_SLOT = 2
_TEXT_ATTRS = ("encoding", "separator", "header", "header_row", "file_format")


@dataclass
class Part:
    """One task's work: a file (or a row range of a Parquet file) to profile or to count."""

    index: int
    #: a local path or an object (:mod:`.locations`: pickled with its store's settings)
    file: DataFile
    fmt: str
    count_only: bool = False
    #: rows [start, stop) of a Parquet file (None: the whole file with the local reader)
    rows: tuple[int, int] | None = None
    #: the first part of its file (which reads a Parquet file's footer statistics)
    first: bool = True
    #: the planned sample rows of the part (indices, slots); None: a reservoir of its own
    picks: tuple[np.ndarray, np.ndarray] | None = None
    #: the column types of the parts before it (a second reading, see the module docstring)
    context: dict[str, DataType] = field(default_factory=dict)
    #: columns whose text ranges to read (the last pass; the part's report says how)
    gaps: tuple[str, ...] = ()
    report: ReadReport | None = None

    def __getstate__(self) -> dict[str, Any]:
        # An object travels as its folder (the store's filesystem, which pickles with its
        # settings) and key: its listing entry does not pickle, and a small one is fetched
        # where it is read.
        state = dict(self.__dict__)
        if isinstance(self.file, ObjectFile):
            state["file"] = (self.file.folder, self.file.rel)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if isinstance(state["file"], tuple):
            folder, rel = state["file"]
            state["file"] = folder.file(rel, whole=True)
        self.__dict__.update(state)


@dataclass
class Outcome:
    """What a task sends back."""

    index: int
    profiler: TableProfiler | None = None
    report: ReadReport | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    #: each column's type after its first chunk with a value (read without context)
    first_types: dict[str, DataType] = field(default_factory=dict)
    #: each column's float sums, chunk by chunk
    sums: dict[str, list[float]] = field(default_factory=dict)
    count: int | None = None
    error: str | None = None


class _PartProfiler(TableProfiler):
    """A table profiler that also notes each chunk's float sums and each column's first type."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.sums: dict[str, list[float]] = {}
        self.first_types: dict[str, DataType] = {}
        super().__init__(*args, **kwargs)

    def reset(self) -> None:
        self.sums, self.first_types = {}, {}
        super().reset()

    def add_chunk(self, columns: Any, n_rows: int) -> None:
        saved = {}
        for name in self.names:
            accumulator = self.column(name)
            saved[name], accumulator.num_sum = accumulator.num_sum, 0.0
        super().add_chunk(columns, n_rows)
        for name in self.names:
            accumulator = self.column(name)
            total = accumulator.num_sum
            accumulator.num_sum = saved.get(name, 0.0) + total
            if total:
                self.sums.setdefault(name, []).append(total)
            if name not in self.first_types and accumulator.type is not None:
                self.first_types[name] = accumulator.type


# ------------------------------------------------------------------------------- the tasks


def run_part(part: Part, sample_rows: int, chunk_rows: int) -> Outcome:
    """One task (on an executor): count, profile or read the text ranges of one part."""
    fmt = FileFormat(part.fmt)
    path = part.file
    try:
        if part.count_only:
            return Outcome(part.index, count=count_rows(path, fmt))
        if part.gaps:
            return _text_ranges(part, sample_rows, chunk_rows)
        picks = None if part.picks is None else partial(PlannedPicks, *part.picks)
        profiler = _PartProfiler(sample_rows, picks=picks)
        if part.context:
            profiler.resume(part.context)
        profile = ResourceProfile(path=str(path), name=path.name, file_format=fmt.value)
        if part.rows is None:
            report = feed_file(path, fmt, profiler, chunk_rows, profile)
        else:
            report = _parquet_rows(path, part, profiler, chunk_rows)
        profiler.keys = type(profiler.keys)()  # nothing inferred yet: keep the pickle small
        return Outcome(part.index, profiler, report,
                       {a: getattr(profile, a) for a in _TEXT_ATTRS}, profiler.first_types,
                       profiler.sums)
    except ProfilingError as exc:
        return Outcome(part.index, error=str(exc))
    except Exception as exc:  # noqa: BLE001 - a bad file is the part's error, as in the local engine
        return Outcome(part.index, error=describe_error(exc, fmt.value))


def _parquet_rows(path: DataFile, part: Part, profiler: TableProfiler,
                  chunk_rows: int) -> ReadReport:
    """Rows [start, stop) of a Parquet file into ``profiler``, in the local reader's chunks
    (``chunk_rows`` each from the file's first row: its batches span row groups)."""
    assert part.rows is not None
    start, stop = part.rows
    report = ReadReport()
    with open_parquet(path) as parquet:
        declared, _ = parquet_schema(parquet)
        for name, (data_type, nullable) in declared.items():
            profiler.declare(name, data_type, nullable)
        footer = parquet_footer(parquet)
        if part.first:
            report.footer = footer
        skip = {name for name, (data_type, _) in declared.items()
                if data_type is DataType.BINARY and name in footer}
        wanted = [n for n in parquet.schema_arrow.names if n not in skip]
        groups: list[int] = []
        offset = first_row = 0
        for group in range(parquet.metadata.num_row_groups):
            rows = parquet.metadata.row_group(group).num_rows
            if offset < stop and offset + rows > start:
                if not groups:
                    first_row = offset
                groups.append(group)
            offset += rows
        table = parquet.read_row_groups(groups, columns=wanted).slice(start - first_row,
                                                                       stop - start)
    for at in range(0, stop - start, chunk_rows):
        chunk = table.slice(at, chunk_rows)
        while any(pa.types.is_struct(t) and t.num_fields for t in chunk.schema.types):
            chunk = chunk.flatten()
        chunk = chunk.combine_chunks()
        profiler.add_chunk({n: Column(chunk.column(n)) for n in chunk.column_names},
                           chunk.num_rows)
    return report


def _text_ranges(part: Part, sample_rows: int, chunk_rows: int) -> Outcome:
    """The text ranges of ``part.gaps`` columns of a text file, read again."""
    profiler = TableProfiler(sample_rows)
    profiler.resume(dict.fromkeys(part.gaps, DataType.STRING))
    for name in part.gaps:
        profiler.column(name).text_gap = True
    if part.report is not None:
        fill_text_gaps(profiler, [(part.file, part.report)], chunk_rows,
                       ResourceProfile(path=str(part.file), name=part.file.name))
    return Outcome(part.index, profiler)


# ------------------------------------------------------------------------------ the driver


def _slots(session: SparkSession) -> int:
    try:
        return max(1, int(session.sparkContext.defaultParallelism))
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext: a modest guess
        return 4


def run_parts(session: SparkSession, parts: list[Part], sample_rows: int,
              chunk_rows: int) -> list[Outcome]:
    """Run ``parts`` as one Spark stage, one task each; outcomes in the parts' order."""
    if not parts:
        return []
    payloads = [pickle.dumps(p, protocol=pickle.HIGHEST_PROTOCOL) for p in parts]

    def work(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from catalog_nb.server.profiling.spark import run_part

        for batch in batches:
            for i in batch.column(0).to_pylist():
                outcome = run_part(pickle.loads(payloads[i]), sample_rows, chunk_rows)
                data = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
                yield pa.record_batch([pa.array([i], pa.int64()), pa.array([data], pa.binary())],
                                      names=["id", "outcome"])

    try:
        frame = session.range(0, len(parts), 1, len(parts))
        rows = frame.mapInArrow(work, "id long, outcome binary").collect()
    except Exception as exc:  # noqa: BLE001 - Spark's failures come as Py4J/Connect errors
        raise SparkUnavailable(f"Spark failed to run the profiling tasks: {first_line(exc)}") \
            from None
    found = {int(row["id"]): pickle.loads(bytes(row["outcome"])) for row in rows}
    return [found[i] for i in range(len(parts))]


def _file_parts(path: DataFile, fmt: FileFormat, chunk_rows: int, slots: int,
                start: int) -> list[Part]:
    """The parts of one file to profile, numbered from ``start``."""
    if fmt is not FileFormat.PARQUET:
        return [Part(start, path, fmt.value)]
    declared, rows = parquet_schema(path)
    chunks = -(-rows // chunk_rows)
    count = min(chunks, slots * PARTS_PER_SLOT)
    if count <= 1 or not declared:
        return [Part(start, path, fmt.value, rows=(0, rows))]
    per = -(-chunks // count) * chunk_rows
    return [Part(start + i, path, fmt.value, rows=(at, min(rows, at + per)), first=i == 0)
            for i, at in enumerate(range(0, rows, per))]


class _Run:
    """One resource's parts run in stages and merged (see the module docstring)."""

    def __init__(self, session: SparkSession, sample_rows: int, chunk_rows: int,
                 on_read: ReadProgress | None, size: int) -> None:
        self.session = session
        self.sample_rows = sample_rows
        self.chunk_rows = chunk_rows
        self.on_read = on_read
        self.size = size

    def _progress(self, share: float) -> None:
        if self.on_read is not None:
            self.on_read(int(self.size * share))

    def run(self, parts: list[Part]) -> dict[int, Outcome]:
        """Every part's outcome by index: counts, and merged-ready profiles with planned picks."""
        profiled = [p for p in parts if not p.count_only]
        outcomes: dict[int, Outcome] = {}
        if len(profiled) > 1:
            unknown = [p for p in profiled if p.rows is None]
            counting = [replace(p, count_only=True) for p in unknown]
            counting += [p for p in parts if p.count_only]
            for outcome in run_parts(self.session, counting, self.sample_rows, self.chunk_rows):
                outcomes[outcome.index] = outcome
            self._progress(0.3)
            counts = []
            for p in profiled:
                known = outcomes.get(p.index)
                if p.rows is not None:
                    counts.append(p.rows[1] - p.rows[0])
                else:
                    counts.append(0 if known is None or known.count is None else known.count)
            for p, plan in zip(profiled, plan_picks(self.sample_rows, counts), strict=True):
                p.picks = plan
            todo = [p for p in profiled if outcomes.get(p.index) is None
                    or outcomes[p.index].error is None]
        else:
            todo = list(parts)
        for outcome in run_parts(self.session, todo, self.sample_rows, self.chunk_rows):
            outcomes[outcome.index] = outcome
        self._progress(0.8)
        self._reread_in_context(profiled, outcomes)
        return outcomes

    def _reread_in_context(self, profiled: list[Part], outcomes: dict[int, Outcome]) -> None:
        """Read again the parts whose first type of a column differs from the type the parts
        before them gave it (see the module docstring)."""
        running: dict[str, DataType | None] = {}
        again: list[Part] = []
        for p in profiled:
            outcome = outcomes.get(p.index)
            if outcome is None or outcome.profiler is None:
                continue
            context = {n: t for n, t in running.items() if t is not None}
            if any(context.get(n, f) != f and outcome.profiler.column(n).declared is None
                   for n, f in outcome.first_types.items()):
                again.append(replace(p, context=context))
            for name in outcome.profiler.names:
                running[name] = join_types(running.get(name),
                                           outcome.profiler.column(name).type)
        for outcome in run_parts(self.session, again, self.sample_rows, self.chunk_rows):
            outcomes[outcome.index] = outcome

    def merged(self, profiled: list[Part], outcomes: dict[int, Outcome]) -> TableProfiler:
        """The driver's profiler: the parts' in stream order, float sums added chunk by chunk,
        and the text ranges of columns that turned STRING late read again."""
        profiler = TableProfiler(self.sample_rows)
        sums: dict[str, float] = {}
        done = [outcomes[p.index] for p in profiled
                if outcomes[p.index].profiler is not None]
        for outcome in done:
            assert outcome.profiler is not None
            profiler.merge(outcome.profiler)
            for name, totals in outcome.sums.items():
                for total in totals:
                    sums[name] = sums.get(name, 0.0) + total
        for name in profiler.names:
            profiler.column(name).num_sum = sums.get(name, 0.0)
        gaps = tuple(profiler.text_gaps())
        if gaps:
            texts = [replace(p, gaps=gaps, picks=None, report=outcomes[p.index].report)
                     for p in profiled if outcomes[p.index].profiler is not None
                     and FileFormat(p.fmt) is not FileFormat.PARQUET]
            for outcome in run_parts(self.session, texts, self.sample_rows, self.chunk_rows):
                assert outcome.profiler is not None
                for name in gaps:
                    if name in outcome.profiler.names:
                        profiler.column(name).merge(outcome.profiler.column(name))
        self._progress(1.0)
        return profiler


def _reports(profiled: list[Part], outcomes: dict[int, Outcome]) -> list[ReadReport]:
    """One report per file (a Parquet file's parts' reports as one: its footer is the file's)."""
    by_file: dict[str, ReadReport] = {}
    for p in profiled:
        report = outcomes[p.index].report
        if report is None:
            continue
        into = by_file.get(str(p.file))
        if into is None:
            by_file[str(p.file)] = replace(report, warnings=list(report.warnings))
            continue
        into.ragged_rows += report.ragged_rows
        into.bad_records += report.bad_records
        into.first_problem = into.first_problem or report.first_problem
        into.warnings.extend(report.warnings)
        into.footer = into.footer or report.footer
    return list(by_file.values())


def _apply_attrs(profile: ResourceProfile, outcomes: Iterable[Outcome]) -> None:
    """How the files were read (encoding, separator...), the last file's winning, as when
    the local engine reads them one after the other."""
    for outcome in outcomes:
        for name, value in outcome.attrs.items():
            if value is not None and (name != "header" or outcome.attrs.get("separator")):
                setattr(profile, name, value)


def profile_file(
    session: SparkSession,
    path: str | Path,
    *,
    root: str | Path | ObjectFolder | None = None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    file_format: str | None = None,
    on_read: ReadProgress | None = None,
) -> ResourceProfile:
    """:func:`.files.profile_file` on Spark: the same profile (see the module docstring).

    Never raises for a bad file (the resource comes back as an ERROR); raises
    :class:`SparkUnavailable` when Spark itself fails.
    """
    profile = ResourceProfile(path=Path(path).as_posix(), name=Path(path).name)
    try:
        found = file_target(profile, path, root, file_format)
        if found is None:
            return profile
        target, fmt = found
        parts = _file_parts(target, fmt, chunk_rows, _slots(session), 0)
        run = _Run(session, sample_rows, chunk_rows, on_read, profile.resource_size or 0)
        outcomes = run.run(parts)
        failed = next((outcomes[p.index].error for p in parts if outcomes[p.index].error), None)
        if failed is not None:
            return profile.fail(failed)
        _apply_attrs(profile, (outcomes[p.index] for p in parts))
        profiler = run.merged(parts, outcomes)
        finish(profile, profiler, _reports(parts, outcomes))
    except SparkUnavailable:
        raise
    except ProfilingError as exc:
        profile.fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - one bad file must never stop a profiling job
        profile.fail(describe_error(exc, profile.file_format))
    return profile


def profile_collection(
    session: SparkSession,
    folder: str | Path,
    *,
    root: str | Path | ObjectFolder | None = None,
    members: Iterable[str] | None = None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    max_profiled_members: int = MAX_PROFILED_MEMBERS,
    on_read: ReadProgress | None = None,
) -> ResourceProfile:
    """:func:`.files.profile_collection` on Spark: the same profile (statistics over the same
    evenly spread members, the others counted), every member a part or more."""
    profile = ResourceProfile(path=Path(folder).as_posix(), name=Path(folder).name,
                              resource_type=ResourceType.COLLECTION.value)
    try:
        target: Folder = (root.folder(Path(folder).as_posix()) if isinstance(root, ObjectFolder)
                          else locate(folder, root))
        if not target.is_dir():
            return profile.fail("The folder no longer exists: it was moved or deleted.")
        if members is None:
            found = [r for r in browse(target) if r.path == "."]
            if not found:
                return profile.fail("The folder is no longer a collection of same-schema files.")
            members = [(Path(folder) / m).as_posix() for m in found[0].members]
        _collection(session, profile, list(members), root, sample_rows, chunk_rows,
                    max_profiled_members, on_read)
    except SparkUnavailable:
        raise
    except ProfilingError as exc:
        profile.fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - one bad collection must never stop a profiling job
        profile.fail(describe_error(exc, profile.file_format))
    return profile


def _collection(session: SparkSession, profile: ResourceProfile, members: list[str],
                root: str | Path | ObjectFolder | None, sample_rows: int, chunk_rows: int,
                max_profiled: int, on_read: ReadProgress | None) -> None:
    """:func:`.feed.profile_members` with the members' reading done by Spark tasks."""
    if not members:
        raise ProfilingError("The collection has no member files.")
    count = max(1, min(max_profiled, len(members)))
    step = (len(members) - 1) / max(1, count - 1)
    chosen = {round(i * step) for i in range(count)}
    errors: dict[int, str] = {}
    parts: list[Part] = []
    owner: dict[int, int] = {}  # part -> member
    sizes: list[int] = []
    stats: list[Stat] = []
    slots = _slots(session)
    for index, member in enumerate(members):
        try:
            path = locate_file(member, root)
            stat = path.stat()
            stats.append(stat)
            sizes.append(stat.st_size)
            fmt = detect_format(path)
            if fmt is None:
                raise ProfilingError("Not a data file: the format is none of CSV, JSON, Parquet.")
            profile.file_format = profile.file_format or fmt.value
            found = (_file_parts(path, fmt, chunk_rows, slots, len(parts)) if index in chosen
                     else [Part(len(parts), path, fmt.value, count_only=True)])
            parts.extend(found)
            owner.update((p.index, index) for p in found)
        except ProfilingError as exc:
            errors[index] = str(exc)
        except Exception as exc:  # noqa: BLE001 - a bad member is reported, the rest go on
            errors[index] = describe_error(exc, profile.file_format)
    run = _Run(session, sample_rows, chunk_rows, on_read, sum(sizes))
    outcomes = run.run(parts)
    for p in parts:
        error = outcomes[p.index].error
        if error is not None:
            errors.setdefault(owner[p.index], error)
    if len(errors) == len(members):
        first = errors[min(errors)]
        raise ProfilingError(f"No member of the collection can be read: {first}")
    if errors:
        profile.extra["memberErrors"] = [{"path": members[i], "errorMsg": errors[i]}
                                         for i in sorted(errors)]
    good = [p for p in parts if owner[p.index] not in errors]
    profiled = [p for p in good if not p.count_only]
    counted_rows = sum(outcomes[p.index].count or 0 for p in good if p.count_only)
    _apply_attrs(profile, (outcomes[p.index] for p in profiled))
    profiler = run.merged(profiled, outcomes)
    sampled = counted_rows > 0 or profiler.row_count > sample_rows
    finish(profile, profiler, _reports(profiled, outcomes), sampled)
    set_collection_totals(profile, members, stats, counted_rows)
