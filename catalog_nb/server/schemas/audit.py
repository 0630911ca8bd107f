"""Request and response models of the audit trail."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictInt

from catalog_nb.contract import AUDIT_PAGE_MAX, AuditAction, AuditObjectType, AuditOutcome
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Payload, Wire
from catalog_nb.server.schemas.examples import examples

#: Largest integer the store's BIGINT columns (and OFFSET) take.
INT64_MAX = 2**63 - 1


class AuditSearch(Payload):
    """Body of ``POST /auditevent/search``; every criterion is optional and they are ANDed."""

    model_config = examples(ex.AUDIT_SEARCH)

    user_name: str | None = None
    action: AuditAction | None = None
    object_type: AuditObjectType | None = None
    object_key: str | None = None
    outcome: AuditOutcome | None = None
    from_time: StrictInt | None = Field(default=None, ge=0, le=INT64_MAX)
    to_time: StrictInt | None = Field(default=None, ge=0, le=INT64_MAX)
    from_: StrictInt = Field(default=0, ge=0, le=INT64_MAX, alias="from")
    size: StrictInt = Field(default=100, ge=1, le=AUDIT_PAGE_MAX)


class AuditEventOut(Wire):
    model_config = examples(ex.AUDIT_EVENT)

    key: str
    time: int
    user_name: str | None
    user_key: str | None
    action: str
    object_type: str
    object_key: str | None
    object_name: str | None
    outcome: str
    message: str | None
    client_address: str | None


class AuditPage(Wire):
    model_config = examples(ex.AUDIT_PAGE)

    items: list[AuditEventOut] = Field(alias="list")
    total_count: int
    from_: int = Field(alias="from")
    size: int


def event_out(row: dict[str, Any]) -> AuditEventOut:
    """The wire form of a stored audit event."""
    return AuditEventOut(time=row["time_ms"], **{k: v for k, v in row.items() if k != "time_ms"})
