"""Column specs of the relation frames, graph node attributes, and the ``scope=`` argument.

* :data:`IMPACT_COLUMNS`: :meth:`Catalog.impact`, one row per downstream resource.
* :data:`JOIN_CONDITION_COLUMNS`: :meth:`Catalog.join_conditions`, one row per condition.
* :data:`JOIN_PATH_COLUMNS`: :meth:`Catalog.join_paths`, one row per hop of each path.
* :data:`OVERLAP_COLUMNS`: :meth:`Catalog.overlap`, one row per field of either table.
* :data:`COVERAGE_COLUMNS`: :meth:`Catalog.tag_coverage`, long form over four levels.

A ``scope`` names the resources a catalog-wide picture is about: ``None`` (everything the
caller sees), a data source (name or key), an iterable of resource keys (or records with
``key``), or a resources DataFrame with a ``key`` column. Edges and conditions touching the
scope are kept (like the service's ``dataSource`` filter), so the other end of a cross-source
relation still shows; nodes say whether they are ``in_scope``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.frames import Column
from catalog_nb.client.resources.frames import short_type
from catalog_nb.client.resources.sources import resolve_source

__all__ = [
    "COVERAGE_COLUMNS",
    "IMPACT_COLUMNS",
    "JOIN_CONDITION_COLUMNS",
    "JOIN_PATH_COLUMNS",
    "OVERLAP_COLUMNS",
    "Scope",
    "ScopeRef",
    "node_attributes",
    "resolve_scope",
]

#: What ``scope=`` accepts (see the module docstring).
ScopeRef = str | Mapping[str, Any] | pd.Series | pd.DataFrame | Iterable[Any] | None


def node_attributes(node: Mapping[str, Any]) -> dict[str, Any]:
    """The graph attributes of a lineage node JSON (snake_case; short resource type).

    >>> node_attributes({"key": "k1", "name": "orders", "resourceType": "resource_type_table",
    ...                  "dataSourceName": "demo_sql", "distance": -1})["resource_type"]
    'table'
    """
    return {
        "name": node.get("name"),
        "path": node.get("path", node.get("resourcePath")),
        "source": node.get("dataSourceName"),
        "source_key": node.get("dataSourceKey"),
        "resource_type": short_type(node.get("resourceType")),
        "file_format": node.get("fileFormat"),
        "owner": node.get("owner"),
        "description": node.get("description"),
        "row_count": node.get("rowCount"),
        "schema": node.get("schemaName"),
        "table": node.get("tableName"),
        "distance": node.get("distance"),
        "lineage_state": node.get("lineageState"),
        "lineage_reason": node.get("lineageReason"),
    }


@dataclass(frozen=True)
class Scope:
    """A resolved ``scope=``: everything, one data source, or a set of resource keys."""

    source_name: str | None = None
    source_key: str | None = None
    keys: frozenset[str] | None = None

    @property
    def everything(self) -> bool:
        """Whether the scope is the whole visible catalog."""
        return self.source_name is None and self.keys is None

    def contains(self, key: Any, source: Any = None) -> bool:
        """Whether the resource ``key`` (of data source name or key ``source``) is in scope."""
        if self.keys is not None:
            return key in self.keys
        if self.source_name is not None:
            return source is not None and (
                str(source).casefold() == self.source_name.casefold() or source == self.source_key
            )
        return True


def _record_key(item: Any) -> str:
    if isinstance(item, str):
        return item
    key = item.get("key") if hasattr(item, "get") else None
    if key is None or (not isinstance(key, str) and pd.isna(key)):
        raise ValueError(f"cannot tell which resource {item!r} is in scope: it has no 'key'")
    return str(key)


def resolve_scope(api: CatalogApi, scope: ScopeRef) -> Scope:
    """Turn a ``scope=`` argument into a :class:`Scope`.

    A string is a data source name or key (:class:`NotFoundError` ``DATA_SOURCE_NOT_FOUND``
    when unknown); a DataFrame needs a ``key`` column (:class:`ValueError` otherwise).
    """
    if scope is None:
        return Scope()
    if isinstance(scope, str):
        source = resolve_source(api, scope)
        return Scope(source_name=str(source["name"]), source_key=str(source["key"]))
    if isinstance(scope, pd.DataFrame):
        if "key" not in scope.columns:
            raise ValueError("a scope DataFrame needs a 'key' column (e.g. cat.resources(...))")
        return Scope(keys=frozenset(str(key) for key in scope["key"].dropna()))
    if isinstance(scope, Mapping | pd.Series):
        return Scope(keys=frozenset([_record_key(scope)]))
    if isinstance(scope, Iterable):
        return Scope(keys=frozenset(_record_key(item) for item in scope))
    raise TypeError(
        f"scope must be None, a data source name, resource keys or a resources DataFrame, "
        f"not {type(scope).__name__}"
    )


#: Columns of :meth:`Catalog.impact`.
IMPACT_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("source", "string"),
    Column("path", "string"),
    Column("name", "string"),
    Column("resource_type", "string"),
    Column("distance", "int"),
    Column("lineage_types", "list"),
    Column("via", "string"),
    Column("via_path", "string"),
)


def _stat(name: str, kind: type) -> Any:
    """A numeric ``stats`` entry (sent as text) of a JoinConditionTO, ``None`` when absent."""

    def extract(record: Mapping[str, Any]) -> Any:
        value = (record.get("stats") or {}).get(name)
        if value is None or value == "":
            return None
        try:
            return kind(float(value))
        except (TypeError, ValueError):
            return None

    return extract


def _origin(side: str) -> Any:
    def extract(record: Mapping[str, Any]) -> Any:
        origin = record.get(f"{side}Origin")
        if isinstance(origin, list):
            return origin[0] if origin else None
        return origin

    return extract


def _condition_score(record: Mapping[str, Any]) -> Any:
    score = record.get("score")
    return score if score is not None else _stat("score", float)(record)


#: Columns of :meth:`Catalog.join_conditions`.
JOIN_CONDITION_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("left_key", "string", "leftResourceId"),
    Column("left_source", "string", "leftSourceName"),
    Column("left_path", "string", "leftPath"),
    Column("left_name", "string", "leftResourceName"),
    Column("left_cols", "list", "leftCols"),
    Column("right_key", "string", "rightResourceId"),
    Column("right_source", "string", "rightSourceName"),
    Column("right_path", "string", "rightPath"),
    Column("right_name", "string", "rightResourceName"),
    Column("right_cols", "list", "rightCols"),
    Column("cardinality", "string", "joinCardinality"),
    Column("score", "float", _condition_score),
    Column("origin", "string", _origin("left")),
    Column("state", "string", "joinStatState"),
    Column("left_in_right", "float", _stat("leftInRight", float)),
    Column("right_in_left", "float", _stat("rightInLeft", float)),
    Column("left_distinct", "int", _stat("leftDistinct", int)),
    Column("right_distinct", "int", _stat("rightDistinct", int)),
    Column("sample_size", "int", _stat("sampleSize", int)),
    Column("name_similarity", "float", _stat("nameSimilarity", float)),
    Column("tags", "list"),
)

#: Columns of :meth:`Catalog.join_paths`.
JOIN_PATH_COLUMNS: tuple[Column, ...] = (
    Column("path", "int"),
    Column("hops", "int"),
    Column("step", "int"),
    Column("left", "string"),
    Column("left_cols", "list"),
    Column("right", "string"),
    Column("right_cols", "list"),
    Column("cardinality", "string"),
    Column("score", "float"),
    Column("path_score", "float"),
    Column("left_source", "string"),
    Column("left_path", "string"),
    Column("right_source", "string"),
    Column("right_path", "string"),
    Column("origin", "string"),
)

#: Columns of :meth:`Catalog.overlap`.
OVERLAP_COLUMNS: tuple[Column, ...] = (
    Column("field", "string"),
    Column("in_one", "bool"),
    Column("in_two", "bool"),
    Column("side", "string"),
)

#: Columns of :meth:`Catalog.tag_coverage`.
COVERAGE_COLUMNS: tuple[Column, ...] = (
    Column("level", "string"),
    Column("name", "string"),
    Column("source", "string"),
    Column("fields", "int"),
    Column("tagged_fields", "int"),
    Column("share", "float"),
    Column("resources", "int"),
    Column("tagged_resources", "int"),
    Column("resource_share", "float"),
    Column("key", "string"),
)
