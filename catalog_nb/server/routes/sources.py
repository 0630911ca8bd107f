"""Data sources: create and update (Administrator), view and list (what the caller may see).

No delete (spec). A FILE source's folder is resolved and must lie under a data root; an SQL
source's URL is checked without connecting (a SQLite file must lie under a data root too, and
is never the catalog's own store), and its password is never answered (``***``). The rules are
``services.sources``.
"""

from __future__ import annotations

from fastapi import APIRouter

from catalog_nb.server.deps import CallerDep, SettingsDep, StoreDep
from catalog_nb.server.schemas.sources import SourceCreate, SourceOut, SourceUpdate
from catalog_nb.server.services import sources

router = APIRouter(tags=["sources"])


@router.get("/datasource", response_model=list[SourceOut], response_model_by_alias=True)
def list_sources(caller: CallerDep, store: StoreDep) -> list[SourceOut]:
    """The data sources the caller may see, by name."""
    return sources.list_visible(store, caller)


@router.post("/datasource", status_code=201, response_model=SourceOut,
             response_model_by_alias=True)
def create_source(
    body: SourceCreate, caller: CallerDep, store: StoreDep, settings: SettingsDep
) -> SourceOut:
    """Register a data source (Administrator)."""
    return sources.create(store, settings, caller, body)


@router.get("/datasource/{key}", response_model=SourceOut, response_model_by_alias=True)
def get_source(key: str, caller: CallerDep, store: StoreDep) -> SourceOut:
    """One data source (404 when the caller may not see it)."""
    return sources.get_visible(store, caller, key)


@router.put("/datasource/{key}", response_model=SourceOut, response_model_by_alias=True)
def update_source(
    key: str, body: SourceUpdate, caller: CallerDep, store: StoreDep, settings: SettingsDep
) -> SourceOut:
    """Change a data source (Administrator); absent properties stay unchanged.

    ``sourceType`` cannot change. An SQL ``uri`` whose password is ``***`` (as it was read)
    keeps the stored password. The body may be the source as read: read-only properties are
    ignored unchanged and refused by name when changed.
    """
    return sources.update(store, settings, caller, key, body)
