"""Wire shapes of ``/lineage`` (docs/relations-api.md, section Lineage) and its parameter checks.

Responses are built as plain dicts so that ``fieldLineage`` can be left out of edges when it was
not asked for (a null would say "none" where the truth is "not requested"); the models below
document the shapes in the OpenAPI description.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Wire
from catalog_nb.server.schemas.examples import examples


class LineageType(StrEnum):
    """Where an edge comes from: a view's SQL (certain) or content containment (inferred)."""

    FACTUAL = "FACTUAL"
    INFERRED = "INFERRED"


#: Most edges one page of ``GET /lineage`` holds.
MAX_PAGE = 1000


class FieldLineageOut(Wire):
    downstream_field: str
    upstream_fields: list[str]


class LineageNodeOut(Wire):
    key: str
    name: str
    path: str
    resource_type: str
    data_source_key: str
    data_source_name: str
    file_format: str | None
    owner: str | None
    description: str | None
    row_count: int | None
    schema_name: str | None
    table_name: str | None
    distance: int | None = None
    lineage_state: str | None
    lineage_reason: str | None


class LineageEdgeOut(Wire):
    key: str
    upstream_key: str
    downstream_key: str
    lineage_type: LineageType
    score: float | None
    evidence: dict[str, Any]
    field_lineage: list[FieldLineageOut] | None = None


class LineageOut(Wire):
    model_config = examples(ex.LINEAGE)

    resource_key: str
    upstream: int
    downstream: int
    field_lineage: bool
    lineage_types: list[LineageType]
    nodes: list[LineageNodeOut]
    edges: list[LineageEdgeOut]
    truncated: bool
    truncated_reasons: list[str]
    hidden_count: int
    max_depth: int


class ListedEdgeOut(LineageEdgeOut):
    upstream: LineageNodeOut
    downstream: LineageNodeOut


class LineageListOut(Wire):
    model_config = examples(ex.LINEAGE_PAGE)

    list: list[ListedEdgeOut]
    total_count: int
    start: int
    size: int


def parse_types(raw: Iterable[str] | None) -> list[str]:
    """``lineageType`` values (repeated and/or ``;``-separated, any case) as the types asked
    for, in the canonical order; none or only blanks means both. 400 on an unknown type.

    >>> parse_types(["inferred;FACTUAL"])
    ['FACTUAL', 'INFERRED']
    """
    asked: set[str] = set()
    for item in raw or ():
        for part in item.replace(",", ";").split(";"):
            name = part.strip().upper()
            if not name:
                continue
            if name not in LineageType.__members__:
                raise BadRequest(
                    f"lineageType {part.strip()!r} is unknown; use FACTUAL or INFERRED (repeat "
                    "the parameter or separate them with ';' for both).",
                    ErrorCode.INVALID_PARAMETER, field="lineageType",
                )
            asked.add(name)
    return [t.value for t in LineageType if not asked or t.value in asked]


def check_paging(start: int, size: int) -> None:
    """400 unless ``0 <= start`` and ``1 <= size <= MAX_PAGE``."""
    if start < 0:
        raise BadRequest(f"start must be 0 or more (got {start}).", ErrorCode.INVALID_PARAMETER,
                         field="start")
    if not 1 <= size <= MAX_PAGE:
        raise BadRequest(f"size must be between 1 and {MAX_PAGE} (got {size}).",
                         ErrorCode.INVALID_PARAMETER, field="size")


def node_out(row: Mapping[str, Any], distance: int | None = None) -> dict[str, Any]:
    """The wire form of a node (a resource in a lineage answer)."""
    node = {
        "key": row["key"],
        "name": row["name"],
        "path": row["path"],
        "resourceType": row["resource_type"],
        "dataSourceKey": row["data_source_key"],
        "dataSourceName": row["source_name"],
        "fileFormat": row["file_format"],
        "owner": row["owner"],
        "description": row["description"],
        "rowCount": row["row_count"],
        "schemaName": row["data_schema_name"],
        "tableName": row["table_name"],
        "lineageState": row["lineage_state"],
        "lineageReason": row["lineage_reason"],
    }
    if distance is not None:
        node["distance"] = distance
    return node


def edge_out(row: Mapping[str, Any], field_lineage: bool) -> dict[str, Any]:
    """The wire form of an edge; ``fieldLineage`` only when asked for."""
    edge: dict[str, Any] = {
        "key": row["key"],
        "upstreamKey": row["upstream_key"],
        "downstreamKey": row["downstream_key"],
        "lineageType": row["lineage_type"],
        "score": row["score"],
        "evidence": row["evidence"] or {},
    }
    if field_lineage:
        edge["fieldLineage"] = [
            {"downstreamField": str(item.get("downstreamField")),
             "upstreamFields": [str(f) for f in item.get("upstreamFields") or []]}
            for item in row["field_lineage"] or [] if isinstance(item, dict)
        ]
    return edge
