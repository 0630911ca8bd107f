"""The catalog's value sketches, decoded once and kept up to date: what join and lineage
discovery compare.

Reading and decoding every sketch of the catalog is most of what a discovery run over a
few thousand fields costs (the sketches are JSON with base64 hashes). The index keeps them
decoded in memory, one per store, and on each :meth:`SketchIndex.sync` asks the store for the
resources' rows only (one narrow query without JSON columns: ``time_of_last_profile`` moves
with every profile, ``status`` when a file goes missing) and reloads just the resources whose
row changed, so a job that profiled one file reads one
file's sketches. It is a cache of the store, never a source of truth: another
process profiling into the same store moves the stamps, and the next sync reloads what it
wrote. Each field keeps its hashes and what discovery reads of it (type, properties, and
whether its sample reads as prose), not the raw sample values.

Both join and lineage discovery read the same snapshot, so one run reads each sketch at most
once (it used to read them all twice).

Example::

    index = index_for(store)
    with store.read() as conn:
        reloaded = index.sync(conn)
    rows = index.field_rows()
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection

from catalog_nb.server.profiling.keys import wordy
from catalog_nb.server.profiling.sketch import ValueSketch
from catalog_nb.server.store import Store
from catalog_nb.server.store import sketches as sketch_store


@dataclass
class IndexedResource:
    """A profiled resource (the columns of ``store.sketches.RESOURCE_COLUMNS``) and its
    sketched fields as rows: ``name, data_type, properties, sketch`` (a decoded
    :class:`ValueSketch` without its raw sample, or None when unreadable), ``wordy`` and
    ``error`` (why the sketch could not be read)."""

    row: dict[str, Any]
    fields: list[dict[str, Any]] = field(default_factory=list)


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    data = row["sketch"]
    item = {"name": row["name"], "data_type": row["data_type"],
            "properties": dict(row["properties"] or {}), "sketch": None, "wordy": False,
            "error": None}
    try:
        item["sketch"] = ValueSketch.from_dict(data, with_sample=False)
        # Only text keys are told from prose by their sample.
        item["wordy"] = row["data_type"] == "STRING" and wordy(data.get("sample") or [])
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        item["error"] = str(exc) or type(exc).__name__
    return item


class SketchIndex:
    """The decoded sketches of one store (see the module docstring)."""

    def __init__(self) -> None:
        self.resources: dict[str, IndexedResource] = {}
        self._lock = threading.Lock()

    @contextmanager
    def held(self) -> Iterator[SketchIndex]:
        """The index for the caller alone: discovery runs one at a time per process."""
        with self._lock:
            yield self

    def sync(self, conn: Connection, force: Collection[str] = ()) -> set[str]:
        """Bring the index up to date with the store; ``force`` names resources to reload
        whatever their row says (a profile always moves ``time_of_last_profile``, so discovery
        never needs to). Returns the keys reloaded or dropped."""
        stamps = sketch_store.resource_stamps(conn)
        gone = set(self.resources) - set(stamps)
        for key in gone:
            del self.resources[key]
        stale = [key for key, row in stamps.items()
                 if key in force or key not in self.resources or self.resources[key].row != row]
        fresh = {key: IndexedResource(stamps[key]) for key in stale}
        for row in sketch_store.sketched_fields(conn, stale):
            fresh[row["resource_key"]].fields.append(_decoded(row))
        self.resources.update(fresh)
        return gone | set(stale)

    def field_rows(self) -> list[dict[str, Any]]:
        """Every sketched field of the catalog's resources outside collections, as join
        discovery reads them (:func:`catalog_nb.server.discovery.joins.find`): ``resource_key,
        data_source_key, path, resource_name, resource_type, table_name`` and the field's
        ``name, data_type, properties, sketch`` (decoded), ``wordy`` and ``error``."""
        rows: list[dict[str, Any]] = []
        for key in sorted(self.resources):
            resource = self.resources[key]
            if resource.row["collection_key"] is not None:
                continue
            meta = {"resource_key": key, "data_source_key": resource.row["data_source_key"],
                    "path": resource.row["path"], "resource_name": resource.row["name"],
                    "resource_type": resource.row["resource_type"],
                    "table_name": resource.row["table_name"]}
            rows.extend({**meta, **item} for item in resource.fields)
        return rows


_INDEXES: weakref.WeakKeyDictionary[Store, SketchIndex] = weakref.WeakKeyDictionary()
_REGISTRY = threading.Lock()


def index_for(store: Store) -> SketchIndex:
    """The index of ``store`` in this process (made on first use)."""
    with _REGISTRY:
        index = _INDEXES.get(store)
        if index is None:
            index = _INDEXES[store] = SketchIndex()
        return index


def forget(store: Store) -> None:
    """Drop ``store``'s index: the next discovery reads every sketch again (benchmarks and
    tests measure the first run after a start this way)."""
    with _REGISTRY:
        _INDEXES.pop(store, None)
