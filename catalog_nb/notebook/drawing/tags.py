"""The tag pictures: :func:`draw_tag_coverage` (bars of tagged shares) and
:func:`draw_tag_graph` (tags left, the resources they tag right)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import matplotlib.pyplot as plt
import networkx as nx
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from catalog_nb.notebook.drawing import layout as lay
from catalog_nb.notebook.drawing import routes
from catalog_nb.notebook.drawing.common import (
    LEGEND_SIZE,
    TEXT_SIZE,
    TITLE_SIZE,
    _axes,
    _check_max,
    _inches,
    _nothing,
    _palette,
)

__all__ = ["COVERAGE_LEVELS", "draw_tag_coverage", "draw_tag_graph"]

#: Levels of :meth:`Catalog.tag_coverage` that :func:`draw_tag_coverage` can draw.
COVERAGE_LEVELS = ("source", "resource", "domain", "tag")


# -- tag coverage ------------------------------------------------------------------------------


def draw_tag_coverage(
    coverage: pd.DataFrame, ax: Axes | None = None, level: str = "source", max_bars: int = 30,
    suggested: pd.DataFrame | None = None,
) -> Axes:
    """Horizontal bars of the tagged share of fields and of resources at one ``level`` of
    :meth:`Catalog.tag_coverage` (``source``, ``resource``, ``domain`` or ``tag``; resource
    rows get the field share only).

    With ``suggested`` (the coverage counting suggested tags too,
    ``cat.tag_coverage(states=["ACCEPTED", "SUGGESTED"])``), each row shows the fields tagged
    by accepted tags beside the fields that would be tagged were the suggestions accepted: on a
    catalog nobody has reviewed yet, the accepted bars are all empty and the suggestions say
    what discovery found.

    Beyond ``max_bars`` rows, the rows with the most fields are drawn and the rest summed into
    one "N others" bar (their pooled shares).

    Example::

        draw_tag_coverage(cat.tag_coverage(), level="resource", max_bars=20)
        draw_tag_coverage(cat.tag_coverage(), suggested=cat.tag_coverage(
            states=["ACCEPTED", "SUGGESTED"]))
    """
    if level not in COVERAGE_LEVELS:
        raise ValueError(f"level must be one of {', '.join(COVERAGE_LEVELS)}, not {level!r}")
    _check_max("max_bars", max_bars, 2)
    missing = {"level", "name", "fields", "tagged_fields", "resources", "tagged_resources"}
    missing -= set(coverage.columns)
    if missing:
        raise ValueError(f"not a tag_coverage frame: no {', '.join(sorted(missing))} column")
    rows = coverage[coverage["level"] == level]
    ax = _axes(ax, (9, max(3.0, 0.35 * min(len(rows), max_bars + 1) + 1.5)))
    if rows.empty:
        return _nothing(ax, f"no {level} rows in the coverage")
    table = pd.DataFrame(
        {
            "name": rows["name"].astype("string").fillna("?").map(lay.short).tolist(),
            "fields": rows["fields"].fillna(0).astype(int).tolist(),
            "tagged_fields": rows["tagged_fields"].fillna(0).astype(int).tolist(),
            "resources": rows["resources"].fillna(0).astype(int).tolist(),
            "tagged_resources": rows["tagged_resources"].fillna(0).astype(int).tolist(),
        }
    )
    if suggested is not None:
        more = suggested[suggested["level"] == level]
        could = dict(zip(more["name"].astype("string").fillna("?").map(lay.short),
                         more["tagged_fields"].fillna(0).astype(int), strict=True))
        table["suggested_fields"] = [max(could.get(n, t), t) for n, t in
                                     zip(table["name"], table["tagged_fields"], strict=True)]
    note = ""
    if len(table) > max_bars:
        table = table.sort_values(["fields", "name"], ascending=[False, True])
        head, rest = table.iloc[: max_bars - 1], table.iloc[max_bars - 1 :]
        pooled = rest.drop(columns="name").sum()
        table = pd.concat([head, pd.DataFrame([{"name": f"{len(rest)} others", **pooled}])])
        note = f" ({len(rows)} {level}s, {len(rest)} pooled)"

    def ratio(part: pd.Series, whole: pd.Series) -> np.ndarray:
        return np.where(whole > 0, part / whole.where(whole > 0, 1), 0.0)

    table["share"] = ratio(table["tagged_fields"], table["fields"])
    table["resource_share"] = ratio(table["tagged_resources"], table["resources"])
    if suggested is not None:
        # the second bar is the share with suggestions: what reviewing them would give
        table["resource_share"] = ratio(table["suggested_fields"], table["fields"])
    order = ["share", "resource_share", "name"]
    table = table.sort_values(order, ascending=[True, True, False]).reset_index(drop=True)
    y = np.arange(len(table))
    # one resource is tagged or not: its resource share says nothing a bar should show
    both = level != "resource" or suggested is not None
    height = 0.4 if both else 0.7
    offset = height / 2 if both else 0.0
    labels = (("fields tagged (accepted)", "fields tagged counting suggestions")
              if suggested is not None else ("fields tagged", "resources tagged"))
    ax.barh(y + offset, table["share"], height, color="#4C72B0", label=labels[0])
    if both:
        ax.barh(y - offset, table["resource_share"], height,
                color="#9ecae1" if suggested is not None else "#DD8452", label=labels[1])
    texts = [f"{share:.0%} of {fields}" for share, fields in zip(table["share"],
                                                                   table["fields"], strict=True)]
    for i, (share, text) in enumerate(zip(table["share"], texts, strict=True)):
        ax.text(min(float(share), 1.0) + 0.01, i + offset, text, va="center",
                fontsize=TEXT_SIZE)
    if suggested is not None:
        for i, share in enumerate(table["resource_share"]):
            ax.text(min(float(share), 1.0) + 0.01, i - offset, f"{share:.0%}", va="center",
                    fontsize=TEXT_SIZE, color="#333333")
    ax.set_yticks(y)
    ax.set_yticklabels(table["name"], fontsize=TEXT_SIZE)
    ax.tick_params(axis="x", labelsize=TEXT_SIZE)
    ax.set_xlim(0, _room_for(ax, max(texts, key=len)))
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:.0%}"))
    # above the bars, under the title: a legend inside the axes would cover a bar
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=2, frameon=False,
              fontsize=LEGEND_SIZE, borderaxespad=0.2)
    ax.set_title(f"Tag coverage per {level}{note}", fontsize=TITLE_SIZE, pad=24)
    return ax


def _room_for(ax: Axes, text: str) -> float:
    """The right end of the x axis (shares) leaving room after a full bar for ``text``."""
    width = routes.text_box(text, pad=0.0)[0] * TEXT_SIZE / 72 + 0.15  # inches
    axes_width = _inches(ax)[0]
    return 1.0 / max(1.0 - width / axes_width, 0.4)


# -- tag graph ---------------------------------------------------------------------------------


def draw_tag_graph(graph: nx.Graph, ax: Axes | None = None, max_nodes: int = 80) -> Axes:
    """Draw the bipartite tag graph of :meth:`Catalog.tag_graph`: tags in the left column
    (coloured by domain), resources in the right one; edge width by tagged field count.

    Beyond ``max_nodes`` nodes, resources are grouped per data source; if tags alone are
    still too many, the tags tagging most are kept and the rest merged into one node.

    Example::

        draw_tag_graph(cat.tag_graph("demo_files"))
    """
    _check_max("max_nodes", max_nodes, 4)
    ax = _axes(ax, (10, 8))
    if graph.number_of_nodes() == 0:
        return _nothing(ax, "no tagged resources")
    shown, note = graph, ""
    if graph.number_of_nodes() > max_nodes:
        shown = lay.group_resources(graph)
        groups = sum(1 for _, kind in shown.nodes(data="kind") if kind == "group")
        if shown.number_of_nodes() > max_nodes:
            shown = lay.top_tags(shown, max(1, max_nodes - groups - 1))
        note = f" ({graph.number_of_nodes()} nodes grouped into {shown.number_of_nodes()})"
    left = sorted(
        (n for n, k in shown.nodes(data="kind") if k == "tag"),
        key=lambda n: lay.node_label(shown.nodes[n], n),
    )
    right = sorted(
        (n for n, k in shown.nodes(data="kind") if k != "tag"),
        key=lambda n: lay.node_label(shown.nodes[n], n),
    )
    pos: dict[Hashable, tuple[float, float]] = {}
    for x, column in ((0.0, left), (1.0, right)):
        for i, node in enumerate(column):
            pos[node] = (x, 1.0 - (i + 0.5) / max(len(column), 1))
    domains = _palette(shown.nodes[n].get("domain") or "?" for n in left)
    nodes = left + right
    colours = [domains[shown.nodes[n].get("domain") or "?"] for n in left]
    colours += ["#9A9A9A" if shown.nodes[n].get("kind") == "group" else "#CCCCCC" for n in right]
    collection = nx.draw_networkx_nodes(
        shown,
        pos,
        nodelist=nodes,
        ax=ax,
        node_color=colours,
        node_size=260,
        edgecolors="#555555",
        linewidths=0.5,
    )
    collection.set_gid("nodes")
    edges = list(shown.edges(data="weight"))
    if edges:
        heaviest = max(float(w or 1) for _, _, w in edges)
        nx.draw_networkx_edges(
            shown,
            pos,
            edgelist=[(u, v) for u, v, _ in edges],
            ax=ax,
            alpha=0.5,
            width=[0.5 + 3.5 * float(w or 1) / heaviest for _, _, w in edges],
            edge_color="#777777",
        )
    for node in left:
        x, y = pos[node]
        ax.text(
            x - 0.03,
            y,
            lay.node_label(shown.nodes[node], node),
            ha="right",
            va="center",
            fontsize=TEXT_SIZE,
        )
    for node in right:
        x, y = pos[node]
        ax.text(
            x + 0.03, y, lay.node_label(shown.nodes[node], node), ha="left", va="center",
            fontsize=TEXT_SIZE,
        )
    handles: list[Any] = [Patch(color=c, label=str(d)) for d, c in domains.items()]
    handles.append(Patch(color="#CCCCCC", label="resource"))
    if any(shown.nodes[n].get("kind") == "group" for n in right):
        handles.append(Patch(color="#9A9A9A", label="resources of a source"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=LEGEND_SIZE)
    ax.set_xlim(-0.6, 1.6)
    ax.set_axis_off()
    ax.set_title(f"Tags and the resources they tag{note}", fontsize=TITLE_SIZE)
    return ax
