"""The facet search notebook in a real browser (headless Chromium through Playwright, at
1280x800), in the three viewers one jupyter server hosts:

* JupyterLab, with the file browser open: run every cell, then search with the mouse alone
  (tick a facet, remove it with its chip, click a row, sort by a header, page);
* Notebook 7: run every cell, tick a facet, click a row;
* Voila: render the notebook (code hidden, run in Voila's own kernel), tick a facet;

and check what the screen shows against the catalog's own answers. Screenshots of each step go
to ``test-artifacts/browser/``. VS Code cannot be driven here.

Uses the demo the other e2e tests share (``made_demo``): every kernel attaches to it as an
analyst's would (``open_catalog()`` with ``CATALOG_DEMO_DIR``). Skipped only when no Chromium is
installed (``.ci/run`` installs Debian's ``chromium``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from catalog_nb.client import Catalog, connect
from catalog_nb.notebook import session
from tests.e2e.conftest import DemoRun
from tests.e2e.jupyter_helpers import (
    CHROMIUM,
    NOTEBOOK,
    PAGE_SIZE,
    PANEL,
    JupyterServer,
    assert_counts_clear_of_grid,
    assert_labels_whole,
    chromium,
    new_page,
    panel_state,
    serve_jupyter,
    shot,
    tick_facet,
    wait_matches,
)

#: One copy of the notebook per viewer: a kernel each, no document open in two of them.
LAB_NOTEBOOK, NB7_NOTEBOOK, VOILA_NOTEBOOK = NOTEBOOK, "nb7-" + NOTEBOOK, "voila-" + NOTEBOOK

pytestmark = [
    pytest.mark.slow(seconds=120),
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"no Chromium at {CHROMIUM}: install it with `apt-get install -y chromium` "
        "(.ci/run does) to run the browser test",
    ),
]


@pytest.fixture(scope="module")
def jupyter(made_demo: DemoRun, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[JupyterServer]:
    """One jupyter server (JupyterLab, Notebook 7 and Voila) for the module's tests."""
    home = tmp_path_factory.mktemp("jupyter")
    with serve_jupyter(made_demo.data_dir, home,
                       [LAB_NOTEBOOK, NB7_NOTEBOOK, VOILA_NOTEBOOK]) as server:
        yield server


def _catalog(made_demo: DemoRun) -> Catalog:
    served = session.read_server_file(made_demo.data_dir)
    assert served, "the notebook's kernel left no demo server"
    return connect(served["url"], session.DEMO_USER, session.DEMO_PASSWORD, progress=False)


def _run_all_cells(page: Any) -> Any:
    """Run every cell of the notebook open in JupyterLab or Notebook 7 (their own command) and
    wait until all ran; returns the panel, after checking that no cell failed."""
    page.locator(".jp-Notebook").wait_for(timeout=120_000)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session"
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    panel = page.locator(PANEL)
    panel.locator(".cnb-grid tbody tr").first.wait_for(timeout=600_000)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-InputArea-prompt')]"
        ".every(p => !p.textContent.includes('*'))", timeout=600_000,
    )
    failed = page.locator(".jp-OutputArea-output:has-text('Traceback')")
    assert failed.count() == 0, failed.all_inner_texts()[0][-3000:]
    return panel


def _assert_fits(panel: Any, container: Any) -> None:
    """The grid ends inside ``container`` (it scrolls inside itself if ever wider)."""
    grid = panel.locator(".cnb-grid").bounding_box()
    box = container.bounding_box()
    assert grid and box and grid["x"] + grid["width"] <= box["x"] + box["width"] + 1


def test_search_with_the_mouse_in_jupyterlab(jupyter: JupyterServer, made_demo: DemoRun) -> None:
    with chromium() as browser:
        page = new_page(browser)
        page.goto(jupyter.url(f"lab/tree/{LAB_NOTEBOOK}"))
        page.locator(".jp-DirListing").wait_for(timeout=120_000)  # the file browser is open
        panel = _run_all_cells(page)
        news = page.get_by_role("button", name="No", exact=True)  # JupyterLab's news prompt
        if news.count():
            news.first.click()
        panel.scroll_into_view_if_needed()
        shot(page, "1-after-run-all")
        assert_labels_whole(panel)
        assert_counts_clear_of_grid(panel)
        cat = _catalog(made_demo)
        try:
            _drive(page, panel, cat)
        finally:
            cat.close()


def _drive(page: Any, panel: Any, cat: Catalog) -> None:
    # The notebook ticked tables and views from code: the chips say so; "clear all" undoes it.
    tables = cat.search(None, facets={"resourceType": ["table", "view"]}).total
    wait_matches(panel, tables)
    assert panel.locator(".cnb-chip", has_text="table").count() == 1
    panel.get_by_role("button", name="clear all").click()
    everything = cat.search(None).total
    wait_matches(panel, everything)
    assert panel.locator(".cnb-chip").count() == 0

    # Tick a facet: one click on its checkbox; its count stands beside it.
    files = cat.search(None, facets={"dataSource": ["demo_files"]}).total
    assert tick_facet(panel, "dataSource", "demo_files") == f"{files:,}"
    wait_matches(panel, files)
    assert panel.locator(".cnb-chip", has_text="demo_files").count() == 1
    shot(page, "2-facet-ticked")

    # The grid fits the notebook's cell (it scrolls inside itself if ever wider).
    _assert_fits(panel, page.locator(".jp-Notebook"))

    # Sort by a header: size, largest first (the notebook left it sorted by rows).
    panel.locator(".cnb-grid th[data-column='size']").click()
    panel.locator(".cnb-grid th.cnb-sorted", has_text="Size ▼").wait_for(timeout=60_000)
    expected = cat.search(None, facets={"dataSource": ["demo_files"]}, sort="-size",
                          page_size=PAGE_SIZE)
    first = expected.frame["key"].iloc[0]
    panel.locator(f".cnb-grid tbody tr[data-key='{first}']").wait_for(
        state="attached", timeout=60_000)
    keys = panel.locator(".cnb-grid tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.key).filter(k => k)")
    assert sorted(keys) == sorted(expected.frame["key"]) and keys[0] == first
    shot(page, "3-sorted-by-size")

    # Click a row: its details open under the grid.
    row = panel.locator(".cnb-grid tbody tr:not([hidden]):not([data-key=''])").first
    clicked = str(row.get_attribute("data-key"))
    row.click()
    resource = cat.resource(clicked)
    panel.locator(".cnb-grid tr.cnb-selected").wait_for(timeout=60_000)
    details = panel.locator(".widget-html", has_text="Tags:")
    details.wait_for(timeout=60_000)
    assert str(resource.path) in details.inner_text()
    assert panel.get_by_role("button", name="load into a DataFrame").is_enabled()
    details.scroll_into_view_if_needed()
    shot(page, "4-row-details")
    row.scroll_into_view_if_needed()

    # Page: the next page of the same sorted result.
    _page, pages, total = panel_state(panel)
    assert total == files and pages == expected.page_count
    panel.get_by_role("button", name="next ▶").click()
    wait_matches(panel, files, page_number=2)
    second = expected.page(1)["key"].iloc[0]
    panel.locator(f".cnb-grid tbody tr[data-key='{second}']").wait_for(
        state="attached", timeout=60_000)
    assert panel.locator(f".cnb-grid tbody tr[data-key='{first}']").count() == 0
    shot(page, "5-page-2")


def test_notebook_7_and_voila(jupyter: JupyterServer, made_demo: DemoRun) -> None:
    """Notebook 7: run all, tick a facet, click a row. Voila: the rendered panel, a facet
    ticked. Voila runs the whole notebook in its own kernel before it shows the page: it is
    opened first and renders while Notebook 7 is driven."""
    with chromium() as browser:
        voila = new_page(browser)
        voila.goto(jupyter.url(f"voila/render/{VOILA_NOTEBOOK}"), wait_until="commit",
                   timeout=600_000)
        page = new_page(browser)
        page.goto(jupyter.url(f"notebooks/{NB7_NOTEBOOK}"))
        panel = _run_all_cells(page)
        cat = _catalog(made_demo)
        try:
            _drive_notebook_7(page, panel, cat)
            _drive_voila(voila, cat)
        finally:
            cat.close()


def _drive_notebook_7(page: Any, panel: Any, cat: Catalog) -> None:
    panel.scroll_into_view_if_needed()
    shot(page, "nb7-1-after-run-all")
    assert_labels_whole(panel)
    assert_counts_clear_of_grid(panel)
    # The notebook ticked tables and views from code; "clear all", then tick a facet.
    tables = cat.search(None, facets={"resourceType": ["table", "view"]}).total
    wait_matches(panel, tables)
    panel.get_by_role("button", name="clear all").click()
    wait_matches(panel, cat.search(None).total)
    files = cat.search(None, facets={"dataSource": ["demo_files"]}).total
    assert tick_facet(panel, "dataSource", "demo_files") == f"{files:,}"
    wait_matches(panel, files)
    assert panel.locator(".cnb-chip", has_text="demo_files").count() == 1
    _assert_fits(panel, page.locator(".jp-Cell", has=panel))
    shot(page, "nb7-2-facet-ticked")

    # Click a row: its details open under the grid.
    row = panel.locator(".cnb-grid tbody tr:not([hidden]):not([data-key=''])").first
    clicked = str(row.get_attribute("data-key"))
    row.click()
    panel.locator(f".cnb-grid tr.cnb-selected[data-key='{clicked}']").wait_for(timeout=60_000)
    details = panel.locator(".widget-html", has_text="Tags:")
    details.wait_for(timeout=60_000)
    assert str(cat.resource(clicked).path) in details.inner_text()
    details.scroll_into_view_if_needed()
    shot(page, "nb7-3-row-details")


def _drive_voila(page: Any, cat: Catalog) -> None:
    panel = page.locator(PANEL)
    failed = page.locator(".jp-OutputArea-output:has-text('Traceback')")
    # The grid, or a cell's traceback: a failing cell is reported as itself, not as a timeout.
    panel.locator(".cnb-grid tbody tr").or_(failed).first.wait_for(timeout=600_000)
    if failed.count():
        shot(page, "voila-failed")
    assert failed.count() == 0, failed.all_inner_texts()[0][-3000:]
    panel.scroll_into_view_if_needed()
    shot(page, "voila-1-rendered")
    assert_labels_whole(panel)
    assert_counts_clear_of_grid(panel)
    # What the notebook's code left: tables and views, largest first, on the grid.
    chosen = {"resourceType": ["table", "view"]}
    expected = cat.search(None, facets=chosen, sort="-rows", page_size=PAGE_SIZE)
    wait_matches(panel, expected.total)
    keys = panel.locator(".cnb-grid tbody tr:not([hidden])").evaluate_all(
        "rows => rows.map(r => r.dataset.key).filter(k => k)")
    assert keys == list(expected.frame["key"])
    _assert_fits(panel, page.locator("body"))

    # Tick a category of another facet that narrows the result: the count follows.
    facet, category, shown = _narrowing_option(panel, expected.total)
    assert tick_facet(panel, facet, category) == shown
    narrowed = cat.search(None, facets={**chosen, facet: [category]}).total
    assert 0 < narrowed < expected.total and f"{narrowed:,}" == shown
    wait_matches(panel, narrowed)
    assert panel.locator(".cnb-chip", has_text=category).count() == 1
    panel.scroll_into_view_if_needed()
    shot(page, "voila-2-facet-ticked")


def _narrowing_option(panel: Any, total: int) -> tuple[str, str, str]:
    """(facet, category, count shown) of the first unticked category outside resourceType
    whose count is below ``total``."""
    options = panel.locator(".cnb-facet label.cnb-option").evaluate_all(
        """labels => labels.map(label => [
             [...label.closest('.cnb-facet').classList]
               .find(c => c.startsWith('cnb-facet-')).slice('cnb-facet-'.length),
             label.dataset.value,
             label.querySelector('.cnb-option-count').textContent,
             label.querySelector('input').checked,
           ])""")
    for facet, category, count, ticked in options:
        if facet != "resourceType" and not ticked and 0 < int(count.replace(",", "")) < total:
            return str(facet), str(category), str(count)
    raise AssertionError(f"no facet category narrows the {total} matches: {options}")
