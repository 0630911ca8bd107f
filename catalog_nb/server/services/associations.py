"""Tag association use cases: the state a new association starts in (from the caller's level in
the tag's domain), lists applied item by item, changes and deletions checked against the
caller's roles in the tag's domain. Every write is audited; the rules are in docs/tags-api.md.

A body may be a TagAssociationView as read (``services.read_back``). On update its read-only
properties are compared with the association's own (``changedBy``, which moves with every
write as ``timeOfLastChange`` does, is always ignored). On create the key, people and times
are the service's to assign and ignored, but the names the view carries of its tag, domain and
resource must be those of ``tagKey`` and ``resourceKey`` (a view copied with its
``resourcePath`` or ``tagName`` changed asks for another resource or tag, and silently tagging
the one the keys name would be wrong), and its ``weight`` and ``rules`` those the association
has (discovery's) or will have (a person's: 1.0, none).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

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
from catalog_nb.server.errors import BadRequest, ServiceError
from catalog_nb.server.schemas.associations import (
    PERSON_WEIGHT,
    UNSET_SEMANTIC,
    AssociationIn,
    AssociationUpdate,
    view_out,
)
from catalog_nb.server.security import Caller, domain_level, require_domain, require_level
from catalog_nb.server.services.read_back import refuse_changed, refuse_on_create
from catalog_nb.server.store import Store
from catalog_nb.server.store import associations as association_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store import tags as tag_store
from catalog_nb.server.store.visible import visibility
from catalog_nb.server.visibility import Visibility

#: The log of ``routes.associations``, where these lines were written before this module was
#: split off.
log = logging.getLogger("catalog_nb.server.routes.associations")

_STEWARD_RANK = (AccessLevel.ADMINISTRATOR, AccessLevel.STEWARD)
#: What an association's read form carries that moves with every write to it.
_VOLATILE = ("changedBy",)


def _label(view: dict[str, Any]) -> str:
    """How the audit trail names an association."""
    where = f"{view['dataSourceName']}:{view['resourcePath']}"
    field = f" field {view['field']}" if view["field"] else ""
    return f"{view['tagFullName']} on {where}{field}"


def starting_state(caller: Caller, domain_key: str, sent: TagAssociationState | None) -> str:
    """The state a new association starts in: the one sent, else ACCEPTED when the caller is a
    Steward (or Administrator) in the tag's domain, else SUGGESTED."""
    if sent is not None:
        return sent.value
    if domain_level(caller, domain_key) in _STEWARD_RANK:
        return TagAssociationState.ACCEPTED.value
    return TagAssociationState.SUGGESTED.value


def _determined(conn: Connection, body: AssociationIn, resource: dict[str, Any],
                tag: dict[str, Any]) -> dict[str, Any]:
    """The read-only properties of the association a create names that its keys determine: its
    tag's and resource's names, and the weight and rules (discovery's, when it suggested this
    association already; a person's full weight and none for a new one)."""
    existing = association_store.find(conn, resource["key"], body.field, tag["key"])
    weight = existing["weight"] if existing is not None else None
    return {
        "tagName": tag["name"], "tagFullName": tag["full_name"],
        "domainKey": tag["domain_key"], "domainName": tag["domain_name"],
        "sensitivity": tag["sensitivity"], "resourcePath": resource["path"],
        "dataSourceName": resource["source_name"],
        "weight": PERSON_WEIGHT if weight is None else weight,
        "rules": list(existing["rules"] or []) if existing is not None else [],
    }


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
    state = starting_state(caller, tag["domain_key"], body.state)
    needed = (AccessLevel.ANALYST if state == TagAssociationState.SUGGESTED.value
              else AccessLevel.STEWARD)
    require_domain(caller, tag["domain_key"], tag["domain_name"], needed,
                   f"Tagging with state {state}")
    if body.read_back:
        refuse_on_create(body, _determined(conn, body, resource, tag))
    values = {"state": state, **body.model_dump(include={"semantic", "description"},
                                                exclude_unset=True)}
    key, outcome = association_store.create(conn, resource, tag, body.field, values, caller.name)
    return view_out(association_store.get_visible(conn, vis, key)), outcome


def create(store: Store, caller: Caller, body: AssociationIn) -> tuple[dict[str, Any], str]:
    """Tag a resource or one of its fields in one audited transaction; an existing suggestion
    or rejection is promoted. The association's view and what happened."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.TAG_ASSOCIATION,
                 name=f"{body.tag_key} on {body.resource_key}") as w:
        view, outcome = _create(w.conn, caller, visibility(w.conn, caller.roles), body)
        w.target(view["key"], _label(view))
        w.message = outcome
    return view, outcome


def _invalid(exc: ValidationError) -> BadRequest:
    """The 400 of a list item that is not an association (its first five faults)."""
    parts = [f"{'.'.join(str(p) for p in e['loc']) or 'item'}: "
             f"{str(e['msg']).removeprefix('Value error, ')}" for e in exc.errors()[:5]]
    return BadRequest(f"Invalid item: {'; '.join(parts)}.", ErrorCode.INVALID_PAYLOAD)


def create_many(store: Store, caller: Caller, items: Sequence[Any]) -> list[dict[str, Any]]:
    """Apply many associations (as sent: each is validated here), each in its own audited
    transaction; a failing one never stops the rest. One ``{index, ok, outcome?, association?,
    error?}`` per item, in order."""
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
    results: list[dict[str, Any]] = []
    for index, raw in enumerate(items):
        try:
            with audited(store, caller, AuditAction.CREATE, AuditObjectType.TAG_ASSOCIATION,
                         name=f"item {index} of a list of {len(items)}") as w:
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


def update(store: Store, caller: Caller, key: str, body: AssociationUpdate) -> dict[str, Any]:
    """Change an association's state, semantic or description (Steward of the tag's domain);
    its view after the change."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.TAG_ASSOCIATION,
                 key=key) as w:
        require_level(caller, AccessLevel.STEWARD, "Changing tag associations")
        vis = visibility(w.conn, caller.roles)
        current = association_store.get_visible(w.conn, vis, key)
        w.target(key, _label(view_out(current)))
        require_domain(caller, current["domain_key"], current["domain_name"],
                       AccessLevel.STEWARD, "Changing tag associations")
        if body.read_back:
            refuse_changed(body, view_out(current), _VOLATILE)
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
        if current["semantic"] is None and values.get("semantic") == UNSET_SEMANTIC:
            # The view answers an unset semantic as OTHER; sent back, it is still unset.
            del values["semantic"]
        changed = association_store.change(w.conn, current, values, caller.name)
        w.message = f"changed {', '.join(sorted(values))}" if changed else "unchanged"
        view = view_out(association_store.get_visible(w.conn, vis, key))
    return view


def delete(store: Store, caller: Caller, key: str) -> None:
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
