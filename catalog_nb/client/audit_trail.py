"""The audit trail: every write and login the service recorded, as a typed frame.

Reading it needs the Administrator access level. Paging is automatic (pages of up to
``contract.AUDIT_PAGE_MAX`` events), long reads show a progress bar, ``limit=`` caps the result
and a :class:`~catalog_nb.client.errors.TruncatedResultWarning` says when it did.
"""

from __future__ import annotations

from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.frames import Column, to_epoch_ms, to_frame
from catalog_nb.client.paging import check_limit, read_pages, warn_truncated
from catalog_nb.client.part import CatalogPart

__all__ = ["AUDIT_COLUMNS", "AuditMixin"]

#: Columns of :meth:`AuditMixin.audit_events`.
AUDIT_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("time", "time"),
    Column("user_name", "string", "userName"),
    Column("user_key", "string", "userKey"),
    Column("action", "string"),
    Column("object_type", "string", "objectType"),
    Column("object_key", "string", "objectKey"),
    Column("object_name", "string", "objectName"),
    Column("outcome", "string"),
    Column("message", "string"),
    Column("client_address", "string", "clientAddress"),
)

#: A point in time: datetime, date, ISO string, ``pd.Timestamp`` or epoch milliseconds.
TimeLike = Any


def _upper(value: Any) -> str | None:
    return None if value is None else str(value).upper()


class AuditMixin(CatalogPart):
    """Audit-trail frames; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    @overload
    def audit_events(
        self,
        user: str | None = None,
        action: str | contract.AuditAction | None = None,
        object_type: str | contract.AuditObjectType | None = None,
        outcome: str | contract.AuditOutcome | None = None,
        since: TimeLike = None,
        until: TimeLike = None,
        limit: int | None = None,
        *,
        object_key: str | None = None,
        page_size: int = contract.AUDIT_PAGE_MAX,
        progress: bool | None = None,
        as_frame: Literal[True] = True,
    ) -> pd.DataFrame: ...
    @overload
    def audit_events(
        self,
        user: str | None = None,
        action: str | contract.AuditAction | None = None,
        object_type: str | contract.AuditObjectType | None = None,
        outcome: str | contract.AuditOutcome | None = None,
        since: TimeLike = None,
        until: TimeLike = None,
        limit: int | None = None,
        *,
        object_key: str | None = None,
        page_size: int = contract.AUDIT_PAGE_MAX,
        progress: bool | None = None,
        as_frame: Literal[False],
    ) -> list[dict[str, Any]]: ...
    def audit_events(
        self,
        user: str | None = None,
        action: str | contract.AuditAction | None = None,
        object_type: str | contract.AuditObjectType | None = None,
        outcome: str | contract.AuditOutcome | None = None,
        since: TimeLike = None,
        until: TimeLike = None,
        limit: int | None = None,
        *,
        object_key: str | None = None,
        page_size: int = contract.AUDIT_PAGE_MAX,
        progress: bool | None = None,
        as_frame: bool = True,
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Audit events, newest first, read page by page.

        Filters: ``user`` (user name), ``action`` (LOGIN, CREATE, ASSIGN_ROLE, ...),
        ``object_type`` (USER, ROLE, SESSION, ...), ``object_key`` (the key of the user, role...
        the event is about), ``outcome`` (SUCCESS or FAILURE),
        ``since``/``until`` (datetime, date, ISO string, Timestamp or epoch ms; naive means UTC).
        ``limit`` caps the rows (a :class:`TruncatedResultWarning` says when more matched);
        ``progress`` overrides the catalog's progress-bar setting.

        Columns: key, time (UTC datetime), user_name, user_key, action, object_type,
        object_key, object_name, outcome, message, client_address.

        Example::

            cat.audit_events(action="LOGIN", outcome="FAILURE", since="2024-01-01")
        """
        check_limit(limit, "every event")
        criteria: dict[str, Any] = {
            "userName": user,
            "action": _upper(action),
            "objectType": _upper(object_type),
            "objectKey": object_key,
            "outcome": _upper(outcome),
            "fromTime": None if since is None else to_epoch_ms(since),
            "toTime": None if until is None else to_epoch_ms(until),
        }
        criteria = {name: value for name, value in criteria.items() if value is not None}

        def fetch(start: int, size: int, _cursor: str | None) -> Any:
            if criteria:
                return self.api.search_audit_events({**criteria, "from": start, "size": size})
            return self.api.list_audit_events(start, size)

        records, total = read_pages(
            fetch,
            page_size=min(page_size, contract.AUDIT_PAGE_MAX),
            limit=limit,
            progress=self.progress if progress is None else progress,
            description="audit events",
        )
        if limit is not None and total > limit:
            warn_truncated("audit_events", shown=len(records), total=total, noun="events",
                           because=f"limit={limit}", order="newest")
        return to_frame(records, AUDIT_COLUMNS) if as_frame else records

    def delete_audit_event(self, key: str) -> None:
        """Delete one audit event by key (Administrator only)."""
        self.api.delete_audit_event(key)
