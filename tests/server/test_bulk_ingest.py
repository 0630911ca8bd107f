"""``ingest.record_profiles`` (the batch form the bulk fixture uses) writes exactly the rows that
``ingest.record_profile`` (what a profiling job calls per resource) writes.

The same profiles go into two fresh stores, one resource at a time into the first and in
batches into the second, in three rounds: new resources (one failing), the same paths profiled
again after people annotated fields and tagged a resource (some fields renamed, one profile now
failing), and a mix of new and known paths. After each round every table of both stores is
compared row by row, generated keys replaced by the paths they name and times left out, and so
are the keyword index's own rows (FTS5 on SQLite, the ``tsvector`` on PostgreSQL).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, Text, cast, insert, select, text, update
from sqlalchemy.exc import IntegrityError

from catalog_nb.server.profiling import DataType, FieldProfile, ResourceProfile, build_sketch
from catalog_nb.server.search.query import parse_basic
from catalog_nb.server.store import Store, bulk_insert, ingest
from catalog_nb.server.store import search as search_store
from catalog_nb.server.store.facet_cells import folded as facet_cells_rows
from catalog_nb.server.store.schema import (
    data_resources,
    data_sources,
    metadata,
    resource_fields,
    search_facet_values,
    store_generations,
    tag_associations,
    tag_domains,
    tags,
)
from tests.benchmarks.catalog_fixture import create_source, synthetic_profile, write_catalog
from tests.conftest import PG_URL, TEST_APPLICATION, new_pg_database

#: Columns holding the time of the write, or a key the store generates.
TIMES = {"created_ms", "changed_ms", "time_of_last_refresh", "time_of_last_profile",
         "applied_ms", "doc_id"}
#: Tables that count write transactions (for caches), not what was written.
BOOKKEEPING = {"store_generations"}
#: Tables whose key column is generated (compared by the rest of the row).
GENERATED_KEYS = {"data_resources", "tag_associations", "audit_events", "tags", "tag_domains",
                  "data_sources", "roles", "users"}


@pytest.fixture
def two_stores(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Store, Store]]:
    """Two fresh, migrated stores on the backend under test."""
    drops: list[Callable[[], None]] = []
    urls = []
    for name in ("one", "batch"):
        if PG_URL:
            url, drop = new_pg_database(f"{request.node.nodeid} ({name})")
            drops.append(drop)
        else:
            url = f"sqlite:///{tmp_path / name}.sqlite3"
        urls.append(url)
    stores = [Store(url, application_name=TEST_APPLICATION) for url in urls]
    try:
        for store in stores:
            store.migrate()
        yield stores[0], stores[1]
    finally:
        for store in stores:
            store.dispose()
        for drop in drops:
            drop()


def _sketched(profile: ResourceProfile, index: int) -> ResourceProfile:
    """The profile with value sketches on its first two fields, as profiling writes them."""
    fields = [
        dataclasses.replace(f, sketch=build_sketch(f"v{index}-{position}-{n}" for n in range(40)))
        if position < 2 else f
        for position, f in enumerate(profile.fields)
    ]
    return dataclasses.replace(profile, fields=fields)


def _first_round() -> list[ResourceProfile]:
    profiles = [_sketched(synthetic_profile(i, 4), i) for i in range(40)]
    failing = dataclasses.replace(synthetic_profile(40, 4), fields=[]).fail("cannot parse")
    return [*profiles, failing]


def _second_round() -> list[ResourceProfile]:
    again = []
    for i in range(0, 40, 2):
        profile = synthetic_profile(i, 5)
        if i % 4 == 0:  # a column renamed: people's words on it are not carried over
            renamed = FieldProfile("renamed", profile.fields[0].data_type, False,
                                   dict(profile.fields[0].properties))
            profile = dataclasses.replace(profile, fields=[renamed, *profile.fields[1:]])
        again.append(profile)
    broken = dataclasses.replace(synthetic_profile(6, 4), fields=[]).fail("truncated file")
    return [*[p for p in again if p.path != broken.path], broken]


def _third_round() -> list[ResourceProfile]:
    return [synthetic_profile(i, 3) for i in (1, 3, 5, *range(41, 61))]


def _annotate(store: Store, source_key: str) -> None:
    """What people write between two profiles: field words and a tag on a resource."""
    R, F = data_resources, resource_fields
    with store.write() as conn:
        keys = dict(conn.execute(select(R.c.path, R.c.key).where(
            R.c.data_source_key == source_key)).all())
        for i in (0, 2, 4):
            path = synthetic_profile(i, 4).path
            conn.execute(update(F).where(F.c.resource_key == keys[path]).values(
                description=f"described {i}", display_name=f"Shown {i}"))
        conn.execute(tag_domains.insert().values(
            key="dom", name="Dom", name_fold="dom", immutable=False, created_ms=1, changed_ms=1))
        conn.execute(tags.insert().values(
            key="tag", domain_key="dom", parent_scope="", name="Pii", name_fold="pii",
            full_name="Dom.Pii", tag_state="VALUE", state="ACCEPTED", synonyms=["personal"],
            sensitivity="CONFIDENTIAL", created_ms=1, changed_ms=1))
        tagged = keys[synthetic_profile(2, 4).path]
        conn.execute(tag_associations.insert().values(
            key="assoc", resource_key=tagged, field_scope="", tag_key="tag", state="ACCEPTED",
            rules=[], created_ms=1, changed_ms=1))
        search_store.refresh(conn, [tagged])


def _record_one_by_one(store: Store, source_key: str, profiles: list[ResourceProfile]) -> None:
    for profile in profiles:
        with store.write() as conn:
            ingest.record_profile(conn, source_key, profile, run_id="run")


def _record_in_batches(store: Store, source_key: str, profiles: list[ResourceProfile]) -> None:
    for start in range(0, len(profiles), 15):
        with store.write() as conn:
            ingest.record_profiles(conn, source_key, profiles[start:start + 15], run_id="run")


def _snapshot(conn: Connection) -> dict[str, list[str]]:
    """Every table's rows, sorted, generated keys replaced by what they name, times dropped."""
    names: dict[str, str] = {}
    for key, path in conn.execute(select(data_resources.c.key, data_resources.c.path)):
        names[str(key)] = f"<resource {path}>"
    for key, name in conn.execute(select(data_sources.c.key, data_sources.c.name)):
        names[str(key)] = f"<source {name}>"
    tables: dict[str, list[str]] = {}
    for table in metadata.sorted_tables:
        if table.name in BOOKKEEPING:
            continue
        rows = []
        for row in conn.execute(select(table)).mappings():
            kept = {}
            for column, value in row.items():
                if column in TIMES or (column == "key" and table.name in GENERATED_KEYS):
                    continue
                if column == "detailed_status":
                    value = [{k: v for k, v in stage.items() if k not in ("startTime", "endTime")}
                             for stage in value]
                if column == "tail":  # a document's coordinates: its source key among them
                    value = repr([names.get(v, v) if isinstance(v, str) else v
                                  for v in json.loads(value)])
                kept[column] = names.get(value, value) if isinstance(value, str) else value
            rows.append(repr(sorted(kept.items())))
        tables[table.name] = sorted(rows)
    tables["search_cells"] = _cells(conn, names)
    tables["<keyword index>"] = _index_rows(conn, names)
    return tables


def _cells(conn: Connection, names: dict[str, str]) -> list[str]:
    """The facet cells' counts: their delta rows differ with the batches that wrote them."""
    return sorted(repr([names.get(v, v) if isinstance(v, str) else v for v in row])
                  for row in facet_cells_rows(conn))


def _index_rows(conn: Connection, names: dict[str, str]) -> list[str]:
    """The engine's own index rows, by the resource they index."""
    if conn.dialect.name == "postgresql":
        query = text("SELECT resource_key, tsv::text FROM search_documents")
    else:
        query = text("SELECT d.resource_key, f.name || '|' || f.path || '|' || f.tags || '|' || "
                     "f.fields || '|' || f.descriptions || '|' || f.custom "
                     "FROM search_fts f JOIN search_documents d ON d.doc_id = f.rowid")
    return sorted(f"{names[str(k)]}: {v}" for k, v in conn.execute(query))


def _compare(one: Store, batch: Store) -> None:
    with one.read() as a, batch.read() as b:
        left, right = _snapshot(a), _snapshot(b)
    assert left.keys() == right.keys()
    for table in left:
        assert left[table] == right[table], f"table {table} differs"
    assert len(left["data_resources"]) > 0 and len(left["search_documents"]) > 0
    assert len(left["<keyword index>"]) == len(left["search_documents"])


def test_batch_writes_the_rows_one_by_one_writes(two_stores: tuple[Store, Store]) -> None:
    one, batch = two_stores
    source_one, source_batch = create_source(one), create_source(batch)
    _record_one_by_one(one, source_one, _first_round())
    _record_in_batches(batch, source_batch, _first_round())
    _compare(one, batch)

    _annotate(one, source_one)
    _annotate(batch, source_batch)
    _record_one_by_one(one, source_one, _second_round())
    _record_in_batches(batch, source_batch, _second_round())
    _compare(one, batch)
    with batch.read() as conn:  # the tag's facet row survived the second profile
        assert conn.execute(select(search_facet_values.c.category)).scalars().all() == [
            "Dom.Pii"]
    with batch.read() as conn:  # people's words survived where the field kept its name
        described = conn.execute(select(resource_fields.c.name).where(
            resource_fields.c.description == "described 2")).scalars().all()
    assert sorted(described) == ["col_2", "col_3", "col_4", "col_5"]

    _record_one_by_one(one, source_one, _third_round())
    _record_in_batches(batch, source_batch, _third_round())
    _compare(one, batch)


def test_the_bulk_fixture_is_searchable_like_a_profiled_catalog(store: Store) -> None:
    write_catalog(store, 400, 4)
    with store.read() as conn:
        count = conn.execute(text("SELECT count(*) FROM data_resources")).scalar_one()
        facets = dict(conn.execute(text(
            "SELECT facet_sensitivity, count(*) FROM data_resources "
            "WHERE facet_field_types > 0 GROUP BY facet_sensitivity")).all())
        matched = conn.execute(select(search_store.R.c.key).where(
            search_store.matching(conn, parse_basic("area07", partial=False)).condition)).all()
    assert count == 400
    assert facets == {"NONE": 400}
    assert len(matched) == 20  # one resource in 20 lives under area07


def test_a_path_given_twice_is_refused(store: Store) -> None:
    source = create_source(store)
    with store.write() as conn, pytest.raises(ValueError, match="more than once"):
        ingest.record_profiles(conn, source, [synthetic_profile(1, 2), synthetic_profile(1, 2)])


#: Text that COPY's text format must escape, or that looks like its NULL (``\\N``), a bound
#: parameter or JSON: what a profiled file's names, values and messages may hold.
AWKWARD = ["tab\there", "new\nline", "carriage\rreturn", "back\\slash", "\\N", "\\.", "NULL",
           "", " padded ", "quote ' \" `", "comma,semi;colon|pipe", "percent %s %(x)s $1 ?",
           "ünïcødé ß 中文 😀 \u200b", "\x01\x1f control", "{\"json\": [1, \"x\"]}", "a\\tb\\nc"]


def _awkward_profile(index: int) -> ResourceProfile:
    """A profile whose every text, JSON value and NULL is one COPY could get wrong."""
    word = AWKWARD[index % len(AWKWARD)]
    fields = [
        FieldProfile(
            f"{AWKWARD[(index + position) % len(AWKWARD)]} {position}",
            (DataType.STRING, DataType.LONG, DataType.DOUBLE)[position % 3], position % 2 == 0,
            {"min": word, "max": AWKWARD[-1 - index % len(AWKWARD)], "mean": None,
             "nested": {word: [word, None, True, 1.5, -0.0, 2 ** 62, 1e300]},
             "valueCount": index, "density": 1 / 3},
            sketch=build_sketch(f"{word}{n}" for n in range(5)) if position == 0 else None)
        for position in range(3)
    ]
    path = f"awkward/{index:03d} {word}.csv"
    return ResourceProfile(
        path=path, name=f"{word} {index}", file_format="csv",
        separator=("\t", ",", "\\", None)[index % 4], header=index % 2 == 0,
        encoding=None if index % 3 else "utf-8", row_count=index, resource_size=None,
        fields=fields, created_ms=None, modified_ms=1_700_000_000_000 + index,
        extra={"warnings": [word, None], "databaseName": word or None, "n": index},
    )


def _raw_json(conn: Connection, names: dict[str, str]) -> list[str]:
    """The JSON columns as the database holds their text (not decoded), and which are NULL."""
    F, R = resource_fields, data_resources
    rows = [repr((names[str(key)], name, props, sketch, sketch_null))
            for key, name, props, sketch, sketch_null in conn.execute(select(
                F.c.resource_key, F.c.name, cast(F.c.properties, Text), cast(F.c.sketch, Text),
                F.c.sketch.is_(None)))]
    rows += [repr((path, extra)) for path, extra in conn.execute(
        select(R.c.path, cast(R.c.extra, Text)))]
    return sorted(rows)


def test_many_awkward_rows_are_written_as_one_by_one_writes_them(
        two_stores: tuple[Store, Store]) -> None:
    """Enough rows at once that PostgreSQL takes them by COPY (bulk_insert) in every table
    the batch writes, failed profiles (columns left to their defaults) included."""
    one, batch = two_stores
    source_one, source_batch = create_source(one), create_source(batch)
    many = bulk_insert.COPY_FROM + 8
    failing = [dataclasses.replace(_awkward_profile(i), fields=[]).fail(AWKWARD[i % len(AWKWARD)])
               for i in range(many, 2 * many)]
    profiles = [*(_awkward_profile(i) for i in range(many)), *failing]
    _record_one_by_one(one, source_one, profiles)
    with batch.write() as conn:
        ingest.record_profiles(conn, source_batch, profiles, run_id="run")
    _compare(one, batch)
    raw = []
    for store in (one, batch):
        with store.read() as conn:
            names = {str(k): str(p) for k, p in conn.execute(
                select(data_resources.c.key, data_resources.c.path))}
            raw.append(_raw_json(conn, names))
    assert raw[0] == raw[1]
    assert len(raw[0]) == 3 * many + 2 * many  # three fields each, and the resources


def _field_row(n: int, word: str) -> dict[str, Any]:
    return {"name": f"{word} {n}", "position": n, "display_name": None if n % 2 else word,
            "description": word, "comment": None, "data_type": word, "nullable": n % 3 == 0,
            "properties": {word: [word, None, n, 0.1, {"": False}]},
            "sketch": None if n % 2 else {"k": word}}


def test_bulk_insert_writes_what_the_insert_writes(store: Store) -> None:
    """The same rows through ``insert_rows`` (COPY on PostgreSQL) and an executemany INSERT,
    compared as the database holds them (JSON as text)."""
    source = create_source(store)
    F = resource_fields
    with store.write() as conn:
        keys = [o.key for o in ingest.record_profiles(conn, source, [
            dataclasses.replace(synthetic_profile(i, 0), fields=[]) for i in range(2)])]
        rows = [_field_row(n, AWKWARD[n % len(AWKWARD)]) for n in range(bulk_insert.COPY_FROM)]
        conn.execute(insert(F), [{"resource_key": keys[0], **row} for row in rows])
        bulk_insert.insert_rows(conn, F, [{"resource_key": keys[1], **row} for row in rows])
        written = {key: sorted(repr(tuple(row)) for row in conn.execute(
            select(*(cast(c, Text) if c.name in ("properties", "sketch") else c
                     for c in F.c if c.name != "resource_key"),
                   F.c.sketch.is_(None)).where(F.c.resource_key == key)))
            for key in keys}
    assert written[keys[0]] == written[keys[1]]
    assert len(written[keys[0]]) == bulk_insert.COPY_FROM


def test_a_bulk_insert_fails_as_the_insert_fails(store: Store) -> None:
    """A violated constraint raises SQLAlchemy's IntegrityError whichever way the rows went
    (the store and its callers tell errors apart by SQLAlchemy's classes)."""
    source = create_source(store)
    with store.write() as conn:
        key = ingest.record_profiles(conn, source, [
            dataclasses.replace(synthetic_profile(1, 0), fields=[])])[0].key
        rows = [{"resource_key": key, **_field_row(n, "x")} for n in range(bulk_insert.COPY_FROM)]
        bulk_insert.insert_rows(conn, resource_fields, rows[:1])
    with pytest.raises(IntegrityError), store.write() as conn:
        bulk_insert.insert_rows(conn, resource_fields, rows)
    with store.read() as conn:  # the failed write left nothing behind
        assert conn.execute(select(resource_fields.c.name)).scalars().all() == ["x 0"]


def test_a_bulk_insert_alone_moves_the_catalog_generation(store: Store) -> None:
    """Caches follow the store's generations (server/read_cache.py): a transaction whose only
    write is a bulk insert (a COPY on PostgreSQL, past SQLAlchemy's statement events) moves
    the catalog's as any write does."""
    source = create_source(store)
    with store.write() as conn:
        key = ingest.record_profiles(conn, source, [
            dataclasses.replace(synthetic_profile(2, 0), fields=[])])[0].key

    def generation() -> int:
        with store.read() as conn:
            return int(conn.execute(select(store_generations.c.generation).where(
                store_generations.c.name == "catalog")).scalar_one())

    before = generation()
    with store.write() as conn:
        bulk_insert.insert_rows(conn, resource_fields, [
            {"resource_key": key, **_field_row(n, "g")} for n in range(bulk_insert.COPY_FROM)])
    assert generation() == before + 1
