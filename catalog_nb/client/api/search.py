"""Raw endpoints of search (``docs/search-api.md``).

Mixed into :class:`~catalog_nb.client.api.core.CatalogApi` (reach them as ``cat.api``); each method
is one endpoint and returns the service's JSON as is (a SearchResult with camelCase names).

Example::

    cat.api.search_facets()["DATA_RESOURCE"][0]["facetName"]
    result = cat.api.search_new({"searchType": "BASIC", "searchPhrase": "customers",
                                 "pagingCriteria": {"start": 0, "size": 50}})
    cat.api.search_page(result["key"], start=50, size=50)["entities"]
    cat.api.search_run_facet({"facetSelections": [{"facetName": "fileFormat",
                                                   "facetCategories": ["csv"]}]})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog_nb.client.api.base import JSON, RawCalls

__all__ = ["DEFAULT_ENTITY_SCOPE", "SEARCH_PAGE_MAX", "SearchApi"]


#: The entity scope of every search (the only one the service knows for now).
DEFAULT_ENTITY_SCOPE = "DATA_RESOURCE"
#: Largest ``pagingCriteria.size`` the service accepts by default (``CATALOG_SEARCH_PAGE_MAX``).
SEARCH_PAGE_MAX = 100


class SearchApi(RawCalls):
    """The raw calls of search; needs ``self.http``."""

    def search_facets(self, entity_scope: str | None = None) -> JSON:
        """``GET /search/facets[?entityScope=]``: ``{"DATA_RESOURCE": [{facetName, displayName,
        facetCategories}]}``."""
        return self.http.request("GET", "/search/facets", params={"entityScope": entity_scope})

    def search_new(self, criteria: Mapping[str, Any]) -> JSON:
        """``POST /search/new`` with SearchCriteria ``{searchType, searchPhrase, partialSearch,
        facetSelections, entityScope, sortBySpecs, pagingCriteria}`` -> SearchResult (stored
        under its ``key`` for the session)."""
        return self.http.request("POST", "/search/new", json=dict(criteria))

    def search_page(self, key: str | None = None, *, start: int = 0, size: int = 100) -> JSON:
        """``POST /search/page {key?, pagingCriteria: {start, size}}``: one page of a stored
        result (the session's last one when ``key`` is ``None``)."""
        body: dict[str, Any] = {"pagingCriteria": {"start": start, "size": size}}
        if key is not None:
            body = {"key": key, **body}
        return self.http.request("POST", "/search/page", json=body)

    def search_run_facet(self, criteria: Mapping[str, Any]) -> JSON:
        """``POST /search/runFacet``: a search by facets only (SearchCriteria without a
        ``searchPhrase``) -> SearchResult."""
        return self.http.request("POST", "/search/runFacet", json=dict(criteria))
