"""What every search and every page of resources reads of the catalog's definitions, kept per
process under the catalog generation it was read at.

A keyword search read the custom properties that are facets, the virtual folders (twice), the
data sets and the data sources' names: five statements of a few rows each, which on PostgreSQL
are five round trips (about 2 ms of a 30 ms search). They change rarely, and every committed
change to them moves the catalog generation (``schema.store_generations``, bumped by ``Store``
as the changing transaction commits). So a read transaction reads the generation once
(:func:`catalog_generation`) and finds them here while it is the one they were read at, for
:data:`KEEP_SECONDS` at most (a change made behind the store's back, in SQL, shows by then).
A transaction that has changed the catalog reads what it asks for afresh: its changes are not
counted yet.

The rows are shared between requests: read them, never change them. The keeping itself
(:class:`GenerationKept`) also serves the facet cells (``facet_cells``).

Example::

    names = source_names(conn)
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from sqlalchemy import Connection, Engine, select

from catalog_nb.server.store.changes import changed
from catalog_nb.server.store.folders import list_datasets, list_folders
from catalog_nb.server.store.schema import custom_properties, data_sources, store_generations
from catalog_nb.server.visibility import Visibility

#: The longest anything is kept under one generation.
KEEP_SECONDS = 5.0

T = TypeVar("T")

_EVERYTHING = Visibility(everything=True)


@dataclass(frozen=True)
class Definitions:
    """The catalog's definitions as a search and a page of resources use them (see the
    functions of the same names)."""

    custom_facets: tuple[tuple[str, str, str | None], ...]
    source_names: dict[str, str]
    folders: tuple[dict[str, Any], ...]
    datasets: tuple[dict[str, Any], ...]


class GenerationKept(Generic[T]):
    """What ``read`` gives, kept per store while the catalog generation is the one it was
    read at, for :data:`KEEP_SECONDS` at most; a transaction that has changed the catalog reads
    afresh. The value is shared between requests: read it, never change it.

    Example::

        CELLS = GenerationKept(read_cells)
        cells = CELLS.get(conn)
    """

    def __init__(self, read: Callable[[Connection], T]) -> None:
        self._read = read
        self._kept: weakref.WeakKeyDictionary[Engine, tuple[int, float, T]] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()

    def get(self, conn: Connection) -> T:
        """The value for the connection's transaction."""
        if changed(conn):
            return self._read(conn)
        generation = catalog_generation(conn)
        kept = self._kept.get(conn.engine)
        if (kept is not None and generation is not None and kept[0] == generation
                and time.monotonic() - kept[1] < KEEP_SECONDS):
            return kept[2]
        found = self._read(conn)
        # Kept only when no commit came between the reads (PostgreSQL's READ COMMITTED reads
        # each statement at its own snapshot): the generation read after them is the one before.
        if generation is not None and catalog_generation(conn, fresh=True) == generation:
            with self._lock:
                self._kept[conn.engine] = (generation, time.monotonic(), found)
        return found


#: Where a connection's info holds its transaction's generation: (transaction, generation).
_GENERATION = "catalog_nb.catalog_generation"


def catalog_generation(conn: Connection, *, fresh: bool = False) -> int | None:
    """The catalog generation, read once per transaction (None in a store without one);
    ``fresh``: read again (on PostgreSQL's READ COMMITTED, a commit since may have moved it)."""
    transaction = conn.get_transaction()
    held = conn.info.get(_GENERATION)
    if not fresh and transaction is not None and held is not None and held[0]() is transaction:
        return held[1]
    G = store_generations
    found = conn.execute(select(G.c.generation).where(G.c.name == "catalog")).scalar()
    generation = None if found is None else int(found)
    if transaction is not None:
        # By weak reference: the connection's info outlives the transaction (the pool keeps it).
        conn.info[_GENERATION] = (weakref.ref(transaction), generation)
    return generation


def _facets(conn: Connection) -> tuple[tuple[str, str, str | None], ...]:
    cp = custom_properties
    return tuple((str(k), str(n), None if d is None else str(d)) for k, n, d in conn.execute(
        select(cp.c.key, cp.c.name, cp.c.display_name).where(cp.c.facet_able.is_(True))
        .order_by(cp.c.name_fold)))


def _names(conn: Connection) -> dict[str, str]:
    return {str(k): str(n) for k, n in conn.execute(
        select(data_sources.c.key, data_sources.c.name))}


def _folders(conn: Connection) -> tuple[dict[str, Any], ...]:
    return tuple(list_folders(conn, _EVERYTHING))


def _datasets(conn: Connection) -> tuple[dict[str, Any], ...]:
    return tuple(list_datasets(conn, _EVERYTHING))


_DEFINITIONS = GenerationKept(lambda conn: Definitions(
    _facets(conn), _names(conn), _folders(conn), _datasets(conn)))


def _kept(conn: Connection) -> Definitions | None:
    """The definitions for the connection's transaction; None when it has changed the catalog
    (then each is read afresh, alone)."""
    return None if changed(conn) else _DEFINITIONS.get(conn)


def custom_facets(conn: Connection) -> tuple[tuple[str, str, str | None], ...]:
    """(key, name, display name) of the custom properties that are facets, by name."""
    kept = _kept(conn)
    return _facets(conn) if kept is None else kept.custom_facets


def source_names(conn: Connection) -> dict[str, str]:
    """Every data source's name by key."""
    kept = _kept(conn)
    return _names(conn) if kept is None else kept.source_names


def folders(conn: Connection) -> tuple[dict[str, Any], ...]:
    """Every virtual folder (with its source's name, ``data_source_name``), by name; what a
    caller sees of them is the caller's to choose (``Visibility.sees_folder``)."""
    kept = _kept(conn)
    return _folders(conn) if kept is None else kept.folders


def datasets(conn: Connection) -> tuple[dict[str, Any], ...]:
    """Every data set, by name (``Visibility.sees_dataset`` chooses)."""
    kept = _kept(conn)
    return _datasets(conn) if kept is None else kept.datasets
