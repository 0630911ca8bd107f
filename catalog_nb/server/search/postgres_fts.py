"""The keyword index on PostgreSQL: a weighted ``tsvector`` column ``tsv`` of
``search_documents`` with a GIN index (``english`` stemming). Name and path weigh A, tags and
fields B, descriptions C, custom property values D; relevance is ``ts_rank``. A term restricted to
one column is checked against that column's own vector too (after the indexed match)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, String, Subquery, bindparam, func, literal_column, select, text
from sqlalchemy.sql.elements import ColumnElement

from catalog_nb.server.search.query import Term
from catalog_nb.server.store.schema import search_documents

_WEIGHT = {"name": "A", "path": "A", "tags": "B", "fields": "B", "descriptions": "C",
           "custom": "D"}
_CONFIG = "english"


def tsquery_text(term: Term) -> str:
    """The ``to_tsquery`` text of a term: its words (letters and digits only, so nothing in them
    is tsquery syntax) quoted and followed one by another, ``:*`` for a prefix."""
    parts = [f"'{w}'" for w in term.words]
    if term.prefix:
        parts[-1] += ":*"
    return " <-> ".join(parts)


class PostgresIndex:
    """``tsvector`` + GIN over ``search_documents``."""

    def documents_written(self, conn: Connection, doc_ids: Sequence[int]) -> None:
        if not doc_ids:
            return
        vector = " || ".join(
            f"setweight(to_tsvector('{_CONFIG}', {col}), '{weight}')"
            for col, weight in _WEIGHT.items()
        )
        conn.execute(
            text(f"UPDATE search_documents SET tsv = {vector} WHERE doc_id = ANY(:ids)"),
            {"ids": [int(i) for i in doc_ids]},
        )

    def documents_removed(self, conn: Connection, doc_ids: Sequence[int]) -> None:
        return None  # the vector lives in the document row itself

    def _query(self, term: Term) -> Any:
        # An anonymous parameter: the statement is the same for every phrase and compiles once
        # (SQLAlchemy's cache); a numbered name would make each search a new statement.
        return func.to_tsquery(literal_column(f"'{_CONFIG}'"),
                               bindparam(None, tsquery_text(term), type_=String))

    def _condition(self, term: Term) -> ColumnElement[bool]:
        d = search_documents
        tsv: Any = literal_column("search_documents.tsv")
        query = self._query(term)
        matched: ColumnElement[bool] = tsv.op("@@")(query)
        if term.field:
            own = func.to_tsvector(literal_column(f"'{_CONFIG}'"), d.c[term.field])
            matched = matched & own.op("@@")(query)
        return matched

    def matches(self, term: Term) -> ColumnElement[Any]:
        d = search_documents
        return select(d.c.resource_key).where(self._condition(term))  # type: ignore[return-value]

    def scored(self, terms: Sequence[Term], *, every: bool) -> Subquery:
        score, where = self._scored(terms, every)
        return select(search_documents.c.doc_id, score.label("score")).where(where).subquery()

    def ranked(self, terms: Sequence[Term], *, every: bool) -> Subquery:
        d = search_documents
        score, where = self._scored(terms, every)
        return select(d.c.resource_key, score.label("score")).where(where).subquery()

    def _scored(self, terms: Sequence[Term], every: bool) -> tuple[Any, ColumnElement[bool]]:
        conditions = [self._condition(t) for t in terms]
        joined = " & " if every else " | "
        combined = func.to_tsquery(
            literal_column(f"'{_CONFIG}'"),
            bindparam(None, joined.join(f"({tsquery_text(t)})" for t in terms), type_=String),
        )
        score = func.ts_rank(literal_column("search_documents.tsv"), combined)
        where = conditions[0]
        for c in conditions[1:]:
            where = (where & c) if every else (where | c)
        return score, where
