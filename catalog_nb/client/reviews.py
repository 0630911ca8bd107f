"""Reviews: ratings from 1 to 5 with a title and a text, one per user and resource.

A resource is named as everywhere in the client: its key, a ``(source, path)`` tuple (source
name or key), or a record with ``key`` (JSON dict, frame row, ``cat.resource(...)``).

Example::

    cat.review(("demo_files", "crm/customers.csv"), 4, title="Clean", text="Emails checked.")
    cat.reviews(("demo_files", "crm/customers.csv"))     # everyone's reviews of it
    cat.delete_review(resource=("demo_files", "crm/customers.csv"))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.errors import ConflictError, NotFoundError
from catalog_nb.client.frames import Column, json_scalar, to_frame
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.tags.associations import ResourceRef, resource_key_of

__all__ = ["REVIEW_COLUMNS", "ReviewRef", "ReviewsMixin"]

#: A review: its key or a record with ``key``.
ReviewRef = str | Mapping[str, Any] | pd.Series

#: Columns of :meth:`ReviewsMixin.reviews`.
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


def _review_key(ref: ReviewRef) -> str:
    if isinstance(ref, str):
        return ref
    key = ref.get("key")
    if key is None or (not isinstance(key, str) and pd.isna(key)):
        raise ValueError(f"cannot tell which review {ref!r} is: it has no 'key'")
    return str(key)


class ReviewsMixin(CatalogPart):
    """Reviews; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

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
        body: dict[str, Any] = {"rating": json_scalar(rating)}
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
