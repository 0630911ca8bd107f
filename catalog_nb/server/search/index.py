"""The keyword index interface: what ``store.search`` asks of a full-text engine.

The documents themselves (``search_documents``: one row per resource, its text by column) are
plain table rows, written by ``store.search.refresh``; an index keeps the engine's structure over
them in step (:meth:`SearchIndex.documents_written`, :meth:`SearchIndex.documents_removed`) and
turns parsed :class:`~catalog_nb.server.search.query.Term` objects into SQL: the resource keys a
term matches, and a (resource key, score) relation for relevance.

Two implementations: SQLite FTS5 (``sqlite_fts``) and PostgreSQL full-text search
(``postgres_fts``); :func:`~catalog_nb.server.search.engines.index_for` picks the one of a
connection.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sqlalchemy import Connection, Subquery
from sqlalchemy.sql.elements import ColumnElement

from catalog_nb.server.search.query import Term

#: Columns of a document, in index order, and their relevance weights (name and path highest,
#: then tags and fields, then descriptions, then custom property values).
COLUMNS = ("name", "path", "tags", "fields", "descriptions", "custom")
WEIGHTS = {"name": 10.0, "path": 10.0, "tags": 4.0, "fields": 4.0, "descriptions": 2.0,
           "custom": 1.0}


class SearchIndex(Protocol):
    """A full-text engine over ``search_documents``."""

    def documents_written(self, conn: Connection, doc_ids: Sequence[int]) -> None:
        """Index these (new) document rows."""

    def documents_removed(self, conn: Connection, doc_ids: Sequence[int]) -> None:
        """Forget these document rows (called before the rows are deleted)."""

    def matches(self, term: Term) -> ColumnElement[Any]:
        """A SELECT of the ``resource_key`` of every document the term matches."""

    def scored(self, terms: Sequence[Term], *, every: bool) -> Subquery:
        """``(doc_id, score)`` of the documents matching every term (``every``) or any; a
        higher score is more relevant."""

    def ranked(self, terms: Sequence[Term], *, every: bool) -> Subquery:
        """``(resource_key, score)`` of the documents matching every term (``every``)
        or any; a higher score is more relevant."""
