"""Favorites: the resources you keep an eye on, as a DataFrame and one-line calls.

A resource is named as everywhere in the client: its key, a ``(source, path)`` tuple (source
name or key), or a record with ``key`` (JSON dict, frame row, ``cat.resource(...)``).

Example::

    cat.add_favorite(("demo_files", "crm/customers.csv"))
    cat.favorites()[["source", "path", "favorite_time", "average_rating"]]
    cat.remove_favorite(("demo_files", "crm/customers.csv"))
"""

from __future__ import annotations

from typing import Any, Literal, overload

import pandas as pd

from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.resources.frames import short_type
from catalog_nb.client.tags.associations import ResourceRef, resource_key_of

__all__ = ["FAVORITE_COLUMNS", "FavoritesMixin"]

#: Columns of :meth:`FavoritesMixin.favorites`.
FAVORITE_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("source", "string", "dataSourceName"),
    Column("path", "string", "resourcePath"),
    Column("name", "string"),
    Column("type", "string", lambda r: short_type(r.get("resourceType"))),
    Column("favorite_time", "time", "favoriteTime"),
    Column("average_rating", "float", "averageRating"),
    Column("rating_count", "int", "ratingCount"),
    Column("owner", "string"),
    Column("description", "string"),
    Column("modified", "time", "timeOfResourceChange"),
)


class FavoritesMixin(CatalogPart):
    """Favorites; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    @overload
    def favorites(self, *, as_frame: Literal[True] = ...) -> pd.DataFrame: ...
    @overload
    def favorites(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def favorites(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """Your favorite resources that you still see, newest first.

        Columns: key, source, path, name, type, favorite_time, average_rating, rating_count,
        owner, description, modified. ``as_frame=False`` returns the resource records.
        """
        records: list[dict[str, Any]] = list(self.api.list_favorites().get("list") or [])
        return to_frame(records, FAVORITE_COLUMNS) if as_frame else records

    def add_favorite(self, resource: ResourceRef) -> dict[str, Any]:
        """Keep a resource as a favorite (again is fine): ``{entityKey, favoriteTime}``.

        Only Analysts and above keep favorites (:class:`PermissionDeniedError` for Guests); a
        resource you do not see is a :class:`NotFoundError`.
        """
        answer: dict[str, Any] = self.api.add_favorite(resource_key_of(self.api, resource))
        return answer

    def remove_favorite(self, resource: ResourceRef) -> None:
        """Stop keeping a resource as a favorite (:class:`NotFoundError` if it was not one)."""
        self.api.remove_favorite(resource_key_of(self.api, resource))
