"""The self-contained HTML report: summary figures, charts, audit findings grouped by audit
(collapsible), tag coverage accepted beside suggested, the resource and field inventory and the
lineage picture, rendered from ``templates/report.html`` with jinja2.

Charts are drawn with matplotlib (no pyplot state) and embedded as base64 PNG, and the style
sheet is inlined, so the file opens anywhere without network access. A section that cannot be
drawn (a snapshot holds no lineage, the drawing helpers are missing, the service refused) says
so and why instead of failing the whole report.
"""

from __future__ import annotations

import base64
import importlib
import io
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.notebook.export.cells import atomic_path, check_writable
from catalog_nb.notebook.export.report_charts import SEVERITY_COLOURS, findings_chart, states_chart
from catalog_nb.notebook.export.report_sections import (
    coverage_note,
    coverage_table,
    finding_groups,
    inventory,
)
from catalog_nb.snapshot.files import reports_import

__all__ = ["Section", "render_report", "report_pictures", "write_report"]

#: Rows of findings listed in the report (all are counted in the summary).
MAX_FINDINGS = 500


@dataclass
class Section:
    """One picture of the report: its PNG (base64) or why it is unavailable, and the drawn
    matplotlib figure (what :mod:`tests.benchmarks.report_readability` measures)."""

    title: str
    png: str | None = None
    unavailable: str | None = None
    figure: Any = field(default=None, repr=False)


#: Where a graph picture's axes sit in its figure (shares): room on the right for the legend.
_GRAPH_BOX = {"left": 0.02, "right": 0.8, "bottom": 0.07, "top": 0.9}


def _png(draw: Callable[[Any], Any], size: tuple[float, float] = (8, 4.5),
         graph: bool = False) -> tuple[str, Any]:
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, dpi=100)
    if graph:
        # a graph is laid out for the axes it is drawn on: the axes are placed first, and
        # never shrunk afterwards (tight_layout would squeeze names into one another)
        figure.subplots_adjust(**_GRAPH_BOX)
    axes = figure.add_subplot()
    draw(axes)
    if not graph:
        figure.tight_layout()
    buffer = io.BytesIO()
    # "tight" crops (or widens) the picture to what was drawn, without rescaling it
    figure.savefig(buffer, format="png", bbox_inches="tight", pad_inches=0.15)
    return base64.b64encode(buffer.getvalue()).decode("ascii"), figure


def _picture(title: str, draw: Callable[[Any], Any], size: tuple[float, float] = (8, 4.5),
             graph: bool = False) -> Section:
    try:
        png, figure = _png(draw, size, graph)
        return Section(title, png=png, figure=figure)
    except ImportError as exc:
        return Section(title, unavailable=f"the drawing helpers are not available ({exc})")
    except Exception as exc:  # noqa: BLE001 - one picture failing must not lose the report
        return Section(title, unavailable=f"it could not be drawn: {type(exc).__name__}: {exc}")


def _coverage_from_frames(frames: Mapping[str, pd.DataFrame],
                          states: tuple[str, ...] = ("ACCEPTED",)) -> pd.DataFrame:
    """:meth:`Catalog.tag_coverage` computed offline from snapshot frames (tags in
    ``states``)."""
    from catalog_nb.client.frames import to_frame
    from catalog_nb.client.relations.frames import COVERAGE_COLUMNS
    from catalog_nb.client.tags.coverage import coverage_rows

    fields = frames["fields"]
    by_resource: dict[str, list[dict[str, Any]]] = {}
    for key, name in zip(fields["resource_key"], fields["name"], strict=True):
        by_resource.setdefault(str(key), []).append({"name": name})
    resources = [
        {"key": str(r["key"]), "dataSourceName": r["source"], "resourcePath": r["path"],
         "fields": by_resource.get(str(r["key"]), [])}
        for r in frames["resources"].to_dict("records")
    ]
    assoc = frames["associations"]
    views = [
        {"resourceKey": r["resource_key"], "tagFullName": r["tag"], "domainName": r["domain"],
         "field": None if pd.isna(r["field"]) else r["field"]}
        for r in assoc[assoc["state"].isin(list(states))].to_dict("records")
    ]
    return to_frame(coverage_rows(resources, views), COVERAGE_COLUMNS)


def _coverage(source: Any, frames: Mapping[str, pd.DataFrame],
              states: tuple[str, ...] = ("ACCEPTED",)) -> tuple[pd.DataFrame | None, str | None]:
    try:
        if hasattr(source, "tag_coverage"):
            return source.tag_coverage(states=list(states)), None
        return _coverage_from_frames(frames, states), None
    except ImportError as exc:
        return None, f"tag coverage is not available in this installation ({exc})"
    except Exception as exc:  # noqa: BLE001 - a missing section must not lose the report
        return None, f"tag coverage could not be computed: {type(exc).__name__}: {exc}"


def _graph_picture(source: Any, title: str, *, method: str, drawing: str, holds: str,
                   picture: str, read: str, empty: Callable[[Any], bool], why_empty: str,
                   size: tuple[float, float],
                   options: Callable[[], dict[str, Any]] = dict) -> Section:
    """The picture of the graph ``source.<method>()`` drawn by ``drawing`` (with the keyword
    arguments ``options()`` gives), or why there is
    none: a snapshot (which holds no ``holds``), no drawing installed, the service refused
    (``read`` could not be read), or ``empty(graph)`` (``why_empty``)."""
    if not hasattr(source, method):
        return Section(title, unavailable=f"a snapshot holds no {holds}; export from a live "
                       f"catalog for the {picture} picture")
    try:
        draw = getattr(importlib.import_module("catalog_nb.notebook.drawing"), drawing)
    except ImportError as exc:
        return Section(title, unavailable=f"the {picture} drawing is not available ({exc})")
    try:
        graph = getattr(source, method)()
    except Exception as exc:  # noqa: BLE001 - e.g. the service refused; say so in the report
        return Section(title, unavailable=f"the {read} could not be read: {exc}")
    if empty(graph):
        return Section(title, unavailable=why_empty)
    extra = options()
    return _picture(title, lambda ax: draw(graph, ax=ax, **extra), size=size, graph=True)


def _lineage(source: Any) -> Section:
    return _graph_picture(
        source, "Lineage", method="lineage_graph", drawing="draw_lineage", holds="lineage",
        picture="lineage", read="lineage", empty=lambda g: g.number_of_nodes() == 0,
        why_empty="the catalog has no lineage yet", size=(10, 6))


def _joins(source: Any) -> Section:
    return _graph_picture(
        source, "Joins", method="join_graph", drawing="draw_join_graph",
        holds="join conditions", picture="join", read="joins",
        empty=lambda g: g.number_of_edges() == 0, why_empty="discovery has found no joins yet",
        size=(10, 7), options=lambda: _join_options(source))


def _join_options(source: Any) -> dict[str, Any]:
    """The lineage the join picture leaves the views' joins out by (they read as a hairball:
    TPC-H's 22 query views join the tables through the same keys), when it can be read."""
    try:
        return {"lineage": source.lineage_graph()}
    except Exception:  # noqa: BLE001 - without lineage the picture draws every join
        return {}


def _coverage_picture(coverage: pd.DataFrame | None, suggested: pd.DataFrame | None,
                      reason: str | None) -> Section:
    title = "Tag coverage by data source"
    if coverage is None:
        return Section(title, unavailable=reason)
    try:
        from catalog_nb.notebook.drawing import draw_tag_coverage
    except ImportError as exc:
        return Section(title, unavailable=f"the coverage chart is not available ({exc})")
    sources = int((coverage["level"] == "source").sum())
    return _picture(title, lambda ax: draw_tag_coverage(coverage, ax=ax, level="source",
                                                        suggested=suggested),
                    size=(8, 1.8 + 0.7 * min(sources, 30)))


def _summary(frames: Mapping[str, pd.DataFrame], findings: pd.DataFrame) -> list[tuple[str, Any]]:
    resources, assoc = frames["resources"], frames["associations"]
    documented = int((resources["description"].fillna("").str.strip() != "").sum())
    profiled = int(resources["profiled"].notna().sum())
    figures: list[tuple[str, Any]] = [
        ("Data sources", len(frames["sources"])),
        ("Data resources", len(resources)),
        ("Fields", len(frames["fields"])),
        ("Profiled resources", f"{profiled} of {len(resources)}"),
        ("Documented resources", f"{documented} of {len(resources)}"),
        ("Users", len(frames["users"])),
        ("Roles", len(frames["roles"])),
        ("Tags", len(frames["tags"])),
    ]
    for state in ("ACCEPTED", "SUGGESTED", "REJECTED"):
        figures.append((f"{state.title()} tags", int((assoc["state"] == state).sum())))
    for severity in SEVERITY_COLOURS:
        figures.append((f"Findings: {severity}", int((findings["severity"] == severity).sum())))
    return figures


def report_pictures(
    source: Any,
    frames: Mapping[str, pd.DataFrame],
    findings: pd.DataFrame,
    coverage: tuple[pd.DataFrame | None, pd.DataFrame | None, str | None] | None = None,
) -> dict[str, Section]:
    """The report's pictures, drawn: ``findings`` and ``states`` (the summary's charts),
    ``coverage``, ``lineage`` and ``joins``; ``coverage`` is the accepted coverage, the
    coverage with suggestions and why there is none, when already computed."""
    if coverage is None:
        accepted, reason = _coverage(source, frames)
        coverage = (accepted, _coverage(source, frames, ("ACCEPTED", "SUGGESTED"))[0], reason)
    associations = frames["associations"]
    return {
        "findings": _picture("Audit findings by audit and severity", findings_chart(findings),
                             size=(8, 1.6 + 0.45 * max(findings["audit"].nunique(), 1))),
        "states": _picture("Tag associations by data source and state",
                           states_chart(associations),
                           size=(8, 1.6 + 0.45 * max(associations["source"].nunique(), 1))),
        "coverage": _coverage_picture(*coverage),
        "lineage": _lineage(source),
        "joins": _joins(source),
    }


def render_report(
    source: Any,
    frames: Mapping[str, pd.DataFrame],
    findings: pd.DataFrame,
    *,
    title: str | None = None,
) -> str:
    """The HTML text of the report for ``source`` (a Catalog or a Snapshot) from its
    ``frames`` (by table name) and audit ``findings``."""
    jinja2 = reports_import("jinja2")
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("catalog_nb.notebook.export", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
    )
    coverage, reason = _coverage(source, frames)
    suggested, _ = _coverage(source, frames, ("ACCEPTED", "SUGGESTED"))
    coverage_rows = note = None
    if coverage is not None:
        with_suggested = coverage if suggested is None else suggested
        coverage_rows = coverage_table(coverage, with_suggested)
        note = coverage_note(frames["associations"], coverage, with_suggested)
    pictures = report_pictures(source, frames, findings, (coverage, suggested, reason))
    resources, left_out = inventory(frames)
    taken = getattr(source, "taken_at", None)
    origin = getattr(source, "url", None) or ""
    return str(environment.get_template("report.html").render(
        title=title or "Catalog report",
        origin=origin,
        snapshot_time=None if taken is None else f"{taken:%Y-%m-%d %H:%M} UTC",
        generated=f"{pd.Timestamp.now(tz='UTC'):%Y-%m-%d %H:%M} UTC",
        figures=_summary(frames, findings),
        charts=[pictures["findings"], pictures["states"]],
        finding_groups=finding_groups(findings, MAX_FINDINGS),
        findings_total=len(findings),
        findings_cut=len(findings) > MAX_FINDINGS,
        max_findings=MAX_FINDINGS,
        coverage=pictures["coverage"],
        coverage_rows=coverage_rows,
        coverage_note=note,
        inventory=resources,
        inventory_left_out=left_out,
        lineage=pictures["lineage"],
        joins=pictures["joins"],
    ))


def write_report(
    path: str | os.PathLike[str],
    source: Any,
    frames: Mapping[str, pd.DataFrame],
    findings: pd.DataFrame,
    *,
    title: str | None = None,
) -> Path:
    """Render the report (:func:`render_report`) and write it to ``path``, whole or not at all.

    Raises:
        ExportError: the path cannot be written.
    """
    target = Path(path).expanduser()
    check_writable(target, "HTML report")
    html = render_report(source, frames, findings, title=title)
    with atomic_path(target, "HTML report") as work:
        work.write_text(html, encoding="utf-8")
    return target
