"""Data sources: create and update (Administrator), view and list (what the caller may see).

No delete (spec). A FILE source's folder is resolved and must lie under a data root; an SQL
source's URL is checked without connecting (a SQLite file must lie under a data root too, and
is never the catalog's own store), and its password is never answered (``***``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from catalog_nb.contract import AuditAction, AuditObjectType, ErrorCode, SourceType
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, SettingsDep, StoreDep
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.profiling.connect import restore_secrets
from catalog_nb.server.schemas.sources import (
    SourceCreate,
    SourceOut,
    SourceUpdate,
    shown_uri,
    source_out,
)
from catalog_nb.server.security import Caller, require_admin, sees_every_source, sees_source
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store import sources as source_store

router = APIRouter(tags=["sources"])

_WRITE = "Changing data sources"


def _checked_uri(source_type: str, uri: str, settings: Settings) -> str:
    if source_type == SourceType.FILE.value:
        return str(source_store.file_folder(uri, settings.data_roots))
    return source_store.sql_url(uri, settings.store_url, settings.data_roots)


def _outs(conn: Any, rows: list[dict[str, Any]]) -> list[SourceOut]:
    keys = [str(r["key"]) for r in rows]
    counts = source_store.resource_counts(conn, keys)
    latest = job_store.latest_by_source(conn, keys)
    return [source_out(r, counts.get(str(r["key"]), 0), latest.get(str(r["key"]))) for r in rows]


def _visible(caller: Caller, key: str) -> None:
    if not sees_source(caller.roles, key):
        raise NotFound(f"There is no data source with key '{key}'.",
                       ErrorCode.DATA_SOURCE_NOT_FOUND)


@router.get("/datasource", response_model=list[SourceOut], response_model_by_alias=True)
def list_sources(caller: CallerDep, store: StoreDep) -> list[SourceOut]:
    """The data sources the caller may see, by name."""
    keys = None
    if not sees_every_source(caller.roles):
        keys = {k for r in caller.roles for k in r.granted("DATA_SOURCE")}
    with store.read() as conn:
        return _outs(conn, source_store.list_sources(conn, keys))


@router.post("/datasource", status_code=201, response_model=SourceOut,
             response_model_by_alias=True)
def create_source(
    body: SourceCreate, caller: CallerDep, store: StoreDep, settings: SettingsDep
) -> SourceOut:
    """Register a data source (Administrator)."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.DATA_SOURCE,
                 name=body.name) as w:
        require_admin(caller, _WRITE)
        values = body.changes()
        values["source_type"] = body.source_type.value
        values["uri"] = _checked_uri(body.source_type.value, body.uri, settings)
        row = source_store.create_source(w.conn, values)
        w.target(row["key"], row["name"])
        w.message = f"{row['source_type']} {shown_uri(row)}"
        return _outs(w.conn, [row])[0]


@router.get("/datasource/{key}", response_model=SourceOut, response_model_by_alias=True)
def get_source(key: str, caller: CallerDep, store: StoreDep) -> SourceOut:
    """One data source (404 when the caller may not see it)."""
    _visible(caller, key)
    with store.read() as conn:
        return _outs(conn, [source_store.get_source(conn, key)])[0]


@router.put("/datasource/{key}", response_model=SourceOut, response_model_by_alias=True)
def update_source(
    key: str, body: SourceUpdate, caller: CallerDep, store: StoreDep, settings: SettingsDep
) -> SourceOut:
    """Change a data source (Administrator); absent properties stay unchanged.

    ``sourceType`` cannot change. An SQL ``uri`` whose password is ``***`` (as it was read)
    keeps the stored password.
    """
    changes = body.changes()
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.DATA_SOURCE, key=key) as w:
        require_admin(caller, _WRITE)
        current = source_store.get_source(w.conn, key)
        w.target(current["key"], current["name"])
        for field in ("name", "uri", "source_type"):
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
        if "uri" in changes:
            uri = str(changes["uri"])
            if current["source_type"] == SourceType.SQL.value:
                uri = restore_secrets(uri, str(current["uri"]))
            changes["uri"] = _checked_uri(str(current["source_type"]), uri, settings)
        row = source_store.update_source(w.conn, key, changes)
        w.target(row["key"], row["name"])
        w.message = ", ".join(sorted(_wire(c) for c in changes)) or None
        return _outs(w.conn, [row])[0]


def _wire(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)
