"""What every family of raw calls shares: the HTTP session they go through, the ``JSON`` they
return as is, and how a key or a name goes into a path.

Each family (resources, tags, search, relations, annotations) is a mixin of
:class:`~catalog_nb.client.api.core.CatalogApi`, which sets :attr:`RawCalls.http`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from catalog_nb.client.http import HttpSession

#: A body of the service's answers, exactly as it came (camelCase keys, epoch milliseconds).
JSON = Any


def segment(value: str) -> str:
    """Quote one path segment (keys and names may hold ``/`` or spaces).

    >>> segment("logs/2024 q1")
    'logs%2F2024%20q1'
    """
    return quote(str(value), safe="")


class RawCalls:
    """A family of raw calls: each method is one endpoint, sent through :attr:`http`."""

    http: HttpSession
