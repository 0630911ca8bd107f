"""Favorites, reviews and the service configuration, as DataFrames and one-line calls.

A resource is named as everywhere in the client: its key, a ``(source, path)`` tuple (source
name or key), or a record with ``key`` (JSON dict, frame row, ``cat.resource(...)``).

Example::

    cat.add_favorite(("demo_files", "crm/customers.csv"))
    cat.favorites()[["source", "path", "favorite_time", "average_rating"]]
    cat.review(("demo_files", "crm/customers.csv"), 4, title="Clean", text="Emails checked.")
    cat.reviews(("demo_files", "crm/customers.csv"))     # everyone's reviews of it
    cat.config()[["name", "value", "type", "read_only"]]
    cat.set_config("search.pageMax", 500)                 # Administrator
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api import CatalogApi
from catalog_nb.client.associations import ResourceRef, resource_key_of
from catalog_nb.client.errors import ConflictError, NotFoundError
from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.resource_frames import short_type

__all__ = ["CONFIG_COLUMNS", "FAVORITE_COLUMNS", "REVIEW_COLUMNS", "ObjectsMixin", "ReviewRef"]

#: A review: its key or a record with ``key``.
ReviewRef = str | Mapping[str, Any] | pd.Series

#: Columns of :meth:`ObjectsMixin.favorites`.
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

#: Columns of :meth:`ObjectsMixin.reviews`.
REVIEW_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("resource_key", "string", "entityKey"),
    Column("source", "string", "dataSourceName"),
    Column("path", "string", "resourcePath"),
    Column("user", "string", "userName"),
    Column("rating", "int"),
    Column("title", "string"),
    Column("text", "string"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)

#: Columns of :meth:`ObjectsMixin.config`; ``value`` and ``default`` keep each property's type.
CONFIG_COLUMNS: tuple[Column, ...] = (
    Column("name", "string"),
    Column("value", "object"),
    Column("type", "string"),
    Column("read_only", "bool", "readOnly"),
    Column("default", "object", "defaultValue"),
    Column("minimum", "float"),
    Column("maximum", "float"),
    Column("changed_by", "string", "changedBy"),
    Column("changed", "time", "timeOfLastChange"),
    Column("description", "string"),
)


def _plain(value: Any) -> Any:
    """A numpy or pandas scalar as the Python value JSON can carry (``np.int64(5)`` -> 5)."""
    item = getattr(value, "item", None)
    return item() if callable(item) and not isinstance(value, list | dict | str) else value


def _review_key(ref: ReviewRef) -> str:
    if isinstance(ref, str):
        return ref
    key = ref.get("key")
    if key is None or (not isinstance(key, str) and pd.isna(key)):
        raise ValueError(f"cannot tell which review {ref!r} is: it has no 'key'")
    return str(key)


class ObjectsMixin:
    """Favorites, reviews and configuration; mixed into
    :class:`~catalog_nb.client.catalog.Catalog`."""

    api: CatalogApi

    # -- favorites -----------------------------------------------------------------------------

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

    # -- reviews -------------------------------------------------------------------------------

    @overload
    def reviews(self, resource: ResourceRef | None = ..., *,
                as_frame: Literal[True] = ...) -> pd.DataFrame: ...
    @overload
    def reviews(self, resource: ResourceRef | None = ..., *,
                as_frame: Literal[False]) -> dict[str, Any]: ...
    def reviews(self, resource: ResourceRef | None = None, *,
                as_frame: bool = True) -> pd.DataFrame | dict[str, Any]:
        """Everyone's reviews of ``resource``, or your own reviews without one; newest first.

        Columns: key, resource_key, source, path, user, rating, title, text, created, changed.
        The frame's ``attrs`` hold ``average_rating`` and ``rating_count``; ``as_frame=False``
        returns the JSON ``{list, totalCount, averageRating, ratingCount}``.
        """
        key = None if resource is None else resource_key_of(self.api, resource)
        answer: dict[str, Any] = self.api.list_reviews(key)
        if not as_frame:
            return answer
        frame = to_frame(answer.get("list") or [], REVIEW_COLUMNS)
        frame.attrs["average_rating"] = answer.get("averageRating", 0.0)
        frame.attrs["rating_count"] = answer.get("ratingCount", 0)
        return frame

    def review(self, resource: ResourceRef, rating: int, title: str | None = None,
               text: str | None = None) -> dict[str, Any]:
        """Rate a resource from 1 to 5: creates your review, or updates it if you wrote one.

        On an update, a ``title`` or ``text`` left as None keeps the one stored. Returns the
        Review. A rating outside 1-5 is a :class:`BadRequestError` (``INVALID_RATING``).
        """
        key = resource_key_of(self.api, resource)
        body: dict[str, Any] = {"rating": _plain(rating)}
        if title is not None:
            body["title"] = title
        if text is not None:
            body["text"] = text
        try:
            created: dict[str, Any] = self.api.create_review({"entityKey": key, **body})
            return created
        except ConflictError as exc:
            if exc.error_code != contract.ErrorCode.DUPLICATE_REVIEW.value:
                raise
            existing = self._own_review_key(exc, key)
        updated: dict[str, Any] = self.api.update_review(existing, body)
        return updated

    def _own_review_key(self, exc: ConflictError, resource_key: str) -> str:
        """The key of the review the 409 names (or, failing that, found among yours)."""
        try:
            named = exc.response.json().get("reviewKey") if exc.response is not None else None
        except ValueError:
            named = None
        if named:
            return str(named)
        for record in self.api.list_reviews().get("list") or []:
            if record.get("entityKey") == resource_key:
                return str(record["key"])
        raise exc

    def delete_review(self, review: ReviewRef | None = None, *,
                      resource: ResourceRef | None = None) -> None:
        """Delete a review by key or record, or (``resource=``) your review of a resource.

        Yours, or anyone's as an Administrator. :class:`NotFoundError` when there is none.
        """
        if (review is None) == (resource is None):
            raise ValueError("name either the review or the resource= whose review you delete")
        if review is not None:
            self.api.delete_review(_review_key(review))
            return
        assert resource is not None
        key = resource_key_of(self.api, resource)
        mine = [r for r in self.api.list_reviews().get("list") or [] if r.get("entityKey") == key]
        if not mine:
            raise NotFoundError(f"You have no review of the data resource '{key}'.",
                                error_code=contract.ErrorCode.REVIEW_NOT_FOUND.value)
        self.api.delete_review(str(mine[0]["key"]))

    # -- configuration -------------------------------------------------------------------------

    @overload
    def config(self, *, as_frame: Literal[True] = ...) -> pd.DataFrame: ...
    @overload
    def config(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def config(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """The service's configuration properties: one row each, with the value in force.

        Columns: name, value, type (STRING, INTEGER, DOUBLE, BOOLEAN), read_only, default (the
        value the service started with), minimum, maximum, changed_by, changed, description.
        """
        records = self.api.list_config()
        return to_frame(records, CONFIG_COLUMNS) if as_frame else records

    def config_value(self, name: str) -> Any:
        """The value in force of one property (:class:`NotFoundError` for an unknown name).

        >>> cat.config_value("search.pageMax")  # doctest: +SKIP
        100
        """
        return self.api.get_config(name)["value"]

    def set_config(self, name: str, value: Any) -> dict[str, Any]:
        """Change a property (Administrator); it takes effect at once and survives restarts.

        ``None`` returns it to the value the service started with. A value of the wrong type or
        out of bounds is a :class:`BadRequestError` (``INVALID_CONFIG_VALUE``), a read-only
        property one with ``READ_ONLY_CONFIG``. Returns the updated property.
        """
        answer: dict[str, Any] = self.api.set_config(name, _plain(value))
        return answer
