"""catalog_nb: a data catalog for Jupyter.

The public face of the notebook client::

    import catalog_nb

    with catalog_nb.connect("http://127.0.0.1:8765", "admin", password) as cat:
        cat.users()

Importing ``catalog_nb`` stays light: the client (requests, pandas) is imported on first use of
one of the names below, so the service, which imports ``catalog_nb.contract``, never loads it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from catalog_nb.contract import distribution_version

if TYPE_CHECKING:
    from catalog_nb.client import (
        AuthenticationError,
        BadRequestError,
        Catalog,
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
        connect,
    )
    from catalog_nb.snapshot import diff as diff
    from catalog_nb.snapshot import open_snapshot as open_snapshot

__version__ = distribution_version()

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
    "ServerError",
    "ServiceBusyError",
    "TruncatedResultWarning",
    "__version__",
    "connect",
]

#: Offline snapshots: read back and compared without a service.
_SNAPSHOT = frozenset({"open_snapshot", "diff"})
__all__ += sorted(_SNAPSHOT)

_LAZY = frozenset(__all__) - {"__version__"} - _SNAPSHOT


def __getattr__(name: str) -> Any:
    """Import the client on first use of one of its public names (PEP 562)."""
    if name in _LAZY or name in _SNAPSHOT:
        module = "catalog_nb.snapshot" if name in _SNAPSHOT else "catalog_nb.client"
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'catalog_nb' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY | _SNAPSHOT)
