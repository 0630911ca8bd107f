"""Search documents' facet rows (``search_document_facets``) kept per process, by ``doc_id``.

A keyword search reads a facet row per match (``facet_cells.keyword_counts``): 5,000 of them for
a word in 5 % of a 100,000-resource catalog. Probing them in the match's statement was a third
of its time on SQLite (4 of 11 ms) and more than half of it on PostgreSQL. A document's facet row
never changes: the index refresh deletes a resource's document and writes a new one, under a new
``doc_id``, and ids are never given twice (``AUTOINCREMENT`` on SQLite, a sequence on
PostgreSQL). So a process keeps the rows it has read, and a search's statement gives only
``(doc_id, score)``; the rows not kept yet are read by id, in bulk, once. Nothing has to be told
when the catalog changes, in this process or another: a new document has a new id, and a deleted
one is never matched again (its row is dropped with the rest when the process holds
:data:`MAX_KEPT`).

A row is kept as (resource_key, name, spot): the spot numbers the row's (tail, change_day) among
those the process has seen, so that a search counts its matches by spot (small integers, counted
in C) and works out what a spot means once per search.

Example::

    found = scored_rows(conn, select(doc_id, score))
    for score, (key, name, spot) in zip(found.scores, found.rows):
        tail, day = found.spots[spot]
"""

from __future__ import annotations

import operator
import threading
import weakref
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, Integer, bindparam, func, select, true
from sqlalchemy.dialects import postgresql
from sqlalchemy.sql import Select

from catalog_nb.server.store.common import any_key
from catalog_nb.server.store.schema import search_document_facets
from catalog_nb.server.store.streaming import streamed

D = search_document_facets

#: Where a document is counted: its facet row's (tail, change_day).
Spot = tuple[str, "int | None"]
#: A document's facet row as kept: (resource_key, name, number of its spot).
Row = tuple[str, str, int]

#: The most rows a process keeps per store (about 200 bytes each: names and keys are the bulk,
#: spots are shared). Past it, the rows start again from none.
MAX_KEPT = 400_000

_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)


class _Kept:
    """A store's rows by doc_id, and the spots they are numbered by."""

    def __init__(self) -> None:
        self.rows: dict[int, Row] = {}
        self.numbers: dict[Spot, int] = {}
        self.spots: list[Spot] = []

    def number(self, spot: Spot) -> int:
        """The number of a spot (called under ``_LOCK``: two threads may read rows at once)."""
        found = self.numbers.get(spot)
        if found is None:
            found = self.numbers[spot] = len(self.spots)
            self.spots.append(spot)
        return found


@dataclass
class Scored:
    """The documents a statement scored: each one's score and row, in the same order, and the
    spots the rows' numbers index."""

    scores: list[float]
    rows: list[Row]
    spots: list[Spot]


_KEPT: weakref.WeakKeyDictionary[Engine, _Kept] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def scored_rows(conn: Connection, scored: Select[Any]) -> Scored:
    """The facet rows of the documents ``scored`` gives as ``(doc_id, score)``, in no particular
    order; a document without a facet row is left out (as a join would). The rows not kept yet
    are read after ``scored``, by id."""
    kept = _KEPT.get(conn.engine)
    if kept is None:
        with _LOCK:
            kept = _KEPT.setdefault(conn.engine, _Kept())
    found = list(streamed(conn, scored, binary=True))
    # Per match, only C: a search has thousands.
    rows: list[Row | None] = list(map(kept.rows.get, map(_FIRST, found)))
    scores: list[float] = list(map(_SECOND, found))
    if None not in rows:
        return Scored(scores, rows, kept.spots)  # type: ignore[arg-type]
    missing = {doc_id: at for at, (doc_id, _) in enumerate(found) if rows[at] is None}
    if len(kept.rows) + len(missing) > MAX_KEPT:
        # A new holder, not clear(): a search in another thread may be reading the old one;
        # the rows this search found kept are read again, numbered by the new holder.
        with _LOCK:
            kept = _KEPT[conn.engine] = _Kept()
        missing = {doc_id: at for at, (doc_id, _) in enumerate(found)}
    read = conn.execute(_rows_by_id(conn, list(missing))).all()
    with _LOCK:
        for doc_id, key, name, tail, day in read:
            rows[missing[doc_id]] = kept.rows[doc_id] = (
                str(key), str(name), kept.number((str(tail), day)))
    if len(read) < len(missing):  # documents without a facet row (none, unless repaired)
        scores = [s for s, row in zip(scores, rows, strict=True) if row is not None]
        rows = [row for row in rows if row is not None]
    return Scored(scores, rows, kept.spots)  # type: ignore[arg-type]


def _rows_by_id(conn: Connection, ids: list[int]) -> Select[Any]:
    wanted = [D.c.doc_id, D.c.resource_key, D.c.name, D.c.tail, D.c.change_day]
    if conn.dialect.name != "postgresql":
        return select(*wanted).where(any_key(conn, D.c.doc_id, ids))  # probed by rowid
    # A probe of the primary key per id: left to itself, PostgreSQL reads the whole table for
    # a twentieth of it (a seq scan of 10,000 rows for 500 ids), a time that grows with the
    # catalog. OFFSET 0 keeps the planner from folding the lateral subquery into a join.
    listed = func.unnest(bindparam(None, ids, type_=postgresql.ARRAY(Integer)))
    one = listed.table_valued("id").render_derived()
    probe = select(*wanted).where(D.c.doc_id == one.c.id).offset(0).lateral("d")
    return select(*probe.c).select_from(one.join(probe, true()))


def forget(engine: Engine) -> None:
    """Drop the rows kept for a store (tests; a store whose documents were written again)."""
    with _LOCK:
        _KEPT.pop(engine, None)
