"""A TPC-H lake as a user would catalog it: the eight tables as CSV files, as Parquet files
and in an SQLite database (no declared keys) whose views are the 22 queries' joins.

Generated with ``tpchgen-cli`` (as :mod:`.profile_tpch` does); the views give the catalog
FACTUAL lineage (each query view reads the tables its TPC-H query reads, Q15 through its
``revenue0`` view), the copies give INFERRED lineage, and the tables' keys give joins. Used by
:mod:`.report_readability` and by ``tests/notebook/test_report_tpch.py``.

Example::

    for payload in tpch_sources(build_tpch_lake(folder, "0.001")):
        ...  # POST /datasource, then a PROFILE job
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from tests.benchmarks.lineage_readability import TPCH_QUERIES, TPCH_TABLES
from tests.benchmarks.profile_tpch import TABLES, ensure_tpch
from tests.benchmarks.tpch_relations import FOREIGN_KEYS, load_sqlite

#: The data sources' names, by representation.
SOURCE_NAMES = {"csv": "tpch_csv", "parquet": "tpch_parquet", "sqlite": "tpch_sql"}

_FIRST_COLUMN = {"lineitem": "l_orderkey", "orders": "o_orderkey", "partsupp": "ps_partkey",
                 "part": "p_partkey", "customer": "c_custkey", "supplier": "s_suppkey",
                 "nation": "n_nationkey", "region": "r_regionkey", "revenue0": "supplier_no"}


def query_view(query: int) -> str:
    """The ``CREATE VIEW`` of a query: the tables it reads, joined on their foreign keys.

    >>> query_view(13)
    'CREATE VIEW q13 AS SELECT customer.c_custkey, orders.o_orderkey FROM customer, orders \
WHERE orders.o_custkey = customer.c_custkey'
    """
    tables = [("revenue0" if code == "REV" else TPCH_TABLES[code])
              for code in TPCH_QUERIES[query].split()]
    joins = [f"{table}.{columns[0]} = {other}.{other_columns[0]}"
             for table, columns, other, other_columns in FOREIGN_KEYS
             if len(columns) == 1 and table in tables and other in tables]
    if "revenue0" in tables:
        joins.append("supplier.s_suppkey = revenue0.supplier_no")
    where = f" WHERE {' AND '.join(joins)}" if joins else ""
    selected = ", ".join(f"{table}.{_FIRST_COLUMN[table]}" for table in tables)
    return f"CREATE VIEW q{query:02d} AS SELECT {selected} FROM {', '.join(tables)}{where}"


def build_tpch_lake(folder: Path, scale: str, cache: Path | None = None) -> dict[str, Path]:
    """TPC-H at ``scale`` as CSV and Parquet folders (generated into ``cache``, default
    ``folder``, when missing) and ``folder/tpch.db`` with the query views:
    ``{"csv": ..., "parquet": ..., "sqlite": ...}``."""
    cache = cache or folder
    csv_folder = ensure_tpch(cache, scale, "csv")
    parquet_folder = ensure_tpch(cache, scale, "parquet")
    database = load_sqlite(csv_folder, folder / "tpch.db")
    with sqlite3.connect(database) as db:
        db.execute("CREATE VIEW revenue0 AS SELECT l_suppkey AS supplier_no, "
                   "SUM(l_extendedprice) AS total_revenue FROM lineitem GROUP BY l_suppkey")
        for query in TPCH_QUERIES:
            db.execute(query_view(query))
    return {"csv": csv_folder, "parquet": parquet_folder, "sqlite": database}


def tpch_sources(lake: dict[str, Path]) -> list[dict[str, Any]]:
    """The ``/datasource`` payloads of the lake's three representations."""
    return [
        {"name": SOURCE_NAMES["csv"], "sourceType": "FILE", "uri": str(lake["csv"]),
         "description": "TPC-H tables as CSV files"},
        {"name": SOURCE_NAMES["parquet"], "sourceType": "FILE", "uri": str(lake["parquet"]),
         "description": "TPC-H tables as Parquet files"},
        {"name": SOURCE_NAMES["sqlite"], "sourceType": "SQL",
         "uri": f"sqlite:///{lake['sqlite']}",
         "description": "TPC-H tables and the 22 queries as views (SQLite, no declared keys)"},
    ]


__all__ = ["SOURCE_NAMES", "TABLES", "build_tpch_lake", "query_view", "tpch_sources"]
