"""Raw endpoints of lineage, join conditions and table overlap (``docs/relations-api.md``).

Mixed into :class:`~catalog_nb.client.api.core.CatalogApi` (reach them as ``cat.api``); each method
is one endpoint and returns the service's JSON as is (camelCase fields). The CSV overlap call
answers the CSV text.

Example::

    cat.api.get_lineage(key, upstream=3, downstream=0, field_lineage=True)["edges"]
    cat.api.list_lineage(lineage_types=["FACTUAL"], size=100)["totalCount"]
    cat.api.list_join_conditions(data_source="demo_sql", min_score=0.8)["list"]
    cat.api.overlap_table("sales.customers", "sales.customer_contacts")["overlapPercent"]
    cat.api.overlap_csv("virtualFolder,tableOne,tableTwo\\n,sales.orders,sales.order_items\\n")
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from catalog_nb.client.api.base import JSON, RawCalls, segment

__all__ = [
    "JOIN_PAGE_MAX",
    "LINEAGE_PAGE_MAX",
    "LINEAGE_TYPES",
    "OVERLAP_BATCH_MAX",
    "OVERLAP_CSV_MAX",
    "RelationsApi",
    "lineage_types",
]


#: Largest ``size`` of ``GET /lineage`` and ``GET /joincondition``.
LINEAGE_PAGE_MAX = 1000
JOIN_PAGE_MAX = 1000
#: Most comparisons ``POST /overlap/table`` takes in one request.
OVERLAP_BATCH_MAX = 1000
#: Most rows ``POST /overlap/table/csv`` takes in one file.
OVERLAP_CSV_MAX = 10_000
#: The two lineage types.
LINEAGE_TYPES: tuple[str, ...] = ("FACTUAL", "INFERRED")


def lineage_types(types: str | Iterable[str] | None) -> list[str] | None:
    """The wire spelling of a lineage type filter; ``None`` means both.

    >>> lineage_types("factual")
    ['FACTUAL']
    """
    if types is None:
        return None
    values = [types] if isinstance(types, str) else list(types)
    if not values:
        raise ValueError("types must name at least one lineage type (or be None for both)")
    spelled = []
    for value in values:
        text = str(value).strip().upper()
        if text not in LINEAGE_TYPES:
            raise ValueError(
                f"unknown lineage type {value!r}; expected {' or '.join(LINEAGE_TYPES)}"
            )
        if text not in spelled:
            spelled.append(text)
    return spelled


class RelationsApi(RawCalls):
    """The raw calls of lineage, join conditions and table overlap; needs ``self.http``."""

    # -- lineage -------------------------------------------------------------------------------

    def get_lineage(
        self,
        key: str,
        *,
        upstream: int = 1,
        downstream: int = 1,
        field_lineage: bool = False,
        lineage_types: Iterable[str] | None = None,
    ) -> JSON:
        """``GET /lineage/{resourceKey}``: ``{resourceKey, nodes, edges, truncated,
        truncatedReasons, hiddenCount, maxDepth, ...}`` (404 ``RESOURCE_NOT_FOUND``)."""
        params = {
            "upstream": upstream,
            "downstream": downstream,
            "fieldLineage": field_lineage,
            "lineageType": None if lineage_types is None else list(lineage_types),
        }
        return self.http.request("GET", f"/lineage/{segment(key)}", params=params)

    def list_lineage(
        self,
        *,
        start: int = 0,
        size: int = LINEAGE_PAGE_MAX,
        lineage_types: Iterable[str] | None = None,
        data_source: str | None = None,
        field_lineage: bool = False,
    ) -> JSON:
        """``GET /lineage``: one page ``{list, totalCount, start, size}`` of every visible edge,
        each with its ``upstream`` and ``downstream`` node; ``data_source`` (a name) keeps edges
        with an end in that source; ``field_lineage`` adds each edge's ``fieldLineage``."""
        params = {
            "start": start,
            "size": min(size, LINEAGE_PAGE_MAX),
            "lineageType": None if lineage_types is None else list(lineage_types),
            "dataSource": data_source,
            "fieldLineage": field_lineage,
        }
        return self.http.request("GET", "/lineage", params=params)

    # -- join conditions -----------------------------------------------------------------------

    def list_join_conditions(
        self,
        *,
        start: int = 0,
        size: int = JOIN_PAGE_MAX,
        data_source: str | None = None,
        virtual_folder: str | None = None,
        min_score: float | None = None,
        origin: str | None = None,
    ) -> JSON:
        """``GET /joincondition``: one page ``{list, totalCount, start, size}`` of
        JoinConditionTO, every visible condition once; ``data_source``/``virtual_folder`` keep
        conditions with at least one end inside, ``origin`` is ``DECLARED`` or ``DISCOVERED``."""
        params = {
            "start": start,
            "size": min(size, JOIN_PAGE_MAX),
            "dataSource": data_source,
            "virtualFolder": virtual_folder,
            "minScore": min_score,
            "origin": origin,
        }
        return self.http.request("GET", "/joincondition", params=params)

    # -- table overlap -------------------------------------------------------------------------

    def overlap_table(self, table1: str, table2: str, virtual_folder: str | None = None) -> JSON:
        """``GET /overlap/table?table1=&table2=[&virtualFolder=]``: TableComparisionTO
        ``{commonFields, tableOneUniqueFields, tableTwoUniqueFields, overlapPercent}``."""
        params = {"table1": table1, "table2": table2, "virtualFolder": virtual_folder}
        return self.http.request("GET", "/overlap/table", params=params)

    def overlap_tables(self, items: Iterable[Mapping[str, Any]]) -> list[JSON]:
        """``POST /overlap/table [{virtualFolder?, tableOne, tableTwo}]`` (at most 1000) -> the
        TableComparisionTOs in order; one bad item fails the whole request."""
        answer: list[JSON] = self.http.request(
            "POST", "/overlap/table", json=[dict(item) for item in items]
        )
        return answer

    def overlap_csv(self, content: str | bytes, separator: str = ",") -> str:
        """``POST /overlap/table/csv?separator=`` with ``content`` (rows
        ``virtualFolder,tableOne,tableTwo``) as the multipart part ``fileStream``; returns the
        answer's CSV text (header ``virtualFolder,tableOne,tableTwo,commonFields,
        tableOneUniqueFields,tableTwoUniqueFields,overlapPercent``, lists joined by ``|``)."""
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        answer = self.http.request("POST", "/overlap/table/csv", params={"separator": separator},
                                   files={"fileStream": ("overlap.csv", data, "text/csv")})
        return str(answer or "")
