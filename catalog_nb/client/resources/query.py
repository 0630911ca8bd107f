"""Requests of the data resource endpoints: the metadata query and the annotation body.

Keyword filters of :meth:`Catalog.resources` -> the query of ``GET /dataresource/metadata``:

=====================  ==============================================  =====================
keyword                sent as                                         accepts
=====================  ==============================================  =====================
``source``             ``propertyFilter=data_source:<name>;<name>``    names or keys, a list
``type``               ``propertyFilter=resource_type:<type>;...``     ``file``, ``collection``,
                                                                       ``table``, ``view`` or
                                                                       ``resource_type_*``
``format``             ``propertyFilter=file_format:<fmt>;...``        ``csv``, ``parquet``...
``owner``              ``propertyFilter=owner:<user>;...``
``state``              ``propertyFilter=resource_state:<s>;...``       ``OK``, ``ERROR``
``status``             ``propertyFilter=status:<s>;...``               ``PROFILED``, ``MISSING``
``name``               ``propertyFilter=name:<name>;...``              exact names
``path``               ``propertyFilter=path:<path>;...``              the resource at or
                                                                       under the path (whole
                                                                       ``/`` segments)
``keys``               ``propertyFilter=id:<key>;...``                 resource keys
``virtual_folder``     ``virtualFolderKeys=<key>`` (repeated)          names or keys, a list
``modified_after``     ``resourceModifiedDateFromL=<epoch ms>``        datetime, date, ISO
``modified_before``    ``resourceModifiedDateToL=<epoch ms>``          text, Timestamp, ms
``fields=True``        ``views=viewFields``
``tags=True``          ``views=viewTags``
=====================  ==============================================  =====================

Several keywords are ANDed; the values of one keyword (a list) are ORed. A value containing
``;`` cannot be expressed on the wire and raises :class:`ValueError`.

:func:`annotation_body` builds the body of ``PUT /dataresource/...`` from the keywords of
:meth:`Catalog.update_resource`.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.frames import to_epoch_ms

__all__ = [
    "FILTERS",
    "RESOURCE_TYPES",
    "MetadataQuery",
    "ResourceFilters",
    "annotation_body",
    "build_query",
    "resource_type",
]

#: One value or several (ORed).
OneOrMany = Any


class ResourceFilters(TypedDict, total=False):
    """Keyword filters shared by :meth:`Catalog.resources` and :meth:`Catalog.fields`.

    ``source`` and ``path`` are named parameters of those methods, so they are not listed here.
    Each takes one value or a list of values (ORed); see the module table.
    """

    type: OneOrMany
    format: OneOrMany
    owner: OneOrMany
    state: OneOrMany
    status: OneOrMany
    name: OneOrMany
    keys: OneOrMany
    virtual_folder: OneOrMany
    modified_after: Any
    modified_before: Any


#: Resource type spellings accepted by ``type=``, mapped to the wire value.
RESOURCE_TYPES: dict[str, str] = {
    "file": contract.ResourceType.FILE.value,
    "hdfs_file": contract.ResourceType.HDFS_FILE.value,
    "collection": contract.ResourceType.COLLECTION.value,
    "table": contract.ResourceType.TABLE.value,
    "view": contract.ResourceType.VIEW.value,
}

#: keyword -> (propertyFilter property, how a value is spelled on the wire).
_PROPERTY_FILTERS: dict[str, tuple[str, Callable[[Any], str]]] = {
    "type": ("resource_type", lambda v: resource_type(v)),
    "format": ("file_format", lambda v: str(v).lower()),
    "owner": ("owner", str),
    "state": ("resource_state", lambda v: str(v).upper()),
    "status": ("status", lambda v: str(v).upper()),
    "name": ("name", str),
    "path": ("path", str),
    "keys": ("id", str),
}

#: Every keyword filter of :meth:`Catalog.resources` and the long form of :meth:`Catalog.fields`.
FILTERS: frozenset[str] = frozenset(
    {*_PROPERTY_FILTERS, "source", "virtual_folder", "modified_after", "modified_before"}
)


def resource_type(value: Any) -> str:
    """The wire spelling of a resource type: ``"table"`` -> ``"resource_type_table"``.

    >>> resource_type("Collection")
    'resource_type_collection'
    """
    text = str(value).strip().lower()
    if text in RESOURCE_TYPES:
        return RESOURCE_TYPES[text]
    if text.startswith("resource_type_"):
        return text
    raise ValueError(
        f"unknown resource type {value!r}; expected one of {', '.join(RESOURCE_TYPES)} "
        "or a resource_type_* name"
    )


def _values(value: Any) -> list[Any]:
    """A keyword's values: one scalar, or any iterable (not a string) of them."""
    if value is None:
        return []
    if isinstance(value, str | Mapping | pd.Series) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def _joined(keyword: str, values: Iterable[str]) -> str:
    texts = []
    for text in values:
        if ";" in text:
            raise ValueError(
                f"{keyword}={text!r}: a ';' cannot be sent in a metadata filter (it separates "
                "alternatives); filter the frame after reading instead"
            )
        if not text:
            raise ValueError(f"{keyword}= must not be empty")
        texts.append(text)
    return ";".join(texts)


@dataclass
class MetadataQuery:
    """The parameters of ``GET /dataresource/metadata`` a set of keyword filters stands for."""

    property_filters: list[str] = field(default_factory=list)
    virtual_folder_keys: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)
    modified_from: int | None = None
    modified_to: int | None = None

    def arguments(self) -> dict[str, Any]:
        """Keyword arguments of :meth:`CatalogApi.resource_metadata` (without paging)."""
        return {
            "property_filters": self.property_filters,
            "virtual_folder_keys": self.virtual_folder_keys,
            "views": self.views,
            "modified_from": self.modified_from,
            "modified_to": self.modified_to,
        }


def build_query(
    filters: Mapping[str, Any],
    *,
    source_names: Callable[[list[Any]], list[str]],
    folder_keys: Callable[[list[Any]], list[str]],
    fields: bool = False,
    tags: bool = False,
) -> MetadataQuery:
    """Map keyword ``filters`` (see the module table) onto a :class:`MetadataQuery`.

    ``source_names`` turns source references into names and ``folder_keys`` folder references
    into keys (both only called when those filters are given). Unknown keywords raise
    :class:`TypeError`.

    Example::

        build_query({"type": "table", "format": ["csv"]}, source_names=..., folder_keys=...)
    """
    unknown = sorted(set(filters) - FILTERS)
    if unknown:
        raise TypeError(
            f"unknown filter(s) {', '.join(unknown)}; expected some of {', '.join(sorted(FILTERS))}"
        )
    query = MetadataQuery()
    sources = _values(filters.get("source"))
    if sources:
        names = source_names(sources)
        query.property_filters.append("data_source:" + _joined("source", names))
    for keyword, (prop, spell) in _PROPERTY_FILTERS.items():
        values = _values(filters.get(keyword))
        if values:
            query.property_filters.append(f"{prop}:" + _joined(keyword, [spell(v) for v in values]))
    folders = _values(filters.get("virtual_folder"))
    if folders:
        query.virtual_folder_keys = folder_keys(folders)
    if filters.get("modified_after") is not None:
        query.modified_from = to_epoch_ms(filters["modified_after"])
    if filters.get("modified_before") is not None:
        query.modified_to = to_epoch_ms(filters["modified_before"])
    if fields:
        query.views.append("viewFields")
    if tags:
        query.views.append("viewTags")
    return query


#: Python keyword -> wire field of a field annotation in ``update_resource(field_descriptions=)``.
_FIELD_KEYS = {
    "description": "description",
    "display_name": "displayName",
    "displayName": "displayName",
    "comment": "comment",
}


def _custom(value: Any) -> Any:
    """A custom property value for the wire: dates and datetimes as ``YYYY-MM-DD`` (DATE)."""
    if isinstance(value, _dt.date):
        return value.strftime("%Y-%m-%d")
    return value


def _field_changes(descriptions: Mapping[str, Any]) -> list[dict[str, Any]]:
    changes = []
    for name, value in descriptions.items():
        entry: dict[str, Any] = {"name": str(name)}
        if isinstance(value, Mapping):
            for key, text in value.items():
                if key not in _FIELD_KEYS:
                    raise TypeError(
                        f"unknown field annotation {key!r} for field {name!r}; expected "
                        "description, display_name or comment"
                    )
                entry[_FIELD_KEYS[key]] = text
        else:
            entry["description"] = value
        changes.append(entry)
    return changes


def annotation_body(
    *,
    description: str | None = None,
    rich_description: str | None = None,
    owner: str | None = None,
    custom: Mapping[str, Any] | None = None,
    field_descriptions: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The body of ``PUT /dataresource/...``: only the properties given (not ``None``).

    >>> annotation_body(owner="ada", field_descriptions={"id": "order id"})
    {'owner': 'ada', 'fields': [{'name': 'id', 'description': 'order id'}]}
    """
    body: dict[str, Any] = {}
    if description is not None:
        body["description"] = description
    if rich_description is not None:
        body["richDescription"] = rich_description
    if owner is not None:
        body["owner"] = owner
    if custom is not None:
        body["customProperties"] = {name: _custom(v) for name, v in custom.items()}
    if field_descriptions is not None:
        body["fields"] = _field_changes(field_descriptions)
    return body
