"""The audit trail (Administrator only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from catalog_nb.contract import AUDIT_PAGE_MAX, AuditAction, AuditObjectType
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.schemas.audit import (
    INT64_MAX,
    AuditEventOut,
    AuditPage,
    AuditSearch,
    event_out,
)
from catalog_nb.server.security import require_admin
from catalog_nb.server.store import audit as audit_store

router = APIRouter(tags=["audit"])

_READ = "Reading the audit trail"


def _page(store: StoreDep, criteria: audit_store.AuditFilter, start: int, size: int) -> AuditPage:
    with store.read() as conn:
        rows, total = audit_store.page(conn, criteria, start, size)
    return AuditPage(items=[event_out(r) for r in rows], total_count=total, from_=start, size=size)


@router.get("/auditevent/list", response_model=AuditPage, response_model_by_alias=True)
def list_events(
    caller: CallerDep,
    store: StoreDep,
    start: Annotated[int, Query(alias="from", ge=0, le=INT64_MAX)] = 0,
    size: Annotated[int, Query(ge=1, le=AUDIT_PAGE_MAX)] = 100,
) -> AuditPage:
    """A page of audit events, newest first."""
    require_admin(caller, _READ)
    return _page(store, audit_store.AuditFilter(), start, size)


@router.post("/auditevent/search", response_model=AuditPage, response_model_by_alias=True)
def search_events(body: AuditSearch, caller: CallerDep, store: StoreDep) -> AuditPage:
    """Audit events by user, action, object, outcome and time range, newest first."""
    require_admin(caller, _READ)
    criteria = audit_store.AuditFilter(
        user_name=body.user_name,
        action=body.action.value if body.action else None,
        object_type=body.object_type.value if body.object_type else None,
        object_key=body.object_key,
        outcome=body.outcome.value if body.outcome else None,
        from_ms=body.from_time,
        to_ms=body.to_time,
    )
    return _page(store, criteria, body.from_, body.size)


@router.get("/auditevent/{key}", response_model=AuditEventOut, response_model_by_alias=True)
def get_event(key: str, caller: CallerDep, store: StoreDep) -> AuditEventOut:
    """One audit event."""
    require_admin(caller, _READ)
    with store.read() as conn:
        return event_out(audit_store.get(conn, key))


@router.delete("/auditevent/{key}", status_code=204)
def delete_event(key: str, caller: CallerDep, store: StoreDep) -> Response:
    """Delete one audit event; the deletion is itself recorded."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.AUDIT_EVENT, key=key) as w:
        require_admin(caller, "Deleting audit events")
        event = audit_store.remove(w.conn, key)
        w.message = (
            f"deleted {event['action']} {event['object_type']} event of {event['user_name']}"
        )
    return Response(status_code=204)
