"""Virtual folders and data sets: full CRUD; writes need a Steward or an Administrator.

Reads show what the caller sees (a folder with its whole data source or through a grant on it; a
data set through a grant or one of its sources), and ``resourceCount`` counts only the resources
the caller sees. Anything else answers 404. The use cases are ``services.folders``.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.schemas.folders import (
    DatasetCreate,
    DatasetOut,
    DatasetUpdate,
    FolderCreate,
    FolderOut,
    FolderUpdate,
)
from catalog_nb.server.services import folders

router = APIRouter(tags=["virtual folders and data sets"])


# --------------------------------------------------------------------------- virtual folders


@router.get("/virtualfolder", response_model=list[FolderOut], response_model_by_alias=True)
def list_folders(caller: CallerDep, store: StoreDep) -> list[FolderOut]:
    """The virtual folders the caller sees, by name."""
    return folders.list_folders(store, caller)


@router.post("/virtualfolder", status_code=201, response_model=FolderOut,
             response_model_by_alias=True)
def create_folder(body: FolderCreate, caller: CallerDep, store: StoreDep) -> FolderOut:
    """Create a virtual folder (Steward or Administrator) on a data source the caller sees."""
    return folders.create_folder(store, caller, body)


@router.get("/virtualfolder/{key}", response_model=FolderOut, response_model_by_alias=True)
def get_folder(key: str, caller: CallerDep, store: StoreDep) -> FolderOut:
    """The virtual folder with this key."""
    return folders.get_folder(store, caller, key)


@router.put("/virtualfolder/{key}", response_model=FolderOut, response_model_by_alias=True)
def update_folder(key: str, body: FolderUpdate, caller: CallerDep, store: StoreDep) -> FolderOut:
    """Change a virtual folder (Steward or Administrator); absent properties stay unchanged."""
    return folders.update_folder(store, caller, key, body)


@router.delete("/virtualfolder/{key}", status_code=204)
def delete_folder(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a virtual folder; 409 while it has child folders or is granted to a role."""
    folders.delete_folder(store, caller, key)
    return Response(status_code=204)


# -------------------------------------------------------------------------------- data sets


@router.get("/dataset", response_model=list[DatasetOut], response_model_by_alias=True)
def list_datasets(caller: CallerDep, store: StoreDep) -> list[DatasetOut]:
    """The data sets the caller sees, by name."""
    return folders.list_datasets(store, caller)


@router.post("/dataset", status_code=201, response_model=DatasetOut,
             response_model_by_alias=True)
def create_dataset(body: DatasetCreate, caller: CallerDep, store: StoreDep) -> DatasetOut:
    """Create a data set (Steward or Administrator) over data sources the caller sees."""
    return folders.create_dataset(store, caller, body)


@router.get("/dataset/{key}", response_model=DatasetOut, response_model_by_alias=True)
def get_dataset(key: str, caller: CallerDep, store: StoreDep) -> DatasetOut:
    """The data set with this key."""
    return folders.get_dataset(store, caller, key)


@router.put("/dataset/{key}", response_model=DatasetOut, response_model_by_alias=True)
def update_dataset(
    key: str, body: DatasetUpdate, caller: CallerDep, store: StoreDep
) -> DatasetOut:
    """Change a data set (Steward or Administrator); absent properties stay unchanged."""
    return folders.update_dataset(store, caller, key, body)


@router.delete("/dataset/{key}", status_code=204)
def delete_dataset(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a data set; 409 while it is granted to a role."""
    folders.delete_dataset(store, caller, key)
    return Response(status_code=204)
