"""Virtual folders and data sets as the caller sees them, and writing them (Steward or
Administrator), audited.

Every use case resolves the caller's visibility once and hands it to the store: a folder is seen
with its whole data source or through a grant on it, a data set through a grant or one of its
sources, anything else is not found. ``resourceCount`` counts only the resources the caller
sees, with that same visibility (a write answers the count as it is after the write).
"""

from __future__ import annotations

from catalog_nb.contract import AccessLevel, AuditAction, AuditObjectType
from catalog_nb.server.auditing import audited
from catalog_nb.server.errors import refuse_nulls
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
from catalog_nb.server.security import Caller, require_level
from catalog_nb.server.services.read_back import refuse_changed, refuse_on_create
from catalog_nb.server.store import Store
from catalog_nb.server.store import folders as folder_store
from catalog_nb.server.store.visible import visibility

_FOLDERS = "Changing virtual folders"
_DATASETS = "Changing data sets"
#: A folder's or data set's resourceCount moves with browsing: a stale one is not a change.
_VOLATILE = ("resourceCount",)


# --------------------------------------------------------------------------- virtual folders


def list_folders(store: Store, caller: Caller) -> list[FolderOut]:
    """The virtual folders the caller sees, by name."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        rows = folder_store.list_folders(conn, vis)
        counts = folder_store.resource_counts(conn, vis, rows)
    return [folder_out(r, counts[r["key"]]) for r in rows]


def get_folder(store: Store, caller: Caller, key: str) -> FolderOut:
    """The virtual folder with this key, if the caller sees it."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = folder_store.get_item(conn, vis, "folder", key)
        count = folder_store.resource_counts(conn, vis, [row])[key]
    return folder_out(row, count)


def create_folder(store: Store, caller: Caller, body: FolderCreate) -> FolderOut:
    """Create a virtual folder (Steward or Administrator) on a data source the caller sees."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.VIRTUAL_FOLDER,
                 name=body.name) as w:
        require_level(caller, AccessLevel.STEWARD, _FOLDERS)
        refuse_on_create(body, {"type": "virtualfolder"})
        vis = visibility(w.conn, caller.roles)
        row = folder_store.create_folder(w.conn, vis, body.values())
        w.target(row["key"], row["name"])
        count = folder_store.resource_counts(w.conn, vis, [row])[row["key"]]
    return folder_out(row, count)


def update_folder(store: Store, caller: Caller, key: str, body: FolderUpdate) -> FolderOut:
    """Change a virtual folder (Steward or Administrator); absent properties stay unchanged."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.VIRTUAL_FOLDER,
                 key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _FOLDERS)
        refuse_nulls(body.nulls("name", "dataSourceKey", "pathSpecs"))
        vis = visibility(w.conn, caller.roles)
        if body.read_back:
            current = folder_store.get_item(w.conn, vis, "folder", key)
            refuse_changed(body, folder_out(current, 0), _VOLATILE)
        row = folder_store.update_folder(w.conn, vis, key, body.values())
        w.target(row["key"], row["name"])
        count = folder_store.resource_counts(w.conn, vis, [row])[key]
    return folder_out(row, count)


def delete_folder(store: Store, caller: Caller, key: str) -> None:
    """Delete a virtual folder; 409 while it has child folders or is granted to a role."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.VIRTUAL_FOLDER,
                 key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _FOLDERS)
        row = folder_store.delete_item(w.conn, visibility(w.conn, caller.roles), "folder", key)
        w.target(row["key"], row["name"])


# -------------------------------------------------------------------------------- data sets


def list_datasets(store: Store, caller: Caller) -> list[DatasetOut]:
    """The data sets the caller sees, by name."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        rows = folder_store.list_datasets(conn, vis)
        counts = folder_store.resource_counts(conn, vis, rows)
    return [dataset_out(r, counts[r["key"]], vis) for r in rows]


def get_dataset(store: Store, caller: Caller, key: str) -> DatasetOut:
    """The data set with this key, if the caller sees it."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = folder_store.get_item(conn, vis, "dataset", key)
        count = folder_store.resource_counts(conn, vis, [row])[key]
    return dataset_out(row, count, vis)


def create_dataset(store: Store, caller: Caller, body: DatasetCreate) -> DatasetOut:
    """Create a data set (Steward or Administrator) over data sources the caller sees."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.DATASET,
                 name=body.name) as w:
        require_level(caller, AccessLevel.STEWARD, _DATASETS)
        refuse_on_create(body, {"type": "dataset"})
        vis = visibility(w.conn, caller.roles)
        row = folder_store.create_dataset(w.conn, vis, body.values())
        w.target(row["key"], row["name"])
        count = folder_store.resource_counts(w.conn, vis, [row])[row["key"]]
    return dataset_out(row, count, vis)


def update_dataset(store: Store, caller: Caller, key: str, body: DatasetUpdate) -> DatasetOut:
    """Change a data set (Steward or Administrator); absent properties stay unchanged."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.DATASET, key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _DATASETS)
        refuse_nulls(body.nulls("name", "dataSetPathSpecs"))
        vis = visibility(w.conn, caller.roles)
        if body.read_back:
            current = folder_store.get_item(w.conn, vis, "dataset", key)
            refuse_changed(body, dataset_out(current, 0, vis), _VOLATILE)
        row = folder_store.update_dataset(w.conn, vis, key, body.values())
        w.target(row["key"], row["name"])
        count = folder_store.resource_counts(w.conn, vis, [row])[key]
    return dataset_out(row, count, vis)


def delete_dataset(store: Store, caller: Caller, key: str) -> None:
    """Delete a data set; 409 while it is granted to a role."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.DATASET, key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _DATASETS)
        row = folder_store.delete_item(w.conn, visibility(w.conn, caller.roles), "dataset", key)
        w.target(row["key"], row["name"])
