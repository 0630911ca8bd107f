"""What the pictures of :mod:`catalog_nb.notebook.drawing` share: the Axes to draw on, the
"nothing to draw" note, the check of a ``max_*`` argument, and one colour per name."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

_NOTHING = "nothing to draw"


def _axes(ax: Axes | None, size: tuple[float, float]) -> Axes:
    if ax is not None:
        return ax
    _, made = plt.subplots(figsize=size)
    return made


def _nothing(ax: Axes, what: str) -> Axes:
    ax.text(
        0.5,
        0.5,
        f"{_NOTHING}: {what}",
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="#666666",
    )
    ax.set_axis_off()
    return ax


def _check_max(name: str, value: int, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be a whole number of at least {minimum}, not {value!r}")


def _palette(names: Iterable[Any]) -> dict[Any, Any]:
    colours = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]
    return {name: colours[i % len(colours)] for i, name in enumerate(sorted(set(names), key=str))}


#: Font sizes (points) the pictures use at their default size: readable on screen and paper.
TEXT_SIZE = 9.0
LEGEND_SIZE = 9.0
TITLE_SIZE = 11.0


def _inches(ax: Axes) -> tuple[float, float]:
    """The axes' drawing area in inches (width, height)."""
    width, height = ax.get_figure(root=True).get_size_inches()  # type: ignore[union-attr]
    box = ax.get_position()
    return float(width * box.width), float(height * box.height)
