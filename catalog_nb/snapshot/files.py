"""The on-disk form of a snapshot: one Parquet file per frame and a ``manifest.json``.

Layout of a snapshot folder::

    manifest.json        format name and version, catalog identity, time, and per table:
                         file, row count, SHA-256 and the pandas dtype of every column
    users.parquet  roles.parquet  sources.parquet  tag_domains.parquet  tags.parquet
    associations.parquet  resources.parquet  fields.parquet

Columns whose cells are Python objects (lists, dicts, JSON values such as a field's ``min``)
are stored as JSON text and decoded on reading, and every column is cast back to the dtype the
manifest records, so a frame read back has exactly the dtypes of the frame written (Parquet
alone would turn lists into arrays and lose the nullable dtypes of empty columns).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.client.frame_display import CatalogFrame

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST",
    "TABLES",
    "SnapshotError",
    "read_manifest",
    "read_table",
    "reports_import",
    "write_snapshot",
]

#: The ``format`` of every manifest.
FORMAT_NAME = "catalog-nb-snapshot"
#: The version this release writes; it reads this version and older ones.
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
#: The frames of a snapshot, in the order they are written.
TABLES: tuple[str, ...] = (
    "users",
    "roles",
    "sources",
    "tag_domains",
    "tags",
    "associations",
    "resources",
    "fields",
)


class SnapshotError(Exception):
    """A snapshot cannot be written, read or compared; the message says why and what to do."""



def usual_mode(directory: bool = False) -> int:
    """The permissions a plain ``open()``/``mkdir()`` would give under the process's umask.

    Files written through ``tempfile`` and renamed into place would otherwise keep its private
    0600/0700, and a report or snapshot meant to be shared could not be read by colleagues.
    """
    mask = os.umask(0)
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask

def reports_import(module: str) -> Any:
    """Import one of the ``reports`` extra's libraries, or say how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{module} is needed for snapshots and exports but is not installed; "
            "install it with: pip install catalog-nb[reports]"
        ) from exc


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _json_default(value: Any) -> Any:
    if isinstance(value, pd.Timestamp | dt.datetime | dt.date):
        return value.isoformat()
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    return str(value)


def _encode(value: Any) -> str | None:
    if value is None or (not isinstance(value, list | dict | tuple) and pd.isna(value)):
        return None
    return json.dumps(value, default=_json_default, ensure_ascii=False)


def _decode(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and pd.isna(value)) else (
        json.loads(value)
    )


def _encoded(frame: pd.DataFrame) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """The frame as Parquet can hold it, and the column list of the manifest."""
    columns: list[dict[str, Any]] = []
    data: dict[str, pd.Series] = {}
    for name in frame.columns:
        series = frame[name]
        as_json = series.dtype == object
        columns.append({"name": str(name), "dtype": str(series.dtype), "json": as_json})
        data[str(name)] = (
            pd.Series([_encode(v) for v in series], dtype="string") if as_json else series
        )
    out = pd.DataFrame(data, columns=[c["name"] for c in columns])
    out.index = pd.RangeIndex(len(frame))
    return out, columns


def write_snapshot(
    path: str | os.PathLike[str],
    frames: Mapping[str, pd.DataFrame],
    catalog: Mapping[str, Any],
    *,
    taken_at: pd.Timestamp,
) -> Path:
    """Write ``frames`` and the manifest to the new folder ``path``, all or nothing.

    The files are written to a temporary sibling folder that is renamed into place at the end,
    so a failure never leaves a half-written snapshot. ``path`` must not exist yet (or be an
    empty folder).
    """
    reports_import("pyarrow")
    target = Path(path).expanduser()
    if target.exists() and not (target.is_dir() and not any(target.iterdir())):
        raise SnapshotError(
            f"cannot write a snapshot to {str(target)!r}: it already exists and is not an "
            "empty folder; choose a new path"
        )
    parent = target.parent
    if not parent.is_dir():
        raise SnapshotError(
            f"cannot write a snapshot to {str(target)!r}: the folder {str(parent)!r} does not "
            "exist"
        )
    try:
        work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
        work.chmod(usual_mode(directory=True))
    except OSError as exc:
        raise SnapshotError(
            f"cannot write a snapshot to {str(target)!r}: {exc.strerror or exc}"
        ) from exc
    try:
        tables: dict[str, Any] = {}
        for name in TABLES:
            frame = frames[name]
            stored, columns = _encoded(frame)
            file = work / f"{name}.parquet"
            stored.to_parquet(file, engine="pyarrow", index=False)
            tables[name] = {
                "file": file.name,
                "rows": len(frame),
                "sha256": _sha256(file),
                "columns": columns,
            }
        manifest = {
            "format": FORMAT_NAME,
            "format_version": FORMAT_VERSION,
            "catalog": dict(catalog),
            "taken_at": taken_at.isoformat(),
            "tables": tables,
        }
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        if target.exists():
            target.rmdir()
        work.rename(target)
    except OSError as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise SnapshotError(
            f"cannot write a snapshot to {str(target)!r}: {exc.strerror or exc}"
        ) from exc
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return target


def read_manifest(folder: Path) -> dict[str, Any]:
    """The checked manifest of the snapshot in ``folder`` (files present, hashes right)."""
    if not folder.is_dir():
        raise SnapshotError(f"no snapshot at {str(folder)!r}: it is not a folder")
    file = folder / MANIFEST
    if not file.is_file():
        raise SnapshotError(
            f"{str(folder)!r} is not a snapshot: it has no {MANIFEST} (write one with "
            "cat.snapshot(path))"
        )
    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SnapshotError(
            f"the manifest of snapshot {str(folder)!r} is unreadable: {exc}"
        ) from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise SnapshotError(f"{str(folder)!r} is not a catalog-nb snapshot (unknown manifest)")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise SnapshotError(f"snapshot {str(folder)!r} has an invalid format version {version!r}")
    if version > FORMAT_VERSION:
        raise SnapshotError(
            f"snapshot {str(folder)!r} was written in format version {version} by a newer "
            f"catalog-nb; this release reads versions up to {FORMAT_VERSION}. Upgrade "
            "catalog-nb to open it."
        )
    tables = manifest.get("tables")
    if not isinstance(tables, dict):
        raise SnapshotError(f"the manifest of snapshot {str(folder)!r} lists no tables")
    missing = [name for name in TABLES if name not in tables]
    missing += [
        str(tables[name].get("file"))
        for name in TABLES
        if name in tables and not (folder / str(tables[name].get("file"))).is_file()
    ]
    if missing:
        raise SnapshotError(
            f"snapshot {str(folder)!r} is incomplete: missing {', '.join(missing)}; "
            "it cannot be read (take the snapshot again)"
        )
    for name in TABLES:
        entry = tables[name]
        if _sha256(folder / entry["file"]) != entry.get("sha256"):
            raise SnapshotError(
                f"snapshot {str(folder)!r} is damaged: {entry['file']} changed after the "
                "snapshot was taken (its SHA-256 differs from the manifest's)"
            )
    return dict(manifest)


def read_table(folder: Path, entry: Mapping[str, Any]) -> pd.DataFrame:
    """One frame of a snapshot, with the dtypes the manifest records."""
    pq = reports_import("pyarrow.parquet")
    table = pq.read_table(folder / entry["file"])
    raw = table.to_pandas()
    data: dict[str, pd.Series] = {}
    for column in entry["columns"]:
        name, dtype = column["name"], column["dtype"]
        if name not in raw.columns:
            raise SnapshotError(f"snapshot file {entry['file']} lacks its column {name!r}")
        values = raw[name]
        if column.get("json"):
            data[name] = pd.Series([_decode(v) for v in values], dtype=object)
        elif dtype.startswith("datetime64"):
            data[name] = pd.to_datetime(values, utc="UTC" in dtype).astype(dtype)
        else:
            data[name] = values.astype(dtype)
    frame = CatalogFrame(data, columns=[c["name"] for c in entry["columns"]])
    frame.index = pd.RangeIndex(len(raw))
    if len(frame) != entry.get("rows"):
        raise SnapshotError(
            f"snapshot file {entry['file']} holds {len(frame)} rows; the manifest says "
            f"{entry.get('rows')}"
        )
    return frame
