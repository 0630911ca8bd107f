"""The keyword index on SQLite: an FTS5 table ``search_fts`` whose rowid is the document's
``doc_id`` (Porter stemming over unicode61 words, diacritics removed); relevance is ``bm25`` with
the column weights of :data:`~catalog_nb.server.search.index.WEIGHTS`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    Connection,
    Float,
    String,
    Subquery,
    bindparam,
    func,
    literal_column,
    select,
    table,
)
from sqlalchemy.sql.elements import ColumnElement

from catalog_nb.server.search.index import COLUMNS, WEIGHTS
from catalog_nb.server.search.query import Term
from catalog_nb.server.store.schema import search_documents


def expression(term: Term) -> str:
    """The FTS5 expression of a term: its words quoted (they hold only letters and digits, so
    nothing in them is FTS syntax), restricted to its column, ``*`` for a prefix."""
    phrase = '"' + " ".join(term.words) + '"' + (" *" if term.prefix else "")
    return f"{term.field} : {phrase}" if term.field else phrase


class SqliteIndex:
    """FTS5 over ``search_documents``."""

    def documents_written(self, conn: Connection, doc_ids: Sequence[int]) -> None:
        if not doc_ids:
            return
        listed = ", ".join(str(int(i)) for i in doc_ids)
        cols = ", ".join(COLUMNS)
        conn.exec_driver_sql(
            f"INSERT INTO search_fts (rowid, {cols}) SELECT doc_id, {cols} "
            f"FROM search_documents WHERE doc_id IN ({listed})"
        )

    def documents_removed(self, conn: Connection, doc_ids: Sequence[int]) -> None:
        if not doc_ids:
            return
        listed = ", ".join(str(int(i)) for i in doc_ids)
        conn.exec_driver_sql(f"DELETE FROM search_fts WHERE rowid IN ({listed})")

    def _match(self, expr: str, score: bool) -> Any:
        # Built from SQL constructs with an anonymous parameter, not a text() with a named one,
        # so the statement is the same for every phrase and compiles once (SQLAlchemy's cache).
        fts: Any = literal_column("search_fts")
        columns: list[Any] = [literal_column("rowid").label("doc_id")]
        if score:
            weights: list[Any] = [literal_column(str(WEIGHTS[c])) for c in COLUMNS]
            columns.append((-func.bm25(fts, *weights, type_=Float)).label("score"))
        return (select(*columns).select_from(table("search_fts"))
                .where(fts.op("MATCH")(bindparam(None, expr, type_=String))))

    def matches(self, term: Term) -> ColumnElement[Any]:
        found = self._match(expression(term), False).subquery()
        d = search_documents
        return select(d.c.resource_key).where(  # type: ignore[return-value]
            d.c.doc_id.in_(select(found.c.doc_id))
        )

    def scored(self, terms: Sequence[Term], *, every: bool) -> Subquery:
        joiner = " AND " if every else " OR "
        return self._match(joiner.join(f"({expression(t)})" for t in terms), True).subquery()

    def ranked(self, terms: Sequence[Term], *, every: bool) -> Subquery:
        found = self.scored(terms, every=every)
        d = search_documents
        return (
            select(d.c.resource_key, found.c.score)
            .join(found, found.c.doc_id == d.c.doc_id)
            .subquery()
        )
