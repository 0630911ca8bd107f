"""Faceted keyword search: ``cat.search(...)`` -> :class:`SearchResult`, ``cat.facets()``.

A search runs once on the service (``POST /search/new``, or ``POST /search/runFacet`` when no
text is given), which stores the ordered matches under the result's ``key``; later pages are
read from that stored order (``POST /search/page``), so they stay consistent while the catalog
changes. The service's result entities carry no tags, so each page's tags are read with one
``GET /dataresource/metadata?propertyFilter=id:...&views=viewTags`` (:func:`with_tags`).
:meth:`SearchResult.refine` starts a *new* search from the old criteria.

Example::

    result = cat.search("customers", facets={"dataSource": ["demo_files"]}, sort="-size")
    result.total, result.frame[["source", "path", "tags", "score"]]
    result.facets.query("facet == 'fileFormat'")
    everything = result.all()                  # every page, with a progress bar
    narrower = result.refine(add={"fileFormat": "csv"}, remove=["dataSource"])
    cat.facets()                               # the facet catalogue
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.api.search import DEFAULT_ENTITY_SCOPE, SEARCH_PAGE_MAX
from catalog_nb.client.errors import CatalogError
from catalog_nb.client.paging import iter_pages, warn_truncated
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.search_frames import (
    catalogue_frame,
    facets_frame,
    normalize_facets,
    search_frame,
    sort_specs,
)

__all__ = ["SearchMixin", "SearchResult", "with_tags"]

#: Rows of ``.frame`` shown by ``_repr_html_``.
SHOWN_ROWS = 20
_KEEP: Any = object()


def with_tags(api: CatalogApi, entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``entities`` with their tag associations: entities that come without
    ``tagAssociationViewList`` (the service's core view leaves it out) get it from one
    ``GET /dataresource/metadata?propertyFilter=id:...&views=viewTags`` for the page."""
    missing = [e["key"] for e in entities if "tagAssociationViewList" not in e and e.get("key")]
    if not missing:
        return entities
    answer = api.resource_metadata(
        [f"id:{';'.join(str(key) for key in missing)}"], views=["viewTags"], page_size=len(missing)
    )
    listed = answer.get("list") if isinstance(answer, Mapping) else None
    views = {r.get("key"): r.get("tagAssociationViewList") or [] for r in listed or []}
    return [
        {**e, "tagAssociationViewList": views.get(e.get("key"), [])}
        if "tagAssociationViewList" not in e
        else e
        for e in entities
    ]


def _selections(facets: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    return [{"facetName": name, "facetCategories": list(values)} for name, values in facets.items()]


class SearchResult:
    """One search: its first page, its facet counts, and the way to the other pages.

    Attributes:
        key: the key the service stored the result under (for ``/search/page``).
        text: the search phrase (``None`` for a facets-only search).
        selections: the facet selections, ``{facet: [categories]}``.
        total: how many resources matched.
        raw: the service's SearchResult JSON of the first page.
        frame: the first page, one row per resource (columns of
            :data:`~catalog_nb.client.search_frames.SEARCH_COLUMNS`).
        facets: facet counts over the matches (facet, display_name, category, count,
            selected).

    Example::

        result = cat.search("orders", facets={"fileFormat": ["csv", "parquet"]})
        result.total, result.frame.head()
        for page in result.pages():            # frames of page_size rows
            ...
        result.page(2)                         # the third page
    """

    def __init__(
        self,
        catalog: SearchMixin,
        answer: Mapping[str, Any],
        *,
        text: str | None,
        selections: Mapping[str, list[str]],
        sort: Any,
        partial: bool,
        advanced: bool,
        limit: int | None,
        page_size: int,
    ) -> None:
        self._catalog = catalog
        self.raw = dict(answer)
        self.key: str | None = answer.get("key")
        self.text = text
        self.selections = {name: list(values) for name, values in selections.items()}
        self.sort = sort
        self.partial = partial
        self.advanced = advanced
        self.limit = limit
        self.page_size = page_size
        self.total = int(answer.get("totalResultCount") or answer.get("matchedEntityCount") or 0)
        entities = list(answer.get("entities") or [])
        if limit is not None:
            entities = entities[:limit]
        self.frame = search_frame(with_tags(catalog.api, entities))
        self.facets = facets_frame(answer)

    # -- reading pages -------------------------------------------------------------------------

    @property
    def page_count(self) -> int:
        """How many pages of ``page_size`` the matches fill (at most ``limit`` rows)."""
        rows = self.total if self.limit is None else min(self.total, self.limit)
        return max(1, -(-rows // self.page_size))

    @property
    def truncated(self) -> bool:
        """Whether ``limit`` leaves matches out."""
        return self.limit is not None and self.total > self.limit

    def page(self, number: int) -> pd.DataFrame:
        """Page ``number`` (0-based) of ``page_size`` rows, read from the stored result.

        Past the last page it is an empty frame (with every column).
        """
        if number < 0:
            raise ValueError("page numbers start at 0")
        if number == 0:
            return self.frame
        answer = self._catalog.api.search_page(
            self.key, start=number * self.page_size, size=self.page_size
        )
        entities = list(answer.get("entities") or [])
        if self.limit is not None:
            entities = entities[: max(0, self.limit - number * self.page_size)]
        return search_frame(with_tags(self._catalog.api, entities))

    def pages(self, *, progress: bool | None = None) -> Iterator[pd.DataFrame]:
        """Every page as a frame, in order, up to ``limit`` rows (a progress bar over the rows
        when more than one page is read; a :class:`TruncatedResultWarning` when ``limit``
        leaves matches out)."""
        def fetch(start: int, size: int, _cursor: str | None) -> Any:
            if start == 0:  # the first page came with the search
                return {"list": list(self.raw.get("entities") or []), "totalCount": self.total}
            answer = self._catalog.api.search_page(self.key, start=start, size=size)
            return {"list": list(answer.get("entities") or []), "totalCount": self.total}

        read = 0
        for number, (entities, _total) in enumerate(iter_pages(
            fetch,
            page_size=self.page_size,
            limit=self.limit,
            progress=self._catalog.progress if progress is None else progress,
            description="search",
        )):
            if number == 0:
                frame = self.frame  # tagged already
            else:
                kept = list(entities)
                if self.limit is not None:
                    kept = kept[: max(0, self.limit - read)]
                frame = search_frame(with_tags(self._catalog.api, kept))
            read += len(frame)
            if len(frame):
                yield frame
        if self.truncated:
            warn_truncated("search", shown=read, total=self.total, noun="resources",
                           because=f"limit={self.limit}")

    def all(self, *, progress: bool | None = None) -> pd.DataFrame:
        """Every match (up to ``limit``) in one frame, read page by page.

        Example::

            cat.search("customer", limit=500).all()
        """
        frames = list(self.pages(progress=progress))
        if not frames:
            return self.frame.iloc[0:0]
        return pd.concat(frames, ignore_index=True)

    def __iter__(self) -> Iterator[pd.DataFrame]:
        """Iterate over :meth:`pages`."""
        return self.pages()

    def __len__(self) -> int:
        """The number of matches (``total``)."""
        return self.total

    # -- new searches from this one ------------------------------------------------------------

    def refine(
        self,
        text: Any = _KEEP,
        *,
        facets: Mapping[str, Any] | None = None,
        add: Mapping[str, Any] | None = None,
        remove: Mapping[str, Any] | Sequence[str] | str | None = None,
        sort: Any = _KEEP,
        limit: Any = _KEEP,
    ) -> SearchResult:
        """A NEW search from these criteria, changed: ``text`` replaces the phrase (``None``
        drops it), ``facets`` replaces every selection, ``add`` adds categories, ``remove``
        takes categories away (``{facet: [categories]}``) or whole facets (names).

        Example::

            result.refine(add={"tag": ["PII.Email"]}).refine(remove="dataSource")
        """
        chosen = normalize_facets(facets) if facets is not None else dict(self.selections)
        for name, values in normalize_facets(add).items():
            chosen[name] = list(dict.fromkeys([*chosen.get(name, []), *values]))
        if isinstance(remove, str):
            remove = [remove]
        if isinstance(remove, Mapping):
            for name, values in normalize_facets(remove).items():
                kept = [value for value in chosen.get(name, []) if value not in values]
                chosen[name] = kept
        elif remove is not None:
            for name in remove:
                chosen.pop(name, None)
        return self._catalog.search(
            self.text if text is _KEEP else text,
            facets={name: values for name, values in chosen.items() if values},
            sort=self.sort if sort is _KEEP else sort,
            limit=self.limit if limit is _KEEP else limit,
            partial=self.partial,
            advanced=self.advanced,
            page_size=self.page_size,
        )

    # -- display -------------------------------------------------------------------------------

    def _headline(self) -> str:
        what = f"{self.text!r}" if self.text else "everything"
        chosen = "; ".join(
            f"{name} = {', '.join(values)}" for name, values in self.selections.items()
        )
        return f"{self.total} matches for {what}" + (f" where {chosen}" if chosen else "")

    def __repr__(self) -> str:
        return f"<SearchResult {self._headline()} (key {self.key})>"

    def _repr_html_(self) -> str:
        shown = self.frame.head(SHOWN_ROWS)
        parts = [
            "<div class='catalog-nb-search'>",
            f"<p><b>{html.escape(self._headline())}</b></p>",
            shown.to_html(index=False, na_rep="", escape=True, border=0),
        ]
        if self.total > len(shown):
            parts.append(
                f"<p>{len(shown)} of {self.total} shown; <code>.all()</code> reads every page</p>"
            )
        parts.append("</div>")
        return "".join(parts)


class SearchMixin(CatalogPart):
    """Search and the facet catalogue; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    _page_max: int | None = None

    def _search_page_max(self) -> int:
        """The service's largest search page (``/config`` ``search.pageMax``), read once; the
        default limit when the service does not say (an older service without ``/config``)."""
        cached = self._page_max
        if cached is None:
            try:
                cached = int(self.api.get_config("search.pageMax")["value"])
            except (CatalogError, KeyError, TypeError, ValueError):
                cached = SEARCH_PAGE_MAX
            self._page_max = cached
        return cached

    def search(
        self,
        text: str | None = None,
        facets: Mapping[str, Any] | None = None,
        limit: int | None = None,
        sort: str | Sequence[Any] | None = None,
        partial: bool = False,
        advanced: bool = False,
        page_size: int | None = None,
    ) -> SearchResult:
        """Search the data resources by keywords and facets; returns a :class:`SearchResult`.

        Args:
            text: the phrase: words that must all match (names, paths, descriptions, fields,
                tags, custom property values). ``None``: a facets-only search
                (``/search/runFacet``); ``""`` matches everything.
            facets: ``{facet: [categories]}``, e.g. ``{"dataSource": ["demo_files"],
                "tag": ["PII.Email"]}``; categories of one facet are ORed, facets ANDed.
                Names as in ``cat.facets()``.
            limit: read at most this many rows (``.all()`` warns when more matched).
            sort: ``"name"``, ``"-size"`` (descending), ``("rows", False)`` or a list of
                those; fields: score, name, path, source, size, rows, modified, profiled.
            partial: every word is a prefix.
            advanced: ``field:value`` terms, quoted phrases, AND / OR / NOT.
            page_size: rows per page: at most the service's ``search.pageMax`` (its
                ``/config``, read once per catalog); default the smaller of that and 100.

        Raises:
            BadRequestError: an unknown facet or category (``INVALID_FACET``), a malformed
                advanced query (``INVALID_QUERY``), an unknown sort field.

        Example::

            cat.search("customer", facets={"fileFormat": ["csv"]}, sort="-score").frame
            cat.search("tag:PII.Email AND format:csv", advanced=True).total
        """
        if limit is not None and limit < 1:
            raise ValueError("limit must be at least 1 (or None for every match)")
        largest = self._search_page_max()
        if page_size is None:
            page_size = min(SEARCH_PAGE_MAX, largest)
        if not 1 <= page_size <= largest:
            raise ValueError(f"page_size must be between 1 and {largest} (the service's "
                             "search.pageMax)")
        selections = normalize_facets(facets)
        size = page_size if limit is None else min(page_size, limit)
        criteria: dict[str, Any] = {
            "searchType": "ADVANCED" if advanced else "BASIC",
            "searchPhrase": text,
            "partialSearch": partial,
            "facetSelections": _selections(selections),
            "entityScope": DEFAULT_ENTITY_SCOPE,
            "sortBySpecs": sort_specs(sort),
            "pagingCriteria": {"start": 0, "size": size},
        }
        if text is None:
            del criteria["searchPhrase"]
            answer = self.api.search_run_facet(criteria)
        else:
            answer = self.api.search_new(criteria)
        return SearchResult(
            self,
            answer if isinstance(answer, Mapping) else {},
            text=text,
            selections=selections,
            sort=sort,
            partial=partial,
            advanced=advanced,
            limit=limit,
            page_size=size,
        )

    @overload
    def facets(self, *, as_frame: Literal[True] = ...) -> pd.DataFrame: ...
    @overload
    def facets(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def facets(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """The facet catalogue: one row per (facet, category) the caller may see (columns
        facet, display_name, category). ``as_frame=False`` returns the FacetSelection JSON.

        Example::

            cat.facets().groupby("facet")["category"].count()
        """
        answer = self.api.search_facets()
        answer = answer if isinstance(answer, Mapping) else {}
        if not as_frame:
            return list(answer.get(DEFAULT_ENTITY_SCOPE) or [])
        return catalogue_frame(answer, DEFAULT_ENTITY_SCOPE)
