"""Snapshots of a catalog: Parquet files and a manifest, read back and compared offline.

Take one with ``cat.snapshot(path)``; open it with :func:`open_snapshot` (no service needed)
and compare two with :func:`diff`. The audits of :mod:`catalog_nb.notebook.audits` and the
exports run on a :class:`Snapshot` as on a live catalog. Needs the ``reports`` extra
(``pip install catalog-nb[reports]``) for pyarrow.

Example::

    cat.snapshot("snapshots/2024-q2")
    old = catalog_nb.open_snapshot("snapshots/2024-q1")
    catalog_nb.diff(old, "snapshots/2024-q2").summary
"""

from __future__ import annotations

from catalog_nb.snapshot.compare import SnapshotDiff, diff
from catalog_nb.snapshot.files import FORMAT_VERSION, TABLES, SnapshotError
from catalog_nb.snapshot.snapshot import Snapshot, open_snapshot

__all__ = [
    "FORMAT_VERSION",
    "TABLES",
    "Snapshot",
    "SnapshotDiff",
    "SnapshotError",
    "diff",
    "open_snapshot",
]
