"""The one place every request of the client goes through.

:class:`HttpSession` owns the base URL, the cookie session, the default timeout, the retry policy,
login with one transparent re-login on 401, and the mapping of failures to
:mod:`catalog_nb.client.errors`. Nothing else in the client talks to :mod:`requests` directly.

Retry policy (urllib3 ``Retry`` mounted on the session's adapters):

* failures to connect (refused, DNS, connect timeout) are retried for every verb, since the
  service never saw the request;
* 429, 502, 503 and 504 answers, read timeouts and dropped connections are retried only for
  idempotent verbs (GET, HEAD, PUT, DELETE, OPTIONS), never for POST;
* waits back off exponentially and honour ``Retry-After`` (capped at
  :data:`MAX_RETRY_AFTER` seconds); when the retries are used up the last answer is reported
  as the matching :class:`~catalog_nb.client.errors.CatalogError`.

Answers are decoded by orjson when it is installed (``pip install catalog-nb[fast]``; several
times faster on the 2 MB pages of a metadata read), else by the standard library; a text orjson
refuses (``NaN`` from another server of this API) is decoded by the standard library too. Answers
are requested gzip-compressed (requests' default): a metadata page shrinks about 20-fold.

A session is not meant to be shared between threads.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from catalog_nb import contract

try:  # optional: a faster decoder for large answers (see the module docstring)
    import orjson as _orjson
except ImportError:  # pragma: no cover - depends on the environment
    _orjson = None  # type: ignore[assignment]

from catalog_nb.client.errors import (
    AuthenticationError,
    CatalogConnectionError,
    CatalogError,
    CatalogTimeoutError,
    ConfigurationError,
    error_from_response,
)

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "IDEMPOTENT_METHODS",
    "MAX_RETRY_AFTER",
    "RETRY_STATUSES",
    "HttpSession",
    "Timeout",
    "normalize_url",
]

log = logging.getLogger(__name__)

#: A timeout in seconds: one number for both phases, or ``(connect, read)``.
Timeout = float | tuple[float, float]

#: Default ``(connect, read)`` timeout in seconds. A request never waits forever.
DEFAULT_TIMEOUT: tuple[float, float] = (5.0, 60.0)
#: Default number of retries per request.
DEFAULT_RETRIES = 3
#: Default backoff factor: waits of 0, 2*f, 4*f ... seconds between retries.
DEFAULT_BACKOFF = 0.5
#: Verbs safe to repeat after the service may have seen them.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
#: Statuses worth retrying (for idempotent verbs).
RETRY_STATUSES = frozenset({429, 502, 503, 504})
#: Longest ``Retry-After`` wait honoured, in seconds.
MAX_RETRY_AFTER = 120.0

_LOGIN_PATH = "/login"


class _CatalogRetry(Retry):
    """``Retry`` whose ``Retry-After`` waits are capped at :data:`MAX_RETRY_AFTER`."""

    def parse_retry_after(self, retry_after: str) -> float:
        return min(super().parse_retry_after(retry_after), MAX_RETRY_AFTER)


def make_retry(retries: int, backoff_factor: float = DEFAULT_BACKOFF) -> Retry:
    """The client's retry policy with ``retries`` attempts (see the module docstring)."""
    return _CatalogRetry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        other=0,
        allowed_methods=IDEMPOTENT_METHODS,
        status_forcelist=RETRY_STATUSES,
        backoff_factor=backoff_factor,
        respect_retry_after_header=True,
        raise_on_status=False,
        raise_on_redirect=False,
    )


def normalize_url(url: str) -> str:
    """The service root of ``url``: scheme and host (and any mount path), without ``/api/v2``.

    >>> normalize_url("http://127.0.0.1:8765/api/v2/")
    'http://127.0.0.1:8765'
    """
    text = (url or "").strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigurationError(
            f"Catalog URL {url!r} is not an http(s) URL; expected e.g. http://127.0.0.1:8765"
        )
    path = parts.path.rstrip("/")
    if path.endswith(contract.API_PREFIX):
        path = path[: -len(contract.API_PREFIX)]
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _json_default(value: Any) -> Any:
    """Encode what analysts commonly pass in from DataFrames (numpy scalars, timestamps, sets)."""
    if isinstance(value, _dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=_dt.UTC)
        return int(moment.timestamp() * 1000)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    item = getattr(value, "item", None)
    if callable(item):  # numpy / pandas scalars
        return item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _is_timeout(exc: BaseException) -> bool:
    """Whether a requests failure is a timeout (requests reports a read timeout whose retries
    ran out as a ``ConnectionError`` wrapping ``MaxRetryError``)."""
    if isinstance(exc, requests.exceptions.Timeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, urllib3.exceptions.TimeoutError) and not isinstance(
        reason, urllib3.exceptions.NewConnectionError
    )


def _transport_error(
    exc: requests.exceptions.RequestException, url: str, method: str, path: str, timeout: Timeout
) -> CatalogConnectionError:
    """The client error for a request that got no answer."""
    if _is_timeout(exc):
        return CatalogTimeoutError(
            f"The catalog at {url} did not answer {method} {path} in time (timeout {timeout}s): "
            f"{exc}"
        )
    if isinstance(exc, requests.exceptions.ConnectionError):
        return CatalogConnectionError(f"Cannot reach the catalog at {url} ({method} {path}): {exc}")
    return CatalogConnectionError(f"Request {method} {path} to {url} failed: {exc}")


def _clean_params(params: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if not params:
        return None
    cleaned: dict[str, Any] = {}
    for name, value in params.items():
        if value is None:
            continue
        cleaned[name] = ("true" if value else "false") if isinstance(value, bool) else value
    return cleaned


class HttpSession:
    """Cookie session against one catalog service, with timeouts, retries and re-login.

    Args:
        url: the service root, e.g. ``http://127.0.0.1:8765`` (``/api/v2`` is appended).
        username, password: credentials; kept in memory for the transparent re-login.
        timeout: default timeout in seconds, one number or ``(connect, read)``; never ``None``.
        retries: retries per request (an ``int``) or a ready ``urllib3`` ``Retry``.
        backoff_factor: exponential backoff factor between retries.
        verify: TLS verification: ``True``, ``False`` or a CA bundle path.

    Example::

        http = HttpSession("http://127.0.0.1:8765", username="admin", password="...")
        http.login()
        users = http.request("GET", "/user")
        http.close()
    """

    def __init__(
        self,
        url: str,
        *,
        username: str | None = None,
        password: str | None = None,
        timeout: Timeout = DEFAULT_TIMEOUT,
        retries: int | Retry = DEFAULT_RETRIES,
        backoff_factor: float = DEFAULT_BACKOFF,
        verify: bool | str = True,
    ) -> None:
        if timeout is None:
            raise ConfigurationError("timeout must not be None: a request must never hang")
        self.url = normalize_url(url)
        self.api_url = self.url + contract.API_PREFIX
        self.username = username
        self._password = password
        self.timeout: Timeout = timeout
        #: How many successful logins this session performed (initial + re-logins).
        self.logins = 0
        self.closed = False
        self.session = requests.Session()
        self.session.verify = verify
        self.session.headers.update(
            {
                "Accept": "application/json",
                "Content-Type": "application/json",
                "User-Agent": f"{contract.DISTRIBUTION}/{contract.distribution_version()} "
                f"python-requests/{requests.__version__}",
            }
        )
        retry = retries if isinstance(retries, Retry) else make_retry(retries, backoff_factor)
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def __repr__(self) -> str:
        who = f" as {self.username}" if self.username else ""
        return f"<HttpSession {self.url}{who}>"

    @property
    def has_credentials(self) -> bool:
        """Whether a username and password are known (so a re-login is possible)."""
        return bool(self.username) and self._password is not None

    def login(self, username: str | None = None, password: str | None = None) -> Any:
        """``POST /login``; remembers the credentials for re-login and returns the answer.

        Raises :class:`AuthenticationError` (``error_code`` ``LOGIN_FAILED``) on wrong
        credentials and :class:`RateLimitedError` when the service throttles logins.
        """
        if username is not None:
            self.username = username
        if password is not None:
            self._password = password
        if not self.has_credentials:
            raise ConfigurationError("Cannot log in: no username and password are known")
        answer = self.request(
            "POST",
            _LOGIN_PATH,
            json={"username": self.username, "password": self._password},
            relogin=False,
        )
        self.logins += 1
        log.debug("logged in to %s as %s", self.url, self.username)
        return answer

    def logout(self) -> None:
        """``GET /logout``: end the session on the service (credentials stay for re-login).

        A session that has already ended (401) counts as logged out.
        """
        try:
            self.request("GET", "/logout", relogin=False)
        except AuthenticationError:
            log.debug("logout: the session on %s had already ended", self.url)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
        timeout: Timeout | None = None,
        relogin: bool = True,
        decode: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Send ``method`` to ``/api/v2`` + ``path`` and return the decoded answer.

        ``decode=False`` returns the successful :class:`requests.Response` itself (its body read,
        not decoded; :meth:`decode` decodes it later), for a reader that decodes one page while
        the next is on its way.

        ``headers`` are sent with this request only (an ``Accept``). ``files`` sends a
        multipart form instead of a JSON body (``{part: (file name, content,
        content type)}``), for the one upload of the API (``POST /overlap/table/csv``).

        Returns the parsed JSON, ``None`` for an empty answer (204), or the text of a
        ``text/*`` answer (CSV). ``None`` query parameters are dropped, booleans are sent as
        ``true``/``false``. On a 401 (other than from login) with known credentials the session
        logs in once and repeats the call once; a second 401 raises :class:`AuthenticationError`.

        Example::

            http.request("GET", "/user", params={"name": "ada"})
        """
        if self.closed:
            raise CatalogError("This catalog session is closed; call connect() again")
        method = method.upper()
        response = self._send(method, path, params=params, body=json, files=files,
                              timeout=timeout, headers=headers)
        if response.status_code == 401 and relogin and path != _LOGIN_PATH and self.has_credentials:
            log.info("session rejected (401) on %s %s; logging in again", method, path)
            self.login()
            response = self._send(method, path, params=params, body=json, files=files,
                                  timeout=timeout, headers=headers)
        if not response.ok:
            raise error_from_response(response)
        if not decode:
            response.content  # noqa: B018 - read the body in the caller's thread
            return response
        return self._decode(response)

    def decode(self, response: requests.Response) -> Any:
        """The decoded answer of a response returned by ``request(..., decode=False)``."""
        return self._decode(response)

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None,
        body: Any,
        timeout: Timeout | None,
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> requests.Response:
        url = self.api_url + (path if path.startswith("/") else "/" + path)
        data = None
        sent: dict[str, str | None] = dict(headers or {})
        if body is not None:
            data = json.dumps(body, default=_json_default).encode("utf-8")
        if files is not None:
            # The session's JSON Content-Type would hide the multipart boundary requests writes.
            sent["Content-Type"] = None
        try:
            response = self.session.request(
                method,
                url,
                params=_clean_params(params),
                data=data,
                files=files,
                headers=sent or None,
                timeout=timeout if timeout is not None else self.timeout,
            )
        except requests.exceptions.RequestException as exc:
            raise _transport_error(exc, self.url, method, path, timeout or self.timeout) from exc

        log.debug(
            "%s %s -> %s in %.3fs",
            method,
            response.request.path_url if response.request else path,
            response.status_code,
            response.elapsed.total_seconds(),
        )
        return response

    @staticmethod
    def _decode(response: requests.Response) -> Any:
        if response.status_code == 204 or not response.content:
            return None
        content_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if content_type.startswith("text/"):
            return response.text
        if _orjson is not None:
            try:
                return _orjson.loads(response.content)
            except _orjson.JSONDecodeError:
                pass  # NaN, or not JSON at all: the standard library decides below
        try:
            return response.json()
        except ValueError as exc:
            if content_type == "application/json" or content_type.endswith("+json"):
                raise CatalogError(
                    f"The catalog answered {response.status_code} with invalid JSON",
                    status=response.status_code,
                    response=response,
                ) from exc
            return response.text

    def close(self) -> None:
        """Close the connection pool. Later requests raise :class:`CatalogError`."""
        if not self.closed:
            self.session.close()
            self.closed = True

    def __enter__(self) -> HttpSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
