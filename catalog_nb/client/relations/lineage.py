"""Lineage, join and overlap pictures of the catalog as networkx graphs and DataFrames.

* ``lineage(resource, upstream=, downstream=, fields=, types=)``: the lineage around one
  resource as a :class:`networkx.DiGraph` (edges upstream -> downstream).
* ``impact(resource, depth=)``: everything downstream of a resource, with distances.
* ``lineage_graph(scope=, types=)``: every visible lineage edge touching a scope.
* ``join_conditions(scope=, min_score=)``, ``join_graph(scope=, min_score=0.85, copies=)``
  (copies merged, only the conditions above the documented threshold by default) and
  ``join_paths(a, b, max_hops=)``: the discovered and declared join conditions.
* ``overlap(t1, t2)`` and ``overlap_matrix(tables)``: schema overlap of SQL tables
  (:mod:`catalog_nb.client.relations.overlap`).

Resources are named by key, a ``(source, path)`` tuple, or a record with ``key`` (JSON dict,
frame row, :class:`~catalog_nb.client.resources.view.Resource`); ``scope`` as
:mod:`catalog_nb.client.relations.frames` says. Draw the graphs with
:mod:`catalog_nb.notebook.drawing`.

Example::

    g = cat.lineage(("demo_sql", "sales.top_customers"), upstream=3, downstream=0)
    cat.impact(("demo_sql", "sales.customers"))[["path", "distance", "via_path"]]
    cat.join_paths(("demo_sql", "sales.products"), ("demo_files", "crm/customers.csv"))
    cat.overlap("sales.customers", "sales.customer_contacts").attrs["overlap_percent"]
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable
from typing import Any

import networkx as nx
import pandas as pd

from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.api.relations import (
    JOIN_PAGE_MAX,
    LINEAGE_PAGE_MAX,
    lineage_types,
)
from catalog_nb.client.errors import TruncatedResultWarning
from catalog_nb.client.frames import to_frame
from catalog_nb.client.paging import caller_stacklevel, read_pages
from catalog_nb.client.relations.frames import (
    IMPACT_COLUMNS,
    JOIN_CONDITION_COLUMNS,
    JOIN_PATH_COLUMNS,
    Scope,
    ScopeRef,
    resolve_scope,
)
from catalog_nb.client.relations.graphs import impact_rows, lineage_from_answer, lineage_from_edges
from catalog_nb.client.relations.joins import (
    DEFAULT_MIN_SCORE,
    join_graph_from_conditions,
    join_path_rows,
    merge_copies,
)
from catalog_nb.client.relations.overlap import OverlapMixin
from catalog_nb.client.tags.associations import ResourceRef, resource_key_of

__all__ = ["LineageMixin"]

#: A truncation reason that only says more levels exist past the depth the caller asked for.
_BEYOND = re.compile(r"\bbeyond\b|\bdeeper\b|\bfurther\b", re.IGNORECASE)


def _depth(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be a whole number of levels, not {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be 0 or more (0 walks no level), not {value}")
    return value


def _losses(graph: nx.DiGraph, asked: Iterable[int]) -> list[str]:
    """The truncation reasons the caller did not choose: a depth above the service's cap, a
    walk stopped by its node limit; not "more levels exist beyond the depth asked for"."""
    reasons = [str(r) for r in graph.graph["truncated_reasons"]]
    if not graph.graph["truncated"]:
        return []
    lost = [r for r in reasons if not _BEYOND.search(r)]
    max_depth = graph.graph.get("max_depth")
    if max_depth is not None and any(d > int(max_depth) for d in asked) and not lost:
        lost.append(f"the depth asked for is above the service's cap of {max_depth} levels.")
    return lost


def _warn_truncated(caller: str, lost: list[str]) -> None:
    warnings.warn(
        f"{caller}: the lineage is incomplete: {' '.join(lost)}",
        TruncatedResultWarning,
        stacklevel=caller_stacklevel(),
    )


class LineageMixin(OverlapMixin):
    """Lineage, joins and (from :class:`~catalog_nb.client.relations.overlap.OverlapMixin`) table
    overlap; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    api: CatalogApi
    progress: bool

    # -- helpers -------------------------------------------------------------------------------

    def _scope(self, scope: ScopeRef) -> Scope:
        return resolve_scope(self.api, scope)

    def _join_records(self, scope: Scope, min_score: float | None) -> list[dict[str, Any]]:
        def fetch(start: int, size: int, _cursor: str | None) -> Any:
            return self.api.list_join_conditions(
                start=start, size=size, data_source=scope.source_name, min_score=min_score
            )

        records, _ = read_pages(
            fetch,
            page_size=JOIN_PAGE_MAX,
            limit=None,
            progress=self.progress,
            description="join conditions",
        )
        return records

    # -- lineage -------------------------------------------------------------------------------

    def lineage(
        self,
        resource: ResourceRef,
        upstream: int = 1,
        downstream: int = 1,
        fields: bool = False,
        types: str | Iterable[str] | None = None,
    ) -> nx.DiGraph:
        """The lineage around one resource: a DiGraph keyed by resource key.

        ``upstream``/``downstream``: levels to walk each way (0 = none; the service caps
        them, 10 by default); ``fields=True`` adds each edge's ``field_lineage``; ``types``:
        ``"FACTUAL"`` (from view SQL), ``"INFERRED"`` (from content) or both (``None``).

        Node attributes: name, path, source, source_key, resource_type, file_format, owner,
        description, row_count, schema, table, distance (negative upstream, 0 for the
        resource, positive downstream), lineage_state, lineage_reason. Edges (upstream ->
        downstream): key, lineage_type, score, evidence, field_lineage. ``graph.graph``:
        root, truncated, truncated_reasons, hidden_count (edges to resources you may not see),
        upstream, downstream, lineage_types, max_depth. A truncated answer also warns
        (:class:`TruncatedResultWarning`).

        Raises:
            NotFoundError: unknown or hidden resource (``RESOURCE_NOT_FOUND``).
            ValueError: a negative depth or an unknown type.

        Example::

            g = cat.lineage(("demo_sql", "sales.customer_revenue"), upstream=2, fields=True)
            [g.nodes[n]["path"] for n in g.predecessors(g.graph["root"])]
        """
        up, down = _depth("upstream", upstream), _depth("downstream", downstream)
        wanted = lineage_types(types)
        key = resource_key_of(self.api, resource)
        answer = self.api.get_lineage(
            key, upstream=up, downstream=down, field_lineage=fields, lineage_types=wanted
        )
        graph = lineage_from_answer(answer, fields=fields)
        lost = _losses(graph, (up, down))
        if lost:
            _warn_truncated("lineage", lost)
        return graph

    def impact(
        self,
        resource: ResourceRef,
        depth: int | None = None,
        types: str | Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """Everything downstream of a resource (what a change to it may break).

        ``depth`` limits the levels (``None``: as deep as the service walks). Columns: key,
        source, path, name, resource_type, distance (1 = read directly), lineage_types (of
        the edges reaching it from one level closer), via (the upstream neighbour on a
        shortest path, its key) and via_path; sorted by distance. ``frame.attrs`` holds
        ``root``, ``truncated`` and ``truncated_reasons`` (a truncated walk also warns).

        Example::

            cat.impact(("demo_sql", "sales.customers")).query("distance > 1")
        """
        if depth is not None:
            _depth("depth", depth)
        wanted = lineage_types(types)
        key = resource_key_of(self.api, resource)
        # a first shallow walk often answers everything (not truncated) and tells maxDepth
        first = 1 if depth is None else depth
        answer = self.api.get_lineage(key, upstream=0, downstream=first, lineage_types=wanted)
        if depth is None and answer.get("truncated"):
            deepest = int(answer.get("maxDepth") or first)
            if deepest > first:
                answer = self.api.get_lineage(
                    key, upstream=0, downstream=deepest, lineage_types=wanted
                )
        graph = lineage_from_answer(answer)
        root = str(graph.graph["root"] or key)
        frame = to_frame(impact_rows(graph, root) if root in graph else [], IMPACT_COLUMNS)
        asked = depth if depth is not None else int(graph.graph.get("downstream") or first)
        lost = _losses(graph, (asked,))
        if depth is None and graph.graph["truncated"] and not lost:
            lost = [str(r) for r in graph.graph["truncated_reasons"]] or ["deeper levels exist."]
        frame.attrs.update(
            root=root,
            truncated=bool(graph.graph["truncated"]),
            truncated_reasons=list(graph.graph["truncated_reasons"]),
        )
        if lost:
            _warn_truncated("impact", lost)
        return frame

    def lineage_graph(
        self,
        scope: ScopeRef = None,
        types: str | Iterable[str] | None = None,
        *,
        fields: bool = False,
    ) -> nx.DiGraph:
        """Every visible lineage edge touching ``scope``, as one DiGraph (read page by page).

        Nodes and edges carry the attributes of :meth:`lineage` (``distance`` is ``None``;
        ``in_scope`` says whether a node is inside the scope, the other ends of edges leaving
        it are kept; ``field_lineage`` only with ``fields=True``). ``graph.graph``: total_count,
        edge_count.

        Example::

            g = cat.lineage_graph("demo_sql", types="FACTUAL")
            nx.topological_sort(g)
        """
        wanted = lineage_types(types)
        where = self._scope(scope)

        def fetch(start: int, size: int, _cursor: str | None) -> Any:
            return self.api.list_lineage(
                start=start,
                size=size,
                lineage_types=wanted,
                data_source=where.source_name,
                field_lineage=fields,
            )

        records, total = read_pages(
            fetch,
            page_size=LINEAGE_PAGE_MAX,
            limit=None,
            progress=self.progress,
            description="lineage",
        )
        return lineage_from_edges(records, scope=where, total=total, fields=fields)

    # -- joins ---------------------------------------------------------------------------------

    def join_conditions(
        self, scope: ScopeRef = None, min_score: float | None = None
    ) -> pd.DataFrame:
        """Join conditions with an end in ``scope``, one row per condition, best first.

        Columns: key, left_key, left_source, left_path, left_name, left_cols, right_key,
        right_source, right_path, right_name, right_cols, cardinality (left to right), score,
        origin (DECLARED, DISCOVERED), state, left_in_right, right_in_left (containment
        estimates), left_distinct, right_distinct, sample_size, name_similarity, tags.

        Example::

            cat.join_conditions("demo_sql", min_score=0.8)[["left_path", "right_path", "score"]]
        """
        if min_score is not None and not 0.0 <= float(min_score) <= 1.0:
            raise ValueError(f"min_score must be between 0 and 1, not {min_score!r}")
        where = self._scope(scope)
        records = [
            record
            for record in self._join_records(where, min_score)
            if where.contains(record.get("leftResourceId"), record.get("leftSourceName"))
            or where.contains(record.get("rightResourceId"), record.get("rightSourceName"))
        ]
        frame = to_frame(records, JOIN_CONDITION_COLUMNS)
        return frame.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)

    def join_graph(
        self,
        scope: ScopeRef = None,
        min_score: float = DEFAULT_MIN_SCORE,
        *,
        copies: bool = True,
    ) -> nx.Graph:
        """Resources joined by their join conditions: an undirected Graph keyed by resource key.

        ``min_score``: the least score of the conditions kept, 0.85 by default
        (:data:`~catalog_nb.client.relations.joins.DEFAULT_MIN_SCORE`: the service's scores are
        calibrated so that about nine in ten such conditions are true; 0 keeps every
        condition). ``copies=True`` merges each group of copies (resources linked by an
        INFERRED lineage edge of kind COPY: one table as CSV, Parquet and SQL table) into one
        node named by its original, with ``members`` and a ``label`` listing them
        (:func:`~catalog_nb.client.relations.joins.merge_copies`); ``copies=False`` keeps one node
        per resource.

        Nodes: name, path, source, source_key, file_format, owner, tags, in_scope (and
        members, member_labels, label for a group of copies). One edge per joined pair:
        ``conditions`` (list of dicts: key, left, right, left_cols, right_cols, cardinality,
        score, origin; best first), ``score`` and ``weight`` (the best score) and ``label``
        (the columns, ``o_custkey → c_custkey``). ``graph.graph``: min_score, and with copies
        merged copy_groups and resource_count.

        Example::

            g = cat.join_graph("demo_sql")
            sorted(g.edges(data="label"), key=lambda e: -g.edges[e[:2]]["score"])[:5]
            everything = cat.join_graph(min_score=0, copies=False)
        """
        if not 0.0 <= float(min_score) <= 1.0:
            raise ValueError(f"min_score must be between 0 and 1, not {min_score!r}")
        graph = self._join_graph(scope, min_score)
        if not copies:
            return graph

        def fetch(start: int, size: int, _cursor: str | None) -> Any:
            return self.api.list_lineage(
                start=start, size=size, lineage_types=["INFERRED"], field_lineage=True
            )

        # Every source's copies: a scoped graph still shows a copy elsewhere as its group.
        lineage, _ = read_pages(
            fetch,
            page_size=LINEAGE_PAGE_MAX,
            limit=None,
            progress=self.progress,
            description="lineage",
        )
        return merge_copies(graph, lineage)

    def _join_graph(self, scope: ScopeRef, min_score: float) -> nx.Graph:
        where = self._scope(scope)
        records = self._join_records(where, min_score or None)
        return join_graph_from_conditions(records, scope=where, min_score=min_score)

    def join_paths(
        self,
        a: ResourceRef,
        b: ResourceRef,
        max_hops: int = 3,
        scope: ScopeRef = None,
        *,
        limit: int | None = 10,
        min_score: float = 0.0,
    ) -> pd.DataFrame:
        """The ways to join resource ``a`` to ``b``: one row per hop of each path, best first.

        A path is a chain of at most ``max_hops`` joins through the join graph (of ``scope``),
        each hop using its best condition; ``path_score`` is the product of the hop scores.
        Columns: path (1 = best), hops, step, left, left_cols, right, right_cols (keys and
        columns, read from ``a`` towards ``b``), cardinality, score, path_score, left_source,
        left_path, right_source, right_path, origin. ``limit`` keeps the best paths (``None``
        for all); ``frame.attrs["paths_found"]`` tells how many there were. No path: an
        empty frame.

        Raises:
            NotFoundError: ``a`` or ``b`` does not exist (or is hidden).
            ValueError: ``max_hops`` below 1, ``a`` and ``b`` the same resource.

        Example::

            cat.join_paths(("demo_sql", "sales.products"), ("demo_sql", "sales.customers"))
        """
        hops = _depth("max_hops", max_hops)
        if hops < 1:
            raise ValueError("max_hops must be at least 1")
        if limit is not None and limit < 1:
            raise ValueError("limit must be at least 1 (or None for every path)")
        start, end = resource_key_of(self.api, a), resource_key_of(self.api, b)
        if start == end:
            raise ValueError("a and b are the same resource; a join path needs two")
        graph = self._join_graph(scope, min_score)
        for key in (start, end):
            if key not in graph:
                self.api.get_resource(key)  # raises NotFoundError for an unknown key
        rows, found = join_path_rows(graph, start, end, max_hops=hops, limit=limit)
        frame = to_frame(rows, JOIN_PATH_COLUMNS)
        frame.attrs.update(paths_found=found, a=start, b=end)
        return frame
