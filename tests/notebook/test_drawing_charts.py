"""The charts read at their default size: legends beside or above the data, never over a
bar; bars and their labels inside the axes; text of 9 pt. Asserted on the drawn artists."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

from catalog_nb.client.frames import to_frame
from catalog_nb.client.relations.frames import COVERAGE_COLUMNS
from catalog_nb.client.tags.coverage import coverage_rows, tag_graph_from
from catalog_nb.notebook.drawing import (
    draw_audit_events,
    draw_overlap_matrix,
    draw_tag_coverage,
    draw_tag_graph,
)


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    yield
    plt.close("all")


def _coverage(resources: int, fields: int = 120) -> pd.DataFrame:
    res = [{"key": f"r{i}", "dataSourceName": f"src{i % 2}", "resourcePath": f"src/r{i}",
            "name": f"r{i}", "fields": [{"name": f"f{j}"} for j in range(fields)]}
           for i in range(resources)]
    tags = [{"resourceKey": f"r{i}", "field": f"f{j}", "tagFullName": "D.T", "tagKey": "D.T",
             "domainName": "D", "state": "ACCEPTED"}
            for i in range(0, resources, 2) for j in range(fields)]
    return to_frame(coverage_rows(res, tags), COVERAGE_COLUMNS)


def _events(users: dict[str, dict[str, int]]) -> pd.DataFrame:
    rows = [{"user_name": user, "action": action, "object_type": "TAG"}
            for user, counts in users.items() for action, count in counts.items()
            for _ in range(count)]
    return pd.DataFrame(rows)


def _drawn(ax: Axes) -> Any:
    ax.figure.canvas.draw()
    return ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]


def _bars(ax: Axes) -> list[Rectangle]:
    return [p for p in ax.patches if isinstance(p, Rectangle) and p.get_width() > 0]


def _assert_readable(ax: Axes) -> None:
    """Legend off every bar and outside the axes; bars and texts inside the axes; 9 pt."""
    renderer = _drawn(ax)
    frame = ax.get_window_extent(renderer)
    legend = ax.get_legend()
    assert legend is not None
    box = legend.get_window_extent(renderer)
    assert box.x0 >= frame.x1 - 1 or box.y0 >= frame.y1 - 1, (box, frame)
    for bar in _bars(ax):
        extent = bar.get_window_extent(renderer)
        assert not extent.overlaps(box)
        assert extent.x1 <= frame.x1 + 0.5, "a bar runs into the edge"
        assert bar.get_x() + bar.get_width() <= ax.get_xlim()[1]
    for text in ax.texts:
        extent = text.get_window_extent(renderer)
        assert frame.x0 <= extent.x0 and extent.x1 <= frame.x1, text.get_text()
        assert text.get_fontsize() >= 9, text.get_text()
    assert min(float(t.get_fontsize()) for t in legend.get_texts()) >= 9
    assert min(float(t.get_fontsize()) for t in ax.get_yticklabels()) >= 9


@pytest.mark.parametrize("level", ["source", "resource"])
def test_coverage_chart_reads_at_its_default_size(level: str) -> None:
    _assert_readable(draw_tag_coverage(_coverage(8), level=level))


def test_coverage_charts_side_by_side_as_the_tour_draws_them() -> None:
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    draw_tag_coverage(_coverage(8), ax=axes[0], level="source")
    draw_tag_coverage(_coverage(8), ax=axes[1], level="resource")
    fig.tight_layout()
    for ax in axes:
        _assert_readable(ax)
    # the full bar's label ("100% of 120") fits after it
    assert any(t.get_text() == "100% of 120" for t in axes[1].texts)


def test_audit_events_legend_never_covers_the_only_bar() -> None:
    # the tour's case: one administrator, a few kinds of action
    ax = draw_audit_events(_events({"admin": {"LOGIN": 3, "CREATE": 40, "UPDATE": 12}}))
    _assert_readable(ax)
    assert [t.get_text() for t in ax.texts] == [" 55"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [  # type: ignore[union-attr]
        "CREATE", "LOGIN", "UPDATE"]


def test_audit_events_of_many_users_pool_the_quietest() -> None:
    users = {f"user{i:02d}": {"LOGIN": i + 1, "UPDATE": i % 3} for i in range(30)}
    ax = draw_audit_events(_events(users), max_bars=10)
    _assert_readable(ax)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 10 and labels[0] == "user29" and labels[-1] == "21 others"


def test_audit_events_refuse_a_frame_that_is_not_one() -> None:
    with pytest.raises(ValueError, match="action"):
        draw_audit_events(pd.DataFrame({"user_name": ["a"]}))
    assert "nothing to draw" in draw_audit_events(
        pd.DataFrame(columns=["user_name", "action"])).texts[0].get_text()


def test_tag_graph_and_overlap_text_is_readable() -> None:
    res = [{"key": f"r{i}", "dataSourceName": "src", "resourcePath": f"src/r{i}", "name": f"r{i}",
            "fields": [{"name": "f0"}]} for i in range(6)]
    tags = [{"resourceKey": f"r{i}", "field": "f0", "tagFullName": f"D.T{i % 2}",
             "tagKey": f"D.T{i % 2}", "domainName": "D", "state": "ACCEPTED"} for i in range(6)]
    ax = draw_tag_graph(tag_graph_from(res, tags))
    assert min(float(t.get_fontsize()) for t in ax.texts) >= 9
    matrix = pd.DataFrame([[100.0, 40.0], [40.0, 100.0]], index=["a", "b"],
                          columns=["a", "b"]).astype("Float64")
    ax = draw_overlap_matrix(matrix)
    assert min(float(t.get_fontsize()) for t in ax.get_xticklabels()) >= 9
    assert min(float(t.get_fontsize()) for t in ax.texts) >= 8
