"""The catalog client: HTTP only, typed DataFrames, one facade (:class:`Catalog`).

Depends on requests, urllib3, pandas, tqdm and :mod:`catalog_nb.contract`; never on the server.

Example::

    from catalog_nb.client import connect

    cat = connect("http://127.0.0.1:8765", "admin", password)
"""

from __future__ import annotations

from catalog_nb.client.catalog import Catalog, connect
from catalog_nb.client.errors import (
    AuthenticationError,
    BadRequestError,
    CatalogConnectionError,
    CatalogError,
    CatalogTimeoutError,
    ConfigurationError,
    ConflictError,
    JobFailedError,
    JobTimeoutError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitedError,
    ServerError,
    ServiceBusyError,
    TruncatedResultWarning,
)
from catalog_nb.client.resources.view import Resource
from catalog_nb.client.search import SearchResult

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "Catalog",
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
    "Resource",
    "SearchResult",
    "ServerError",
    "ServiceBusyError",
    "TruncatedResultWarning",
    "connect",
]
