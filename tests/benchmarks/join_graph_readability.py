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

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import networkx as nx

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
