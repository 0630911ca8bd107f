"""The audit trail's chart: :func:`draw_audit_events`, events per user stacked by action."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes

from catalog_nb.notebook.drawing.common import (
    LEGEND_SIZE,
    TEXT_SIZE,
    TITLE_SIZE,
    _axes,
    _check_max,
    _nothing,
    _palette,
)

__all__ = ["draw_audit_events"]


def draw_audit_events(
    events: pd.DataFrame, ax: Axes | None = None, by: str = "user_name", max_bars: int = 20
) -> Axes:
    """Horizontal bars of :meth:`Catalog.audit_events`: one per ``by`` value (a user by
    default), stacked by action, its total at its end; the legend of actions beside the
    axes, never over a bar. Beyond ``max_bars`` values the busiest are drawn, the rest summed
    into one "N others" bar.

    Example::

        draw_audit_events(cat.audit_events(limit=500))
    """
    _check_max("max_bars", max_bars, 2)
    missing = {by, "action"} - set(events.columns)
    if missing:
        raise ValueError(f"not an audit_events frame: no {', '.join(sorted(missing))} column")
    table = (events.assign(**{by: events[by].astype("string").fillna("?")})
             .groupby([by, "action"]).size().unstack(fill_value=0))
    ax = _axes(ax, (9, max(2.5, 0.4 * min(len(table), max_bars) + 1.4)))
    if table.empty:
        return _nothing(ax, "no audit events")
    table = table.loc[table.sum(axis=1).sort_values(ascending=False).index]
    if len(table) > max_bars:
        head, rest = table.iloc[: max_bars - 1], table.iloc[max_bars - 1:]
        table = pd.concat([head, rest.sum().to_frame(f"{len(rest)} others").T])
    colours = _palette(table.columns)
    left = pd.Series(0.0, index=table.index)
    labels = [str(name) for name in table.index]
    for action in table.columns:
        ax.barh(labels, table[action], left=left, label=str(action), color=colours[action])
        left = left + table[action]
    for y, total in enumerate(left):
        ax.text(float(total), y, f" {int(total)}", va="center", fontsize=TEXT_SIZE)
    # room for the totals at the bars' ends: the longest bar ends well inside the axes
    ax.set_xlim(0, max(float(left.max()), 1.0) * 1.15)
    ax.invert_yaxis()  # busiest first
    ax.set_xlabel("events", fontsize=TEXT_SIZE)
    ax.tick_params(labelsize=TEXT_SIZE)
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.legend(title="action", loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=LEGEND_SIZE, title_fontsize=LEGEND_SIZE, frameon=False)
    ax.set_title(f"Audit events by {by.replace('_name', '').replace('_', ' ')} and action",
                 fontsize=TITLE_SIZE)
    return ax
