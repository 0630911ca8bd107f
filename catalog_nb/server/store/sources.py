"""Data sources, and the resource, virtual folder and data set look-ups that permissions need.

Also where a source may lie: :func:`file_folder` resolves a FILE source's folder and checks it
against the configured data roots, :func:`object_uri` an object-store FILE source's bucket and
prefix against the object roots; :func:`sql_url` checks an SQL source's URL without
connecting, and for SQLite checks its files like folders (under the data roots, never the
catalog's own store, recognised by device and inode). Both raise 400 errors whose messages never
contain a password. :func:`sqlite_guard` repeats the file checks when a job connects.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from sqlalchemy import Connection, func, insert, select, update
from sqlalchemy.engine import make_url

from catalog_nb.contract import ErrorCode, JobEngine
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.profiling.connect import check_url, redact, split_attachments
from catalog_nb.server.profiling.object_uri import parse_object_uri
from catalog_nb.server.store.common import fold, new_key, now_ms, unique_name
from catalog_nb.server.store.schema import data_resources, data_sources, datasets, virtual_folders


def get_source_by_name(conn: Connection, name: str) -> dict[str, Any]:
    """The data source with this name (case-insensitive); 404 when there is none."""
    row = conn.execute(
        select(data_sources).where(data_sources.c.name_fold == fold(name))
    ).mappings().first()
    if row is None:
        raise NotFound(f"There is no data source named '{name}'.", ErrorCode.DATA_SOURCE_NOT_FOUND)
    return dict(row)


def get_resource_by_path(conn: Connection, source_key: str, path: str) -> dict[str, Any]:
    """The data resource at ``path`` in a source; 404 when there is none."""
    row = conn.execute(
        select(data_resources).where(
            data_resources.c.data_source_key == source_key, data_resources.c.path == path
        )
    ).mappings().first()
    if row is None:
        raise NotFound(f"There is no data resource at path '{path}'.", ErrorCode.RESOURCE_NOT_FOUND)
    return dict(row)


def virtual_folders_by_key(conn: Connection, keys: Iterable[str]) -> list[dict[str, Any]]:
    """The virtual folders with these keys (unknown keys are skipped)."""
    wanted = list(keys)
    if not wanted:
        return []
    query = select(virtual_folders).where(virtual_folders.c.key.in_(wanted))
    return [dict(r) for r in conn.execute(query).mappings()]


def datasets_by_key(conn: Connection, keys: Iterable[str]) -> list[dict[str, Any]]:
    """The data sets with these keys (unknown keys are skipped)."""
    wanted = list(keys)
    if not wanted:
        return []
    query = select(datasets).where(datasets.c.key.in_(wanted))
    return [dict(r) for r in conn.execute(query).mappings()]


# ------------------------------------------------------------------------ data source records

#: Data source columns a create or update may set (store names).
SOURCE_COLUMNS = (
    "name", "description", "source_type", "uri", "include_patterns", "exclude_patterns", "engine",
)


def _not_found(key: str) -> NotFound:
    return NotFound(f"There is no data source with key '{key}'.", ErrorCode.DATA_SOURCE_NOT_FOUND)


def find_source(conn: Connection, key: str) -> dict[str, Any] | None:
    """The data source with this key, or None."""
    row = conn.execute(select(data_sources).where(data_sources.c.key == key)).mappings().first()
    return dict(row) if row else None


def get_source(conn: Connection, key: str) -> dict[str, Any]:
    """The data source with this key; 404 when there is none."""
    row = find_source(conn, key)
    if row is None:
        raise _not_found(key)
    return row


def list_sources(conn: Connection, keys: Collection[str] | None = None) -> list[dict[str, Any]]:
    """Every data source (or those with ``keys``), by name."""
    query = select(data_sources).order_by(data_sources.c.name_fold)
    if keys is not None:
        if not keys:
            return []
        query = query.where(data_sources.c.key.in_(list(keys)))
    return [dict(r) for r in conn.execute(query).mappings()]


def create_source(conn: Connection, values: Mapping[str, Any]) -> dict[str, Any]:
    """Create a data source from checked values (names are unique case-insensitively: 409)."""
    now = now_ms()
    row = {c: values.get(c) for c in SOURCE_COLUMNS}
    row["engine"] = row["engine"] or JobEngine.LOCAL.value
    row.update(
        key=new_key(),
        name_fold=fold(str(values["name"])),
        include_patterns=list(values.get("include_patterns") or []),
        exclude_patterns=list(values.get("exclude_patterns") or []),
        created_ms=now,
        changed_ms=now,
    )
    with unique_name("data source", str(row["name"])):
        conn.execute(insert(data_sources).values(**row))
    return get_source(conn, str(row["key"]))


def update_source(conn: Connection, key: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Change the given columns of a data source; 404 unknown, 409 duplicate name."""
    get_source(conn, key)
    row = {c: v for c, v in values.items() if c in SOURCE_COLUMNS}
    for column in ("include_patterns", "exclude_patterns"):
        if column in row:
            row[column] = list(row[column] or [])
    if "name" in row:
        row["name_fold"] = fold(str(row["name"]))
    row["changed_ms"] = now_ms()
    with unique_name("data source", str(values.get("name", ""))):
        conn.execute(update(data_sources).where(data_sources.c.key == key).values(**row))
    return get_source(conn, key)


def resource_counts(conn: Connection, keys: Collection[str]) -> dict[str, int]:
    """How many resources each source holds, those marked MISSING not counted."""
    if not keys:
        return {}
    query = (
        select(data_resources.c.data_source_key, func.count())
        .where(
            data_resources.c.data_source_key.in_(list(keys)),
            data_resources.c.status != "MISSING",
        )
        .group_by(data_resources.c.data_source_key)
    )
    return {str(k): int(n) for k, n in conn.execute(query).all()}


# ------------------------------------------------------------------------- where sources lie


def file_folder(uri: str, roots: Sequence[Path]) -> Path:
    """The folder a FILE source names, resolved (``..`` and symlinks), checked against ``roots``.

    ``uri`` is an absolute path or a ``file://`` URL. Raises 400 SOURCE_OUTSIDE_ROOTS when the
    resolved folder is not under one of the resolved roots (or no root is configured), and 400
    INVALID_SOURCE_URI when it is not absolute or not an existing folder. Whether a folder
    outside the roots exists is never told.
    """
    text = uri.strip()
    if text.lower().startswith("file:"):
        parsed = urlparse(text)
        if parsed.netloc not in ("", "localhost"):
            raise BadRequest(
                f"The uri {text!r} names another host; a FILE source is a folder on the "
                "service's machine.", ErrorCode.INVALID_SOURCE_URI,
            )
        text = unquote(parsed.path)
    path = Path(text)
    if not text or not path.is_absolute():
        raise BadRequest(
            f"The uri of a FILE source must be an absolute folder path, not {text!r}.",
            ErrorCode.INVALID_SOURCE_URI,
        )
    try:
        resolved = path.resolve()
        allowed = [Path(r).resolve() for r in roots]
    except (OSError, RuntimeError, ValueError):
        raise BadRequest(
            f"The folder {text!r} cannot be resolved (a symbolic link loop or an invalid path).",
            ErrorCode.INVALID_SOURCE_URI,
        ) from None
    if not allowed:
        raise BadRequest(
            "No data roots are configured, so no FILE source may be registered: set "
            "CATALOG_DATA_ROOTS to the folders the catalog may read.",
            ErrorCode.SOURCE_OUTSIDE_ROOTS,
        )
    if not any(resolved == r or resolved.is_relative_to(r) for r in allowed):
        shown = ", ".join(str(r) for r in allowed)
        via = "" if str(resolved) == str(path) else f" (it resolves to {str(resolved)!r})"
        raise BadRequest(
            f"The folder {text!r}{via} lies outside the data roots the catalog may read: "
            f"{shown}.",
            ErrorCode.SOURCE_OUTSIDE_ROOTS,
        )
    if not resolved.is_dir():
        raise BadRequest(
            f"The folder {str(resolved)!r} does not exist or is not a folder.",
            ErrorCode.INVALID_SOURCE_URI,
        )
    return resolved


def object_uri(uri: str, roots: Sequence[str]) -> str:
    """An object-store FILE source's URI (``s3://[KEY_ID:SECRET@]bucket/prefix[?endpoint=&
    region=]``), checked against the object roots, in its canonical spelling.

    400 INVALID_SOURCE_URI when it does not parse, 400 SOURCE_OUTSIDE_ROOTS when its bucket and
    prefix lie under none of ``roots`` (``s3://bucket/prefix`` entries) or none is configured:
    like the data roots, no object root means no object-store source. Nothing is requested
    from the store (a missing bucket or refused credentials fail the source's jobs, which say
    so). Messages never hold the secret.
    """
    try:
        parsed = parse_object_uri(uri)
        allowed = [parse_object_uri(r) for r in roots]
    except ValueError as exc:
        raise BadRequest(
            f"The uri of this object-store source is not usable: {redact(str(exc), uri)}.",
            ErrorCode.INVALID_SOURCE_URI,
        ) from None
    if not allowed:
        raise BadRequest(
            "No object roots are configured, so no object-store source may be registered: set "
            "CATALOG_OBJECT_ROOTS to the s3://bucket/prefix locations the catalog may read.",
            ErrorCode.SOURCE_OUTSIDE_ROOTS,
        )
    if not any(parsed.within(root) for root in allowed):
        shown = ", ".join(root.location for root in allowed)
        raise BadRequest(
            f"The location {parsed.location} lies outside the object roots the catalog may "
            f"read: {shown}.",
            ErrorCode.SOURCE_OUTSIDE_ROOTS,
        )
    return parsed.render()


def sql_url(uri: str, store_url: str | None = None,
            roots: Sequence[Path] | None = None) -> str:
    """A checked SQL source URL (trimmed); 400 INVALID_SOURCE_URI naming what is wrong.

    The message never contains the password. For SQLite, every file the URL opens (the main
    database and each ``attach``) is checked by :func:`checked_sqlite_file`: the catalog's own
    store is refused however it is named (400 INVALID_SOURCE_URI), and with ``roots`` given a
    file outside them is refused (400 SOURCE_OUTSIDE_ROOTS). In-memory and ``file:`` URI
    databases are refused by :func:`check_url`: they hold nothing to catalog.
    """
    try:
        parsed = check_url(uri)
    except ValueError as exc:
        raise BadRequest(
            f"The uri of this SQL source is not usable: {redact(str(exc), uri)}.",
            ErrorCode.INVALID_SOURCE_URI,
        ) from None
    if parsed.get_backend_name() == "sqlite":
        clean, attached = split_attachments(parsed)
        files = [Path(str(clean.database)), *attached.values()]
        try:
            # The own store first: it is refused even inside a data root.
            for file in files:
                checked_sqlite_file(file, store_url, None)
            for file in files:
                checked_sqlite_file(file, None, roots)
        except BadRequest as exc:
            exc.message = redact(exc.message, uri)
            raise
    return uri.strip()


#: What SQLite keeps beside a database file: reading these would read the store as well.
_SIBLINGS = ("", "-wal", "-shm", "-journal")


def _store_files(store_url: str | None) -> tuple[set[Path], set[tuple[int, int]]]:
    """The store's files (resolved paths) and the (device, inode) of those that exist."""
    if not store_url:
        return set(), set()
    store = make_url(store_url)
    if store.get_backend_name() != "sqlite" or not store.database:
        return set(), set()
    database = store.database
    if database == ":memory:" or database.startswith("file:"):
        return set(), set()
    paths: set[Path] = set()
    inodes: set[tuple[int, int]] = set()
    for suffix in _SIBLINGS:
        path = Path(f"{database}{suffix}")
        try:
            paths.add(path.resolve())
            stat = path.stat()
        except (OSError, RuntimeError):
            continue
        inodes.add((stat.st_dev, stat.st_ino))
    return paths, inodes


def checked_sqlite_file(path: Path, store_url: str | None,
                        roots: Sequence[Path] | None) -> Path:
    """The SQLite file ``path`` resolved (``..`` and symbolic links), once it may be read.

    400 INVALID_SOURCE_URI when it is one of the store's files (``store_url``) or its -wal,
    -shm or -journal companion: compared by device and inode as well as by resolved path, so
    a hard link, a symbolic link or a bind mount of the store is refused too. With ``roots``
    (None: not checked), 400 SOURCE_OUTSIDE_ROOTS when the resolved file is not under one of
    them. A file that does not exist yet passes: the job that reads it checks again.
    """
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):
        raise BadRequest(
            f"The SQLite database {str(path)!r} cannot be resolved (a symbolic link loop or an "
            "invalid path).",
            ErrorCode.INVALID_SOURCE_URI,
        ) from None
    own_paths, own_inodes = _store_files(store_url)
    if own_paths or own_inodes:
        try:
            stat = resolved.stat()
            same = (stat.st_dev, stat.st_ino) in own_inodes
        except OSError:
            same = False
        if same or resolved in own_paths:
            raise BadRequest(
                f"The SQLite database {str(path)!r} is the catalog's own store (or one of its "
                "files, through a link or another name); the own store cannot be a data "
                "source.",
                ErrorCode.INVALID_SOURCE_URI,
            )
    if roots is not None:
        _within_roots(path, resolved, roots)
    return resolved


def _within_roots(path: Path, resolved: Path, roots: Sequence[Path]) -> None:
    try:
        allowed = [Path(r).resolve() for r in roots]
    except (OSError, RuntimeError, ValueError):
        allowed = []
    if not allowed:
        raise BadRequest(
            "No data roots are configured, so no SQLite database may be registered as an SQL "
            "source: set CATALOG_DATA_ROOTS to the folders the catalog may read.",
            ErrorCode.SOURCE_OUTSIDE_ROOTS,
        )
    if not any(resolved.is_relative_to(r) for r in allowed):
        shown = ", ".join(str(r) for r in allowed)
        via = "" if str(resolved) == str(path) else f" (it resolves to {str(resolved)!r})"
        raise BadRequest(
            f"The SQLite database {str(path)!r}{via} lies outside the data roots the catalog "
            f"may read: {shown}. An SQL source on SQLite must name files under "
            "CATALOG_DATA_ROOTS.",
            ErrorCode.SOURCE_OUTSIDE_ROOTS,
        )


def sqlite_guard(store_url: str | None, roots: Sequence[Path] | None) -> Callable[[Path], Path]:
    """A check for :func:`~catalog_nb.server.profiling.connect.source_engine` to run on each
    SQLite file right before it is opened (the file may have been swapped since it was
    registered): :func:`checked_sqlite_file`, its refusal raised as ``PermissionError`` so the
    profiling code reports it like any file it cannot open."""

    def guard(path: Path) -> Path:
        try:
            return checked_sqlite_file(path, store_url, roots)
        except BadRequest as exc:
            raise PermissionError(exc.message) from None

    return guard
