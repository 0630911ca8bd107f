"""Raw endpoints of favorites and reviews (``docs/objects-api.md``).

Mixed into :class:`~catalog_nb.client.api.core.CatalogApi` (reach them as ``cat.api``); each method
is one endpoint and returns the service's JSON as is (camelCase bodies, epoch milliseconds).

Example::

    cat.api.add_favorite(resource_key)                  # {entityKey, favoriteTime}
    cat.api.create_review({"entityKey": resource_key, "rating": 4, "title": "Clean"})
    cat.api.list_reviews(resource_key)["averageRating"]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog_nb.client.api.base import JSON, RawCalls, segment

__all__ = ["AnnotationsApi"]



class AnnotationsApi(RawCalls):
    """The raw calls of favorites and reviews; needs ``self.http``."""

    # -- favorites -----------------------------------------------------------------------------

    def list_favorites(self) -> JSON:
        """``GET /favorites``: ``{list, totalCount}``, the caller's favorite resources (summaries
        with ``favoriteTime``), newest first."""
        return self.http.request("GET", "/favorites")

    def add_favorite(self, resource_key: str) -> JSON:
        """``POST /favorites/{entityKey}`` -> ``{entityKey, favoriteTime}`` (idempotent; 404
        ``RESOURCE_NOT_FOUND`` for a resource the caller does not see)."""
        return self.http.request("POST", f"/favorites/{segment(resource_key)}")

    def remove_favorite(self, resource_key: str) -> None:
        """``DELETE /favorites/{entityKey}`` (404 ``FAVORITE_NOT_FOUND`` when it is not one)."""
        self.http.request("DELETE", f"/favorites/{segment(resource_key)}")

    # -- reviews -------------------------------------------------------------------------------

    def list_reviews(self, resource_key: str | None = None) -> JSON:
        """``GET /reviews[?entityKey=]``: ``{list, totalCount, averageRating, ratingCount}`` of
        one resource, or of the caller's own reviews without a key."""
        return self.http.request("GET", "/reviews", params={"entityKey": resource_key})

    def get_review(self, key: str) -> JSON:
        """``GET /reviews/{key}`` (404 ``REVIEW_NOT_FOUND``)."""
        return self.http.request("GET", f"/reviews/{segment(key)}")

    def create_review(self, body: Mapping[str, Any]) -> JSON:
        """``POST /reviews {entityKey, rating, title?, text?}`` -> the Review (409
        ``DUPLICATE_REVIEW`` for a second review of one resource; 400 ``INVALID_RATING``)."""
        return self.http.request("POST", "/reviews", json=dict(body))

    def update_review(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /reviews/{key} {rating?, title?, text?}`` -> the Review (its author only)."""
        return self.http.request("PUT", f"/reviews/{segment(key)}", json=dict(body))

    def delete_review(self, key: str) -> None:
        """``DELETE /reviews/{key}`` (its author or an Administrator)."""
        self.http.request("DELETE", f"/reviews/{segment(key)}")
