"""Benchmark: how readable the lineage picture is, before and after the layered layout.

    python -m tests.benchmarks.lineage_readability [--demo] [--scale 1.0] [--out DIR]

Measures, on the real matplotlib artists of each picture (``fig.canvas.draw()`` first):

* **crossings**: points where two edges drawn cross (edges sharing a resource never count);
* **struck labels**: pairs of an edge and a resource's name whose box it passes through (the
  boxes an edge starts or ends in do not count);
* the names' smallest font, and the figure's size (a graph too big for it at 8 pt grows it).

*Before* is the picture as drawn until issue 18 (one barycentre sweep, straight edges, names
under the nodes), rebuilt here as the anchor; *after* is :func:`draw_lineage`. Both are drawn
in the same run on:

* TPC-H-shaped lineage (:func:`tpch_lineage`): the eight tables loaded from CSV files, the 22
  queries as views reading them, Q15 through its ``revenue0`` view;
* with ``--demo``, the demo lake's catalog-wide lineage (``cat.lineage_graph()``) and a view's
  (``cat.lineage(sales.customer_revenue, upstream=3, downstream=2)``), profiled by an embedded
  service as :mod:`.relation_quality` does (a few minutes).

Each picture is saved as a PNG in ``--out`` (default: the working folder). Not a test: run it
by hand and read the figures.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import defaultdict
from collections.abc import Hashable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
from matplotlib.axes import Axes
from matplotlib.transforms import Bbox

from catalog_nb.notebook.drawing import draw_lineage
from catalog_nb.notebook.drawing import layout as lay

#: The tour's picture size (inches).
FIGURE = (11.0, 6.0)

#: The tables each TPC-H query reads (``REV``: Q15's ``revenue0`` view).
TPCH_QUERIES = {
    1: "L", 2: "P S PS N R", 3: "C O L", 4: "O L", 5: "C O L S N R", 6: "L", 7: "S L O C N",
    8: "P S L O C N R", 9: "P S L PS O N", 10: "C O L N", 11: "PS S N", 12: "O L", 13: "C O",
    14: "L P", 15: "S REV", 16: "PS P S", 17: "L P", 18: "C O L", 19: "L P", 20: "S N PS P L",
    21: "S L O N", 22: "C O",
}
TPCH_TABLES = {"L": "lineitem", "P": "part", "S": "supplier", "PS": "partsupp", "N": "nation",
               "R": "region", "C": "customer", "O": "orders"}


def tpch_lineage() -> nx.DiGraph:
    """TPC-H's lineage as a catalog would hold it: each table INFERRED from its CSV file, the
    22 queries as views (FACTUAL) reading the tables, Q15 through ``revenue0``."""
    graph = nx.DiGraph()

    def add(key: str, path: str, kind: str, source: str) -> None:
        graph.add_node(key, name=path, path=path, resource_type=kind, source=source)

    for table in TPCH_TABLES.values():
        add(f"csv:{table}", f"tpch/{table}.csv", "file", "tpch_csv")
        add(table, f"tpch.{table}", "table", "tpch_sql")
        graph.add_edge(f"csv:{table}", table, lineage_type="INFERRED")
    add("revenue0", "tpch.revenue0", "view", "tpch_sql")
    graph.add_edge("lineitem", "revenue0", lineage_type="FACTUAL")
    for query, reads in TPCH_QUERIES.items():
        add(f"q{query}", f"tpch.q{query:02d}", "view", "tpch_sql")
        for read in reads.split():
            upstream = "revenue0" if read == "REV" else TPCH_TABLES[read]
            graph.add_edge(upstream, f"q{query}", lineage_type="FACTUAL")
    return graph


# -- measures on the drawn artists ---------------------------------------------------------------


def _edges(ax: Axes) -> list[np.ndarray]:
    """Each drawn edge's points in display coordinates."""
    return [line.get_transform().transform(line.get_xydata())  # type: ignore[attr-defined]
            for line in ax.lines if line.get_gid() == "edge"]


def _name_boxes(ax: Axes) -> list[tuple[str, Bbox]]:
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = []
    for text in ax.texts:
        if text.get_gid() != "node":
            continue
        patch = text.get_bbox_patch()
        box = patch.get_window_extent(renderer) if patch else text.get_window_extent(renderer)
        boxes.append((text.get_text(), box))
    return boxes


def _cross(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> bool:
    def side(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> float:
        return float((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]))

    return side(a, b, c) * side(a, b, d) < 0 and side(c, d, a) * side(c, d, b) < 0


def drawn_crossings(ax: Axes) -> int:
    """Points where two drawn edges cross; edges meeting at a resource's box never count."""
    edges = _edges(ax)
    count = 0
    for i, first in enumerate(edges):
        for second in edges[i + 1:]:
            ends = {tuple(np.round(first[0])), tuple(np.round(first[-1]))}
            if ends & {tuple(np.round(second[0])), tuple(np.round(second[-1]))}:
                continue
            count += sum(1 for a, b in itertools.pairwise(first)
                         for c, d in itertools.pairwise(second)
                         if _cross(a, b, c, d))
    return count


def _through(segments: np.ndarray, box: Bbox) -> bool:
    """Whether any of the segments ``(n, 2, 2)`` passes through the box (clipping each to
    it, Liang-Barsky)."""
    start, step = segments[:, 0, :], segments[:, 1, :] - segments[:, 0, :]
    low, high = np.array([box.x0, box.y0]), np.array([box.x1, box.y1])
    with np.errstate(divide="ignore", invalid="ignore"):
        first, second = (low - start) / step, (high - start) / step
    level = step == 0  # a level or upright segment: inside its band or never
    inside = (start >= low) & (start <= high)
    enter = np.where(level, np.where(inside, -np.inf, np.inf), np.minimum(first, second))
    leave = np.where(level, np.where(inside, np.inf, -np.inf), np.maximum(first, second))
    return bool((np.maximum(enter.max(axis=1), 0.0) < np.minimum(leave.min(axis=1), 1.0)).any())


def struck_labels(ax: Axes) -> list[tuple[int, str]]:
    """(edge, name) pairs where the drawn edge passes through the name's box, the boxes the
    edge starts and ends in aside (shrunk by a pixel: touching is not striking)."""
    boxes = [(name, Bbox.from_extents(box.x0 + 1, box.y0 + 1, box.x1 - 1, box.y1 - 1))
             for name, box in _name_boxes(ax)]
    struck = []
    for index, points in enumerate(_edges(ax)):
        segments = np.stack([points[:-1], points[1:]], axis=1)
        for name, inner in boxes:
            if inner.contains(*points[0]) or inner.contains(*points[-1]):
                continue
            if _through(segments, inner):
                struck.append((index, name))
    return struck


# -- the picture before issue 18, the anchor -----------------------------------------------------


def one_sweep_positions(
    graph: nx.DiGraph, layers: dict[Hashable, int]
) -> dict[Hashable, tuple[float, float]]:
    """Positions as drawn before: each column ordered by one sweep of neighbours' mean."""
    by_layer: dict[int, list[Hashable]] = defaultdict(list)
    for node, layer in layers.items():
        by_layer[layer].append(node)
    position: dict[Hashable, tuple[float, float]] = {}
    for layer in sorted(by_layer):
        def order(node: Hashable) -> tuple[float, str]:
            seen = [position[p][1] for p in graph.predecessors(node) if p in position]
            seen += [position[s][1] for s in graph.successors(node) if s in position]
            return (float(np.mean(seen)) if seen else 0.0), lay.node_label(graph.nodes[node],
                                                                            node)

        nodes = sorted(by_layer[layer], key=order)
        for i, node in enumerate(nodes):
            position[node] = (float(layer), (len(nodes) - 1) / 2.0 - i)
    return position


def draw_before(graph: nx.DiGraph, ax: Axes) -> Axes:
    """The lineage picture as drawn before issue 18: straight edges between node centres,
    8 pt names under the nodes."""
    layers = lay.layers(graph)
    pos = one_sweep_positions(graph, layers)
    ax.scatter([x for x, _ in pos.values()], [y for _, y in pos.values()], s=420, zorder=3)
    for u, v in graph.edges():
        (x0, y0), (x1, y1) = pos[u], pos[v]
        ax.plot([x0, x1], [y0, y1], color="#333333", gid="edge", zorder=2)
    for node, (x, y) in pos.items():
        ax.annotate(lay.node_label(graph.nodes[node], node), xy=(x, y), xytext=(0, -13),
                    textcoords="offset points", ha="center", va="top", fontsize=8, zorder=5,
                    gid="node", bbox={"boxstyle": "round,pad=0.15", "facecolor": "white",
                                      "edgecolor": "none", "alpha": 0.8})
    ys = [y for _, y in pos.values()]
    ax.set_ylim(min(ys) - 0.6, max(ys) + 0.4)
    return ax


def measure(name: str, graph: nx.DiGraph, out: Path) -> None:
    """Print crossings and struck labels before and after for one graph; save both."""
    print(f"\n{name}: {graph.number_of_nodes()} resources, {graph.number_of_edges()} edges")
    for label, draw in (("before", draw_before), ("after", draw_lineage)):
        fig, ax = plt.subplots(figsize=FIGURE)
        draw(graph, ax=ax)
        fig.canvas.draw()
        struck = struck_labels(ax)
        smallest = min(float(t.get_fontsize()) for t in ax.texts if t.get_gid() == "node")
        inches = "x".join(f"{v:g}" for v in fig.get_size_inches().round(1))
        print(f"  {label:<6}  {drawn_crossings(ax):>4} crossings  {len(struck):>4} struck labels"
              f"  ({len({n for _, n in struck})} names struck), names at {smallest:.1f} pt"
              f" on {inches} in")
        path = out / f"lineage-{name}-{label}.png"
        fig.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(fig)
        print(f"          picture: {path}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--demo", action="store_true", help="profile the demo lake too")
    parser.add_argument("--scale", type=float, default=1.0, help="the demo lake's scale")
    parser.add_argument("--out", type=Path, help="where the pictures go (default: here)")
    args = parser.parse_args(argv)
    out = (args.out or Path.cwd()).resolve()
    out.mkdir(parents=True, exist_ok=True)
    measure("tpch", tpch_lineage(), out)
    if args.demo:
        _demo(args.scale, out)
    return 0


def _demo(scale: float, out: Path) -> None:
    from catalog_nb.client import connect
    from catalog_nb.demo.lake import build_lake
    from tests.benchmarks.harness import PASSWORD, in_folder, profiled_demo

    def run(folder: Path) -> None:
        lake = folder / "lake"
        build_lake(lake, seed=7, scale=scale)
        with profiled_demo(lake, folder) as (server, _api, _keys):
            cat = connect(server.url, "admin", PASSWORD, progress=False)
            measure("demo-catalog", cat.lineage_graph(), out)
            resources = cat.resources()
            view = resources[resources["path"] == "sales.customer_revenue"]["key"].iloc[0]
            measure("demo-view", cat.lineage(view, upstream=3, downstream=2), out)

    in_folder(None, "lineage-", run)


if __name__ == "__main__":
    sys.exit(main())
