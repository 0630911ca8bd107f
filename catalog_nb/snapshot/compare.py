"""What changed between two snapshots of one catalog: added, removed and changed objects.

Objects are matched by their key (fields by resource key and field name). A changed object
gives one row per column that differs, with the old and the new value. The ``changed``
timestamp column is left out of the comparison by default: it moves with every other change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import pandas as pd

from catalog_nb.snapshot.files import TABLES, SnapshotError
from catalog_nb.snapshot.snapshot import Snapshot, open_snapshot

__all__ = ["CHANGE_COLUMNS", "SnapshotDiff", "diff"]


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as dicts keyed by column name."""
    return cast(list[dict[str, Any]], frame.to_dict("records"))

#: Columns that identify an object of each table.
KEYS: dict[str, tuple[str, ...]] = {
    "users": ("key",),
    "roles": ("key",),
    "sources": ("key",),
    "tag_domains": ("key",),
    "tags": ("key",),
    "associations": ("key",),
    "resources": ("key",),
    "fields": ("resource_key", "name"),
}


def _text(row: Mapping[str, Any], name: str) -> str:
    value = row.get(name)
    return "" if value is None or (not isinstance(value, list | dict) and pd.isna(value)) else (
        str(value)
    )


def _association_label(row: Mapping[str, Any]) -> str:
    where = f"{_text(row, 'source')}:{_text(row, 'path')}"
    if _text(row, "field"):
        where += f" [{_text(row, 'field')}]"
    return f"{where} -> {_text(row, 'tag')}"


#: How an object of each table is named in the diff frames.
LABELS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "users": lambda r: _text(r, "name"),
    "roles": lambda r: _text(r, "name"),
    "sources": lambda r: _text(r, "name"),
    "tag_domains": lambda r: _text(r, "name"),
    "tags": lambda r: _text(r, "full_name"),
    "associations": _association_label,
    "resources": lambda r: f"{_text(r, 'source')}:{_text(r, 'path')}",
    "fields": lambda r: f"{_text(r, 'source')}:{_text(r, 'resource_path')} [{_text(r, 'name')}]",
}

#: Columns of the ``changed`` frames: one row per object and changed column.
CHANGE_COLUMNS: tuple[str, ...] = ("key", "object", "column", "old", "new")


def _missing(value: Any) -> bool:
    if isinstance(value, list | dict | tuple):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _same(old: Any, new: Any) -> bool:
    if _missing(old) or _missing(new):
        return _missing(old) and _missing(new)
    try:
        return bool(old == new)
    except (TypeError, ValueError):  # e.g. arrays compared element-wise
        return repr(old) == repr(new)


def _identity(row: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    return "/".join(_text(row, k) for k in keys)


@dataclass
class SnapshotDiff:
    """The differences between ``old`` and ``new``, per object type (table name).

    Attributes:
        added: ``{type: frame}`` the objects only in ``new`` (its columns).
        removed: ``{type: frame}`` the objects only in ``old``.
        changed: ``{type: frame}`` one row per object and changed column: key, object (a
            readable name), column, old, new.
        summary: one row per type: object_type, old, new (counts), added, removed, changed
            (objects with at least one changed column).

    Example::

        d = catalog_nb.diff("snapshots/q1", "snapshots/q2")
        d.summary
        d.changed["resources"].query("column == 'owner'")
    """

    old: Snapshot
    new: Snapshot
    added: dict[str, pd.DataFrame] = field(default_factory=dict)
    removed: dict[str, pd.DataFrame] = field(default_factory=dict)
    changed: dict[str, pd.DataFrame] = field(default_factory=dict)
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)

    def __repr__(self) -> str:
        parts = [
            f"{row.object_type}: +{row.added} -{row.removed} ~{row.changed}"
            for row in self.summary.itertuples()
            if row.added or row.removed or row.changed
        ]
        return (
            f"<SnapshotDiff {self.old.taken_at:%Y-%m-%d %H:%M} -> "
            f"{self.new.taken_at:%Y-%m-%d %H:%M}: {'; '.join(parts) or 'no changes'}>"
        )

    @property
    def empty(self) -> bool:
        """Whether nothing was added, removed or changed."""
        return not bool(self.summary[["added", "removed", "changed"]].to_numpy().sum())


def _as_snapshot(value: Snapshot | str | os.PathLike[str]) -> Snapshot:
    return value if isinstance(value, Snapshot) else open_snapshot(value)


def _compare(
    name: str, old: pd.DataFrame, new: pd.DataFrame, ignore: set[str]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, int]:
    keys, label = KEYS[name], LABELS[name]
    old_rows = {_identity(r, keys): r for r in _records(old)}
    new_rows = {_identity(r, keys): r for r in _records(new)}
    old_ids = [_identity(r, keys) for r in _records(old)]
    new_ids = [_identity(r, keys) for r in _records(new)]
    added = new.loc[[i not in old_rows for i in new_ids]].reset_index(drop=True)
    removed = old.loc[[i not in new_rows for i in old_ids]].reset_index(drop=True)
    shared = [c for c in new.columns if c in old.columns and c not in ignore]
    changes: list[dict[str, Any]] = []
    objects = 0
    for identity, after in new_rows.items():
        before = old_rows.get(identity)
        if before is None:
            continue
        differing = [c for c in shared if not _same(before.get(c), after.get(c))]
        objects += bool(differing)
        changes.extend(
            {
                "key": identity,
                "object": label(after),
                "column": column,
                "old": before.get(column),
                "new": after.get(column),
            }
            for column in differing
        )
    changed = pd.DataFrame(
        {
            "key": pd.Series([c["key"] for c in changes], dtype="string"),
            "object": pd.Series([c["object"] for c in changes], dtype="string"),
            "column": pd.Series([c["column"] for c in changes], dtype="string"),
            "old": pd.Series([c["old"] for c in changes], dtype=object),
            "new": pd.Series([c["new"] for c in changes], dtype=object),
        },
        columns=list(CHANGE_COLUMNS),
    )
    return added, removed, changed, objects


def diff(
    old: Snapshot | str | os.PathLike[str],
    new: Snapshot | str | os.PathLike[str],
    *,
    force: bool = False,
    ignore: Iterable[str] = ("changed",),
) -> SnapshotDiff:
    """Compare two snapshots (objects or folders) of one catalog: what was added, removed and
    changed, per object type.

    Snapshots of different catalogs (their manifests' catalog ids differ) raise
    :class:`SnapshotError`: nearly every object would look added and removed. ``force=True``
    compares them anyway. ``ignore`` names columns left out of the comparison.

    Example::

        d = catalog_nb.diff("snapshots/q1", "snapshots/q2")
        d.summary
        d.added["users"][["name", "email"]]
        d.changed["tags"]
    """
    before, after = _as_snapshot(old), _as_snapshot(new)
    if not force and before.catalog_id != after.catalog_id:
        raise SnapshotError(
            f"the snapshots are of different catalogs ({before.url}, id {before.catalog_id} "
            f"vs {after.url}, id {after.catalog_id}); comparing them would show everything as "
            "added and removed. Pass force=True to compare them anyway."
        )
    skip = set(ignore)
    result = SnapshotDiff(before, after)
    rows = []
    for name in TABLES:
        old_frame, new_frame = before.frame(name), after.frame(name)
        added, removed, changed, objects = _compare(name, old_frame, new_frame, skip)
        result.added[name], result.removed[name], result.changed[name] = added, removed, changed
        rows.append(
            {
                "object_type": name,
                "old": len(old_frame),
                "new": len(new_frame),
                "added": len(added),
                "removed": len(removed),
                "changed": objects,
            }
        )
    summary = pd.DataFrame(rows, columns=["object_type", "old", "new", "added", "removed",
                                          "changed"])
    result.summary = summary.astype(
        {"object_type": "string", **dict.fromkeys(["old", "new", "added", "removed", "changed"],
                                                   "Int64")}
    )
    return result
