"""The facet search notebook in a real JupyterLab, in headless Chromium (Playwright), at 1280x800
with the file browser open: run every cell, then search with the mouse alone (tick a facet,
remove it with its chip, click a row, sort by a header, page) and check what the screen shows
against the catalog's own answers. Screenshots of each step go to ``test-artifacts/browser/``.

Uses the demo the other e2e tests share (``made_demo``): the notebook's kernel attaches to it as
an analyst's would (``open_catalog()`` with ``CATALOG_DEMO_DIR``). Skipped only when no
Chromium is installed (``.ci/run`` installs Debian's ``chromium``).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from catalog_nb.client import Catalog, connect
from catalog_nb.notebook import session
from tests.e2e.conftest import DemoRun

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "02-facet-search.ipynb"
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
#: Rows per page of the notebook's panel (``FacetSearch(cat, '', top_n=10, page_size=8)``).
PAGE_SIZE = 8
MATCHES = re.compile(r"page (\d+) of (\d+) · ([\d,]+) matches")

pytestmark = [
    pytest.mark.slow(seconds=120),
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason=f"no Chromium at {CHROMIUM}: install it with `apt-get install -y chromium` "
        "(.ci/run does) to run the browser test",
    ),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def lab(made_demo: DemoRun, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """JupyterLab on 127.0.0.1 serving a copy of the notebook, its kernels attached to the
    shared demo; yields the URL of the notebook, token included."""
    home = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "notebooks" / NOTEBOOK, home / NOTEBOOK)
    token, port = secrets.token_hex(16), _free_port()
    env = {
        **os.environ,
        session.ENV_DEMO_DIR: str(made_demo.data_dir),
        session.ENV_REPORT_DIR: str(home / "reports"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "PYTHONPATH": str(ROOT),
    }
    env.pop("CATALOG_URL", None)
    log = (home / "lab.log").open("wb")
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={home}",
         f"--LabApp.workspaces_dir={home / 'workspaces'}", "--LabApp.expose_app_in_browser=True",
         "--allow-root"],
        cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert lab.poll() is None, (home / "lab.log").read_text()[-3000:]
            try:
                if requests.get(f"{base}/api/status", params={"token": token}, timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, "JupyterLab did not answer within 120 s"
            time.sleep(0.5)
        yield f"{base}/lab/tree/{NOTEBOOK}?token={token}"
    finally:
        if lab.poll() is None:
            # Shut the kernels down first: each stops the demo server it attached to.
            kernels = requests.get(f"{base}/api/kernels", params={"token": token}, timeout=5)
            for kernel in kernels.json():
                requests.delete(f"{base}/api/kernels/{kernel['id']}", params={"token": token},
                                timeout=30)
        lab.terminate()
        lab.wait(timeout=60)
        log.close()
        # The kernel's demo server stops with the kernel and takes its server file along
        # (the other e2e tests read the same demo folder).
        deadline = time.monotonic() + 60
        while session.read_server_file(made_demo.data_dir) and time.monotonic() < deadline:
            time.sleep(0.5)


def _shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _state(panel: Any) -> tuple[int, int, int]:
    """(page, pages, matches) as the panel's page line shows them."""
    found = MATCHES.search(panel.locator(".widget-label", has_text="matches").inner_text())
    assert found, "no page line"
    return int(found[1]), int(found[2]), int(found[3].replace(",", ""))


def _wait_matches(page: Any, panel: Any, total: int, page_number: int = 1) -> None:
    line = panel.locator(".widget-label", has_text="matches")
    line.filter(has_text=f"page {page_number} of").filter(
        has_text=f"· {total:,} matches").wait_for(timeout=60_000)


def test_search_with_the_mouse_in_jupyterlab(lab: str, made_demo: DemoRun) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    print(f"\nbrowser screenshots: {ARTIFACTS}")
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(lab)
            page.locator(".jp-Notebook").wait_for(timeout=120_000)
            page.locator(".jp-DirListing").wait_for()  # the file browser is open
            page.wait_for_function(
                "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
                " && window.jupyterapp.shell.currentWidget.sessionContext"
                " && window.jupyterapp.shell.currentWidget.sessionContext.session"
            )
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            panel = page.locator(".catalog-nb-facet-search.widget-vbox")
            panel.locator(".cnb-grid tbody tr").first.wait_for(timeout=600_000)
            page.wait_for_function(
                "() => [...document.querySelectorAll('.jp-InputArea-prompt')]"
                ".every(p => !p.textContent.includes('*'))", timeout=600_000,
            )
            news = page.get_by_role("button", name="No", exact=True)  # JupyterLab's news prompt
            if news.count():
                news.first.click()
            panel.scroll_into_view_if_needed()
            _shot(page, "1-after-run-all")
            failed = page.locator(".jp-OutputArea-output:has-text('Traceback')")
            assert failed.count() == 0, failed.all_inner_texts()[0][-3000:]

            cat = _catalog(made_demo)
            try:
                _drive(page, panel, cat)
            finally:
                cat.close()
        finally:
            browser.close()


def _catalog(made_demo: DemoRun) -> Catalog:
    served = session.read_server_file(made_demo.data_dir)
    assert served, "the notebook's kernel left no demo server"
    return connect(served["url"], session.DEMO_USER, session.DEMO_PASSWORD, progress=False)


def _drive(page: Any, panel: Any, cat: Catalog) -> None:
    # The notebook ticked tables and views from code: the chips say so; "clear all" undoes it.
    tables = cat.search(None, facets={"resourceType": ["table", "view"]}).total
    _wait_matches(page, panel, tables)
    assert panel.locator(".cnb-chip", has_text="table").count() == 1
    panel.get_by_role("button", name="clear all").click()
    everything = cat.search(None).total
    _wait_matches(page, panel, everything)
    assert panel.locator(".cnb-chip").count() == 0

    # Tick a facet: one click on its checkbox; its count stands beside it.
    files = cat.search(None, facets={"dataSource": ["demo_files"]}).total
    option = panel.locator(".cnb-facet-dataSource label.cnb-option[data-value='demo_files']")
    if not option.is_visible():
        panel.locator(".cnb-facet-dataSource .cnb-facet-toggle").click()
    assert option.locator(".cnb-option-count").inner_text() == f"{files:,}"
    option.locator("input").click()
    _wait_matches(page, panel, files)
    assert panel.locator(".cnb-chip", has_text="demo_files").count() == 1
    _shot(page, "2-facet-ticked")

    # The grid fits the notebook's cell (it scrolls inside itself if ever wider).
    grid = panel.locator(".cnb-grid").bounding_box()
    cell = page.locator(".jp-Notebook").bounding_box()
    assert grid and cell and grid["x"] + grid["width"] <= cell["x"] + cell["width"] + 1

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
    _shot(page, "3-sorted-by-size")

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
    _shot(page, "4-row-details")
    row.scroll_into_view_if_needed()

    # Page: the next page of the same sorted result.
    _page, pages, total = _state(panel)
    assert total == files and pages == expected.page_count
    panel.get_by_role("button", name="next ▶").click()
    _wait_matches(page, panel, files, page_number=2)
    second = expected.page(1)["key"].iloc[0]
    panel.locator(f".cnb-grid tbody tr[data-key='{second}']").wait_for(
        state="attached", timeout=60_000)
    assert panel.locator(f".cnb-grid tbody tr[data-key='{first}']").count() == 0
    _shot(page, "5-page-2")
