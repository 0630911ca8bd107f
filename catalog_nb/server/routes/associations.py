"""Tag associations (``/tagassociation``); the rules are in docs/tags-api.md.

Every association touches a resource, and a resource the caller cannot see answers 404 as
everywhere. Tagging needs the tag's domain in the caller's roles: Stewards (and Administrators)
write any state, Analysts suggest (SUGGESTED) and delete their own suggestions. Every write is
audited; ``POST /tagassociation/list`` applies each item in its own audited transaction.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response
from pydantic import ValidationError
from sqlalchemy import Connection

from catalog_nb.contract import (
    AccessLevel,
    AuditAction,
    AuditObjectType,
    ErrorCode,
    TagAssociationState,
)
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import BadRequest, NotFound, ServiceError
from catalog_nb.server.schemas.associations import (
    MAX_BULK,
    AssociationIn,
    AssociationPage,
    AssociationUpdate,
    AssociationView,
    BulkItem,
    view_out,
)
from catalog_nb.server.security import (
    Caller,
    Visibility,
    domain_level,
    require_domain,
    require_level,
    visibility,
)
from catalog_nb.server.store import associations as association_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store import tags as tag_store

log = logging.getLogger(__name__)

router = APIRouter(tags=["tag associations"])

_STEWARD_RANK = (AccessLevel.ADMINISTRATOR, AccessLevel.STEWARD)


def _label(view: dict[str, Any]) -> str:
    """How the audit trail names an association."""
    where = f"{view['dataSourceName']}:{view['resourcePath']}"
    field = f" field {view['field']}" if view["field"] else ""
    return f"{view['tagFullName']} on {where}{field}"


def _create(
    conn: Connection, caller: Caller, vis: Visibility, body: AssociationIn
) -> tuple[dict[str, Any], str]:
    """Check and write one association; (its view, what happened)."""
    require_level(caller, AccessLevel.ANALYST, "Tagging data resources")
    resource = resource_store.get_visible(conn, vis, body.resource_key)
    tag = tag_store.tags_by_key(conn, [body.tag_key]).get(body.tag_key)
    if tag is None:
        raise BadRequest(f"tagKey names a tag that does not exist: '{body.tag_key}'.",
                         ErrorCode.UNKNOWN_REFERENCE, field="tagKey", unknown=[body.tag_key])
    if body.state is not None:
        state = body.state.value
    elif domain_level(caller, tag["domain_key"]) in _STEWARD_RANK:
        state = TagAssociationState.ACCEPTED.value
    else:
        state = TagAssociationState.SUGGESTED.value
    needed = (AccessLevel.ANALYST if state == TagAssociationState.SUGGESTED.value
              else AccessLevel.STEWARD)
    require_domain(caller, tag["domain_key"], tag["domain_name"], needed,
                   f"Tagging with state {state}")
    values = {"state": state, **body.model_dump(include={"semantic", "description"},
                                                exclude_unset=True)}
    key, outcome = association_store.create(conn, resource, tag, body.field, values, caller.name)
    return view_out(association_store.get_visible(conn, vis, key)), outcome


@router.post("/tagassociation", status_code=201, response_model=AssociationView,
             response_model_by_alias=True)
def create_association(body: AssociationIn, caller: CallerDep, store: StoreDep) -> Any:
    """Tag a resource or one of its fields; an existing suggestion or rejection is promoted."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.TAG_ASSOCIATION,
                 name=f"{body.tag_key} on {body.resource_key}") as w:
        view, outcome = _create(w.conn, caller, visibility(w.conn, caller.roles), body)
        w.target(view["key"], _label(view))
        w.message = outcome
    return view


def _invalid(exc: ValidationError) -> BadRequest:
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'item'}: "
             f"{str(e['msg']).removeprefix('Value error, ')}" for e in exc.errors()[:5]]
    return BadRequest(f"Invalid item: {'; '.join(parts)}.", ErrorCode.INVALID_PAYLOAD)


@router.post("/tagassociation/list", status_code=201, response_model=list[BulkItem],
             response_model_by_alias=True, response_model_exclude_none=True)
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
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
    results: list[dict[str, Any]] = []
    for index, raw in enumerate(body):
        try:
            with audited(store, caller, AuditAction.CREATE, AuditObjectType.TAG_ASSOCIATION,
                         name=f"item {index} of a list of {len(body)}") as w:
                try:
                    item = AssociationIn.model_validate(raw)
                except ValidationError as exc:
                    raise _invalid(exc) from exc
                view, outcome = _create(w.conn, caller, vis, item)
                w.target(view["key"], _label(view))
                w.message = outcome
            results.append({"index": index, "ok": True, "outcome": outcome,
                            "association": view})
        except ServiceError as exc:
            error = {"status": exc.status, "errorCode": str(exc.code), "message": exc.message}
            results.append({"index": index, "ok": False, "error": error})
        except Exception:  # one item's fault must not stop the others
            log.exception("Tag association item %d failed", index)
            error = {"status": 500, "errorCode": ErrorCode.INTERNAL_ERROR.value,
                     "message": "The service failed to apply this item; the fault is logged."}
            results.append({"index": index, "ok": False, "error": error})
    return results


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
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.TAG_ASSOCIATION,
                 key=key) as w:
        require_level(caller, AccessLevel.STEWARD, "Changing tag associations")
        vis = visibility(w.conn, caller.roles)
        current = association_store.get_visible(w.conn, vis, key)
        w.target(key, _label(view_out(current)))
        require_domain(caller, current["domain_key"], current["domain_name"],
                       AccessLevel.STEWARD, "Changing tag associations")
        sent = body.changes()
        for name, column, wire in (("resource_key", "resource_key", "resourceKey"),
                                   ("tag_key", "tag_key", "tagKey"),
                                   ("field", "field_scope", "field")):
            if name in sent and (sent[name] or "") != current[column]:
                raise BadRequest(f"{wire} cannot be changed; delete the association and create "
                                 "another.", ErrorCode.INVALID_PAYLOAD, field=wire)
        if "state" in sent and sent["state"] is None:
            raise BadRequest("state cannot be null.", ErrorCode.INVALID_PAYLOAD, field="state")
        values = {k: (v.value if isinstance(v, TagAssociationState) else v)
                  for k, v in sent.items() if k in ("state", "semantic", "description")}
        changed = association_store.change(w.conn, current, values, caller.name)
        w.message = f"changed {', '.join(sorted(values))}" if changed else "unchanged"
        view = view_out(association_store.get_visible(w.conn, vis, key))
    return view


@router.delete("/tagassociation/tagassociation/{key}", status_code=204)
def delete_association(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete an association (Steward of the tag's domain; Analysts their own suggestions)."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.TAG_ASSOCIATION,
                 key=key) as w:
        require_level(caller, AccessLevel.ANALYST, "Deleting tag associations")
        current = association_store.get_visible(w.conn, visibility(w.conn, caller.roles), key)
        w.target(key, _label(view_out(current)))
        own = (current["state"] == TagAssociationState.SUGGESTED.value
               and current["created_by"] == caller.name)
        require_domain(caller, current["domain_key"], current["domain_name"],
                       AccessLevel.ANALYST if own else AccessLevel.STEWARD,
                       "Deleting this tag association" if own else
                       "Deleting a tag association that is not your own suggestion")
        association_store.remove(w.conn, key)
    return Response(status_code=204)
