"""Where the lineage picture puts its boxes and runs its edges (:func:`route`), so that no
edge crosses a name.

Each column of the layered order (:mod:`~catalog_nb.notebook.drawing.layered`) is a band as
wide as the widest box plus a stub on each side. An edge leaves its box sideways, runs level to
the edge of the band, crosses the gap between two bands diagonally, runs level through each
column it passes (at the height of its dummy node, which the column keeps clear of boxes) and
enters its other box sideways. Boxes only lie inside bands and level runs only pass between
boxes, so no edge crosses a box but its own two.

Sizes are reckoned in points from the text's outline (matplotlib's ``TextToPath``, no
renderer needed), at 9 pt, shrunk (down to 8 pt) when the picture does not fit the axes; below
that, :attr:`Routed.needed` says how big the axes must be (the picture grows its figure).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import networkx as nx
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import TextToPath

from catalog_nb.notebook.drawing import layered
from catalog_nb.notebook.drawing.common import TEXT_SIZE

__all__ = ["LINE_SPACING", "PAD", "Routed", "route", "text_box"]

#: Padding of a box around its text, in font sizes (matplotlib's ``boxstyle`` pad).
PAD = 0.3
#: Distance between the baselines of a multi-line name, in font sizes.
LINE_SPACING = 1.2
#: Smallest font the picture shrinks to; a bigger graph needs bigger axes.
MIN_FONT = 8.0
# In font sizes: the level run between a box and its band's edge, the space between two boxes
# of a column, the height an edge passing a column keeps clear, the least gap between two
# bands, and the margin around the drawing.
_STUB, _GAP, _DUMMY, _BETWEEN, _MARGIN = 0.8, 0.9, 0.5, 3.0, 0.6
#: Outlines measure a little narrower than rendered text (hinting): room for the difference.
_SLACK = 1.08


@dataclass
class Routed:
    """Where to draw: box centres (x is the column), each edge's points from its upstream to
    its downstream end, the axes limits, the font size, and the axes' size (inches) the
    drawing needs at that font (more than it was given when the graph is too big)."""

    centres: dict[Hashable, tuple[float, float]]
    paths: dict[tuple[Hashable, Hashable], list[tuple[float, float]]]
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    font_size: float
    boxes: dict[Hashable, tuple[float, float]] = field(default_factory=dict)
    needed: tuple[float, float] = (0.0, 0.0)


@lru_cache(maxsize=4096)
def text_box(text: str, pad: float = PAD) -> tuple[float, float]:
    """A text's box (width, height) in font sizes, ``pad`` font sizes of padding on each side
    (multiply by the font size for points).

    >>> 5 < text_box("sales.customer_revenue")[0] < 15
    True
    """
    outline = TextToPath()
    font = FontProperties(size=10.0)
    lines = text.split("\n") or [""]
    width = max(outline.get_text_width_height_descent(line, font, ismath=False)[0]
                for line in lines) / 10.0
    height = 1.0 + LINE_SPACING * (len(lines) - 1)
    return width * _SLACK + 2 * pad, height * 1.1 + 2 * pad


def route(
    graph: nx.DiGraph,
    layers: Mapping[Hashable, int],
    labels: Mapping[Hashable, str],
    area: tuple[float, float],
) -> Routed:
    """Boxes and edge routes of a lineage picture drawn in ``area`` (inches), its columns
    given by ``layers``."""
    order, chains = layered.order_layers(graph, layers, key=lambda n: labels.get(n, str(n)))
    proper, _, _ = layered.proper_layering(graph, layers)
    sizes = {node: text_box(labels[node]) for node in graph}
    heights = {node: sizes[node][1] if node in sizes else _DUMMY
               for nodes in order.values() for node in nodes}
    y = layered.place_heights(proper, order, heights, _GAP)
    band = max(width for width, _ in sizes.values()) + 2 * _STUB
    first, last = min(order), max(order)
    count = last - first + 1
    top = max(y[n] + heights[n] / 2 for n in y) + _MARGIN
    bottom = min(y[n] - heights[n] / 2 for n in y) - _MARGIN
    width_pt, height_pt = area[0] * 72.0, area[1] * 72.0
    needed = count * band + (count - 1) * _BETWEEN + 2 * _MARGIN
    font = max(MIN_FONT, min(TEXT_SIZE, width_pt / needed, height_pt / (top - bottom)))
    edge = (band / 2 + _MARGIN) * font  # points from the outer columns to the axes' sides
    pitch = (width_pt - 2 * edge) / (count - 1) if count > 1 else width_pt
    pitch = max(pitch, (band + _BETWEEN) * font)  # points from one column to the next

    def at(node: Hashable, dx: float = 0.0) -> tuple[float, float]:
        column = node.layer if isinstance(node, layered.Dummy) else layers[node]
        return float(column) + dx * font / pitch, float(y[node] * font)

    paths: dict[tuple[Hashable, Hashable], list[tuple[float, float]]] = {}
    for u, v in graph.edges():
        if u == v:
            continue
        chain = chains.get((u, v))
        if chain is None:  # both ends in one column (a cycle): a bracket beside the column
            out = band / 2
            paths[(u, v)] = [at(u, sizes[u][0] / 2), at(u, out), (at(u, out)[0], at(v)[1]),
                             at(v, sizes[v][0] / 2)]
            continue
        start, end = chain[0], chain[-1]
        points = [at(start, sizes[start][0] / 2), at(start, band / 2)]
        for dummy in chain[1:-1]:
            points += [at(dummy, -band / 2), at(dummy, band / 2)]
        points += [at(end, -band / 2), at(end, -sizes[end][0] / 2)]
        paths[(u, v)] = points if start == u else points[::-1]
    half = (width_pt / pitch - (count - 1)) / 2 if count > 1 else 0.5
    half = max(half, edge / pitch)
    centre = (top + bottom) / 2 * font
    span = max(height_pt, (top - bottom) * font)
    return Routed(
        centres={node: at(node) for node in graph},
        paths=paths,
        xlim=(first - half, last + half),
        ylim=(centre - span / 2, centre + span / 2),
        font_size=round(font, 2),
        boxes={node: (w * font, h * font) for node, (w, h) in sizes.items()},
        needed=(needed * font / 72.0, (top - bottom) * font / 72.0),
    )
