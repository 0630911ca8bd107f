"""JSON columns, on the real backend: a value reads back as it was written, one row at a time
or many by ``bulk_insert`` (COPY on PostgreSQL), and on PostgreSQL it is stored as orjson's
compact text (the engine's ``json_serializer``), the stdlib's for what orjson refuses."""

from __future__ import annotations

import json
from typing import Any

import orjson
from sqlalchemy import JSON, Column, Integer, MetaData, Table, insert, select, text

from catalog_nb.server.store import Store
from catalog_nb.server.store.bulk_insert import COPY_FROM, insert_rows

VALUES: list[Any] = [
    {"min": -1.5, "max": 2 ** 62, "mostFrequent": [{"value": "Zürich", "count": 3}]},
    ["a", None, True, 0.1, {"nested": {"deep": []}}],
    "ünïcode ✓ and \"quotes\"",
    {"wide": 2 ** 70},  # wider than 64 bits: orjson refuses it, the stdlib writes it
    {1: "a key that is not text"},  # orjson refuses it too; the stdlib makes the key text
]
#: What each value reads back as (JSON has text keys only).
READ_BACK: list[Any] = [*VALUES[:4], {"1": "a key that is not text"}]


def _probe() -> Table:
    return Table("json_probe", MetaData(), Column("n", Integer), Column("v", JSON),
                 prefixes=["TEMPORARY"])


def test_json_values_read_back_as_written_one_by_one_and_in_bulk(store: Store) -> None:
    probe = _probe()
    many = COPY_FROM + 8
    with store.write() as conn:
        probe.create(conn)
        for n, value in enumerate(VALUES):
            conn.execute(insert(probe).values(n=n, v=value))
        # The first four values again, as many rows at once (COPY on PostgreSQL).
        insert_rows(conn, probe, [{"n": 100 + i, "v": VALUES[i % 4]} for i in range(many)])
        rows = dict(conn.execute(select(probe.c.n, probe.c.v)).all())
        probe.drop(conn)
    assert [rows[n] for n in range(len(VALUES))] == READ_BACK
    assert [rows[100 + i] for i in range(many)] == [READ_BACK[i % 4] for i in range(many)]


def test_postgresql_stores_orjsons_compact_text(store: Store) -> None:
    if store.dialect != "postgresql":
        # SQLite keeps SQLAlchemy's own (stdlib) text: its JSON columns are plain text.
        with store.write() as conn:
            probe = _probe()
            probe.create(conn)
            conn.execute(insert(probe).values(n=0, v=VALUES[0]))
            stored = conn.execute(text("SELECT v FROM json_probe")).scalar_one()
            probe.drop(conn)
        assert stored == json.dumps(VALUES[0])
        return
    with store.write() as conn:
        probe = _probe()
        probe.create(conn)
        for n, value in enumerate(VALUES):
            conn.execute(insert(probe).values(n=n, v=value))
        insert_rows(conn, probe, [{"n": 100 + i, "v": VALUES[0]} for i in range(COPY_FROM)])
        stored = dict(conn.execute(text("SELECT n, v::text FROM json_probe")).all())
        probe.drop(conn)
    assert stored[0] == orjson.dumps(VALUES[0]).decode()
    assert stored[2] == orjson.dumps(VALUES[2]).decode()  # UTF-8, not \\u escapes
    assert stored[3] == json.dumps(VALUES[3])
    assert stored[4] == json.dumps(VALUES[4])
    assert {stored[100 + i] for i in range(COPY_FROM)} == {orjson.dumps(VALUES[0]).decode()}
