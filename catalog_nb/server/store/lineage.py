"""The SQL of lineage: what view and file lineage discovery read and write, and the reads of
``/lineage``.

Discovery replaces its findings wholesale, one lineage type per transaction
(:func:`replace_edges`), so a reader sees the old edges or the new ones, never a mix; edges and
statuses of resources deleted meanwhile are dropped there rather than failing the insert, and
the foreign keys (``ON DELETE CASCADE``) remove them when a resource goes later. Reads of the
walk take a whole level of the graph per query, so a walk costs a few queries per level whatever
its width.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    delete,
    func,
    insert,
    or_,
    select,
)

from catalog_nb.contract import ResourceType
from catalog_nb.server.store.common import (
    advisory_lock,
    chunks,
    code_points,
    new_key,
    now_ms,
)
from catalog_nb.server.store.schema import (
    data_resources,
    data_sources,
    lineage_edges,
    lineage_status,
    resource_fields,
)
from catalog_nb.server.store.visible import visible_condition, visible_keys
from catalog_nb.server.visibility import Visibility

R, S, E, LS, F = data_resources, data_sources, lineage_edges, lineage_status, resource_fields

FACTUAL, INFERRED = "FACTUAL", "INFERRED"
LINEAGE_TYPES = (FACTUAL, INFERRED)

#: ``lineage_status.state`` of a view.
PARSED, PARTIAL, UNPARSED, NONE = "PARSED", "PARTIAL", "UNPARSED", "NONE"

#: Serialises concurrent replacements on PostgreSQL (two jobs ending together).
_LINEAGE_LOCK = 7_242_017

#: ``status`` values of resources that no longer stand for data (gone or unreadable).
_GONE = ("MISSING",)

_FILE_TYPES = (ResourceType.FILE.value, ResourceType.HDFS_FILE.value,
               ResourceType.COLLECTION.value)
_SQL_TYPES = (ResourceType.TABLE.value, ResourceType.VIEW.value)


@dataclass
class EdgeRecord:
    """One lineage edge to store: ``field_lineage`` is ``[{downstreamField, upstreamFields}]``."""

    upstream_key: str
    downstream_key: str
    lineage_type: str
    score: float | None = None
    field_lineage: list[dict[str, Any]] = field(default_factory=list)
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class StatusRecord:
    """How lineage discovery fared on one resource (a view)."""

    resource_key: str
    state: str
    reason: str | None = None


# ---------------------------------------------------------------------------- discovery reads


def _current() -> ColumnElement[bool]:
    """Resources that stand for data now: not MISSING, not a collection's member."""
    return and_(R.c.status.not_in(_GONE), R.c.collection_key.is_(None))


def views(conn: Connection) -> list[dict[str, Any]]:
    """Every current view with its source: ``key, path, data_source_key, source_uri,
    data_schema_name, table_name, view_definition``, by source and path."""
    query = (
        select(R.c.key, R.c.path, R.c.data_source_key, S.c.uri.label("source_uri"),
               R.c.data_schema_name, R.c.table_name, R.c.extra)
        .join(S, S.c.key == R.c.data_source_key)
        .where(R.c.resource_type == ResourceType.VIEW.value, _current())
        .order_by(R.c.data_source_key, R.c.path)
    )
    found = []
    for row in conn.execute(query).mappings():
        item = dict(row)
        extra = item.pop("extra") or {}
        definition = extra.get("viewDefinition") if isinstance(extra, dict) else None
        item["view_definition"] = definition if isinstance(definition, str) else None
        found.append(item)
    return found


def sql_relations(conn: Connection, source_keys: Collection[str]) -> list[dict[str, Any]]:
    """Current tables and views of these sources with their fields in order:
    ``key, data_source_key, resource_type, data_schema_name, table_name, fields`` where
    ``fields`` is ``[(name, data_type), ...]``."""
    if not source_keys:
        return []
    query = (
        select(R.c.key, R.c.data_source_key, R.c.resource_type, R.c.data_schema_name,
               R.c.table_name)
        .where(R.c.data_source_key.in_(list(source_keys)), R.c.resource_type.in_(_SQL_TYPES),
               _current())
        .order_by(R.c.data_source_key, R.c.path)
    )
    relations = [dict(r) for r in conn.execute(query).mappings()]
    fields: dict[str, list[tuple[str, str]]] = defaultdict(list)
    if relations:
        rows = conn.execute(
            select(F.c.resource_key, F.c.name, F.c.data_type)
            .join(R, R.c.key == F.c.resource_key)
            .where(R.c.data_source_key.in_(list(source_keys)), R.c.resource_type.in_(_SQL_TYPES))
            .order_by(F.c.resource_key, F.c.position)
        )
        for key, name, data_type in rows:
            fields[key].append((name, data_type))
    for relation in relations:
        relation["fields"] = fields.get(relation["key"], [])
    return relations


def edge_pairs(conn: Connection, lineage_type: str) -> list[tuple[str, str]]:
    """``(upstream, downstream)`` of every stored edge of one type."""
    query = select(E.c.upstream_key, E.c.downstream_key).where(E.c.lineage_type == lineage_type)
    return [(str(up), str(down)) for up, down in conn.execute(query)]


def inferred_links(conn: Connection) -> list[dict[str, Any]]:
    """Every INFERRED edge with what join discovery reads of it: ``upstream, downstream,
    kind`` (file lineage's ``evidence.kind``: ``COPY``, ``SUBSET``... or None for an edge
    stored before kinds existed) and ``field_lineage``."""
    query = select(E.c.upstream_key, E.c.downstream_key, E.c.evidence, E.c.field_lineage).where(
        E.c.lineage_type == INFERRED)
    return [{"upstream": str(up), "downstream": str(down),
             "kind": evidence.get("kind") if isinstance(evidence, dict) else None,
             "field_lineage": list(fields or [])}
            for up, down, evidence, fields in conn.execute(query)]


# ---------------------------------------------------------------------------- discovery writes


def _existing(conn: Connection, keys: Iterable[str]) -> set[str]:
    wanted = sorted(set(keys))
    found: set[str] = set()
    for chunk in chunks(wanted):
        found.update(conn.execute(select(R.c.key).where(R.c.key.in_(chunk))).scalars())
    return found


def replace_edges(
    conn: Connection,
    lineage_type: str,
    edges: Sequence[EdgeRecord],
    statuses: Sequence[StatusRecord] | None = None,
) -> int:
    """Replace every edge of ``lineage_type`` (and, when given, every lineage status) by these.

    Call inside one write transaction. Edges or statuses naming a resource that no longer exists
    (deleted while discovery ran) are dropped; a later duplicate of an edge replaces an earlier
    one. Returns the number of edges stored.
    """
    advisory_lock(conn, _LINEAGE_LOCK)
    keys = {s.resource_key for s in statuses or ()}
    existing = _existing(conn, keys)
    conn.execute(delete(E).where(E.c.lineage_type == lineage_type))
    stored = _insert_edges(conn, lineage_type, edges)
    now = now_ms()
    if statuses is not None:
        conn.execute(delete(LS))
        rows = {s.resource_key: s for s in statuses if s.resource_key in existing}
        if rows:
            conn.execute(insert(LS), [
                {"resource_key": s.resource_key, "state": s.state, "reason": s.reason,
                 "computed_ms": now}
                for s in rows.values()
            ])
    return stored


def replace_edges_into(conn: Connection, lineage_type: str, edges: Sequence[EdgeRecord],
                       downstream: Iterable[str]) -> int:
    """Replace the edges of ``lineage_type`` into the ``downstream`` resources by ``edges``
    (those of incremental discovery; every other edge stays). Call inside one write
    transaction; returns the number of edges stored."""
    advisory_lock(conn, _LINEAGE_LOCK)
    keys = sorted(set(downstream) | {e.downstream_key for e in edges})
    for chunk in chunks(keys):
        conn.execute(delete(E).where(E.c.lineage_type == lineage_type,
                                     E.c.downstream_key.in_(chunk)))
    return _insert_edges(conn, lineage_type, edges)


def _insert_edges(conn: Connection, lineage_type: str, edges: Sequence[EdgeRecord]) -> int:
    """Insert edges between existing resources (a later duplicate replaces an earlier one)."""
    existing = _existing(conn, {e.upstream_key for e in edges} | {e.downstream_key for e in edges})
    unique: dict[tuple[str, str], EdgeRecord] = {}
    for edge in edges:
        if (edge.upstream_key in existing and edge.downstream_key in existing
                and edge.upstream_key != edge.downstream_key):
            unique[(edge.upstream_key, edge.downstream_key)] = edge
    now = now_ms()
    if unique:
        conn.execute(insert(E), [
            {"key": new_key(), "upstream_key": e.upstream_key,
             "downstream_key": e.downstream_key, "lineage_type": lineage_type,
             "field_lineage": e.field_lineage, "evidence": e.evidence, "score": e.score,
             "created_ms": now, "changed_ms": now}
            for e in unique.values()
        ])
    return len(unique)


# ---------------------------------------------------------------------------- reads of /lineage


def _node_query() -> Any:
    return (
        select(R.c.key, R.c.name, R.c.path, R.c.resource_type, R.c.data_source_key,
               S.c.name.label("source_name"), R.c.file_format, R.c.owner, R.c.description,
               R.c.row_count, R.c.data_schema_name, R.c.table_name,
               LS.c.state.label("lineage_state"), LS.c.reason.label("lineage_reason"))
        .join(S, S.c.key == R.c.data_source_key)
        .outerjoin(LS, LS.c.resource_key == R.c.key)
    )


def visible_nodes(
    conn: Connection, vis: Visibility, keys: Collection[str]
) -> dict[str, dict[str, Any]]:
    """The resources among ``keys`` that ``vis`` sees, as node rows by key (with their source
    name and lineage status); invisible ones are simply absent."""
    found: dict[str, dict[str, Any]] = {}
    wanted = sorted(set(keys))
    for chunk in chunks(wanted):
        query = _node_query().where(R.c.key.in_(chunk), visible_condition(conn, vis))
        for row in conn.execute(query).mappings():
            found[row["key"]] = dict(row)
    return found


def edges_touching(
    conn: Connection, keys: Collection[str], upstream: bool, types: Collection[str]
) -> list[dict[str, Any]]:
    """The edges of ``types`` leading into ``keys`` (``upstream``) or out of them, by key."""
    if not keys:
        return []
    column = E.c.downstream_key if upstream else E.c.upstream_key
    found: list[dict[str, Any]] = []
    wanted = sorted(set(keys))
    for chunk in chunks(wanted):
        query = (select(E).where(column.in_(chunk), E.c.lineage_type.in_(list(types)))
                 .order_by(E.c.upstream_key, E.c.downstream_key, E.c.lineage_type))
        found.extend(dict(r) for r in conn.execute(query).mappings())
    return found


def list_edges(
    conn: Connection,
    vis: Visibility,
    types: Collection[str],
    source_key: str | None,
    start: int,
    size: int,
) -> tuple[list[dict[str, Any]], int]:
    """A page of the edges whose both ends ``vis`` sees (one end in ``source_key`` when given),
    by upstream then downstream path, and how many there are in all."""
    up, down = R.alias("up"), R.alias("down")
    where: list[ColumnElement[bool]] = [E.c.lineage_type.in_(list(types))]
    if not vis.everything:
        visible = visible_keys(conn, vis).scalar_subquery()
        where += [E.c.upstream_key.in_(visible), E.c.downstream_key.in_(visible)]
    if source_key is not None:
        where.append(or_(up.c.data_source_key == source_key,
                         down.c.data_source_key == source_key))
    joined = E.join(up, up.c.key == E.c.upstream_key).join(down, down.c.key == E.c.downstream_key)
    total = int(conn.execute(select(func.count()).select_from(joined).where(*where)).scalar_one())
    if start >= total:
        return [], total
    paths = [code_points(conn, up.c.path), code_points(conn, down.c.path)]
    query = (
        select(E).select_from(joined).where(*where)
        .order_by(*paths, E.c.lineage_type, E.c.key)
        .offset(start).limit(size)
    )
    return [dict(r) for r in conn.execute(query).mappings()], total


def counts_by_type(conn: Connection) -> Mapping[str, int]:
    """How many edges of each lineage type are stored."""
    rows = conn.execute(select(E.c.lineage_type, func.count()).group_by(E.c.lineage_type))
    return {str(t): int(n) for t, n in rows}


@dataclass
class Walk:
    """What a breadth-first lineage walk found: visible nodes (with their signed distance),
    the edges between them, hidden neighbours, and why it may have stopped early."""

    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: dict[str, dict[str, Any]] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)
    full: bool = False
    beyond: dict[str, bool] = field(default_factory=dict)


def walk(
    conn: Connection,
    vis: Visibility,
    start: Mapping[str, Any],
    upstream: int,
    downstream: int,
    types: Collection[str],
    max_nodes: int,
) -> Walk:
    """Walk ``upstream`` levels up and ``downstream`` levels down from the node ``start``.

    A level costs two queries (its edges, then the visibility of the new ends). The walk never
    passes through a node the caller cannot see: such a node is counted in ``hidden`` and its
    edges left out. A node reached twice (a cycle, or both up- and downstream) is kept once, at
    the distance it was first reached. ``max_nodes`` bounds the answer (``full`` says it did);
    ``beyond[direction]`` says visible nodes lie past the last level walked.
    """
    found = Walk()
    found.nodes[start["key"]] = {**start, "distance": 0}
    for direction, depth, sign in (("upstream", upstream, -1), ("downstream", downstream, 1)):
        going_up = direction == "upstream"
        far = "upstream_key" if going_up else "downstream_key"
        frontier = [start["key"]]
        level = 0
        while frontier and level < depth and not found.full:
            level += 1
            edges = edges_touching(conn, frontier, going_up, types)
            new = [e[far] for e in edges
                   if e[far] not in found.nodes and e[far] not in found.hidden]
            visible = visible_nodes(conn, vis, new)
            found.hidden.update(k for k in new if k not in visible)
            frontier = []
            for key in dict.fromkeys(k for k in new if k in visible):
                if len(found.nodes) >= max_nodes:
                    found.full = True
                    break
                found.nodes[key] = {**visible[key], "distance": sign * level}
                frontier.append(key)
            for edge in edges:
                if edge["upstream_key"] in found.nodes and edge["downstream_key"] in found.nodes:
                    found.edges[edge["key"]] = edge
        found.beyond[direction] = False
        if frontier and not found.full:
            edges = edges_touching(conn, frontier, going_up, types)
            past = {e[far] for e in edges} - found.nodes.keys() - found.hidden
            found.beyond[direction] = bool(visible_nodes(conn, vis, past))
    return found
