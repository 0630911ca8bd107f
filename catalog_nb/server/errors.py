"""Domain errors of the catalog service.

The store and the security layer raise these; they never raise HTTP exceptions. One handler in
``app.py`` turns each into its status and the JSON error body ``{message, errorCode, status}``::

    ServiceError
     +-- BadRequest         400
     +-- Unauthorized       401
     +-- Forbidden          403
     +-- NotFound           404
     +-- Conflict           409
     +-- PayloadTooLarge    413
     +-- Throttled          429
     +-- StoreBusy          503 (with Retry-After)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from catalog_nb.contract import ErrorCode


class ServiceError(Exception):
    """Base of every error the service answers on purpose."""

    status: ClassVar[int] = 500
    default_code: ClassVar[ErrorCode] = ErrorCode.INTERNAL_ERROR

    def __init__(
        self,
        message: str,
        code: ErrorCode | None = None,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.headers = headers or {}
        self.extra = extra

    def body(self) -> dict[str, Any]:
        """The JSON error body of this error."""
        return {"message": self.message, "errorCode": str(self.code), "status": self.status,
                **self.extra}


class BadRequest(ServiceError):
    status = 400
    default_code = ErrorCode.INVALID_PAYLOAD


def refuse_nulls(names: Sequence[str]) -> None:
    """Refuse a body that sets these required properties to null (a BadRequest naming them).

    The request schemas let null through, since an absent property means "unchanged" and a
    null one must be refused by name::

        refuse_nulls(body.nulls())
    """
    if names:
        raise BadRequest(f"These properties cannot be null: {', '.join(names)}.",
                         ErrorCode.INVALID_PAYLOAD, fields=list(names))


class Unauthorized(ServiceError):
    status = 401
    default_code = ErrorCode.AUTHENTICATION_REQUIRED


class Forbidden(ServiceError):
    status = 403
    default_code = ErrorCode.PERMISSION_DENIED


class NotFound(ServiceError):
    status = 404
    default_code = ErrorCode.ROUTE_NOT_FOUND


class NotAcceptable(ServiceError):
    """None of the media types the request's ``Accept`` names can carry this answer."""

    status = 406
    default_code = ErrorCode.NOT_ACCEPTABLE


class Conflict(ServiceError):
    status = 409
    default_code = ErrorCode.DUPLICATE_NAME


class PayloadTooLarge(ServiceError):
    status = 413
    default_code = ErrorCode.PAYLOAD_TOO_LARGE


class Throttled(ServiceError):
    status = 429
    default_code = ErrorCode.LOGIN_THROTTLED


class StoreBusy(ServiceError):
    """The store could not take this request's work in time (a lock held too long, no free
    connection); the request changed nothing and may be sent again after ``Retry-After``."""

    status = 503
    default_code = ErrorCode.STORE_BUSY
