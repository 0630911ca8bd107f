"""Browsing folders of data files and profiling files and collections.

:func:`browse` walks a folder and returns resource skeletons; :func:`profile_file` and
:func:`profile_collection` read the data and fill in the system-owned properties. Neither ever
raises for a bad file: the resource comes back with ``state`` ERROR and ``error_msg``.

Collections: a folder becomes one collection resource when its data files (at least two) share
one format and schema and either their names differ only in digits (``2024-01.csv``,
``2024-02.csv``; ``part-0001.parquet``...) or they sit in Hive-style ``key=value`` folders
(``year=2024/month=01/...``). Same-schema files with unrelated names (``customers.csv`` and
``customers_clean.csv``) stay separate files: one is more likely derived from the other than a
partition of it.

Ragged rows: a CSV row with more or fewer fields than the header is skipped and counted
(``extra["raggedRows"]``, a warning names the first one). When more than half of the rows are
ragged the delimiter or header is wrong rather than a few rows: the file is an ERROR. Undecodable
JSON records follow the same rule (``extra["badRecords"]``).
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from catalog_nb.contract import ResourceType
from catalog_nb.server.profiling.feed import (
    created_ms,
    describe_error,
    feed_file,
    file_target,
    fill_text_gaps,
    finish,
    locate,
    profile_members,
    set_file_times,
)
from catalog_nb.server.profiling.formats import detect_format
from catalog_nb.server.profiling.locations import DataFile, Folder, ObjectFolder
from catalog_nb.server.profiling.model import (
    FileFormat,
    ProfilingError,
    ReadProgress,
    ResourceProfile,
)
from catalog_nb.server.profiling.readers import ReadCounter, quick_schema
from catalog_nb.server.profiling.stats import DEFAULT_SAMPLE_ROWS, TableProfiler

log = logging.getLogger(__name__)

DEFAULT_CHUNK_ROWS = 131_072
MAX_PROFILED_MEMBERS = 10
_PARTITION_DIR = re.compile(r"^[^=]+=[^=]*$")
_DIGITS = re.compile(r"\d+")


# ---------------------------------------------------------------------------------- browsing


def browse(
    root: str | Path | ObjectFolder,
    include_patterns: Iterable[str] | None = None,
    exclude_patterns: Iterable[str] | None = None,
) -> list[ResourceProfile]:
    """Every data resource under ``root``: files and collections, sorted by path.

    ``root`` is a folder, or an object store's bucket and prefix (:class:`.ObjectFolder`, whose
    keys are read as ``/``-separated paths). Patterns are shell globs matched against the path
    relative to ``root`` (and, for patterns without ``/``, against the file name). Hidden and
    ``_``-prefixed files and folders (Spark's ``_SUCCESS``, ``.crc``) are skipped; symbolic links
    are never followed out of ``root``. Raises ProfilingError when ``root`` is not a folder;
    an object store that cannot be listed raises its OSError.
    """
    includes, excludes = list(include_patterns or []), list(exclude_patterns or [])
    base: Folder
    if isinstance(root, ObjectFolder):
        base = root
        found = _found_objects(root, includes, excludes)
    else:
        base = Path(root).resolve()
        if not base.is_dir():
            raise ProfilingError(f"The folder {str(root)!r} does not exist or is not a folder.")
        found = _found_files(base, includes, excludes)
    resources: list[ResourceProfile] = []
    members: set[str] = set()
    hive_roots: list[str] = []  # a Hive-style collection owns its whole subtree
    for folder_rel in sorted(found.keys() | _ancestors(found), key=lambda p: (p.count("/"), p)):
        if any(_is_under(folder_rel, r) for r in hive_roots):
            continue
        collection = _collection(base, folder_rel, found)
        if collection is not None:
            resources.append(collection)
            members.update(collection.members)
            if folder_rel not in found:
                hive_roots.append(folder_rel)
    for files in found.values():
        for path, file_format in files:
            rel = path.relative_to(base).as_posix()  # type: ignore[arg-type]
            if rel not in members:
                resources.append(_file_skeleton(path, rel, file_format))
    return sorted(resources, key=lambda r: r.path)


#: The data files of a walk by folder (relative, ``.`` for the root), with their formats.
Found = dict[str, list[tuple[DataFile, FileFormat]]]


def _found_files(base: Path, includes: list[str], excludes: list[str]) -> Found:
    found: Found = {}
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "_")))
        folder = Path(dirpath)
        for filename in sorted(filenames):
            path = folder / filename
            rel = path.relative_to(base).as_posix()
            if filename.startswith((".", "_")) or not _selected(rel, includes, excludes):
                continue
            if path.is_symlink() and not path.resolve().is_relative_to(base):
                log.info("skipping %s: its link points outside %s", rel, base)
                continue
            file_format = detect_format(path)
            if file_format is not None and path.is_file():
                key = folder.relative_to(base).as_posix()
                found.setdefault(key, []).append((path, file_format))
    return found


def _found_objects(base: ObjectFolder, includes: list[str], excludes: list[str]) -> Found:
    """The objects under ``base``, one listing; the same rules as :func:`_found_files` (a key's
    ``/``-separated parts are its folders)."""
    found: Found = {}
    for item in base.files():
        parts = item.rel.split("/")
        if any(p.startswith((".", "_")) for p in parts) or not _selected(item.rel, includes,
                                                                       excludes):
            continue
        file_format = detect_format(item)
        if file_format is not None:
            found.setdefault("/".join(parts[:-1]) or ".", []).append((item, file_format))
    return found


def _selected(rel: str, includes: list[str], excludes: list[str]) -> bool:
    def matches(pattern: str) -> bool:
        name = rel.rsplit("/", 1)[-1]
        return fnmatch.fnmatchcase(rel, pattern) or (
            "/" not in pattern and fnmatch.fnmatchcase(name, pattern)
        )

    if includes and not any(matches(p) for p in includes):
        return False
    return not any(matches(p) for p in excludes)


def _ancestors(found: dict[str, Any]) -> set[str]:
    parents: set[str] = set()
    for folder in found:
        parts = [] if folder == "." else folder.split("/")
        parents.update("/".join(parts[:i]) or "." for i in range(len(parts)))
    return parents


def _is_under(path: str, folder: str) -> bool:
    return folder == "." or path == folder or path.startswith(folder + "/")


def _collection(base: Folder, folder_rel: str, found: Found) -> ResourceProfile | None:
    direct = found.get(folder_rel, [])
    below = {f: files for f, files in found.items() if f != folder_rel and _is_under(f, folder_rel)}
    hive = bool(below) and all(
        all(_PARTITION_DIR.match(part) for part in _relative(f, folder_rel).split("/"))
        for f in below
    )
    if hive and not direct:
        members = [item for files in below.values() for item in files]
    elif len(direct) >= 2 and len({_DIGITS.sub("9", p.name) for p, _ in direct}) == 1:
        members = direct
    else:
        return None
    if len(members) < 2 or len({fmt for _, fmt in members}) != 1:
        return None
    schemas = {quick_schema(path, fmt) for path, fmt in members}
    if len(schemas) != 1 or None in schemas:
        return None
    folder = base if folder_rel == "." else base / folder_rel
    paths = sorted(path for path, _ in members)
    stats = [path.stat() for path in paths]
    schema = next(iter(schemas)) or ()
    profile = ResourceProfile(
        path=folder_rel,
        name=folder.name,
        resource_type=ResourceType.COLLECTION.value,
        file_format=_csv_format(members[0][1], schema),
        resource_size=sum(s.st_size for s in stats),
        partition_count=len(paths),
        members=[p.relative_to(base).as_posix() for p in paths],  # type: ignore[arg-type]
        created_ms=min(created_ms(s) for s in stats),
        modified_ms=max(int(s.st_mtime_ns // 1_000_000) for s in stats),
    )
    _apply_schema(profile, members[0][1], schema)
    return profile


def _relative(folder: str, parent: str) -> str:
    return folder if parent == "." else folder[len(parent) + 1 :]


def _csv_format(file_format: FileFormat, schema: tuple[Any, ...] | None) -> str:
    if file_format is FileFormat.CSV and schema and schema[0] == "\t":
        return FileFormat.TSV.value
    return file_format.value


def _apply_schema(profile: ResourceProfile, fmt: FileFormat, schema: tuple[Any, ...]) -> None:
    if fmt in (FileFormat.CSV, FileFormat.TSV) and len(schema) == 3:
        profile.separator, profile.header = schema[0], schema[1]
        profile.header_row = 1 if profile.header else 0
        profile.field_count = len(schema[2])
    elif schema:
        profile.field_count = len(schema)


def _file_skeleton(path: DataFile, rel: str, file_format: FileFormat) -> ResourceProfile:
    stat = path.stat()
    profile = ResourceProfile(path=rel, name=path.name, file_format=file_format.value)
    set_file_times(profile, stat)
    if file_format in (FileFormat.CSV, FileFormat.TSV) and stat.st_size:
        schema = quick_schema(path, file_format)
        if schema:
            profile.file_format = _csv_format(file_format, schema)
            _apply_schema(profile, file_format, schema)
    return profile


def profile_file(
    path: str | Path,
    *,
    root: str | Path | ObjectFolder | None = None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    file_format: str | None = None,
    on_read: ReadProgress | None = None,
) -> ResourceProfile:
    """Profile one file. ``path`` is relative to ``root`` when given (and reported as given).

    Never raises for a bad file: unreadable, empty, binary, vanished or unparseable files come back
    with ``state`` ERROR and ``error_msg``. ``on_read`` hears the bytes read so far, ending at
    the file's size.

    >>> profile_file("orders.csv", root="lake").row_count  # doctest: +SKIP
    1000
    """
    profile = ResourceProfile(path=Path(path).as_posix(), name=Path(path).name)
    try:
        found = file_target(profile, path, root, file_format)
        if found is None:
            return profile
        target, fmt = found
        profiler = TableProfiler(sample_rows)
        report = feed_file(target, fmt, profiler, chunk_rows, profile, ReadCounter(on_read))
        fill_text_gaps(profiler, [(target, report)], chunk_rows, profile)
        finish(profile, profiler, [report])
    except ProfilingError as exc:
        profile.fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - one bad file must never stop a profiling job
        profile.fail(describe_error(exc, profile.file_format))
    return profile


def profile_collection(
    folder: str | Path,
    *,
    root: str | Path | ObjectFolder | None = None,
    members: Iterable[str] | None = None,
    sample_rows: int = DEFAULT_SAMPLE_ROWS,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    max_profiled_members: int = MAX_PROFILED_MEMBERS,
    on_read: ReadProgress | None = None,
) -> ResourceProfile:
    """Profile a collection: row counts summed over every member, statistics over up to
    ``max_profiled_members`` of them (evenly spread, first and last included).

    ``members`` are paths like those :func:`browse` reports (relative to ``root`` when given);
    without them the folder is browsed again. Members that fail are listed in
    ``extra["memberErrors"]``; the collection is an ERROR only when no member could be read.
    ``on_read`` hears the bytes read so far over all members (counted ones included).
    """
    profile = ResourceProfile(
        path=Path(folder).as_posix(),
        name=Path(folder).name,
        resource_type=ResourceType.COLLECTION.value,
    )
    try:
        target: Folder = (root.folder(Path(folder).as_posix()) if isinstance(root, ObjectFolder)
                          else locate(folder, root))
        if not target.is_dir():
            return profile.fail("The folder no longer exists: it was moved or deleted.")
        if members is None:
            found = [r for r in browse(target) if r.path == "."]
            if not found:
                return profile.fail("The folder is no longer a collection of same-schema files.")
            prefix = Path(folder)
            members = [(prefix / m).as_posix() for m in found[0].members]
        profile_members(profile, list(members), root, sample_rows, chunk_rows,
                        max_profiled_members, ReadCounter(on_read))
    except ProfilingError as exc:
        profile.fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - one bad collection must never stop a profiling job
        profile.fail(describe_error(exc, profile.file_format))
    return profile


