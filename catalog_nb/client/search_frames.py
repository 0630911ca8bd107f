"""Column specs and JSON helpers of search results (:mod:`catalog_nb.client.search`).

* :data:`SEARCH_COLUMNS`: one row per matched resource (``SearchResult.frame``); the resource
  columns are those of :data:`~catalog_nb.client.resources.frames.RESOURCE_COLUMNS`, plus
  ``tags`` (full names of the ACCEPTED and SUGGESTED tags, resource or field level),
  ``sensitivity`` and the relevance ``score``.
* :data:`FACET_RESULT_COLUMNS`: the long facet frame of a result (facet, display_name,
  category, count, selected), categories by count, largest first.
* :data:`FACET_CATALOGUE_COLUMNS`: the facet catalogue of ``cat.facets()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.resources.frames import RESOURCE_COLUMNS

__all__ = [
    "FACET_CATALOGUE_COLUMNS",
    "FACET_RESULT_COLUMNS",
    "SEARCH_COLUMNS",
    "SORT_FIELDS",
    "catalogue_frame",
    "facet_records",
    "facets_frame",
    "normalize_facets",
    "search_frame",
    "sort_specs",
    "tag_full_names",
]

#: Sort properties of the service, by the names the frames use (``-`` prefix: descending).
SORT_FIELDS: dict[str, str] = {
    "score": "score",
    "name": "name",
    "path": "resourcePath",
    "source": "dataSourceName",
    "size": "resourceSize",
    "rows": "rowCount",
    "modified": "timeOfResourceChange",
    "profiled": "timeOfLastProfile",
}


def tag_full_names(record: Mapping[str, Any]) -> list[str]:
    """Distinct full names of the tags of a result entity that are not REJECTED, in order.

    Reads ``tags`` when the entity carries plain names, else ``tagAssociationViewList``.
    """
    plain = record.get("tags")
    if isinstance(plain, list) and all(isinstance(item, str) for item in plain):
        return list(dict.fromkeys(plain))
    names: list[str] = []
    for view in record.get("tagAssociationViewList") or []:
        if not isinstance(view, Mapping) or view.get("state") == "REJECTED":
            continue
        name = view.get("tagFullName") or view.get("tagName")
        if name:
            names.append(str(name))
    return list(dict.fromkeys(names))


_RESOURCE = {column.name: column for column in RESOURCE_COLUMNS}

#: Columns of ``SearchResult.frame``.
SEARCH_COLUMNS: tuple[Column, ...] = (
    *(
        _RESOURCE[name]
        for name in ("key", "source", "path", "name", "type", "format", "owner")
    ),
    Column("tags", "list", tag_full_names),
    Column("sensitivity", "string"),
    *(_RESOURCE[name] for name in ("rows", "size", "modified")),
    Column("score", "float"),
    *(_RESOURCE[name] for name in ("description", "state", "status", "profiled")),
)

#: Columns of ``SearchResult.facets``.
FACET_RESULT_COLUMNS: tuple[Column, ...] = (
    Column("facet", "string"),
    Column("display_name", "string"),
    Column("category", "string"),
    Column("count", "int"),
    Column("selected", "bool"),
)

#: Columns of ``cat.facets()``.
FACET_CATALOGUE_COLUMNS: tuple[Column, ...] = (
    Column("facet", "string"),
    Column("display_name", "string"),
    Column("category", "string"),
)


def search_frame(entities: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The frame of :data:`SEARCH_COLUMNS` of result entities."""
    return to_frame(entities, SEARCH_COLUMNS)


def facet_records(answer: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One record per (facet, category) of a SearchResult's ``facetResults``.

    Categories come by count (largest first), then by name; a selected category the counts
    leave out is kept with count 0, so a selection never disappears.
    """
    records: list[dict[str, Any]] = []
    for facet in answer.get("facetResults") or []:
        counts = {str(k): int(v or 0) for k, v in (facet.get("categoryCounts") or {}).items()}
        selected = {str(category) for category in facet.get("selectedCategories") or []}
        for category in selected - counts.keys():
            counts[category] = 0
        ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        for category, count in ordered:
            records.append(
                {
                    "facet": facet.get("name"),
                    "display_name": facet.get("displayName"),
                    "category": category,
                    "count": count,
                    "selected": category in selected,
                }
            )
    return records


def facets_frame(answer: Mapping[str, Any]) -> pd.DataFrame:
    """The long frame of :data:`FACET_RESULT_COLUMNS` of a SearchResult."""
    return to_frame(facet_records(answer), FACET_RESULT_COLUMNS)


def catalogue_frame(answer: Mapping[str, Any], scope: str) -> pd.DataFrame:
    """The frame of :data:`FACET_CATALOGUE_COLUMNS` of ``GET /search/facets``.

    A facet without categories keeps one row with a missing category, so it stays listed.
    """
    records: list[dict[str, Any]] = []
    for facet in answer.get(scope) or []:
        categories = list(facet.get("facetCategories") or []) or [None]
        records.extend(
            {"facet": facet.get("facetName"), "display_name": facet.get("displayName"),
             "category": category}
            for category in categories
        )
    return to_frame(records, FACET_CATALOGUE_COLUMNS)


def normalize_facets(facets: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """``{"tag": "PII.Email", "fileFormat": ["csv"]}`` -> ``{facet: [categories]}``.

    A single string is one category; facets with no categories are dropped.

    >>> normalize_facets({"fileFormat": "csv", "tag": []})
    {'fileFormat': ['csv']}
    """
    if facets is None:
        return {}
    if not isinstance(facets, Mapping):
        raise TypeError(
            "facets must map facet names to categories, e.g. {'dataSource': ['demo_files']}"
        )
    out: dict[str, list[str]] = {}
    for name, categories in facets.items():
        values = [categories] if isinstance(categories, str) else list(categories or [])
        cleaned = list(dict.fromkeys(str(value) for value in values))
        if cleaned:
            out[str(name)] = cleaned
    return out


def _one_spec(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        name, ascending = (item[1:], False) if item.startswith("-") else (item, True)
    elif isinstance(item, Sequence) and len(item) == 2:
        name, ascending = str(item[0]), bool(item[1])
    else:
        raise TypeError(f"cannot read {item!r} as a sort: use 'name', '-size' or ('rows', False)")
    return {"propertyName": SORT_FIELDS.get(name, name), "ascending": ascending}


def sort_specs(sort: str | Sequence[Any] | None) -> list[dict[str, Any]]:
    """The ``sortBySpecs`` of ``sort``: ``"name"``, ``"-size"`` (descending),
    ``("rows", False)`` or a list of those. Frame names (``path``, ``size``...) and the
    service's property names (``resourcePath``...) are both accepted.

    >>> sort_specs("-size")
    [{'propertyName': 'resourceSize', 'ascending': False}]
    """
    if sort is None:
        return []
    if isinstance(sort, str):
        return [_one_spec(sort)]
    items = list(sort)
    if len(items) == 2 and isinstance(items[0], str) and isinstance(items[1], bool):
        return [_one_spec(tuple(items))]
    return [_one_spec(item) for item in items]
