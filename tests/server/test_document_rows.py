"""A process keeps the documents' facet rows it has read (``store/document_rows.py``): a keyword
search reads from the database only the rows of documents this process has not read yet, and a
change to a resource (written as a new document, under an id never given before) shows in the
very next search."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import select

from catalog_nb.server.store import document_rows
from catalog_nb.server.store.schema import search_documents
from tests.benchmarks.catalog_fixture import write_catalog
from tests.conftest import Http, Server
from tests.server.helpers import counted_statements
from tests.server.search_helpers import facet, put, search

DOC = search_documents


@pytest.fixture
def served(make_server: Callable[..., Server]) -> tuple[Server, Http]:
    server = make_server()
    write_catalog(server.store, 60, 4, analyze=False)
    return server, server.session()


def _last_document(server: Server) -> tuple[int, str]:
    """The (doc_id, resource_key) of the document written last."""
    with server.store.read() as conn:
        doc_id, key = conn.execute(
            select(DOC.c.doc_id, DOC.c.resource_key).order_by(DOC.c.doc_id.desc()).limit(1)
        ).one()
    return int(doc_id), str(key)


def _searched(server: Server, http: Http, phrase: str) -> tuple[dict[str, Any], list[str]]:
    """A keyword search's result and the statements that read document facet rows."""
    with counted_statements(server, ["search_document_facets"]) as reads:
        result = search(http, phrase)
    return result, list(reads)


def test_a_rewritten_document_is_searched_as_it_is_now(served: tuple[Server, Http]) -> None:
    server, admin = served
    doc_id, key = _last_document(server)
    phrase = admin.get(f"/dataresource/{key}").json()["name"].split(".")[0]
    document_rows.forget(server.store.engine)

    first, reads = _searched(server, admin, phrase)
    assert first["matchedKeys"] == [key]
    assert "keeper" not in facet(first, "owner")["categoryCounts"]
    assert len(reads) == 1  # the match's row, read once ...
    assert _searched(server, admin, phrase)[1] == []  # ... and kept

    # The last document written is written again: on SQLite, a table without AUTOINCREMENT
    # would give it its old id back, and the row kept for that id would be searched.
    put(admin, key, {"owner": "keeper"})
    new_id, same = _last_document(server)
    assert same == key and new_id > doc_id
    after, reads = _searched(server, admin, phrase)
    assert after["matchedKeys"] == [key]
    assert facet(after, "owner")["categoryCounts"] == {"keeper": 1}
    assert len(reads) == 1


def test_a_process_keeping_fewer_rows_searches_alike(
    served: tuple[Server, Http], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past :data:`~document_rows.MAX_KEPT`, the rows kept start again from none: the searches
    give what they give with every row kept, and the rows kept stay within the bound."""
    server, admin = served
    engine = server.store.engine
    phrases = [f"area{i:02d}" for i in range(8)]  # 3 resources each, 24 in all
    document_rows.forget(engine)
    expected = [search(admin, phrase) for phrase in phrases]
    assert [r["matchedEntityCount"] for r in expected] == [3] * 8
    assert len(document_rows._KEPT[engine].rows) == 24
    monkeypatch.setattr(document_rows, "MAX_KEPT", 10)
    document_rows.forget(engine)
    for _ in range(2):
        for phrase, want in zip(phrases, expected, strict=True):
            got = search(admin, phrase)
            assert got["matchedKeys"] == want["matchedKeys"], phrase
            assert got["facetResults"] == want["facetResults"], phrase
            assert len(document_rows._KEPT[engine].rows) <= 10
