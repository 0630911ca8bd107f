"""Tag domains (``/tagdomain``) and tags (``/tag``); the rules are in docs/tags-api.md.

Reading needs only a session. Domains are written by Administrators; tags by Stewards of the
domains in their roles' ``domainKeys`` (and Administrators). Every write is audited; the
``/list`` forms are all or nothing, one transaction with one audit event per item.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Response
from sqlalchemy import Connection

from catalog_nb.contract import AccessLevel, AuditAction, AuditObjectType, AuditOutcome, ErrorCode
from catalog_nb.server.auditing import audited, record_event
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import BadRequest, ServiceError
from catalog_nb.server.schemas.tags import (
    MAX_LIST,
    DomainIn,
    DomainOut,
    DomainUpdate,
    TagCreate,
    TagOut,
    TagUpdate,
    domain_out,
    tag_out,
)
from catalog_nb.server.security import Caller, require_admin, require_domain, require_level
from catalog_nb.server.store import Store
from catalog_nb.server.store import tag_domains as domain_store
from catalog_nb.server.store import tags as tag_store
from catalog_nb.server.store.visible import visibility

router = APIRouter(tags=["tags"])

_DOMAINS = "Changing tag domains"
_TAGS = "Changing tags"


# ------------------------------------------------------------------------ helpers


@dataclass
class Batch:
    """The open transaction of an all-or-nothing list write, and the items written so far."""

    conn: Connection
    done: list[tuple[str, str]] = field(default_factory=list)
    index: int | None = None
    name: str | None = None


@contextmanager
def audited_all(
    store: Store, caller: Caller, action: AuditAction, object_type: AuditObjectType, size: int
) -> Iterator[Batch]:
    """A list write in one transaction: one SUCCESS event per item committed with it, or one
    FAILURE event naming the item that was refused (and nothing written)."""
    batch: Batch | None = None
    try:
        with store.write() as conn:
            batch = Batch(conn)
            yield batch
            for key, name in batch.done:
                record_event(
                    store, actor=caller, actor_name=None, action=action,
                    object_type=object_type, object_key=key, object_name=name,
                    outcome=AuditOutcome.SUCCESS, message=f"one of a list of {size}",
                    client=caller.client, conn=conn,
                )
    except ServiceError as exc:
        index = batch.index if batch else None
        record_event(
            store, actor=caller, actor_name=None, action=action, object_type=object_type,
            object_key=None, object_name=batch.name if batch else None,
            outcome=AuditOutcome.FAILURE,
            message=f"{exc.code}: item {index} of a list of {size}: {exc.message}",
            client=caller.client,
        )
        if index is None:
            raise
        raise type(exc)(f"Item {index}: {exc.message}", exc.code, headers=exc.headers,
                        **{**exc.extra, "index": index}) from exc


def _refuse_nulls(names: Sequence[str]) -> None:
    if names:
        raise BadRequest(f"These properties cannot be null: {', '.join(names)}.",
                         ErrorCode.INVALID_PAYLOAD, fields=list(names))


def _allow(caller: Caller) -> Callable[[Mapping[str, Any]], None]:
    def check(domain: Mapping[str, Any]) -> None:
        require_domain(caller, domain["key"], domain["name"], AccessLevel.STEWARD, _TAGS)
    return check


def _shape(conn: Connection, caller: Caller, rows: Sequence[Mapping[str, Any]],
           children: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> list[TagOut]:
    """Tags with their direct children and counts, in a fixed number of queries."""
    if children is None:
        children = tag_store.children_of(conn, [r["key"] for r in rows])
    keys = [r["key"] for r in rows] + [c["key"] for kids in children.values() for c in kids]
    # Many tags: count them all at once rather than naming thousands of keys in the query.
    counts = tag_store.association_counts(conn, visibility(conn, caller.roles),
                                          keys if len(keys) <= 500 else None)
    return [tag_out(r, counts, children) for r in rows]


# -------------------------------------------------------------------------------- domains


@router.get("/tagdomain", response_model=list[DomainOut], response_model_by_alias=True)
def list_domains(caller: CallerDep, store: StoreDep) -> list[DomainOut]:
    """Every tag domain, by name."""
    with store.read() as conn:
        return [domain_out(d) for d in domain_store.list_domains(conn)]


@router.post("/tagdomain/list", status_code=201, response_model=list[DomainOut],
             response_model_by_alias=True)
def create_domains(
    body: Annotated[list[DomainIn], Body(max_length=MAX_LIST)], caller: CallerDep,
    store: StoreDep,
) -> list[DomainOut]:
    """Create several domains (Administrator), all or nothing."""
    with audited_all(store, caller, AuditAction.CREATE, AuditObjectType.TAG_DOMAIN,
                     len(body)) as batch:
        require_admin(caller, _DOMAINS)
        made = []
        for batch.index, item in enumerate(body):
            batch.name = item.name
            row = domain_store.create_domain(batch.conn, item.model_dump())
            batch.done.append((row["key"], row["name"]))
            made.append(domain_out(row))
    return made


@router.get("/tagdomain/{key}", response_model=DomainOut, response_model_by_alias=True)
def get_domain(key: str, caller: CallerDep, store: StoreDep) -> DomainOut:
    """The tag domain with this key."""
    with store.read() as conn:
        return domain_out(domain_store.get_domain(conn, key))


@router.post("/tagdomain", status_code=201, response_model=DomainOut,
             response_model_by_alias=True)
def create_domain(body: DomainIn, caller: CallerDep, store: StoreDep) -> DomainOut:
    """Create a tag domain (Administrator)."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.TAG_DOMAIN,
                 name=body.name) as w:
        require_admin(caller, _DOMAINS)
        row = domain_store.create_domain(w.conn, body.model_dump())
        w.target(row["key"], row["name"])
    return domain_out(row)


@router.put("/tagdomain/{key}", response_model=DomainOut, response_model_by_alias=True)
def update_domain(key: str, body: DomainUpdate, caller: CallerDep, store: StoreDep) -> DomainOut:
    """Rename or describe a tag domain (Administrator); its tags' full names follow."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.TAG_DOMAIN, key=key) as w:
        require_admin(caller, _DOMAINS)
        if "name" in body.changes() and body.name is None:
            _refuse_nulls(["name"])
        row = domain_store.update_domain(w.conn, key, body.values())
        w.target(row["key"], row["name"])
    return domain_out(row)


@router.delete("/tagdomain/{key}", status_code=204)
def delete_domain(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete an empty tag domain (Administrator)."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.TAG_DOMAIN, key=key) as w:
        require_admin(caller, _DOMAINS)
        row = domain_store.delete_domain(w.conn, key)
        w.target(row["key"], row["name"])
    return Response(status_code=204)


# ----------------------------------------------------------------------------------- tags


@router.get("/tag", response_model=list[TagOut], response_model_by_alias=True)
def list_tags(
    caller: CallerDep, store: StoreDep,
    domain_key: Annotated[str | None, Query(alias="domainKey")] = None,
) -> list[TagOut]:
    """Every tag (of one domain), by full name, each with its direct children."""
    with store.read() as conn:
        rows = tag_store.list_tags(conn, domain_key)
        children: dict[str, list[Mapping[str, Any]]] = {}
        for row in rows:  # a whole domain (or all of them) holds every child of its tags
            if row["parent_key"] is not None:
                children.setdefault(row["parent_key"], []).append(row)
        return _shape(conn, caller, rows, children)


@router.get("/tag/byname", response_model=TagOut, response_model_by_alias=True)
def tag_by_name(
    caller: CallerDep, store: StoreDep,
    tag_name: Annotated[str, Query(alias="tagName", min_length=1, max_length=10_000)],
    domain_name: Annotated[str | None, Query(alias="domainName", max_length=1000)] = None,
) -> TagOut:
    """The tag of this name or full name (within ``domainName`` when given)."""
    with store.read() as conn:
        return _shape(conn, caller, [tag_store.by_name(conn, tag_name, domain_name or None)])[0]


@router.get("/tag/children/{tag_key}", response_model=list[TagOut],
            response_model_by_alias=True)
def tag_children(tag_key: str, caller: CallerDep, store: StoreDep) -> list[TagOut]:
    """The direct children of a tag (a body sent with this GET is ignored)."""
    with store.read() as conn:
        tag_store.get_tag(conn, tag_key)
        return _shape(conn, caller, tag_store.children_of(conn, [tag_key]).get(tag_key, []))


@router.post("/tag/list", status_code=201, response_model=list[TagOut],
             response_model_by_alias=True)
def create_tags(
    body: Annotated[list[TagCreate], Body(max_length=MAX_LIST)], caller: CallerDep,
    store: StoreDep,
) -> list[TagOut]:
    """Create several tags (Steward of their domains), all or nothing, in order (a parent
    created earlier in the list can be named by a later item's ``parentKey``)."""
    with audited_all(store, caller, AuditAction.CREATE, AuditObjectType.TAG, len(body)) as batch:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        rows = []
        for batch.index, item in enumerate(body):
            batch.name = item.name
            _refuse_nulls(item.nulls())
            row = tag_store.create_tag(batch.conn, item.values(), _allow(caller))
            batch.done.append((row["key"], row["full_name"]))
            rows.append(row)
        return _shape(batch.conn, caller, rows)


@router.put("/tag/list", response_model=list[TagOut], response_model_by_alias=True)
def update_tags(
    body: Annotated[list[TagUpdate], Body(max_length=MAX_LIST)], caller: CallerDep,
    store: StoreDep,
) -> list[TagOut]:
    """Update several tags, each naming its ``key`` (Steward of their domains), all or nothing."""
    with audited_all(store, caller, AuditAction.UPDATE, AuditObjectType.TAG, len(body)) as batch:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        rows = []
        for batch.index, item in enumerate(body):
            if not item.key:
                raise BadRequest("Every tag of the list needs its key.", ErrorCode.INVALID_PAYLOAD,
                                 field="key")
            batch.name = item.key
            _refuse_nulls(item.nulls())
            row = tag_store.update_tag(batch.conn, item.key, item.values(), _allow(caller))
            batch.done.append((row["key"], row["full_name"]))
            rows.append(row)
        return _shape(batch.conn, caller, rows)


@router.get("/tag/{key}", response_model=TagOut, response_model_by_alias=True)
def get_tag(key: str, caller: CallerDep, store: StoreDep) -> TagOut:
    """The tag with this key, with its direct children."""
    with store.read() as conn:
        return _shape(conn, caller, [tag_store.get_tag(conn, key)])[0]


@router.post("/tag", status_code=201, response_model=TagOut, response_model_by_alias=True)
def create_tag(body: TagCreate, caller: CallerDep, store: StoreDep) -> TagOut:
    """Create a tag (Steward of its domain, or Administrator)."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.TAG, name=body.name) as w:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        _refuse_nulls(body.nulls())
        row = tag_store.create_tag(w.conn, body.values(), _allow(caller))
        w.target(row["key"], row["full_name"])
        return _shape(w.conn, caller, [row])[0]


@router.put("/tag/{key}", response_model=TagOut, response_model_by_alias=True)
def update_tag(key: str, body: TagUpdate, caller: CallerDep, store: StoreDep) -> TagOut:
    """Change a tag (absent properties unchanged); ``parentKey``/``domainKey`` move it."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.TAG, key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        if body.key is not None and body.key != key:
            raise BadRequest(f"The body's key '{body.key}' is not the key of the path.",
                             ErrorCode.INVALID_PAYLOAD, field="key")
        _refuse_nulls(body.nulls())
        row = tag_store.update_tag(w.conn, key, body.values(), _allow(caller))
        w.target(row["key"], row["full_name"])
        w.message = f"sent {', '.join(sorted(body.values())) or 'nothing'}"
        return _shape(w.conn, caller, [row])[0]


@router.delete("/tag/{key}", status_code=204)
def delete_tag(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a tag without children, with its associations."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.TAG, key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        row, removed = tag_store.delete_tag(w.conn, key, _allow(caller))
        w.target(row["key"], row["full_name"])
        w.message = f"deleted with {removed} association(s)"
    return Response(status_code=204)
