"""Data source use cases: registering and changing a source (Administrator: a FILE source's
folder resolved under a data root, an object-store FILE source's ``s3://`` location under an
object root, an SQL source's URL checked without connecting, the ``sourceType`` never changed, a
password or secret access key sent back as ``***`` restored from the stored one, the engine of
its PROFILE jobs: Spark for FILE sources only), and
reading the sources the caller may see with their resource counts and latest jobs.

A body may be a DataSource as read (``services.read_back``): on create its ``type`` must be
``datasource`` and the rest of its read-only properties are assigned; on update ``key``, ``type``
and ``timeOfCreation`` are compared with the source's own, while ``resourceCount`` and
``lastJob``, which move with jobs, are always ignored.
"""

from __future__ import annotations

from typing import Any

from catalog_nb.contract import AuditAction, AuditObjectType, ErrorCode, JobEngine, SourceType
from catalog_nb.server.auditing import audited
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.profiling.connect import restore_secrets, shows_masked_secret
from catalog_nb.server.profiling.object_uri import is_object_uri
from catalog_nb.server.schemas.sources import (
    SourceCreate,
    SourceOut,
    SourceUpdate,
    has_secrets,
    shown_uri,
    source_out,
)
from catalog_nb.server.security import Caller, require_admin
from catalog_nb.server.services.read_back import refuse_changed, refuse_on_create
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.visibility import sees_every_source, sees_source

_WRITE = "Changing data sources"
#: What a data source's read form carries that moves with its jobs, not with its own writes.
_VOLATILE = ("resourceCount", "lastJob")


def _checked_uri(source_type: str, uri: str, settings: Settings) -> str:
    if source_type == SourceType.FILE.value and is_object_uri(uri):
        return source_store.object_uri(uri, settings.object_roots)
    if source_type == SourceType.FILE.value:
        return str(source_store.file_folder(uri, settings.data_roots))
    return source_store.sql_url(uri, settings.store_url, settings.data_roots)


def checked_engine(source_type: str, engine: JobEngine | str | None) -> str | None:
    """The engine of a source's (or a job's) PROFILE work as stored; 400 for Spark on an SQL
    source, which its database profiles (Spark would only read the same rows through it)."""
    if engine is None:
        return None
    value = JobEngine(engine).value
    if value == JobEngine.SPARK.value and source_type == SourceType.SQL.value:
        raise BadRequest(
            "An SQL data source is profiled by its own database (engine local); the Spark "
            "engine profiles FILE sources.", ErrorCode.INVALID_PAYLOAD)
    return value


def _outs(conn: Any, rows: list[dict[str, Any]]) -> list[SourceOut]:
    keys = [str(r["key"]) for r in rows]
    counts = source_store.resource_counts(conn, keys)
    latest = job_store.latest_by_source(conn, keys)
    return [source_out(r, counts.get(str(r["key"]), 0), latest.get(str(r["key"]))) for r in rows]


def list_visible(store: Store, caller: Caller) -> list[SourceOut]:
    """The data sources the caller may see, by name."""
    keys = None
    if not sees_every_source(caller.roles):
        keys = {k for r in caller.roles for k in r.granted("DATA_SOURCE")}
    with store.read() as conn:
        return _outs(conn, source_store.list_sources(conn, keys))


def get_visible(store: Store, caller: Caller, key: str) -> SourceOut:
    """One data source (404 when the caller may not see it)."""
    if not sees_source(caller.roles, key):
        raise NotFound(f"There is no data source with key '{key}'.",
                       ErrorCode.DATA_SOURCE_NOT_FOUND)
    with store.read() as conn:
        return _outs(conn, [source_store.get_source(conn, key)])[0]


def create(store: Store, settings: Settings, caller: Caller, body: SourceCreate) -> SourceOut:
    """Register a data source (Administrator), audited."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.DATA_SOURCE,
                 name=body.name) as w:
        require_admin(caller, _WRITE)
        refuse_on_create(body, {"type": "datasource"})
        if shows_masked_secret(body.uri):
            # Stored as sent, "***" would become the password: a copy of a source read back
            # (masked) must say the secret itself, where an update restores the stored one.
            raise BadRequest(
                "The uri's password (or secret) is '***', as data sources are answered: a new "
                "data source needs the secret itself.", ErrorCode.INVALID_PAYLOAD,
                fields=["uri"])
        values = body.changes()
        values["source_type"] = body.source_type.value
        values["uri"] = _checked_uri(body.source_type.value, body.uri, settings)
        values["engine"] = checked_engine(body.source_type.value, body.engine)
        row = source_store.create_source(w.conn, values)
        w.target(row["key"], row["name"])
        w.message = f"{row['source_type']} {shown_uri(row)}"
        return _outs(w.conn, [row])[0]


def update(
    store: Store, settings: Settings, caller: Caller, key: str, body: SourceUpdate
) -> SourceOut:
    """Change a data source (Administrator), audited; absent properties stay unchanged.

    ``sourceType`` cannot change. An SQL ``uri`` whose password is ``***`` (as it was read), or
    an ``s3://`` one whose secret access key is, keeps the stored secret. The body may be the
    source as read (``services.read_back``).
    """
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.DATA_SOURCE, key=key) as w:
        require_admin(caller, _WRITE)
        current = source_store.get_source(w.conn, key)
        w.target(current["key"], current["name"])
        if body.read_back:
            refuse_changed(body, source_out(current), _VOLATILE)
        changes = body.changes()
        for field in ("name", "uri", "source_type", "engine"):
            if field in changes and changes[field] is None:
                raise BadRequest(f"{_wire(field)} cannot be set to null.",
                                 ErrorCode.INVALID_PAYLOAD)
        if "source_type" in changes:
            changes["source_type"] = changes["source_type"].value
            if changes["source_type"] != current["source_type"]:
                raise BadRequest(
                    f"The sourceType of data source '{current['name']}' is "
                    f"{current['source_type']} and cannot change; register a new data source.",
                    ErrorCode.READ_ONLY_PROPERTY,
                )
        if "engine" in changes:
            changes["engine"] = checked_engine(str(current["source_type"]), changes["engine"])
        if "uri" in changes:
            uri = str(changes["uri"])
            if has_secrets(current):
                uri = restore_secrets(uri, str(current["uri"]))
            changes["uri"] = _checked_uri(str(current["source_type"]), uri, settings)
        changes = _different(current, changes)
        row = source_store.update_source(w.conn, key, changes) if changes else current
        w.target(row["key"], row["name"])
        w.message = ", ".join(sorted(_wire(c) for c in changes)) or "unchanged"
        return _outs(w.conn, [row])[0]


def _different(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """The changes that change something: a source sent back as read (or a property sent with
    its current value) writes nothing, so its ``timeOfLastChange`` stays that of its last real
    change. A source without an engine of its own answers ``local``; sent back, still none."""
    kept = {}
    for column, value in changes.items():
        now = current.get(column)
        if column == "engine" and now is None and value == JobEngine.LOCAL.value:
            continue
        if column in ("include_patterns", "exclude_patterns"):
            value, now = list(value or []), list(now or [])
        if value != now:
            kept[column] = value
    return kept


def _wire(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)
