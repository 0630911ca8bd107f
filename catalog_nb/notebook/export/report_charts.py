"""The summary charts of the HTML report (:mod:`.report`): findings per audit stacked by
severity, tag associations per data source stacked by state. Both are horizontal bars, one per
row, with their totals at the bars' ends and the legend above the bars, never over them; they
take the matplotlib Axes to draw on and need matplotlib only (no pyplot state).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from catalog_nb.notebook.export.report_sections import AUDIT_TITLES

__all__ = ["SEVERITY_COLOURS", "STATE_COLOURS", "findings_chart", "states_chart"]

SEVERITY_COLOURS = {"high": "#c0392b", "medium": "#e67e22", "low": "#f1c40f", "info": "#7f8c8d"}
#: Accepted tags dark, suggestions light (the coverage chart's colours), rejected grey.
STATE_COLOURS = {"ACCEPTED": "#4C72B0", "SUGGESTED": "#9ecae1", "REJECTED": "#bbbbbb"}
_FONT = 10


def _stacked(ax: Any, table: pd.DataFrame, labels: list[str], colours: dict[str, str],
             what: str) -> Any:
    """Horizontal bars of ``table`` (a row per bar, a column per stacked part, in the order of
    ``colours``), totals at the ends, the legend above."""
    order = [part for part in colours if part in table.columns]
    left = pd.Series(0, index=table.index)
    for part in order:
        ax.barh(labels, table[part], left=left, label=part.lower(), color=colours[part])
        left = left + table[part]
    for y, total in enumerate(left):
        ax.text(total, y, f" {int(total):,}", va="center", fontsize=_FONT)
    # room for the totals at the bars' ends; the legend outside the bars, above them
    ax.set_xlim(0, max(float(left.max()), 1) * 1.15)
    ax.set_xlabel(what, fontsize=_FONT)
    ax.tick_params(labelsize=_FONT)
    ax.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=len(order), frameon=False,
              fontsize=_FONT)
    ax.invert_yaxis()
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def _nothing(ax: Any, text: str) -> Any:
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=_FONT)
    ax.set_axis_off()
    return ax


def findings_chart(findings: pd.DataFrame) -> Callable[[Any], Any]:
    """Draws the findings per audit (titled as people read them) stacked by severity."""
    def draw(ax: Any) -> Any:
        if findings.empty:
            return _nothing(ax, "no findings")
        table = findings.groupby(["audit", "severity"]).size().unstack(fill_value=0)
        labels = [AUDIT_TITLES.get(str(a), str(a)) for a in table.index]
        return _stacked(ax, table, labels, SEVERITY_COLOURS, "findings")

    return draw


def states_chart(associations: pd.DataFrame) -> Callable[[Any], Any]:
    """Draws the tag associations per data source stacked by state."""
    def draw(ax: Any) -> Any:
        if associations.empty:
            return _nothing(ax, "no tag associations")
        table = associations.groupby(["source", "state"]).size().unstack(fill_value=0)
        return _stacked(ax, table, [str(s) for s in table.index], STATE_COLOURS,
                        "tag associations")

    return draw
