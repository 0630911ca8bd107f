"""Tag associations (``/tagassociation``); the rules are in docs/tags-api.md.

Every association touches a resource, and a resource the caller cannot see answers 404 as
everywhere. Tagging needs the tag's domain in the caller's roles: Stewards (and Administrators)
write any state, Analysts suggest (SUGGESTED) and delete their own suggestions. Every write is
audited; ``POST /tagassociation/list`` applies each item in its own audited transaction. The
writes are ``services.associations``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response

from catalog_nb.contract import ErrorCode, TagAssociationState
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.openapi import json_body
from catalog_nb.server.schemas.associations import (
    MAX_BULK,
    AssociationIn,
    AssociationPage,
    AssociationUpdate,
    AssociationView,
    BulkItem,
    view_out,
)
from catalog_nb.server.services import associations
from catalog_nb.server.store import associations as association_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store import tags as tag_store
from catalog_nb.server.store.visible import visibility

router = APIRouter(tags=["tag associations"])


@router.post("/tagassociation", status_code=201, response_model=AssociationView,
             response_model_by_alias=True)
def create_association(body: AssociationIn, caller: CallerDep, store: StoreDep) -> Any:
    """Tag a resource or one of its fields; an existing suggestion or rejection is promoted."""
    view, _outcome = associations.create(store, caller, body)
    return view


@router.post("/tagassociation/list", status_code=201, response_model=list[BulkItem],
             response_model_by_alias=True, response_model_exclude_none=True,
             openapi_extra=json_body(
                 AssociationIn, max_items=MAX_BULK,
                 description="Each item is checked and applied on its own: a bad one is "
                 "answered in its place (ok: false), never with a 400 for the list."))
def create_associations(
    caller: CallerDep, store: StoreDep, body: Annotated[Any, Body()] = None
) -> list[dict[str, Any]]:
    """Apply many associations, each in its own transaction; a failing one never stops the rest.

    Answers one ``{index, ok, outcome?, association?, error?}`` per item, in request order.
    """
    if not isinstance(body, list):
        raise BadRequest("The body must be a JSON array of tag associations.",
                         ErrorCode.INVALID_PAYLOAD)
    if len(body) > MAX_BULK:
        raise BadRequest(f"A list takes at most {MAX_BULK} associations (got {len(body)}).",
                         ErrorCode.INVALID_PAYLOAD)
    return associations.create_many(store, caller, body)


@router.get("/tagassociation/byresource", response_model=list[AssociationView],
            response_model_by_alias=True)
def by_resource(
    caller: CallerDep, store: StoreDep,
    source_name: Annotated[str, Query(alias="sourceName", min_length=1)],
    resource_path: Annotated[str, Query(alias="resourcePath", min_length=1)],
) -> list[dict[str, Any]]:
    """The associations of a resource, resource level first, then by field."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = resource_store.get_visible_by_path(conn, vis, source_name, resource_path)
        found = association_store.of_resources(conn, [row["key"]]).get(row["key"], [])
    return [view_out(a, row["path"], row["source_name"]) for a in found]


@router.get("/tagassociation/byfield", response_model=list[AssociationView],
            response_model_by_alias=True)
def by_field(
    caller: CallerDep, store: StoreDep,
    source_name: Annotated[str, Query(alias="sourceName", min_length=1)],
    resource_path: Annotated[str, Query(alias="resourcePath", min_length=1)],
    field_name: Annotated[str, Query(alias="fieldName", min_length=1)],
) -> list[dict[str, Any]]:
    """The associations of one field of a resource; 404 for a field it does not have."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        row = resource_store.get_visible_by_path(conn, vis, source_name, resource_path)
        try:
            association_store.check_field(conn, row, field_name)
        except BadRequest as exc:
            raise NotFound(exc.message, ErrorCode.FIELD_NOT_FOUND) from exc
        found = association_store.of_resources(conn, [row["key"]]).get(row["key"], [])
    return [view_out(a, row["path"], row["source_name"]) for a in found
            if a["field_scope"] == field_name]


@router.get("/tagassociation", response_model=AssociationPage, response_model_by_alias=True)
def list_associations(
    caller: CallerDep, store: StoreDep,
    state: TagAssociationState | None = None,
    tag_key: Annotated[str | None, Query(alias="tagKey")] = None,
    data_source_key: Annotated[str | None, Query(alias="dataSourceKey")] = None,
    min_weight: Annotated[float | None, Query(alias="minWeight", ge=0, le=1)] = None,
    start: Annotated[int, Query(ge=0, le=2**62)] = 0,
    page_size: Annotated[int, Query(alias="pageSize", ge=1, le=MAX_BULK)] = 100,
) -> dict[str, Any]:
    """A page of the associations the caller sees, by data source, path, field and tag."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        if tag_key is not None:
            tag_store.get_tag(conn, tag_key)
        if data_source_key is not None and (
            not vis.touches(data_source_key)
            or source_store.find_source(conn, data_source_key) is None
        ):
            raise NotFound(f"There is no data source with key '{data_source_key}'.",
                           ErrorCode.DATA_SOURCE_NOT_FOUND)
        criteria = association_store.AssociationFilter(
            state=state.value if state else None, tag_key=tag_key,
            data_source_key=data_source_key, min_weight=min_weight,
        )
        rows, total = association_store.page(conn, vis, criteria, start, page_size)
    return {"list": [view_out(r) for r in rows], "totalCount": total, "start": start,
            "pageSize": page_size}


@router.put("/tagassociation/tagassociation/{key}", response_model=AssociationView,
            response_model_by_alias=True)
def update_association(
    key: str, body: AssociationUpdate, caller: CallerDep, store: StoreDep
) -> Any:
    """Change an association's state, semantic or description (Steward of the tag's domain)."""
    return associations.update(store, caller, key, body)


@router.delete("/tagassociation/tagassociation/{key}", status_code=204)
def delete_association(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete an association (Steward of the tag's domain; Analysts their own suggestions)."""
    associations.delete(store, caller, key)
    return Response(status_code=204)
