"""Error mapping: each status becomes its class, carrying the service's code and message."""

from __future__ import annotations

import pytest
import requests
import responses

from catalog_nb.client import Catalog, errors
from catalog_nb.contract import ErrorCode
from tests.client.mocks import API, error_body


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, ErrorCode.INVALID_PAYLOAD, errors.BadRequestError),
        (401, ErrorCode.SESSION_EXPIRED, errors.AuthenticationError),
        (403, ErrorCode.PERMISSION_DENIED, errors.PermissionDeniedError),
        (404, ErrorCode.USER_NOT_FOUND, errors.NotFoundError),
        (405, ErrorCode.METHOD_NOT_ALLOWED, errors.CatalogError),
        (409, ErrorCode.DUPLICATE_NAME, errors.ConflictError),
        (413, ErrorCode.PAYLOAD_TOO_LARGE, errors.PayloadTooLargeError),
        (429, ErrorCode.LOGIN_THROTTLED, errors.RateLimitedError),
        (500, ErrorCode.INTERNAL_ERROR, errors.ServerError),
        (502, ErrorCode.INTERNAL_ERROR, errors.ServerError),
    ],
)
def test_each_status_maps_to_its_class(
    mock: responses.RequestsMock, cat: Catalog, status: int, code: str, cls: type
) -> None:
    mock.add(responses.POST, API + "/user", status=status, json=error_body(status, code, "Nope."))
    with pytest.raises(cls) as info:
        cat.api.create_user({"name": "x"})
    exc = info.value
    assert type(exc) is cls
    assert isinstance(exc, errors.CatalogError)
    assert exc.status == status
    assert exc.error_code == code
    assert exc.message == "Nope."
    assert exc.response is not None and exc.response.status_code == status
    assert f"{status} {code}" in str(exc) and "POST /api/v2/user" in str(exc)


def test_validation_details_are_kept(mock: responses.RequestsMock, cat: Catalog) -> None:
    details = [{"field": "name", "problem": "required"}]
    body = error_body(400, "INVALID_PAYLOAD", "The payload is invalid.", details=details)
    mock.add(responses.POST, API + "/user", status=400, json=body)
    with pytest.raises(errors.BadRequestError) as info:
        cat.api.create_user({})
    assert info.value.details == details


def test_non_json_error_body_becomes_the_message(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    mock.add(
        responses.GET,
        API + "/version",
        status=502,
        body="<html>Bad gateway from the proxy</html>",
        content_type="text/html",
    )
    with pytest.raises(errors.ServerError) as info:
        cat.version()
    assert info.value.status == 502
    assert info.value.error_code is None
    assert "Bad gateway from the proxy" in info.value.message


def test_empty_error_body_names_the_status(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.DELETE, API + "/auditevent/k1", status=404, body="")
    with pytest.raises(errors.NotFoundError) as info:
        cat.delete_audit_event("k1")
    assert "404" in info.value.message


def test_rate_limited_carries_retry_after(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(
        responses.POST,
        API + "/login",
        status=429,
        json=error_body(429, "LOGIN_THROTTLED", "Too many failed logins."),
        headers={"Retry-After": "30"},
    )
    with pytest.raises(errors.RateLimitedError) as info:
        cat.login()
    assert info.value.retry_after == 30.0
    assert info.value.error_code == ErrorCode.LOGIN_THROTTLED


def test_transport_errors_are_reraised_from_the_cause(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    mock.add(responses.GET, API + "/version", body=requests.exceptions.ConnectionError("refused"))
    with pytest.raises(errors.CatalogConnectionError) as info:
        cat.version()
    assert isinstance(info.value.__cause__, requests.exceptions.ConnectionError)
    assert info.value.status is None and info.value.response is None


def test_timeout_is_a_connection_error(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/version", body=requests.exceptions.ReadTimeout("slow"))
    with pytest.raises(errors.CatalogConnectionError) as info:
        cat.version()
    assert isinstance(info.value, errors.CatalogTimeoutError)
    assert isinstance(info.value.__cause__, requests.exceptions.Timeout)


def test_a_job_timeout_is_no_connection_error() -> None:
    """``except CatalogConnectionError`` means "the service is unreachable"; a job still running
    when the caller stopped waiting is another matter, caught as itself or as CatalogError."""
    timeout = errors.JobTimeoutError("Job j is still RUNNING after 1s", job={"key": "j"})
    with pytest.raises(errors.JobTimeoutError):
        try:
            raise timeout
        except errors.CatalogConnectionError:
            pytest.fail("a handler of unreachable services caught a job timeout")
    assert isinstance(timeout, errors.CatalogError) and timeout.job == {"key": "j"}


def test_error_built_by_hand_has_its_default_status() -> None:
    exc = errors.ConflictError("Taken.")
    assert exc.status == 409 and exc.error_code is None and str(exc) == "Taken. (409)"
    assert issubclass(errors.ConfigurationError, ValueError)
    assert errors.error_class_for_status(418) is errors.CatalogError
