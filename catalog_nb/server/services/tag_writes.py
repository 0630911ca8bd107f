"""Writing tag domains and tags, one at a time or as all-or-nothing lists; the rules are in
docs/tags-api.md.

Domains are written by Administrators; tags by Stewards of the domains in their roles'
``domainKeys`` (and Administrators), checked against the domain the tag is in (or moves to),
which only the store knows, hence the check handed to it. A not-null property sent as null is
refused here, after the caller's level is checked and inside the audited write, rather than by
the schemas (absent and null mean different things to an update).
Every write is audited; a list's events are those of ``auditing.audited_all``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection

from catalog_nb.contract import AccessLevel, AuditAction, AuditObjectType, ErrorCode
from catalog_nb.server.auditing import audited, audited_all
from catalog_nb.server.errors import BadRequest, refuse_nulls
from catalog_nb.server.schemas.tags import (
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
from catalog_nb.server.services.read_back import refuse_changed, refuse_on_create
from catalog_nb.server.services.tag_views import shape
from catalog_nb.server.store import Store
from catalog_nb.server.store import tag_domains as domain_store
from catalog_nb.server.store import tags as tag_store

_DOMAINS = "Changing tag domains"
_TAGS = "Changing tags"
#: Read-only properties that move with other objects' writes: a stale one is not a change.
_TAG_VOLATILE = ("children", "associationCount")
_DOMAIN_VOLATILE = ("tagCount",)
#: What every created tag / domain is (``services.read_back.refuse_on_create``).
_NEW_TAG = {"type": "tag", "immutable": False}
_NEW_DOMAIN = {"immutable": False, "semantic": "USER_CREATED"}


def _unchanged_tag(conn: Connection, key: str, body: TagUpdate) -> None:
    """Refuse the read-only properties of a tag sent back changed (``services.read_back``)."""
    if body.read_back:
        refuse_changed(body, tag_out(tag_store.get_tag(conn, key), {}), _TAG_VOLATILE)


def _allow(caller: Caller) -> Callable[[Mapping[str, Any]], None]:
    """The check the store runs on each domain a tag is written in: Steward of it."""
    def check(domain: Mapping[str, Any]) -> None:
        require_domain(caller, domain["key"], domain["name"], AccessLevel.STEWARD, _TAGS)
    return check


# -------------------------------------------------------------------------------- domains


def create_domain(store: Store, caller: Caller, body: DomainIn) -> DomainOut:
    """Create a tag domain (Administrator), audited."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.TAG_DOMAIN,
                 name=body.name) as w:
        require_admin(caller, _DOMAINS)
        refuse_on_create(body, _NEW_DOMAIN)
        row = domain_store.create_domain(w.conn, body.model_dump())
        w.target(row["key"], row["name"])
    return domain_out(row, caller)


def create_domains(store: Store, caller: Caller, body: Sequence[DomainIn]) -> list[DomainOut]:
    """Create several domains (Administrator), all or nothing."""
    with audited_all(store, caller, AuditAction.CREATE, AuditObjectType.TAG_DOMAIN,
                     len(body)) as batch:
        require_admin(caller, _DOMAINS)
        made = []
        for batch.index, item in enumerate(body):
            batch.name = item.name
            refuse_on_create(item, _NEW_DOMAIN)
            row = domain_store.create_domain(batch.conn, item.model_dump())
            batch.done.append((row["key"], row["name"]))
            made.append(domain_out(row, caller))
    return made


def update_domain(store: Store, caller: Caller, key: str, body: DomainUpdate) -> DomainOut:
    """Rename or describe a tag domain (Administrator), audited; its tags' full names follow."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.TAG_DOMAIN, key=key) as w:
        require_admin(caller, _DOMAINS)
        if "name" in body.changes() and body.name is None:
            refuse_nulls(["name"])
        refuse_changed(body, domain_out(domain_store.get_domain(w.conn, key), caller),
                       _DOMAIN_VOLATILE)
        row = domain_store.update_domain(w.conn, key, body.values())
        w.target(row["key"], row["name"])
    return domain_out(row, caller)


def delete_domain(store: Store, caller: Caller, key: str) -> None:
    """Delete an empty tag domain (Administrator), audited."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.TAG_DOMAIN, key=key) as w:
        require_admin(caller, _DOMAINS)
        row = domain_store.delete_domain(w.conn, key)
        w.target(row["key"], row["name"])


# ----------------------------------------------------------------------------------- tags


def create_tag(store: Store, caller: Caller, body: TagCreate) -> TagOut:
    """Create a tag (Steward of its domain, or Administrator), audited."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.TAG, name=body.name) as w:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        refuse_on_create(body, _NEW_TAG)
        refuse_nulls(body.nulls())
        row = tag_store.create_tag(w.conn, body.values(), _allow(caller))
        w.target(row["key"], row["full_name"])
        return shape(w.conn, caller, [row])[0]


def create_tags(store: Store, caller: Caller, body: Sequence[TagCreate]) -> list[TagOut]:
    """Create several tags (Steward of their domains), all or nothing, in order (a parent
    created earlier in the list can be named by a later item's ``parentKey``)."""
    with audited_all(store, caller, AuditAction.CREATE, AuditObjectType.TAG, len(body)) as batch:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        rows = []
        for batch.index, item in enumerate(body):
            batch.name = item.name
            refuse_on_create(item, _NEW_TAG)
            refuse_nulls(item.nulls())
            row = tag_store.create_tag(batch.conn, item.values(), _allow(caller))
            batch.done.append((row["key"], row["full_name"]))
            rows.append(row)
        return shape(batch.conn, caller, rows)


def update_tag(store: Store, caller: Caller, key: str, body: TagUpdate) -> TagOut:
    """Change a tag (absent properties unchanged), audited; ``parentKey``/``domainKey`` move it.
    A ``key`` in the body must be the one of the path."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.TAG, key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        if body.key is not None and body.key != key:
            raise BadRequest(f"The body's key '{body.key}' is not the key of the path.",
                             ErrorCode.INVALID_PAYLOAD, field="key")
        refuse_nulls(body.nulls())
        _unchanged_tag(w.conn, key, body)
        row = tag_store.update_tag(w.conn, key, body.values(), _allow(caller))
        w.target(row["key"], row["full_name"])
        w.message = f"sent {', '.join(sorted(body.values())) or 'nothing'}"
        return shape(w.conn, caller, [row])[0]


def update_tags(store: Store, caller: Caller, body: Sequence[TagUpdate]) -> list[TagOut]:
    """Update several tags, each naming its ``key`` (Steward of their domains), all or nothing."""
    with audited_all(store, caller, AuditAction.UPDATE, AuditObjectType.TAG, len(body)) as batch:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        rows = []
        for batch.index, item in enumerate(body):
            if not item.key:
                raise BadRequest("Every tag of the list needs its key.", ErrorCode.INVALID_PAYLOAD,
                                 field="key")
            batch.name = item.key
            refuse_nulls(item.nulls())
            _unchanged_tag(batch.conn, item.key, item)
            row = tag_store.update_tag(batch.conn, item.key, item.values(), _allow(caller))
            batch.done.append((row["key"], row["full_name"]))
            rows.append(row)
        return shape(batch.conn, caller, rows)


def delete_tag(store: Store, caller: Caller, key: str) -> None:
    """Delete a tag without children, with its associations, audited."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.TAG, key=key) as w:
        require_level(caller, AccessLevel.STEWARD, _TAGS)
        row, removed = tag_store.delete_tag(w.conn, key, _allow(caller))
        w.target(row["key"], row["full_name"])
        w.message = f"deleted with {removed} association(s)"
