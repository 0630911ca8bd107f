"""Benchmark: how readable the toolkit's join picture is, on the demo lake and on TPC-H.

    python -m tests.benchmarks.join_graph_readability [--scale 1.0] [--tpch-scale 0.01]
                                                      [--out DIR] [--keep DIR]

Builds and profiles the demo lake (as :mod:`.relation_quality` does) and TPC-H loaded three
ways, as CSV files, Parquet files and an SQLite database without declared keys (as
:mod:`.tpch_relations` does), each through real PROFILE jobs of an embedded service. Then, over
HTTP with the client, for each catalog:

* **every condition**: ``cat.join_graph(min_score=0, copies=False)``, one node per resource and
  every condition (what the toolkit drew before issue 14), with the edge crossings of its
  layout;
* **default**: ``cat.join_graph()``: conditions scoring 0.85 or more (docs/relations-api.md,
  "Scores"), copies merged into one node; and what ``draw_join_graph`` draws of it (the
  strongest join of each referring column), with its crossings.

Then the pictures themselves, measured on their matplotlib artists after ``canvas.draw()``:
edge crossings (edges sharing a node never count), overlapping labels (pairs of names or edge
labels whose boxes overlap) and the smallest font. The anchor, drawn in the same run, is the
picture as issue 18 found it: every condition of every resource on a circle, names and
columns at 7.5 and 6.5 pt (:func:`draw_circle`); *after* is :func:`draw_join_graph` of the
default graph.

Each picture is saved as a PNG in ``--out`` (default: the working folder) to be looked at.
Not a test: run it by hand and read the figures.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.transforms import Bbox

from catalog_nb.client import Catalog, connect
from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.demo.lake import build_lake
from catalog_nb.notebook.drawing import draw_join_graph
from catalog_nb.notebook.drawing import layout as lay
from tests.benchmarks.harness import PASSWORD, Api, in_folder, profiled_demo
from tests.benchmarks.profile_tpch import ensure_tpch
from tests.benchmarks.tpch_relations import load_sqlite

#: The tour's picture size (inches).
FIGURE = (11.0, 7.0)


def _crossings(graph: nx.Graph) -> int:
    flat = nx.Graph(graph)
    flat.remove_edges_from(list(nx.selfloop_edges(flat)))
    return lay.crossings(flat, lay.component_layout(flat))


def draw_circle(graph: nx.Graph, ax: Axes) -> Axes:
    """The anchor: every node on a circle, straight edges, names on the nodes (7.5 pt) and
    each edge's columns at its middle (6.5 pt)."""
    flat = nx.Graph(graph)
    flat.remove_edges_from(list(nx.selfloop_edges(flat)))
    pos = nx.circular_layout(sorted(flat, key=str))
    nx.draw_networkx_edges(flat, pos, ax=ax, alpha=0.6)
    for node in flat:
        x, y = pos[node]
        ax.text(x, y, lay.node_label(flat.nodes[node], node), fontsize=7.5, ha="center",
                va="center", gid="node", bbox={"boxstyle": "round,pad=0.3", "facecolor": "white"})
    for u, v, attrs in flat.edges(data=True):
        middle = (np.asarray(pos[u]) + np.asarray(pos[v])) / 2
        ax.text(float(middle[0]), float(middle[1]), attrs.get("label") or "", fontsize=6.5,
                ha="center", va="center",
                gid="edge-label")
    ax.set_axis_off()
    return ax


def _extents(ax: Axes) -> list[Bbox]:
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = []
    for text in ax.texts:
        if text.get_gid() in ("node", "edge-label") and text.get_text():
            patch = text.get_bbox_patch()
            boxes.append(patch.get_window_extent(renderer) if patch
                         else text.get_window_extent(renderer))
    return boxes


def label_overlaps(ax: Axes) -> int:
    """Pairs of drawn labels (names and edge labels) whose boxes overlap."""
    boxes = _extents(ax)
    return sum(1 for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b))


def edge_crossings(ax: Axes) -> int:
    """Pairs of drawn edges that cross (edges sharing an end never count)."""
    segments = [np.asarray(s) for c in ax.collections if isinstance(c, LineCollection)
                for s in c.get_segments()]
    graph = nx.Graph()
    pos: dict[Any, Any] = {}
    for i, seg in enumerate(segments):
        ends = [tuple(np.round(p, 6)) for p in (seg[0], seg[-1])]
        pos.update({end: end for end in ends})
        graph.add_edge(*ends, index=i)
    return lay.crossings(graph, pos)


def smallest_font(ax: Axes) -> float:
    """The smallest font size (points) of the texts drawn on the axes."""
    return min((float(t.get_fontsize()) for t in ax.texts if t.get_text()), default=0.0)


def measure_pictures(name: str, every: nx.Graph, default: nx.Graph, out: Path,
                     lineage: nx.DiGraph | None = None) -> None:
    """Print the anchor's and the picture's crossings, overlaps and smallest font; save both.
    ``lineage`` leaves the views' joins out of the picture, as the HTML report does."""
    for label, graph, draw in (("before (circle, every condition)", every, draw_circle),
                               ("after (draw_join_graph, default)", default,
                                lambda g, ax: draw_join_graph(g, ax=ax, lineage=lineage))):
        fig, ax = plt.subplots(figsize=FIGURE)
        draw(graph, ax)
        fig.canvas.draw()
        print(f"  {label:<34} {edge_crossings(ax):>4} edge crossings,"
              f" {label_overlaps(ax):>4} overlapping labels, smallest font"
              f" {smallest_font(ax):.1f} pt")
        fig.savefig(out / f"join-graph-{name}-{label.split()[0]}.png", dpi=100,
                    bbox_inches="tight")
        plt.close(fig)


def measure(name: str, cat: Catalog, out: Path) -> None:
    """Print the sizes of both graphs of one catalog and save their pictures."""
    every = cat.join_graph(min_score=0, copies=False)
    default = cat.join_graph()
    drawn = lay.strongest_joins(default)
    print(f"\n{name}")
    print(f"  every condition: {every.number_of_nodes():>3} nodes {every.number_of_edges():>4}"
          f" edges, {_crossings(every)} crossings")
    print(f"  default:         {default.number_of_nodes():>3} nodes {default.number_of_edges():>4}"
          f" edges ({default.graph.get('resource_count')} resources,"
          f" copy groups merged: {default.graph.get('copy_groups')}, score >= "
          f"{default.graph['min_score']}); drawn: {drawn.number_of_edges()} edges,"
          f" {_crossings(drawn)} crossings")
    # After the catalog's name: the figures were printed above it, under the previous one's.
    measure_pictures(name, every, default, out, cat.lineage_graph())
    for label, graph, options in (("every", every, {"strongest": False, "edge_labels": False}),
                                  ("default", default, {})):
        fig, ax = plt.subplots(figsize=FIGURE)
        draw_join_graph(graph, ax=ax, **options)
        path = out / f"join-graph-{name}-{label}.png"
        fig.savefig(path, dpi=100, bbox_inches="tight")
        plt.close(fig)
        print(f"  picture: {path}")


@contextmanager
def _tpch(scale: str, data: Path, folder: Path) -> Iterator[Catalog]:
    csv_folder = ensure_tpch(data, scale, "csv")
    parquet_folder = ensure_tpch(data, scale, "parquet")
    database = load_sqlite(csv_folder, folder / "tpch.db")
    server = EmbeddedServer(folder / "tpch-catalog", admin_password=PASSWORD,
                            data_roots=[csv_folder, parquet_folder, folder]).start()
    try:
        api = Api(server.url)
        for payload in (
            {"name": "tpch_csv", "sourceType": "FILE", "uri": str(csv_folder)},
            {"name": "tpch_parquet", "sourceType": "FILE", "uri": str(parquet_folder)},
            {"name": "tpch_sqlite", "sourceType": "SQL", "uri": f"sqlite:///{database}"},
        ):
            job = api.run_job(api.post("/datasource", payload)["key"], "PROFILE")
            print(f"  {payload['name']}: {job['message'][:120]}...")
        yield connect(server.url, "admin", PASSWORD, progress=False)
    finally:
        server.stop()


def run(args: argparse.Namespace, folder: Path) -> None:
    started = time.monotonic()
    out = (args.out or Path.cwd()).resolve()
    out.mkdir(parents=True, exist_ok=True)
    lake = folder / "lake"
    build_lake(lake, seed=args.seed, scale=args.scale)
    with profiled_demo(lake, folder) as (server, _api, _keys):
        measure(f"demo-{args.scale:g}", connect(server.url, "admin", PASSWORD, progress=False),
                out)
    with _tpch(args.tpch_scale, args.data, folder) as cat:
        measure(f"tpch-sf{args.tpch_scale}", cat, out)
    print(f"\n({time.monotonic() - started:.1f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="the demo lake's scale")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tpch-scale", default="0.01", help="TPC-H scale factor")
    parser.add_argument("--data", type=Path, default=Path.home() / ".cache/catalog_nb/tpch")
    parser.add_argument("--out", type=Path, help="where the pictures go (default: here)")
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    args = parser.parse_args(argv)
    return in_folder(args.keep, "join-graph-", lambda folder: run(args, folder))


if __name__ == "__main__":
    sys.exit(main())
