"""Custom property definitions: read (anyone), create and change (Administrator); no delete."""

from __future__ import annotations

from fastapi import APIRouter

from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.schemas.custom_properties import (
    CustomPropertyCreate,
    CustomPropertyOut,
    CustomPropertyUpdate,
    custom_property_out,
)
from catalog_nb.server.services import custom_properties
from catalog_nb.server.store import custom_properties as property_store

router = APIRouter(tags=["custom properties"])


@router.get("/customproperty", response_model=list[CustomPropertyOut],
            response_model_by_alias=True)
def list_properties(caller: CallerDep, store: StoreDep) -> list[CustomPropertyOut]:
    """Every custom property definition, by name."""
    with store.read() as conn:
        return [custom_property_out(r) for r in property_store.list_all(conn)]


@router.post("/customproperty", status_code=201, response_model=CustomPropertyOut,
             response_model_by_alias=True)
def create_property(
    body: CustomPropertyCreate, caller: CallerDep, store: StoreDep
) -> CustomPropertyOut:
    """Define a custom property (Administrator); 409 when the name is taken."""
    return custom_property_out(custom_properties.create(store, caller, body))


@router.get("/customproperty/{key}", response_model=CustomPropertyOut,
            response_model_by_alias=True)
def get_property(key: str, caller: CallerDep, store: StoreDep) -> CustomPropertyOut:
    """The definition with this key."""
    with store.read() as conn:
        return custom_property_out(property_store.get(conn, key))


@router.put("/customproperty/{key}", response_model=CustomPropertyOut,
            response_model_by_alias=True)
def update_property(
    key: str, body: CustomPropertyUpdate, caller: CallerDep, store: StoreDep
) -> CustomPropertyOut:
    """Change a definition (Administrator); a type change must fit the stored values (409)."""
    return custom_property_out(custom_properties.update(store, caller, key, body))
