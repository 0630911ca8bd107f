"""The executed tour that `make demo` saves (the run ``made_demo`` made) keeps its widgets: their
state in the notebook's metadata, so a trusted viewer renders the facet search panel, and a
static HTML rendering beside every widget output, so GitHub or an untrusted viewer shows the
results table rather than ``VBox(children=...)``."""

from __future__ import annotations

import nbformat

from catalog_nb.demo.tour import WIDGET_STATE, WIDGET_VIEW
from tests.e2e.conftest import DemoRun


def test_the_saved_tour_shows_its_widgets(made_demo: DemoRun) -> None:
    executed = nbformat.read(made_demo.data_dir / "reports" / "01-tour.ipynb", as_version=4)
    stored = executed.metadata["widgets"][WIDGET_STATE]
    models = stored["state"]
    assert stored["version_major"] == 2 and models
    outputs = [out for cell in executed.cells if cell.cell_type == "code"
               for out in cell.outputs if WIDGET_VIEW in out.get("data", {})]
    assert outputs
    for out in outputs:
        assert out["data"][WIDGET_VIEW]["model_id"] in models  # renders when trusted
        assert out["data"]["text/html"].strip()  # and reads without a widget manager
    panel = next(out["data"]["text/html"] for out in outputs
                 if "catalog-nb-facet-search" in out["data"]["text/html"])
    assert "matches" in panel and "<table" in panel and "customer" in panel.lower()
    assert "VBox(" not in panel
    # The grid's front end travels with its state (anywidget's ES module).
    grids = [m for m in models.values() if "render" in str(m["state"].get("_esm", ""))]
    assert grids and any(m["state"].get("rows") for m in grids)
