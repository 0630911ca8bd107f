"""Errors raised by the catalog client.

Every failure the client reports is a :class:`CatalogError`, so one ``except CatalogError``
catches them all; the subclasses say what went wrong::

    CatalogError                     status, error_code, message, response, details
    ├── ConfigurationError           (also a ValueError) no URL / no credentials / bad URL
    ├── CatalogConnectionError       no response at all: refused, DNS, reset, TLS
    │   └── CatalogTimeoutError      connect or read timeout
    ├── BadRequestError              400  parameters or payload wrong (``details`` lists them)
    ├── AuthenticationError          401  not logged in, session expired, wrong credentials
    ├── PermissionDeniedError        403  logged in but not allowed
    ├── NotFoundError                404  unknown key or name (or not visible to you)
    ├── ConflictError                409  a catalog rule refuses the change (duplicate name, ...)
    ├── PayloadTooLargeError         413  request body too large
    ├── RateLimitedError             429  too many requests (``retry_after`` in seconds)
    ├── ServerError                  5xx  the service failed
    │   └── ServiceBusyError         503  busy (e.g. its store locked); nothing was changed, send
    │                                     the request again after ``retry_after`` seconds
    ├── JobFailedError               a browse/profile job ended FAILED (``job`` holds it)
    └── JobTimeoutError              a job did not end in the time given: the service answered,
                                     and the job keeps running there (``job`` holds it)

Other unexpected statuses (405, 415, ...) raise the base :class:`CatalogError`.

The service answers every error with a JSON body ``{"message", "errorCode", "status", ...}``;
:func:`error_from_response` turns such a response (or any other, falling back to its text) into
the right exception. Compare ``error_code`` with :class:`catalog_nb.contract.ErrorCode`::

    try:
        cat.create_user("ada")
    except ConflictError as exc:
        assert exc.error_code == ErrorCode.DUPLICATE_NAME
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import requests

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CatalogConnectionError",
    "CatalogError",
    "CatalogTimeoutError",
    "ConfigurationError",
    "ConflictError",
    "JobFailedError",
    "JobTimeoutError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "RateLimitedError",
    "ServerError",
    "ServiceBusyError",
    "TruncatedResultWarning",
    "error_from_response",
]

#: Longest piece of a non-JSON error body quoted in a message.
_TEXT_SNIPPET = 300


class CatalogError(Exception):
    """Base of every error the client raises.

    Attributes:
        status: HTTP status of the answer, or ``None`` when there was no answer.
        error_code: the service's stable ``errorCode`` (see ``contract.ErrorCode``), if any.
        message: a sentence describing the failure (the service's ``message`` when it sent one).
        response: the :class:`requests.Response`, or ``None``.
        details: validation details of a 400 answer (a list), else an empty list.
    """

    #: Status this class stands for; used when an instance is built without a response.
    default_status: int | None = None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        error_code: str | None = None,
        response: requests.Response | None = None,
        details: list[Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status if status is not None else self.default_status
        self.error_code = error_code
        self.response = response
        self.details: list[Any] = list(details or [])

    def __str__(self) -> str:
        tags = [str(part) for part in (self.status, self.error_code) if part is not None]
        where = ""
        request = getattr(self.response, "request", None)
        if request is not None and getattr(request, "method", None):
            where = f" on {request.method} {getattr(request, 'path_url', '') or request.url}"
        if not tags and not where:
            return self.message
        return f"{self.message} ({' '.join(tags)}{where})"


class ConfigurationError(CatalogError, ValueError):
    """The client cannot start: no URL, no credentials, or an unusable URL."""


class CatalogConnectionError(CatalogError):
    """No answer from the service: connection refused, DNS failure, reset, TLS error."""


class CatalogTimeoutError(CatalogConnectionError):
    """The service did not accept the connection or answer in time."""


class BadRequestError(CatalogError):
    """400: the parameters or the payload are wrong; ``details`` names the fields."""

    default_status = 400


class AuthenticationError(CatalogError):
    """401: wrong credentials, no session, or an expired session that re-login could not fix."""

    default_status = 401


class PermissionDeniedError(CatalogError):
    """403: authenticated, but your roles do not allow this."""

    default_status = 403


class NotFoundError(CatalogError):
    """404: no such key or name, or it is not visible to you."""

    default_status = 404


class ConflictError(CatalogError):
    """409: a catalog rule refuses the change (duplicate name, last role, role in use...)."""

    default_status = 409


class PayloadTooLargeError(CatalogError):
    """413: the request body exceeds the service's limit."""

    default_status = 413


class RateLimitedError(CatalogError):
    """429: too many requests; ``retry_after`` says how many seconds to wait (or ``None``)."""

    default_status = 429

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(CatalogError):
    """5xx: the service failed to produce an answer."""

    default_status = 500


class ServiceBusyError(ServerError):
    """503: the service was too busy to take the request (its store was locked, say) and changed
    nothing; send it again after ``retry_after`` seconds. Reads are retried for you; writes are
    not, since the client cannot know a write is safe to repeat."""

    default_status = 503

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class JobFailedError(CatalogError):
    """A browse or profile job ended ``FAILED``; ``job`` is the job's JSON, ``message`` its reason.

    Example::

        try:
            cat.profile("warehouse")
        except JobFailedError as exc:
            print(exc.job["key"], exc.message)
    """

    def __init__(self, message: str, *, job: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.job: dict[str, Any] = dict(job or {})


class JobTimeoutError(CatalogError):
    """Waiting for a job took longer than the ``timeout`` given; the job goes on on the service.

    Not a :class:`CatalogConnectionError`: the service was reachable all along, so handlers of
    "the service is unreachable" do not catch it.

    ``job`` is the job's JSON as last seen; follow it with ``cat.job(exc.job["key"])``.
    """

    def __init__(self, message: str, *, job: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.job: dict[str, Any] = dict(job or {})


class TruncatedResultWarning(UserWarning):
    """A result was cut short by ``limit=``; the warning says how much is missing."""


_BY_STATUS: dict[int, type[CatalogError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitedError,
    503: ServiceBusyError,
}


def error_class_for_status(status: int) -> type[CatalogError]:
    """The :class:`CatalogError` subclass that stands for an HTTP ``status``.

    >>> error_class_for_status(404).__name__
    'NotFoundError'
    """
    if status >= 500:
        return _BY_STATUS.get(status, ServerError)
    return _BY_STATUS.get(status, CatalogError)


def _parse_retry_after(value: str | None) -> float | None:
    if not value:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(value.strip()))
    return None


def error_from_response(response: requests.Response) -> CatalogError:
    """Build the right :class:`CatalogError` for a non-2xx ``response``.

    The service's JSON body ``{message, errorCode, details}`` fills the error; a body that is not
    JSON (a proxy's HTML page, plain text) becomes the message, shortened.

    Example::

        if not response.ok:
            raise error_from_response(response)
    """
    status = response.status_code
    body: Any = None
    with contextlib.suppress(ValueError):
        body = response.json()
    message: str | None = None
    error_code: str | None = None
    details: list[Any] = []
    if isinstance(body, dict):
        raw_message = body.get("message") or body.get("detail")
        message = raw_message if isinstance(raw_message, str) else None
        if message is None and raw_message is not None:
            message = json.dumps(raw_message)
        code = body.get("errorCode")
        error_code = str(code) if code is not None else None
        raw_details = body.get("details")
        if isinstance(raw_details, list):
            details = raw_details
    if not message:
        text = (response.text or "").strip()
        if len(text) > _TEXT_SNIPPET:
            text = text[:_TEXT_SNIPPET] + "..."
        message = text or f"HTTP {status} {response.reason or ''}".strip()
    cls = error_class_for_status(status)
    kwargs: dict[str, Any] = {
        "status": status,
        "error_code": error_code,
        "response": response,
        "details": details,
    }
    if cls is RateLimitedError or cls is ServiceBusyError:
        return cls(
            message, retry_after=_parse_retry_after(response.headers.get("Retry-After")), **kwargs
        )
    return cls(message, **kwargs)
