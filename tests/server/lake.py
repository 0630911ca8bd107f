"""Catalog content for the server tests, made the way the service's own processing makes it.

Data resources only come into existence by browsing and profiling, so these helpers register a
data source row in the store and run the real ``profiling`` library and ``store.ingest`` over
real files: the demo lake's ``files/`` folder, its SQLite databases, or small hand-written
files. ``profile_many`` feeds the same ingest functions with generated profiles, for tests that
need thousands of resources without thousands of files.

Example::

    key = profile_folder(live_server.store, unique("files"), demo_files())
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select

from catalog_nb.contract import ResourceType
from catalog_nb.demo.lake import build_lake, sql_url, sqlite_engine_with_schemas
from catalog_nb.server import profiling
from catalog_nb.server.profiling import DataType, FieldProfile, ResourceProfile
from catalog_nb.server.store import Store, ingest
from catalog_nb.server.store.common import fold, new_key, now_ms
from catalog_nb.server.store.schema import data_resources, data_sources

#: Scale of the demo lake the tests profile (a few hundred rows per file: fast, still real).
SCALE = 0.05


@cache
def demo_lake() -> Path:
    """The root of a demo lake built once per test process (removed at exit)."""
    root = Path(tempfile.mkdtemp(prefix="catalog-lake-"))
    atexit.register(shutil.rmtree, root, True)
    build_lake(root / "acme", scale=SCALE)
    return root / "acme"


def demo_files() -> Path:
    """The demo lake's FILE data source folder."""
    return demo_lake() / "files"


def add_source(store: Store, name: str, uri: str, source_type: str = "FILE") -> str:
    """Register a data source row (as ``POST /datasource`` would) and return its key."""
    now = now_ms()
    key = new_key()
    with store.write() as conn:
        conn.execute(
            insert(data_sources).values(
                key=key, name=name, name_fold=fold(name), description=f"test source {name}",
                source_type=source_type, uri=uri, include_patterns=[], exclude_patterns=[],
                created_ms=now, changed_ms=now,
            )
        )
    return key


def profile_folder(store: Store, name: str, folder: Path) -> str:
    """Register ``folder`` as a FILE source named ``name``, browse and profile it; its key."""
    key = add_source(store, name, str(Path(folder).resolve()))
    found = profiling.browse(folder)
    with store.write() as conn:
        for resource in found:
            ingest.record_browsed(conn, key, resource)
    for resource in found:
        if resource.resource_type == ResourceType.COLLECTION.value:
            result = profiling.profile_collection(resource.path, root=folder,
                                                  members=resource.members)
        else:
            result = profiling.profile_file(resource.path, root=folder)
        with store.write() as conn:
            ingest.record_profile(conn, key, result)
    return key


def profile_sql(store: Store, name: str, shown_uri: str | None = None) -> str:
    """Register the demo lake's SQL database as an SQL source and profile its tables and views.

    ``shown_uri`` replaces the URI stored for the source (to check that a password in it never
    leaves the service); the tables are read from the demo lake either way.
    """
    url = sql_url(demo_lake())
    key = add_source(store, name, shown_uri or url, source_type="SQL")
    engine = sqlite_engine_with_schemas(url)
    try:
        found = profiling.browse_sql(engine)
        with store.write() as conn:
            for resource in found:
                ingest.record_browsed(conn, key, resource)
        for resource in found:
            schema, table = resource.path.split(".", 1)
            result = profiling.profile_table(engine, schema, table)
            with store.write() as conn:
                ingest.record_profile(conn, key, result)
    finally:
        engine.dispose()
    return key


def write_files(folder: Path, files: dict[str, str | bytes]) -> Path:
    """Write small hand-made data files (relative path -> content) under ``folder``."""
    for rel, content in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return folder


def one_field_profile(path: str, extra: dict[str, Any] | None = None) -> ResourceProfile:
    """A small CSV's profile at ``path`` (one LONG field, ten rows), with ``extra`` stored."""
    return ResourceProfile(
        path=path, name=path.rsplit("/", 1)[-1], resource_type=ResourceType.FILE.value,
        file_format="csv", separator=",", header=True, header_row=1, encoding="utf-8",
        row_count=10, resource_size=100, created_ms=1_700_000_000_000,
        modified_ms=1_700_000_000_000,
        fields=[FieldProfile("id", DataType.LONG, False, {"density": 1.0, "valueCount": 10})],
        extra=extra or {},
    )


def profile_many(store: Store, name: str, count: int, fields: int = 4) -> str:
    """A source of ``count`` profiled resources under ``area<i % 10>/`` with ``fields`` fields.

    The profiles are generated, not read from files, and written in one transaction by the
    ingest's batch form (``record_profiles``: the rows a profiling job's ``record_profile``
    writes, which tests/server/test_bulk_ingest.py pins, in a few statements instead of a
    dozen per resource: one call per resource cost over a minute on PostgreSQL for 1,200).
    """
    key = add_source(store, name, f"/generated/{name}")
    profiles = []
    for i in range(count):
        path = f"area{i % 10}/file{i:05d}.csv"
        profiles.append(ResourceProfile(
            path=path, name=path.rsplit("/", 1)[1], file_format="csv", separator=",",
            header=True, header_row=1, encoding="utf-8", row_count=100 + i,
            resource_size=1000 + i, created_ms=1_700_000_000_000 + i,
            modified_ms=1_700_000_000_000 + i * 1000,
            fields=[
                FieldProfile(f"col{j}", DataType.LONG, j % 2 == 0,
                             {"density": 1.0, "valueCount": 100, "min": 0, "max": i})
                for j in range(fields)
            ],
        ))
    with store.write() as conn:
        ingest.record_profiles(conn, key, profiles)
    return key


def resource_key(store: Store, source_key: str, path: str) -> str:
    """The key of the resource at ``path`` of a source (read straight from the store)."""
    with store.read() as conn:
        return str(conn.execute(
            select(data_resources.c.key).where(
                data_resources.c.data_source_key == source_key, data_resources.c.path == path
            )
        ).scalar_one())
