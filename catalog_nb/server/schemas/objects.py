"""Request bodies and wire forms of favorites, reviews and configuration properties.

See docs/objects-api.md. A review's ``rating`` is taken as any JSON value here and checked by
:func:`check_rating`, so that a bad rating answers its own error code (``INVALID_RATING``)
rather than the generic payload one. A Review read with ``GET`` can be sent back with
``PUT /reviews/{key}``: its derived properties are accepted there and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Payload
from catalog_nb.server.schemas.examples import examples

#: Longest review title and text.
MAX_TITLE = 200
MAX_TEXT = 10_000
#: Lowest and highest rating.
RATINGS = (1, 5)


def check_rating(value: Any) -> int:
    """A rating: a whole number from 1 to 5 (never a boolean, a fraction or a string).

    >>> check_rating(4)
    4
    """
    low, high = RATINGS
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadRequest(
            f"A rating is a whole number from {low} to {high}; got {value!r}.",
            ErrorCode.INVALID_RATING, field="rating",
        )
    return value


#: The schema of a rating, as :func:`check_rating` checks it (there, so that a bad rating keeps
#: its own error code).
_RATING: dict[str, Any] = {"type": "integer", "minimum": RATINGS[0], "maximum": RATINGS[1],
                           "examples": [4]}


class ReviewIn(Payload):
    """Body of ``POST /reviews``."""

    model_config = examples(ex.REVIEW)

    entity_key: str = Field(min_length=1, max_length=64)
    rating: Any = Field(default=None, json_schema_extra=_RATING)
    title: str | None = Field(default=None, max_length=MAX_TITLE)
    text: str | None = Field(default=None, max_length=MAX_TEXT)


class ReviewUpdate(Payload):
    """Body of ``PUT /reviews/{key}``: absent properties stay unchanged, a null title or text
    clears it. The read form's derived properties are accepted and ignored; ``key`` and
    ``entityKey``, when sent, must name this review and its resource."""

    model_config = examples(ex.REVIEW_UPDATE)

    key: str | None = None
    entity_key: str | None = None
    rating: Any = Field(default=None, json_schema_extra=_RATING)
    title: str | None = Field(default=None, max_length=MAX_TITLE)
    text: str | None = Field(default=None, max_length=MAX_TEXT)
    user_name: Any = None
    time_of_creation: Any = None
    time_of_last_change: Any = None
    resource_path: Any = None
    data_source_name: Any = None

    def values(self) -> dict[str, Any]:
        """The columns to change, checked."""
        sent = self.model_fields_set
        out: dict[str, Any] = {k: getattr(self, k) for k in ("title", "text") if k in sent}
        if "rating" in sent:
            out["rating"] = check_rating(self.rating)
        return out


class ConfigUpdate(Payload):
    """Body of ``PUT /config/{name}``: ``{value}``; null returns to the start-up value."""

    model_config = examples(ex.CONFIG_UPDATE)

    value: Any = Field()


def review_out(row: Mapping[str, Any]) -> dict[str, Any]:
    """The wire form of a stored review (joined with its resource's path and source name)."""
    return {
        "key": row["key"],
        "entityKey": row["resource_key"],
        "userName": row["user_name"],
        "rating": row["rating"],
        "title": row["title"],
        "text": row["text"],
        "timeOfCreation": row["created_ms"],
        "timeOfLastChange": row["changed_ms"],
        "resourcePath": row.get("resource_path"),
        "dataSourceName": row.get("source_name"),
    }
