"""Column specs of data resource and field frames, and the JSON flattening behind them.

* :data:`RESOURCE_COLUMNS`: one row per data resource (:meth:`Catalog.resources`), followed by
  one ``cp_<name>`` column per custom property definition, typed by the definition's type.
* :data:`FIELD_COLUMNS`: one row per field with the profiling statistics as columns
  (:meth:`Catalog.fields` of one resource); :data:`RESOURCE_FIELD_COLUMNS` adds the resource
  (long form over many resources).

``rows`` and ``field_count`` are missing (not 0) for a resource that was never profiled.
Resource types are shortened for reading: ``resource_type_file`` (and its alias
``resource_type_hdfs_file``) -> ``file``, ``resource_type_collection`` -> ``collection``,
``resource_type_table`` -> ``table``, ``resource_type_view`` -> ``view``; the raw form
(``as_frame=False``) keeps the service's spelling.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.frames import Column, Kind, to_epoch_ms, to_frame

__all__ = [
    "CUSTOM_PREFIX",
    "CUSTOM_PROPERTY_KINDS",
    "FIELD_COLUMNS",
    "FRAME_PROPERTIES",
    "FRAME_WIRE_PROPERTIES",
    "RESOURCE_COLUMNS",
    "RESOURCE_FIELD_COLUMNS",
    "SHORT_TYPES",
    "base_columns",
    "custom_columns",
    "custom_values",
    "field_records",
    "fields_frame",
    "frame_records",
    "profiled_count",
    "resources_frame",
    "short_type",
]

#: Prefix of the custom property columns of :meth:`Catalog.resources` (``cp_sensitivity``).
CUSTOM_PREFIX = "cp_"

#: Short resource type names of the frames, by the service's spelling.
SHORT_TYPES: dict[str, str] = {
    contract.ResourceType.FILE.value: "file",
    contract.ResourceType.HDFS_FILE.value: "file",
    contract.ResourceType.COLLECTION.value: "collection",
    contract.ResourceType.TABLE.value: "table",
    contract.ResourceType.VIEW.value: "view",
}

#: Column kind of a custom property column, by the definition's ``type``.
CUSTOM_PROPERTY_KINDS: dict[str, Kind] = {
    contract.CustomPropertyType.STRING.value: "string",
    contract.CustomPropertyType.INTEGER.value: "int",
    contract.CustomPropertyType.NUMBER.value: "float",
    contract.CustomPropertyType.BOOLEAN.value: "bool",
    contract.CustomPropertyType.DATE.value: "time",
    contract.CustomPropertyType.STRING_LIST.value: "list",
}


def short_type(value: Any) -> str | None:
    """``resource_type_table`` -> ``table`` (unknown types lose only the prefix).

    >>> short_type("resource_type_hdfs_file")
    'file'
    """
    if value is None:
        return None
    text = str(value)
    return SHORT_TYPES.get(text, text.removeprefix("resource_type_"))


def profiled_count(record: Mapping[str, Any], name: str) -> Any:
    """A count that only profiling knows (``rowCount``, ``fieldCount``): missing, not 0, while
    the resource was never profiled (the service answers 0 for "not known yet")."""
    value = record.get(name)
    if not value and record.get("timeOfLastProfile") is None:
        return None
    return value


def _tag_names(record: Mapping[str, Any]) -> list[str]:
    """Full names (``Domain.Tag``) of the resource-level tags that are not REJECTED."""
    views = record.get("tagAssociationViewList") or []
    return [
        str(view.get("tagFullName") or view.get("tagName"))
        for view in views
        if view.get("field") in (None, "") and view.get("state") != "REJECTED"
    ]


@dataclasses.dataclass(frozen=True)
class _PageColumn(Column):
    """A column worked out by a function of the record, which also has a form taking a page of
    plain dicts at once (``page``): the same values, without a Python call per record (the four
    such columns took a third as long as decoding the pages of 100,000 resources)."""

    page: Callable[[Sequence[dict[str, Any]]], list[Any]] | None = None

    def extract_all(
        self, records: Sequence[Mapping[str, Any]], *, dicts: bool = False
    ) -> list[Any]:
        if dicts and self.page is not None:
            return self.page(records)  # type: ignore[arg-type]  # dicts: checked by the caller
        return super().extract_all(records, dicts=dicts)


def _short_types(records: Sequence[dict[str, Any]]) -> list[str | None]:
    """:func:`short_type` of each record's ``resourceType``, worked out once per distinct one."""
    values = [r.get("resourceType") for r in records]
    try:
        shown = {value: short_type(value) for value in set(values)}
    except TypeError:  # an unhashable value (not from this service)
        return [short_type(value) for value in values]
    return [shown[value] for value in values]


def _profiled_counts(records: Sequence[dict[str, Any]], name: str) -> list[Any]:
    """:func:`profiled_count` of each record."""
    return [value if value or r.get("timeOfLastProfile") is not None else None
            for r in records for value in (r.get(name),)]


def _primary_keys(records: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    """The ``inferredKeys.primaryKey`` of each record, as a list (empty when missing)."""
    return [list((r.get("inferredKeys") or {}).get("primaryKey") or []) for r in records]


#: Columns of :meth:`Catalog.resources` (before the ``cp_`` columns).
RESOURCE_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("source", "string", "dataSourceName"),
    Column("path", "string", "resourcePath"),
    Column("name", "string"),
    _PageColumn("type", "string", lambda r: short_type(r.get("resourceType")), _short_types),
    Column("format", "string", "fileFormat"),
    _PageColumn("rows", "int", lambda r: profiled_count(r, "rowCount"),
                lambda rs: _profiled_counts(rs, "rowCount")),
    Column("size", "int", "resourceSize"),
    _PageColumn("field_count", "int", lambda r: profiled_count(r, "fieldCount"),
                lambda rs: _profiled_counts(rs, "fieldCount")),
    Column("partition_count", "int", "partitionCount"),
    Column("state", "string", "resourceState"),
    Column("status", "string"),
    Column("error", "string", "errorMsg"),
    Column("owner", "string"),
    Column("description", "string"),
    _PageColumn("primary_key", "list", lambda r: _primary_keys([r])[0], _primary_keys),
    Column("virtual_folders", "list", "dataSetVirtualFolders"),
    Column("favorite", "bool"),
    Column("average_rating", "float", "averageRating"),
    Column("rating_count", "int", "ratingCount"),
    Column("modified", "time", "timeOfResourceChange"),
    Column("profiled", "time", "timeOfLastProfile"),
    Column("refreshed", "time", "timeOfLastRefresh"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)

#: Extra columns of :meth:`Catalog.resources` with ``fields=True`` / ``tags=True``.
FIELD_NAMES_COLUMN = Column(
    "fields", "list", lambda r: [f.get("name") for f in r.get("fields") or []]
)
TAGS_COLUMN = Column("tags", "list", _tag_names)

#: Columns of :meth:`Catalog.fields` for one resource: the field, then its statistics.
FIELD_COLUMNS: tuple[Column, ...] = (
    Column("name", "string", "f.name"),
    Column("position", "int", "f.position"),
    Column("data_type", "string", "f.dataType"),
    Column("nullable", "bool", "f.nullable"),
    Column("description", "string", "f.description"),
    Column("display_name", "string", "f.displayName"),
    Column("comment", "string", "f.comment"),
    Column("density", "float", "p.density"),
    Column("value_count", "int", "p.valueCount"),
    Column("null_count", "int", "p.nullCount"),
    Column("distinct_count", "int", "p.distinctCount"),
    Column("distinct_approximate", "bool", "p.distinctCountApproximate"),
    Column("min", "object", "p.min"),
    Column("max", "object", "p.max"),
    Column("mean", "float", "p.mean"),
    Column("min_length", "int", "p.minLength"),
    Column("max_length", "int", "p.maxLength"),
    Column("most_frequent", "list", "p.mostFrequent"),
    Column("patterns", "list", "p.patterns"),
    Column("sampled", "bool", "p.sampled"),
    Column("sample_size", "int", "p.sampleSize"),
)

#: Columns of :meth:`Catalog.fields` over many resources (long form).
RESOURCE_FIELD_COLUMNS: tuple[Column, ...] = (
    Column("resource_key", "string", "r.key"),
    Column("source", "string", "r.dataSourceName"),
    Column("resource_path", "string", "r.resourcePath"),
    Column("resource_name", "string", "r.name"),
    Column("resource_type", "string", lambda row: short_type(row["r"].get("resourceType"))),
    *FIELD_COLUMNS,
)


def _properties(field: Mapping[str, Any]) -> dict[str, Any]:
    """A field's ``properties`` (``[{name, value, type}]``, or already a map) as a map."""
    raw = field.get("properties") or []
    if isinstance(raw, Mapping):
        return dict(raw)
    return {
        str(item.get("name")): item.get("value")
        for item in raw
        if type(item) is dict or isinstance(item, Mapping)
    }


def field_records(resource: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One ``{"r": resource, "f": field, "p": properties}`` record per field, in position order.

    The records feed :data:`FIELD_COLUMNS` and :data:`RESOURCE_FIELD_COLUMNS`.
    """
    fields = list(resource.get("fields") or [])
    fields.sort(key=lambda f: (f.get("position") is None, f.get("position") or 0))
    return [{"r": resource, "f": field, "p": _properties(field)} for field in fields]


def fields_frame(resources: Iterable[Mapping[str, Any]], *, long: bool) -> pd.DataFrame:
    """The fields of ``resources`` as a frame (``long``: with the resource columns)."""
    rows = [row for resource in resources for row in field_records(resource)]
    return to_frame(rows, RESOURCE_FIELD_COLUMNS if long else FIELD_COLUMNS)


def custom_values(record: Mapping[str, Any]) -> dict[str, Any]:
    """``{name: value}`` of a resource's ``customProperties`` (a list or already a map)."""
    raw = record.get("customProperties") or []
    if isinstance(raw, Mapping):
        return dict(raw)
    return {str(item.get("name")): item.get("value") for item in raw if isinstance(item, Mapping)}


def _when(value: Any) -> int | None:
    """Epoch ms of a DATE custom value; a value that is no point in time becomes missing."""
    if value is None:
        return None
    try:
        return to_epoch_ms(value)
    except (TypeError, ValueError):
        return None


def _custom_column(name: str, kind: Kind) -> Column:
    def extract(record: Mapping[str, Any]) -> Any:
        value = custom_values(record).get(name)
        if kind == "time":
            return _when(value)
        if kind == "list" and value is not None and not isinstance(value, list | tuple):
            return [value]
        return value

    return Column(CUSTOM_PREFIX + name, kind, extract)


def custom_columns(
    definitions: Sequence[Mapping[str, Any]], records: Sequence[Mapping[str, Any]] = ()
) -> tuple[Column, ...]:
    """One ``cp_<name>`` column per custom property definition, typed by its ``type``.

    Values of properties without a definition in ``definitions`` (defined while reading) get a
    column too, typed by the ``type`` the resource carries, or ``object``.
    """
    kinds: dict[str, Kind] = {}
    for definition in definitions:
        name = definition.get("name")
        if name:
            kinds[str(name)] = CUSTOM_PROPERTY_KINDS.get(str(definition.get("type")), "object")
    for record in records:
        raw = record.get("customProperties") or []
        if isinstance(raw, Mapping):
            for name in raw:
                kinds.setdefault(str(name), "object")
            continue
        for item in raw:
            if isinstance(item, Mapping) and item.get("name"):
                kind = CUSTOM_PROPERTY_KINDS.get(str(item.get("type")), "object")
                kinds.setdefault(str(item["name"]), kind)
    return tuple(_custom_column(name, kinds[name]) for name in sorted(kinds))


#: The properties of a metadata record the frame of :meth:`Catalog.resources` reads (the rest of
#: the DataResource is left out of it).
FRAME_PROPERTIES: frozenset[str] = frozenset(
    {str(c.source or c.name).split(".")[0] for c in RESOURCE_COLUMNS if not callable(c.source)}
    | {"resourceType", "rowCount", "fieldCount", "timeOfLastProfile", "customProperties",
       "fields", "tagAssociationViewList", "inferredKeys"}
)


#: What :meth:`Catalog.resources` asks the service to send (``properties=``); fields and tags
#: come with the views.
FRAME_WIRE_PROPERTIES = tuple(sorted(FRAME_PROPERTIES - {"fields", "tagAssociationViewList"}))


def frame_records(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``records`` cut down to :data:`FRAME_PROPERTIES`: what :func:`resources_frame` reads.

    A page is cut down as soon as it is decoded, while the next one is on its way, so the
    hundred-odd properties of each resource the frame does not show are freed a page at a time
    instead of all at once at the end (100,000 resources are some ten million objects).
    """
    keep = FRAME_PROPERTIES
    listed = list(records)
    if all(type(r) is dict and len(r) <= len(keep) for r in listed[:1]):
        return listed  # type: ignore[return-value]  # the service sent only these already
    return [{k: v for k, v in record.items() if k in keep} for record in listed]


def base_columns(*, fields: bool, tags: bool) -> list[Column]:
    """The columns of :meth:`Catalog.resources` before the ``cp_`` ones."""
    columns: list[Column] = list(RESOURCE_COLUMNS)
    if fields:
        columns.append(FIELD_NAMES_COLUMN)
    if tags:
        columns.append(TAGS_COLUMN)
    return columns


def resources_frame(
    records: Sequence[Mapping[str, Any]],
    *,
    definitions: Sequence[Mapping[str, Any]] | None = None,
    fields: bool = False,
    tags: bool = False,
) -> pd.DataFrame:
    """The frame of :meth:`Catalog.resources` from metadata records.

    ``definitions`` are the custom property definitions (``None``: no ``cp_`` columns).
    """
    columns = base_columns(fields=fields, tags=tags)
    if definitions is not None:
        columns.extend(custom_columns(definitions, records))
    return to_frame(records, columns)
