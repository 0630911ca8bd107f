"""The keyword index on SQLite: an FTS5 table ``search_fts`` whose rowid is the document's
``doc_id`` (Porter stemming over unicode61 words, diacritics removed); relevance is ``bm25`` with
the column weights of :data:`~catalog_nb.server.search.index.WEIGHTS`."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count
from typing import Any

from sqlalchemy import Connection, Subquery, column, select, text
from sqlalchemy.sql.elements import ColumnElement

from catalog_nb.server.search.index import COLUMNS, WEIGHTS
from catalog_nb.server.search.query import Term
from catalog_nb.server.store.schema import search_documents

_names = count()


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
        name = f"fts_q{next(_names)}"
        weights = ", ".join(str(WEIGHTS[c]) for c in COLUMNS)
        rank = f", -bm25(search_fts, {weights}) AS score" if score else ""
        query = text(
            f"SELECT rowid AS doc_id{rank} FROM search_fts WHERE search_fts MATCH :{name}"
        ).bindparams(**{name: expr})
        cols: list[Any] = [column("doc_id"), column("score")] if score else [column("doc_id")]
        return query.columns(*cols)

    def matches(self, term: Term) -> ColumnElement[Any]:
        found = self._match(expression(term), False).subquery()
        d = search_documents
        return select(d.c.resource_key).where(  # type: ignore[return-value]
            d.c.doc_id.in_(select(found.c.doc_id))
        )

    def ranked(self, terms: Sequence[Term], *, every: bool) -> Subquery:
        joiner = " AND " if every else " OR "
        expr = joiner.join(f"({expression(t)})" for t in terms)
        found = self._match(expr, True).subquery()
        d = search_documents
        return (
            select(d.c.resource_key, found.c.score)
            .join(found, found.c.doc_id == d.c.doc_id)
            .subquery()
        )
