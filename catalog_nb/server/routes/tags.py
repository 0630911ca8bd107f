"""Tag domains (``/tagdomain``) and tags (``/tag``); the rules are in docs/tags-api.md.

Reading needs only a session. Domains are written by Administrators; tags by Stewards of the
domains in their roles' ``domainKeys`` (and Administrators). Every write is audited; the
``/list`` forms are all or nothing, one transaction with one audit event per item. The writes
are ``services.tag_writes`` (their list form ``auditing.audited_all``), tags with their children
and counts ``services.tag_views``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, Query, Response

from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.schemas.tags import (
    MAX_LIST,
    DomainIn,
    DomainOut,
    DomainUpdate,
    TagCreate,
    TagOut,
    TagUpdate,
    domain_out,
)
from catalog_nb.server.services import tag_views, tag_writes
from catalog_nb.server.store import tag_domains as domain_store

router = APIRouter(tags=["tags"])


# -------------------------------------------------------------------------------- domains


@router.get("/tagdomain", response_model=list[DomainOut], response_model_by_alias=True)
def list_domains(caller: CallerDep, store: StoreDep) -> list[DomainOut]:
    """Every tag domain, by name."""
    with store.read() as conn:
        return [domain_out(d, caller) for d in domain_store.list_domains(conn)]


@router.post("/tagdomain/list", status_code=201, response_model=list[DomainOut],
             response_model_by_alias=True)
def create_domains(
    body: Annotated[list[DomainIn], Body(max_length=MAX_LIST)], caller: CallerDep,
    store: StoreDep,
) -> list[DomainOut]:
    """Create several domains (Administrator), all or nothing."""
    return tag_writes.create_domains(store, caller, body)


@router.get("/tagdomain/{key}", response_model=DomainOut, response_model_by_alias=True)
def get_domain(key: str, caller: CallerDep, store: StoreDep) -> DomainOut:
    """The tag domain with this key."""
    with store.read() as conn:
        return domain_out(domain_store.get_domain(conn, key), caller)


@router.post("/tagdomain", status_code=201, response_model=DomainOut,
             response_model_by_alias=True)
def create_domain(body: DomainIn, caller: CallerDep, store: StoreDep) -> DomainOut:
    """Create a tag domain (Administrator)."""
    return tag_writes.create_domain(store, caller, body)


@router.put("/tagdomain/{key}", response_model=DomainOut, response_model_by_alias=True)
def update_domain(key: str, body: DomainUpdate, caller: CallerDep, store: StoreDep) -> DomainOut:
    """Rename or describe a tag domain (Administrator); its tags' full names follow."""
    return tag_writes.update_domain(store, caller, key, body)


@router.delete("/tagdomain/{key}", status_code=204)
def delete_domain(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete an empty tag domain (Administrator)."""
    tag_writes.delete_domain(store, caller, key)
    return Response(status_code=204)


# ----------------------------------------------------------------------------------- tags


@router.get("/tag", response_model=list[TagOut], response_model_by_alias=True)
def list_tags(
    caller: CallerDep, store: StoreDep,
    domain_key: Annotated[str | None, Query(alias="domainKey")] = None,
) -> list[TagOut]:
    """Every tag (of one domain), by full name, each with its direct children."""
    return tag_views.list_tags(store, caller, domain_key)


@router.get("/tag/byname", response_model=TagOut, response_model_by_alias=True)
def tag_by_name(
    caller: CallerDep, store: StoreDep,
    tag_name: Annotated[str, Query(alias="tagName", min_length=1, max_length=10_000)],
    domain_name: Annotated[str | None, Query(alias="domainName", max_length=1000)] = None,
) -> TagOut:
    """The tag of this name or full name (within ``domainName`` when given)."""
    return tag_views.tag_by_name(store, caller, tag_name, domain_name or None)


@router.get("/tag/children/{tag_key}", response_model=list[TagOut],
            response_model_by_alias=True)
def tag_children(tag_key: str, caller: CallerDep, store: StoreDep) -> list[TagOut]:
    """The direct children of a tag (a body sent with this GET is ignored)."""
    return tag_views.tag_children(store, caller, tag_key)


@router.post("/tag/list", status_code=201, response_model=list[TagOut],
             response_model_by_alias=True)
def create_tags(
    body: Annotated[list[TagCreate], Body(max_length=MAX_LIST)], caller: CallerDep,
    store: StoreDep,
) -> list[TagOut]:
    """Create several tags (Steward of their domains), all or nothing, in order (a parent
    created earlier in the list can be named by a later item's ``parentKey``)."""
    return tag_writes.create_tags(store, caller, body)


@router.put("/tag/list", response_model=list[TagOut], response_model_by_alias=True)
def update_tags(
    body: Annotated[list[TagUpdate], Body(max_length=MAX_LIST)], caller: CallerDep,
    store: StoreDep,
) -> list[TagOut]:
    """Update several tags, each naming its ``key`` (Steward of their domains), all or nothing."""
    return tag_writes.update_tags(store, caller, body)


@router.get("/tag/{key}", response_model=TagOut, response_model_by_alias=True)
def get_tag(key: str, caller: CallerDep, store: StoreDep) -> TagOut:
    """The tag with this key, with its direct children."""
    return tag_views.get_tag(store, caller, key)


@router.post("/tag", status_code=201, response_model=TagOut, response_model_by_alias=True)
def create_tag(body: TagCreate, caller: CallerDep, store: StoreDep) -> TagOut:
    """Create a tag (Steward of its domain, or Administrator)."""
    return tag_writes.create_tag(store, caller, body)


@router.put("/tag/{key}", response_model=TagOut, response_model_by_alias=True)
def update_tag(key: str, body: TagUpdate, caller: CallerDep, store: StoreDep) -> TagOut:
    """Change a tag (absent properties unchanged); ``parentKey``/``domainKey`` move it."""
    return tag_writes.update_tag(store, caller, key, body)


@router.delete("/tag/{key}", status_code=204)
def delete_tag(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete a tag without children, with its associations."""
    tag_writes.delete_tag(store, caller, key)
    return Response(status_code=204)
