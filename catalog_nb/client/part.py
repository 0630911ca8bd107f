"""What every family of the :class:`~catalog_nb.client.catalog.Catalog` facade relies on.

Each family (users, tags, resources, ...) is a mixin of ``Catalog`` holding that family's
analyst-facing methods. They all reach the service through the raw layer ``self.api`` and honour
the catalog's ``progress`` setting; :class:`CatalogPart` declares both once, for the type
checker, so that no mixin redeclares them.
"""

from __future__ import annotations

from catalog_nb.client.api.core import CatalogApi

__all__ = ["CatalogPart"]


class CatalogPart:
    """The base of every ``Catalog`` family mixin: the attributes ``Catalog.__init__`` sets."""

    #: The raw JSON layer, one method per endpoint.
    api: CatalogApi
    #: Whether long reads show a progress bar (a call's ``progress=`` overrides it).
    progress: bool
