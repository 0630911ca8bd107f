"""A snapshot read back: the frames of a catalog at one moment, offline.

:class:`Snapshot` answers the frame methods of the live :class:`~catalog_nb.client.Catalog`
that snapshots hold (``users()``, ``roles()``, ``sources()``, ``tag_domains()``, ``tags()``,
``associations()``, ``resources()``, ``fields()``) with the same columns and dtypes, so the
audits of :mod:`catalog_nb.notebook.audits` and the exports run on it unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.snapshot.files import TABLES, read_manifest, read_table, reports_import

__all__ = ["Snapshot", "open_snapshot"]


class Snapshot:
    """The frames of one snapshot folder; open one with :func:`open_snapshot`.

    Attributes:
        path: the snapshot folder.
        manifest: the parsed ``manifest.json``.

    Example::

        snap = catalog_nb.open_snapshot("snapshots/2024-q1")
        snap.taken_at, snap.catalog_id
        snap.resources().query("description.isna()")
    """

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = path
        self.manifest = manifest
        self._frames: dict[str, pd.DataFrame] = {}

    def __repr__(self) -> str:
        return f"<Snapshot of {self.url} taken {self.taken_at.isoformat()} at {str(self.path)!r}>"

    @property
    def catalog(self) -> dict[str, Any]:
        """The catalog identity recorded at snapshot time: url, id, id_basis, version..."""
        return dict(self.manifest.get("catalog") or {})

    @property
    def catalog_id(self) -> str | None:
        """The stable id of the catalog the snapshot was taken of (see ``catalog_identity``)."""
        value = self.catalog.get("id")
        return None if value is None else str(value)

    @property
    def url(self) -> str | None:
        """The service URL the snapshot was taken from."""
        value = self.catalog.get("url")
        return None if value is None else str(value)

    @property
    def taken_at(self) -> pd.Timestamp:
        """When the snapshot was taken (UTC)."""
        return pd.Timestamp(self.manifest["taken_at"]).tz_convert("UTC")

    @property
    def row_counts(self) -> dict[str, int]:
        """Rows per frame, as the manifest records them."""
        return {name: int(self.manifest["tables"][name]["rows"]) for name in TABLES}

    def frame(self, name: str) -> pd.DataFrame:
        """One frame by table name (one of :data:`~catalog_nb.snapshot.files.TABLES`); a copy."""
        if name not in TABLES:
            raise KeyError(f"a snapshot has no frame {name!r}; it has {', '.join(TABLES)}")
        if name not in self._frames:
            self._frames[name] = read_table(self.path, self.manifest["tables"][name])
        return self._frames[name].copy()

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every frame by table name."""
        return {name: self.frame(name) for name in TABLES}

    def users(self) -> pd.DataFrame:
        """The users, with the columns of :meth:`Catalog.users`."""
        return self.frame("users")

    def roles(self) -> pd.DataFrame:
        """The roles, with the columns of :meth:`Catalog.roles`."""
        return self.frame("roles")

    def sources(self) -> pd.DataFrame:
        """The data sources, with the columns of :meth:`Catalog.sources`."""
        return self.frame("sources")

    def tag_domains(self) -> pd.DataFrame:
        """The tag domains, with the columns of :meth:`Catalog.tag_domains`."""
        return self.frame("tag_domains")

    def tags(self) -> pd.DataFrame:
        """The tags, with the columns of :meth:`Catalog.tags`."""
        return self.frame("tags")

    def associations(self) -> pd.DataFrame:
        """The tag associations, with the columns of :meth:`Catalog.associations`."""
        return self.frame("associations")

    def resources(self) -> pd.DataFrame:
        """The data resources, with the columns of :meth:`Catalog.resources` (``cp_`` too)."""
        return self.frame("resources")

    def fields(self) -> pd.DataFrame:
        """Every field, with the long-form columns of :meth:`Catalog.fields`."""
        return self.frame("fields")


def open_snapshot(path: str | os.PathLike[str]) -> Snapshot:
    """Open the snapshot folder ``path`` (written by ``cat.snapshot(path)``) for offline work.

    The manifest is checked at once: a folder that is no snapshot, lacks files, holds a file
    changed since (hash mismatch), or comes from a newer format version raises
    :class:`~catalog_nb.snapshot.SnapshotError` with the reason.

    Example::

        snap = catalog_nb.open_snapshot("snapshots/2024-q1")
        from catalog_nb.notebook import audit
        audit.run_all(snap)
    """
    reports_import("pyarrow")
    folder = Path(path).expanduser()
    return Snapshot(folder, read_manifest(folder))
