"""Request bodies of the search endpoints (the spec's SearchCriteria) and the SearchResult form.

See docs/search-api.md. The criteria are checked here for shape only; the phrase, the facet
names and categories and the sort properties are checked by the routes against the catalog.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictBool, StrictInt, field_validator

from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Payload
from catalog_nb.server.schemas.examples import examples
from catalog_nb.server.schemas.paging import MAX_CURSOR_LENGTH

#: Page size when ``pagingCriteria.size`` is not given.
DEFAULT_PAGE_SIZE = 20
#: Longest phrase taken (longer: 400 INVALID_QUERY).
MAX_PHRASE = 1000
ENTITY_SCOPES = ("DATA_RESOURCE",)


class FacetSelectionIn(Payload):
    facet_name: str = Field(min_length=1, max_length=300)
    display_name: str | None = None
    facet_categories: list[str] = Field(default_factory=list, max_length=10_000)


class SortSpec(Payload):
    """``ascending`` defaults to false for ``score`` (most relevant first), true otherwise."""

    property_name: str
    ascending: StrictBool | None = None


class Paging(Payload):
    start: StrictInt = Field(default=0, ge=0)
    size: StrictInt = Field(default=DEFAULT_PAGE_SIZE, ge=1)


class SearchCriteria(Payload):
    """The spec's SearchCriteria."""

    model_config = examples(ex.SEARCH)

    search_type: Literal["BASIC", "ADVANCED"] = "BASIC"
    search_phrase: str | None = None
    partial_search: StrictBool = False
    facet_selections: list[FacetSelectionIn] = Field(default_factory=list, max_length=100)
    entity_scope: list[str] = Field(default_factory=lambda: list(ENTITY_SCOPES))
    sort_by_specs: list[SortSpec] = Field(default_factory=list, max_length=10)
    paging_criteria: Paging = Field(default_factory=Paging)
    apply_facets: StrictBool = True
    last_selected_facet_name: str | None = None
    preformed_query: StrictBool = False

    @field_validator("entity_scope", mode="before")
    @classmethod
    def _scope(cls, value: Any) -> Any:
        listed = [value] if isinstance(value, str) else value
        if isinstance(listed, list):
            unknown = [v for v in listed if v not in ENTITY_SCOPES]
            if unknown:
                raise ValueError(
                    f"unknown entity scope {unknown[0]!r}; the only scope is DATA_RESOURCE"
                )
        return listed


class PageRequest(SearchCriteria):
    """``/search/page``: ``key`` (default: the session's latest search) and ``pagingCriteria``;
    the other SearchCriteria properties are accepted and ignored (the stored search's own
    criteria hold)."""

    key: str | None = Field(default=None, max_length=64)
    #: The ``nextCursor`` of the previous page: the next page follows it (``pagingCriteria.start``
    #: is then ignored; ``size`` still holds).
    cursor: str | None = Field(default=None, max_length=MAX_CURSOR_LENGTH)
