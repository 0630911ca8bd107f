"""Benchmark: how readable the HTML report's pictures are, on the demo lake and on TPC-H.

    python -m tests.benchmarks.report_readability [--scale 0.3] [--tpch-scale 0.01]
                                                  [--out DIR] [--keep DIR] [--screenshot]

Builds two catalogs as a user would, each through real PROFILE jobs of an embedded service
(discovery of tags, joins and lineage runs at the end of each job):

* the demo lake at ``--scale`` (:func:`~catalog_nb.demo.lake.build_lake`);
* TPC-H at ``--tpch-scale`` as CSV files, Parquet files and an SQLite database whose views are
  the 22 queries (:mod:`.tpch_lake`).

Then writes each catalog's HTML report with ``export_all`` (what ``catalog-nb export --html``
runs) into ``--out`` and measures every picture of it as drawn
(:func:`catalog_nb.notebook.export.report.report_pictures`, on the matplotlib artists after
``canvas.draw()``):

* **crossings**: pairs of drawn edges that cross (edges sharing an end never count);
* **overlaps**: pairs of labels whose boxes overlap (graphs: resource names and edge labels;
  charts: every text, tick labels and legend included);
* **struck**: (edge, resource name) pairs where the edge passes through the name's box, the
  boxes it starts and ends in aside;
* **font**: the smallest font of any text of the picture, in points (the PNG is embedded at
  its size: 100 dpi, no wider than the report's column).

The anchor of each graph, drawn in the same run on the same graph: the join picture as issue 18
found it (every condition on a circle, :func:`.join_graph_readability.draw_circle`) and the
lineage picture before the layered layout (:func:`.lineage_readability.draw_before`). Targets:
0 overlaps, 0 struck names, fonts >= 8 pt; each line says "met" or "NOT met". The sections
are checked too: the inventory lists every resource (collection members folded) with its
fields, coverage shows accepted beside "with suggestions", the five pictures are there.

``--keep DIR`` builds the catalogs in ``DIR`` and reuses them on the next run (profiling is
most of the time); ``--screenshot`` also renders each report with headless Chromium
(``/usr/bin/chromium``) to ``<name>-report.png`` to be looked at. Not a test: run it by hand.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from catalog_nb.client import Catalog, connect
from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.demo.lake import build_lake, lake_sources
from catalog_nb.notebook.export import export_all, export_frames
from catalog_nb.notebook.export.report import Section, report_pictures
from tests.benchmarks import join_graph_readability as joins
from tests.benchmarks import lineage_readability as lineage
from tests.benchmarks.harness import PASSWORD, Api, in_folder
from tests.benchmarks.tpch_lake import build_tpch_lake, tpch_sources

#: Targets: no overlapping labels, no name struck by an edge, no text under 8 pt.
MIN_FONT = 8.0
#: Marks a catalog folder whose sources were all profiled (reused by ``--keep``).
_DONE = "profiled.txt"


# -- measures on the drawn artists ---------------------------------------------------------------


def _texts(figure: Figure) -> list[Text]:
    return [t for t in figure.findobj(Text) if t.get_visible() and t.get_text().strip()]


def smallest_font(figure: Figure) -> float:
    """The smallest font (points) of any text drawn in the figure."""
    return min((float(t.get_fontsize()) for t in _texts(figure)), default=0.0)


def text_overlaps(figure: Figure) -> int:
    """Pairs of texts of the figure whose boxes overlap (a chart's every label)."""
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    boxes = [t.get_window_extent(renderer) for t in _texts(figure)]
    return sum(1 for i, a in enumerate(boxes) for b in boxes[i + 1:] if a.overlaps(b))


def _segments(ax: Any) -> list[np.ndarray]:
    """Each drawn edge's points in display coordinates: the lineage picture's lines and the
    join picture's line collections."""
    from matplotlib.collections import LineCollection

    edges = [line.get_transform().transform(line.get_xydata())
             for line in ax.lines if line.get_gid() == "edge"]
    edges += [ax.transData.transform(np.asarray(s)) for c in ax.collections
              if isinstance(c, LineCollection) for s in c.get_segments()]
    return edges


def struck_names(ax: Any) -> int:
    """(edge, name) pairs where an edge passes through a name's box, the boxes it starts and
    ends in aside (both pictures' edges)."""
    renderer = ax.figure.canvas.get_renderer()
    boxes = []
    for text in ax.texts:
        if text.get_gid() == "node":
            patch = text.get_bbox_patch()
            box = patch.get_window_extent(renderer) if patch else text.get_window_extent(renderer)
            boxes.append(Bbox.from_extents(box.x0 + 1, box.y0 + 1, box.x1 - 1, box.y1 - 1))
    count = 0
    for points in _segments(ax):
        pieces = np.stack([points[:-1], points[1:]], axis=1)
        for box in boxes:
            if box.contains(*points[0]) or box.contains(*points[-1]):
                continue
            count += lineage._through(pieces, box)  # the benchmarks share one clipper
    return count


def _drawn(figure: Figure) -> None:
    """The figure drawn on an Agg canvas (the report's figures have none of their own)."""
    if not hasattr(figure.canvas, "get_renderer"):
        FigureCanvasAgg(figure)
    figure.canvas.draw()


def graph_figures(figure: Figure) -> dict[str, Any]:
    """Crossings, overlapping labels, struck names and the smallest font of a graph picture."""
    _drawn(figure)
    ax = figure.axes[0]
    if any(line.get_gid() == "edge" for line in ax.lines):
        crossings = lineage.drawn_crossings(ax)
    else:
        crossings = joins.edge_crossings(ax)
    return {"crossings": crossings, "overlaps": joins.label_overlaps(ax),
            "struck": struck_names(ax), "font": smallest_font(figure)}


def chart_figures(figure: Figure) -> dict[str, Any]:
    """Overlapping texts and the smallest font of a chart (no edges)."""
    _drawn(figure)
    return {"crossings": None, "overlaps": text_overlaps(figure), "struck": None,
            "font": smallest_font(figure)}


def _anchor(name: str, cat: Catalog) -> dict[str, Any] | None:
    """The anchor of a graph picture, drawn on the report's figure size."""
    figure = plt.figure(figsize=(10, 7) if name == "joins" else (10, 6))
    ax = figure.add_subplot()
    if name == "joins":
        joins.draw_circle(cat.join_graph(min_score=0, copies=False), ax)
    else:
        lineage.draw_before(cat.lineage_graph(), ax)
    measured = graph_figures(figure)
    plt.close(figure)
    return measured


def _line(label: str, measured: dict[str, Any] | None) -> str:
    if measured is None:
        return f"    {label:<8} -"
    crossings = "-" if measured["crossings"] is None else measured["crossings"]
    struck = "-" if measured["struck"] is None else measured["struck"]
    return (f"    {label:<8} {crossings!s:>9} {measured['overlaps']:>9} {struck!s:>7} "
            f"{measured['font']:>7.1f}")


def measure(name: str, cat: Catalog, out: Path, screenshot: bool) -> bool:
    """Write the catalog's report, print every picture's figures beside its anchor's; True
    when every picture meets the targets."""
    started = time.monotonic()
    html = out / f"{name}-report.html"
    export_all(cat, html=html, title=f"Catalog report: {name}")
    print(f"\n{name}: {html} ({time.monotonic() - started:.1f} s)")
    frames = export_frames(cat)
    findings = frames.pop("findings")
    pictures: dict[str, Section] = report_pictures(cat, frames, findings)
    print(f"    {'':<8} {'crossings':>9} {'overlaps':>9} {'struck':>7} {'font pt':>7}  target")
    met_all = True
    for key, section in pictures.items():
        if section.figure is None:
            print(f"  {section.title}: unavailable ({section.unavailable})")
            continue
        graph = key in ("lineage", "joins")
        after = graph_figures(section.figure) if graph else chart_figures(section.figure)
        met = (after["overlaps"] == 0 and not after["struck"] and after["font"] >= MIN_FONT)
        met_all &= met
        print(f"  {section.title}")
        if graph:
            print(_line("before", _anchor(key, cat)))
        print(f"{_line('report', after)}  0 overlaps, 0 struck, >= {MIN_FONT:g} pt: "
              f"{'met' if met else 'NOT met'}")
        section.figure.savefig(out / f"{name}-{key}.png", dpi=100, bbox_inches="tight")
    met_all &= check_sections(html, cat)
    if screenshot:
        _screenshot(html)
    return met_all


def check_sections(html: Path, cat: Catalog) -> bool:
    """Print whether the report's sections say what the catalog holds: every resource that is
    not a collection member in the inventory with its fields, coverage accepted beside 'with
    suggestions' and the sentence why, the five pictures present; True when they do."""
    from bs4 import BeautifulSoup

    text = html.read_text(encoding="utf-8")
    page = BeautifulSoup(text, "html.parser")
    listed = {d.summary.select_one(".path").get_text(): len(d.select("tbody tr"))
              for d in page.select("details.resource")}
    resources = cat.resources()
    members = {p for p in resources["path"] if any(
        p.startswith(c.rstrip("/") + "/") for c in resources.loc[resources["type"] ==
                                                                 "collection", "path"])}
    fields = cat.fields(limit=100_000).groupby(["resource_path"]).size()
    wanted = {p: int(fields.get(p, 0)) for p in resources["path"] if p not in members}
    heads = [th.get_text() for th in page.select("table.coverage thead tr")[1].find_all("th")]
    checks = {
        "inventory lists every resource with its fields": listed == wanted,
        "coverage: accepted beside with suggestions, and why": heads == [
            "accepted", "with suggestions", "accepted", "with suggestions"]
        and page.select_one("#coverage-note") is not None,
        "five pictures": text.count("data:image/png;base64,") == 5,
    }
    for label, ok in checks.items():
        print(f"  {label}: {'met' if ok else 'NOT met'}")
    return all(checks.values())


def _screenshot(html: Path) -> None:
    browser = shutil.which("chromium") or "/usr/bin/chromium"
    target = html.with_suffix(".png")
    subprocess.run([browser, "--headless", "--no-sandbox", "--hide-scrollbars",
                    f"--screenshot={target}", "--window-size=1280,9000", f"file://{html}"],
                   check=True, capture_output=True, timeout=300)
    print(f"  screenshot: {target}")


# -- the catalogs --------------------------------------------------------------------------------


@contextmanager
def _catalog(folder: Path, sources: list[dict[str, Any]], roots: list[Path]) -> Iterator[Catalog]:
    """An embedded service on ``folder``'s store, its sources profiled (once: a kept folder
    is reused)."""
    server = EmbeddedServer(folder / "catalog", admin_password=PASSWORD,
                            data_roots=roots).start()
    try:
        if not (folder / _DONE).exists():
            api = Api(server.url)
            clock = time.monotonic()
            for payload in sources:
                job = api.run_job(api.post("/datasource", payload)["key"], "PROFILE")
                print(f"  {payload['name']}: {job['message'][:160]}")
            (folder / _DONE).write_text(f"{time.monotonic() - clock:.1f} s\n")
            print(f"  profiled in {time.monotonic() - clock:.1f} s")
        with connect(server.url, "admin", PASSWORD, progress=False) as cat:
            yield cat
    finally:
        server.stop()


def run(args: argparse.Namespace, folder: Path) -> None:
    started = time.monotonic()
    out = (args.out or Path.cwd()).resolve()
    out.mkdir(parents=True, exist_ok=True)
    met = True
    if args.only in (None, "demo"):
        demo = folder / f"demo-{args.scale:g}"
        lake = demo / "lake"
        if not (demo / _DONE).exists():
            shutil.rmtree(demo, ignore_errors=True)
            build_lake(lake, seed=args.seed, scale=args.scale)
        with _catalog(demo, lake_sources(lake), [lake]) as cat:
            met &= measure(f"demo-{args.scale:g}", cat, out, args.screenshot)
    if args.only in (None, "tpch"):
        met &= _tpch(args, folder, out)
    print(f"\nall targets: {'met' if met else 'NOT met'} ({time.monotonic() - started:.1f} s)")


def _tpch(args: argparse.Namespace, folder: Path, out: Path) -> bool:
    tpch = folder / f"tpch-sf{args.tpch_scale}"
    tpch.mkdir(parents=True, exist_ok=True)
    built = build_tpch_lake(tpch, args.tpch_scale, args.data) if not (tpch / _DONE).exists() \
        else {"csv": args.data / f"sf{args.tpch_scale}-csv",
              "parquet": args.data / f"sf{args.tpch_scale}-parquet", "sqlite": tpch / "tpch.db"}
    with _catalog(tpch, tpch_sources(built), [built["csv"], built["parquet"], tpch]) as cat:
        return measure(f"tpch-sf{args.tpch_scale}", cat, out, args.screenshot)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=float, default=0.3, help="the demo lake's scale")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tpch-scale", default="0.01", help="TPC-H scale factor")
    parser.add_argument("--data", type=Path, default=Path.home() / ".cache/catalog_nb/tpch",
                        help="where TPC-H's files are generated (once)")
    parser.add_argument("--out", type=Path, help="where the reports go (default: here)")
    parser.add_argument("--keep", type=Path, help="build the catalogs here and reuse them")
    parser.add_argument("--only", choices=("demo", "tpch"), help="one of the two catalogs")
    parser.add_argument("--screenshot", action="store_true",
                        help="render each report to PNG with headless Chromium")
    args = parser.parse_args(argv)
    return in_folder(args.keep, "report-readability-", lambda folder: run(args, folder))


if __name__ == "__main__":
    sys.exit(main())
