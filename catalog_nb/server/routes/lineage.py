"""Lineage (view only): ``GET /lineage/{resourceKey}`` walks a resource's lineage graph, and the
extension ``GET /lineage`` lists every visible edge; the rules are in docs/relations-api.md.

Any role may read the lineage of what it sees. Nodes the caller may not see are never named:
the walk stops at them, the edges touching them are left out, and ``hiddenCount`` counts them.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from sqlalchemy import Connection

from catalog_nb.contract import ErrorCode
from catalog_nb.server.deps import CallerDep, SettingsDep, StoreDep
from catalog_nb.server.errors import NotFound
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.schemas.lineage import (
    LineageListOut,
    LineageOut,
    check_paging,
    edge_out,
    node_out,
    parse_types,
)
from catalog_nb.server.store import lineage as lineage_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.common import fold
from catalog_nb.server.store.visible import visibility
from catalog_nb.server.visibility import Visibility

router = APIRouter(tags=["lineage"])

Depth = Annotated[int, Query(ge=0, description="Levels to walk (0 = none); capped.")]
Types = Annotated[list[str] | None, Query(alias="lineageType",
                                          description="FACTUAL and/or INFERRED (default both)")]


def _source_key(conn: Connection, vis: Visibility, wanted: str) -> str:
    """The key of the data source named or keyed ``wanted``; 404 when unknown or unseen."""
    row = source_store.find_source(conn, wanted)
    if row is None:
        matches = [r for r in source_store.list_sources(conn) if r["name_fold"] == fold(wanted)]
        row = matches[0] if matches else None
    if row is None or not vis.touches(str(row["key"])):
        raise NotFound(f"There is no data source named or keyed '{wanted}'.",
                       ErrorCode.DATA_SOURCE_NOT_FOUND)
    return str(row["key"])


@router.get("/lineage", responses={200: {"model": LineageListOut}})
def list_lineage(
    caller: CallerDep,
    store: StoreDep,
    start: int = 0,
    size: int = 1000,
    lineage_type: Types = None,
    data_source: Annotated[str | None, Query(alias="dataSource")] = None,
    field_lineage: Annotated[bool, Query(alias="fieldLineage")] = False,
) -> JSONResponse:
    """Every edge whose both ends the caller sees, by upstream then downstream path:
    ``{list: [edge + upstream/downstream nodes], totalCount, start, size}``."""
    check_paging(start, size)
    types = parse_types(lineage_type)
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        source_key = _source_key(conn, vis, data_source) if data_source else None
        rows, total = lineage_store.list_edges(conn, vis, types, source_key, start, size)
        ends = {e["upstream_key"] for e in rows} | {e["downstream_key"] for e in rows}
        nodes = lineage_store.visible_nodes(conn, vis, ends)
    listed = [
        {**edge_out(e, field_lineage), "upstream": node_out(nodes[e["upstream_key"]]),
         "downstream": node_out(nodes[e["downstream_key"]])}
        for e in rows if e["upstream_key"] in nodes and e["downstream_key"] in nodes
    ]
    return JSONResponse({"list": listed, "totalCount": total, "start": start, "size": size})


@router.get("/lineage/{resource_key}", responses={200: {"model": LineageOut}})
def get_lineage(
    resource_key: str,
    caller: CallerDep,
    store: StoreDep,
    settings: SettingsDep,
    upstream: Depth = 1,
    downstream: Depth = 1,
    field_lineage: Annotated[bool, Query(alias="fieldLineage")] = False,
    lineage_type: Types = None,
) -> JSONResponse:
    """The resource's lineage: nodes up to ``upstream`` levels up and ``downstream`` down,
    the edges between them, and whether (and why) the answer was truncated."""
    types = parse_types(lineage_type)
    cap = settings.lineage_max_depth
    reasons: list[str] = []
    depths = {"upstream": upstream, "downstream": downstream}
    for name, asked in depths.items():
        if asked > cap:
            reasons.append(f"The {name} depth of {asked} was capped at {cap} "
                           "(CATALOG_LINEAGE_MAX_DEPTH).")
            depths[name] = cap
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        start = lineage_store.visible_nodes(conn, vis, [resource_key]).get(resource_key)
        if start is None:
            raise NotFound(f"There is no data resource with key '{resource_key}'.",
                           ErrorCode.RESOURCE_NOT_FOUND)
        found = lineage_store.walk(conn, vis, start, depths["upstream"], depths["downstream"],
                                   types, settings.lineage_max_nodes)
    if found.full:
        reasons.append(f"The walk stopped at {settings.lineage_max_nodes} resources "
                       "(CATALOG_LINEAGE_MAX_NODES).")
    for name, more in found.beyond.items():
        if more:
            reasons.append(f"There is more lineage {name} beyond {depths[name]} "
                           f"level{'s' if depths[name] != 1 else ''}.")
    nodes = sorted(found.nodes.values(),
                   key=lambda n: (abs(n["distance"]), n["distance"], n["path"], n["key"]))
    distance = {n["key"]: n["distance"] for n in nodes}
    edges = sorted(found.edges.values(), key=lambda e: (
        distance[e["downstream_key"]], distance[e["upstream_key"]], e["lineage_type"], e["key"]))
    body: dict[str, Any] = {
        "resourceKey": resource_key,
        "upstream": depths["upstream"],
        "downstream": depths["downstream"],
        "fieldLineage": field_lineage,
        "lineageTypes": types,
        "nodes": [node_out(n, n["distance"]) for n in nodes],
        "edges": [edge_out(e, field_lineage) for e in edges],
        "truncated": bool(reasons),
        "truncatedReasons": reasons,
        "hiddenCount": len(found.hidden),
        "maxDepth": cap,
    }
    return JSONResponse(body)
