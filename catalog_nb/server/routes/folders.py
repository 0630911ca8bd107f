"""Virtual folders and data sets: full CRUD; writes need a Steward or an Administrator.

Reads show what the caller sees (a folder with its whole data source or through a grant on it; a
data set through a grant or one of its sources), and ``resourceCount`` counts only the resources
the caller sees. Anything else answers 404.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from catalog_nb.contract import AccessLevel, AuditAction, AuditObjectType, ErrorCode
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.schemas.folders import (
    DatasetCreate,
    DatasetOut,
    DatasetUpdate,
    FolderCreate,
    FolderOut,
    FolderUpdate,
    dataset_out,
    folder_out,
)
from catalog_nb.server.security import require_level
from catalog_nb.server.store import folders as folder_store
from catalog_nb.server.store.visible import visibility

router = APIRouter(tags=["virtual folders and data sets"])

_FOLDERS = "Changing virtual folders"
_DATASETS = "Changing data sets"


def _refuse_nulls(names: list[str]) -> None:
    if names:
        raise BadRequest(f"These properties cannot be null: {', '.join(names)}.",
                         ErrorCode.INVALID_PAYLOAD)


# --------------------------------------------------------------------------- virtual folders


@router.get("/virtualfolder", response_model=list[FolderOut], response_model_by_alias=True)
def list_folders(caller: CallerDep, store: StoreDep) -> list[FolderOut]:
    """The virtual folders the caller sees, by name."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        rows = folder_store.list_folders(conn, vis)
        counts = folder_store.resource_counts(conn, vis, rows)
    return [folder_out(r, counts[r["key"]]) for r in rows]


@router.post("/virtualfolder", status_code=201, response_model=FolderOut,
             response_model_by_alias=True)
def create_folder(body: FolderCreate, caller: CallerDep, store: StoreDep) -> FolderOut:
    """Create a virtual folder (Steward or Administrator) on a data source the caller sees."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.VIRTUAL_FOLDER,
                 name=body.name) as w:
        require_level(caller, AccessLevel.STEWARD, _FOLDERS)
        vis = visibility(w.conn, caller.roles)
        row = folder_store.create_folder(w.conn, vis, body.values())
        w.target(row["key"], row["name"])
        count = folder_store.resource_counts(w.conn, vis, [row])[row["key"]]
    return folder_out(row, count)


@router.get("/virtualfolder/{key}", response_model=FolderOut, response_model_by_alias=True)
def get_folder(key: str, caller: CallerDep, store: StoreDep) -> FolderOut:
    """The virtual folder with this key."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = folder_store.get_item(conn, vis, "folder", key)
        count = folder_store.resource_counts(conn, vis, [row])[key]
    return folder_out(row, count)


@router.put("/virtualfolder/{key}", response_model=FolderOut, response_model_by_alias=True)
def update_folder(key: str, body: FolderUpdate, caller: CallerDep, store: StoreDep) -> FolderOut:
    """Change a virtual folder (Steward or Administrator); absent properties stay unchanged."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.VIRTUAL_FOLDER,
                 key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _FOLDERS)
        _refuse_nulls(body.nulls("name", "dataSourceKey", "pathSpecs"))
        vis = visibility(w.conn, caller.roles)
        row = folder_store.update_folder(w.conn, vis, key, body.values())
        w.target(row["key"], row["name"])
        count = folder_store.resource_counts(w.conn, vis, [row])[key]
    return folder_out(row, count)


@router.delete("/virtualfolder/{key}", status_code=204)
def delete_folder(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a virtual folder; 409 while it has child folders or is granted to a role."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.VIRTUAL_FOLDER,
                 key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _FOLDERS)
        row = folder_store.delete_item(w.conn, visibility(w.conn, caller.roles), "folder", key)
        w.target(row["key"], row["name"])
    return Response(status_code=204)


# -------------------------------------------------------------------------------- data sets


@router.get("/dataset", response_model=list[DatasetOut], response_model_by_alias=True)
def list_datasets(caller: CallerDep, store: StoreDep) -> list[DatasetOut]:
    """The data sets the caller sees, by name."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        rows = folder_store.list_datasets(conn, vis)
        counts = folder_store.resource_counts(conn, vis, rows)
    return [dataset_out(r, counts[r["key"]], vis) for r in rows]


@router.post("/dataset", status_code=201, response_model=DatasetOut,
             response_model_by_alias=True)
def create_dataset(body: DatasetCreate, caller: CallerDep, store: StoreDep) -> DatasetOut:
    """Create a data set (Steward or Administrator) over data sources the caller sees."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.DATASET,
                 name=body.name) as w:
        require_level(caller, AccessLevel.STEWARD, _DATASETS)
        vis = visibility(w.conn, caller.roles)
        row = folder_store.create_dataset(w.conn, vis, body.values())
        w.target(row["key"], row["name"])
        count = folder_store.resource_counts(w.conn, vis, [row])[row["key"]]
    return dataset_out(row, count, vis)


@router.get("/dataset/{key}", response_model=DatasetOut, response_model_by_alias=True)
def get_dataset(key: str, caller: CallerDep, store: StoreDep) -> DatasetOut:
    """The data set with this key."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = folder_store.get_item(conn, vis, "dataset", key)
        count = folder_store.resource_counts(conn, vis, [row])[key]
    return dataset_out(row, count, vis)


@router.put("/dataset/{key}", response_model=DatasetOut, response_model_by_alias=True)
def update_dataset(
    key: str, body: DatasetUpdate, caller: CallerDep, store: StoreDep
) -> DatasetOut:
    """Change a data set (Steward or Administrator); absent properties stay unchanged."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.DATASET, key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _DATASETS)
        _refuse_nulls(body.nulls("name", "dataSetPathSpecs"))
        vis = visibility(w.conn, caller.roles)
        row = folder_store.update_dataset(w.conn, vis, key, body.values())
        w.target(row["key"], row["name"])
        count = folder_store.resource_counts(w.conn, vis, [row])[key]
    return dataset_out(row, count, vis)


@router.delete("/dataset/{key}", status_code=204)
def delete_dataset(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a data set; 409 while it is granted to a role."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.DATASET, key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _DATASETS)
        row = folder_store.delete_item(w.conn, visibility(w.conn, caller.roles), "dataset", key)
        w.target(row["key"], row["name"])
    return Response(status_code=204)
