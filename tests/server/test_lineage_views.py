"""FACTUAL lineage from view definitions: the demo lake's views against its ground truth, and
views whose SQL sqlglot cannot (fully) follow, which degrade per view without stopping the rest.
"""

from __future__ import annotations

from sqlalchemy import delete, func, select

from catalog_nb.server.discovery import view_lineage
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store.schema import data_resources, lineage_edges, lineage_status
from tests.server.lineage_helpers import (
    edges_by_path,
    field_map,
    lake_store,
    paths,
    sql_source,
    statuses_by_path,
)

SETTINGS = Settings()


def test_demo_views_match_the_truth(store: Store) -> None:
    lake = lake_store(store)
    report = view_lineage.refresh(lake.store, SETTINGS)

    expected = {(table, view.view) for view in lake.truth.views for table in view.tables}
    edges = edges_by_path(lake.store, "FACTUAL")
    assert set(edges) == expected
    for view in lake.truth.views:
        for table in view.tables:
            wanted = {out: [c.rsplit(".", 1)[1] for c in cols]
                      for out, cols in view.columns.items()
                      if all(c.rsplit(".", 1)[0] == table for c in cols)}
            got = field_map(edges[(table, view.view)])
            assert got == wanted, (table, view.view)
            assert edges[(table, view.view)]["score"] == 1.0
            assert edges[(table, view.view)]["evidence"]["parser"] == "sqlglot"
    statuses = statuses_by_path(lake.store)
    assert statuses == {view.view: ("PARSED", None) for view in lake.truth.views}
    assert report.counts == {"viewsParsed": 5, "viewsPartial": 0, "viewsUnparsed": 0,
                             "factualEdges": len(expected)}
    assert "5 of 5 views parsed" in report.summary


def test_refresh_replaces_its_findings_and_is_idempotent(store: Store) -> None:
    lake = lake_store(store)
    view_lineage.refresh(lake.store, SETTINGS)
    first = {k: (e["field_lineage"], e["evidence"]) for k, e in
             edges_by_path(lake.store, "FACTUAL").items()}
    view_lineage.refresh(lake.store, SETTINGS)
    second = {k: (e["field_lineage"], e["evidence"]) for k, e in
              edges_by_path(lake.store, "FACTUAL").items()}
    assert first == second
    with lake.store.read() as conn:
        assert conn.execute(select(func.count()).select_from(lineage_edges)).scalar_one() == 9
        assert conn.execute(select(func.count()).select_from(lineage_status)).scalar_one() == 5


BAD_VIEWS: dict[str, tuple[str | None, list[str]]] = {
    "main.good": ("CREATE VIEW good AS SELECT a AS alpha, b FROM t WHERE b > 0", ["alpha", "b"]),
    "main.over_good": ("CREATE VIEW over_good AS SELECT alpha AS x FROM good", ["x"]),
    "main.broken": ("CREATE VIEW broken AS SELECT (a FROM t", ["x"]),
    "main.in_table": ("CREATE VIEW in_table AS SELECT a AS x FROM t WHERE a IN u", ["x"]),
    "main.ghostly": ("CREATE VIEW ghostly AS SELECT t.a AS x FROM t JOIN ghost AS g "
                     "ON g.a = t.a", ["x"]),
    "main.star": ("CREATE VIEW star AS SELECT * FROM ghost", ["x"]),
    "main.command": ("CREATE VIEW command AS SELECT a AS x FROM t WHERE b = ?1", ["x"]),
    "main.silent": (None, ["x"]),
    "main.c1": ("CREATE VIEW c1 AS SELECT x FROM c2", ["x"]),
    "main.c2": ("CREATE VIEW c2 AS SELECT x FROM c1", ["x"]),
    "main.selfie": ("CREATE VIEW selfie AS SELECT x FROM selfie", ["x"]),
}


def _bad_source(store: Store) -> str:
    return sql_source(store, "bad_views", "sqlite:///nowhere.sqlite3",
                      {"main.t": ["a", "b"], "main.u": ["a", "c"]}, BAD_VIEWS)


def test_bad_views_degrade_one_by_one(store: Store) -> None:
    _bad_source(store)
    report = view_lineage.refresh(store, SETTINGS)
    statuses = statuses_by_path(store)
    edges = edges_by_path(store, "FACTUAL")

    assert statuses["main.good"] == ("PARSED", None)
    assert field_map(edges[("main.t", "main.good")]) == {"alpha": ["a"], "b": ["b"]}
    assert field_map(edges[("main.good", "main.over_good")]) == {"x": ["alpha"]}

    state, reason = statuses["main.broken"]
    assert state == "UNPARSED" and reason is not None
    assert "could not parse" in reason and "line 1" in reason and "\x1b" not in reason
    assert not [e for e in edges if e[1] == "main.broken"]

    # SQLite's "IN <table>": sqlglot reads u as a column, so only table-level lineage remains.
    state, reason = statuses["main.in_table"]
    assert state == "PARTIAL" and reason is not None and "table level only" in reason
    assert field_map(edges[("main.t", "main.in_table")]) == {}

    state, reason = statuses["main.ghostly"]
    assert state == "PARTIAL" and reason is not None and "main.ghost" in reason
    assert [e for e in edges if e[1] == "main.ghostly"] == [("main.t", "main.ghostly")]

    state, reason = statuses["main.star"]
    assert state == "PARTIAL" and reason is not None and "SELECT *" in reason
    assert not [e for e in edges if e[1] == "main.star"]

    state, reason = statuses["main.command"]
    assert state == "UNPARSED" and reason is not None and "opaque command" in reason
    assert statuses["main.silent"][0] == "NONE"

    # Views reading each other: both edges, and the refresh ends; a view never feeds itself.
    assert {("main.c1", "main.c2"), ("main.c2", "main.c1")} <= set(edges)
    assert statuses["main.selfie"][0] == "PARTIAL"
    assert not [e for e in edges if e[1] == "main.selfie"]

    assert report.counts == {"viewsParsed": 4, "viewsPartial": 4, "viewsUnparsed": 2,
                             "factualEdges": len(edges)}
    assert report.errors == []


def test_dialect_follows_the_source(store: Store) -> None:
    """PostgreSQL keeps only the query (pg_get_viewdef), with its own syntax; unqualified
    names resolve in the view's schema."""
    sql_source(store, "pg", "postgresql+psycopg://someone@db.example/sales",
               {"shop.orders": ["id", "amount", "note"], "other.orders": ["id"]},
               {"shop.big_orders": (" SELECT o.id, (o.amount)::numeric(10,2) AS amount\n"
                                    "   FROM orders o\n  WHERE o.note ~* 'rush'::text;",
                                    ["id", "amount"])})
    view_lineage.refresh(store, SETTINGS)
    edges = edges_by_path(store, "FACTUAL")
    assert set(edges) == {("shop.orders", "shop.big_orders")}
    assert field_map(edges[("shop.orders", "shop.big_orders")]) == {"id": ["id"],
                                                                     "amount": ["amount"]}
    assert edges[("shop.orders", "shop.big_orders")]["evidence"]["dialect"] == "postgres"
    assert statuses_by_path(store)["shop.big_orders"] == ("PARSED", None)


def test_removed_resources_leave_no_dangling_edges(store: Store) -> None:
    _bad_source(store)
    view_lineage.refresh(store, SETTINGS)
    keys = {p: k for k, p in paths(store).items()}
    with store.write() as conn:
        conn.execute(delete(data_resources).where(data_resources.c.key == keys["main.t"]))
    edges = edges_by_path(store, "FACTUAL")
    assert not [e for e in edges if "main.t" in e]
    assert ("main.good", "main.over_good") in edges

    with store.write() as conn:
        conn.execute(delete(data_resources).where(data_resources.c.key == keys["main.good"]))
    assert "main.good" not in statuses_by_path(store)

    # Rediscovery names the table that is gone.
    view_lineage.refresh(store, SETTINGS)
    state, reason = statuses_by_path(store)["main.ghostly"]
    assert state == "PARTIAL" and reason is not None and "main.t" in reason
    assert not [e for e in edges_by_path(store, "FACTUAL") if e[1] == "main.ghostly"]


def test_missing_views_lose_their_lineage(store: Store) -> None:
    _bad_source(store)
    view_lineage.refresh(store, SETTINGS)
    with store.write() as conn:
        conn.execute(data_resources.update().where(data_resources.c.path == "main.good")
                     .values(status="MISSING"))
    view_lineage.refresh(store, SETTINGS)
    edges = edges_by_path(store, "FACTUAL")
    assert not [e for e in edges if "main.good" in e]
    assert "main.good" not in statuses_by_path(store)
