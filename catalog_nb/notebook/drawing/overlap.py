"""The overlap picture: :func:`draw_overlap_matrix`, a heatmap of schema overlap."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from catalog_nb.notebook.drawing import layout as lay
from catalog_nb.notebook.drawing.common import TEXT_SIZE, TITLE_SIZE, _axes, _check_max, _nothing

__all__ = ["draw_overlap_matrix"]


def draw_overlap_matrix(matrix: pd.DataFrame, ax: Axes | None = None, max_labels: int = 40) -> Axes:
    """A heatmap of :meth:`Catalog.overlap_matrix` (0-100 %), with a colour bar.

    Cells are annotated up to 15 tables; table names label the axes up to ``max_labels``
    tables (beyond, the axes say how many tables there are), so hundreds of tables still
    give a readable picture of where the overlap is.

    Example::

        draw_overlap_matrix(cat.overlap_matrix(["sales.customers", "sales.orders"]))
    """
    _check_max("max_labels", max_labels, 1)
    ax = _axes(ax, (8, 7))
    if matrix.empty:
        return _nothing(ax, "the overlap matrix is empty")
    values = matrix.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    image = ax.imshow(values, vmin=0, vmax=100, cmap="viridis", aspect="auto")
    ax.figure.colorbar(image, ax=ax, label="overlap %")
    count = len(matrix)
    if count <= max_labels:
        ax.tick_params(axis="both", bottom=True, left=True, labelbottom=True, labelleft=True)
        ax.set_xticks(range(len(matrix.columns)))
        ax.set_xticklabels(
            [lay.short(c, 24) for c in matrix.columns], rotation=60, ha="right", fontsize=TEXT_SIZE
        )
        ax.set_yticks(range(count))
        ax.set_yticklabels([lay.short(i, 24) for i in matrix.index], fontsize=TEXT_SIZE)
    else:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel(f"{len(matrix.columns)} tables (names hidden above {max_labels})")
        ax.set_ylabel(f"{count} tables")
    if count <= 15:
        for i in range(count):
            for j in range(len(matrix.columns)):
                value = values[i, j]
                if not np.isnan(value):
                    ax.text(
                        j,
                        i,
                        f"{value:.0f}",
                        ha="center",
                        va="center",
                        fontsize=TEXT_SIZE - 1,
                        color="white" if value < 60 else "black",
                    )
    ax.set_title("Schema overlap (%)", fontsize=TITLE_SIZE)
    return ax
