"""One jupyter server for the browser tests, hosting JupyterLab, Notebook 7 (``/tree``,
``/notebooks/<name>``) and Voila (``/voila/render/<name>``) together, its kernels attached to
the shared e2e demo; and what the tests do in Chromium (Debian's, through Playwright).

Example::

    with serve_jupyter(made_demo.data_dir, home, ["02-facet-search.ipynb"]) as server:
        server.url("lab/tree/02-facet-search.ipynb")   # token included
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from catalog_nb.demo.embedded import free_port
from catalog_nb.notebook import session

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = "02-facet-search.ipynb"
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 800}
#: Rows per page of the notebook's panel (``FacetSearch(cat, '', top_n=10, page_size=8)``).
PAGE_SIZE = 8
MATCHES = re.compile(r"page (\d+) of (\d+) · ([\d,]+) matches")
#: The panel's top box (the widget's own box; its static HTML copy has no ``widget-vbox``).
PANEL = ".catalog-nb-facet-search.widget-vbox"


@dataclass(frozen=True)
class JupyterServer:
    """A running jupyter server: its base URL and token."""

    base: str
    token: str
    home: Path

    def url(self, path: str) -> str:
        """``path`` on this server, token included."""
        return f"{self.base}/{path}?token={self.token}"


@contextmanager
def serve_jupyter(demo_dir: Path, home: Path, notebooks: list[str]) -> Iterator[JupyterServer]:
    """A jupyter server on 127.0.0.1 serving ``home``, where ``notebooks`` (file names) are
    copies of :data:`NOTEBOOK` (one per viewer: a kernel each, no document opened twice); every
    kernel (Voila's too: they inherit the server's environment) attached to the demo of
    ``demo_dir``. On exit the kernels are shut down, which stops the demo server the first of
    them started, and that is waited for (the other e2e tests read the same demo folder)."""
    for name in notebooks:
        shutil.copy(ROOT / "notebooks" / NOTEBOOK, home / name)
    token, port = secrets.token_hex(16), free_port()
    env = {
        **os.environ,
        session.ENV_DEMO_DIR: str(demo_dir),
        session.ENV_REPORT_DIR: str(home / "reports"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "PYTHONPATH": str(ROOT),
    }
    env.pop("CATALOG_URL", None)
    log_path = home / "jupyter.log"
    log = log_path.open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={home}",
         f"--LabApp.workspaces_dir={home / 'workspaces'}", "--LabApp.expose_app_in_browser=True",
         "--JupyterNotebookApp.expose_app_in_browser=True",
         # Voila shows a cell's traceback instead of "There was an error when executing cell".
         "--VoilaConfiguration.show_tracebacks=True", "--allow-root"],
        cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, log_path.read_text()[-3000:]
            try:
                if requests.get(f"{base}/api/status", params={"token": token}, timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, "jupyter did not answer within 120 s"
            time.sleep(0.5)
        yield JupyterServer(base, token, home)
    finally:
        if server.poll() is None:
            # Shut the kernels down first: each stops the demo server it started.
            kernels = requests.get(f"{base}/api/kernels", params={"token": token}, timeout=5)
            for kernel in kernels.json():
                requests.delete(f"{base}/api/kernels/{kernel['id']}", params={"token": token},
                                timeout=30)
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)
        log.close()
        deadline = time.monotonic() + 60
        while session.read_server_file(demo_dir) and time.monotonic() < deadline:
            time.sleep(0.5)


@contextmanager
def chromium() -> Iterator[Any]:
    """Headless Chromium (Playwright driving Debian's chromium); open pages with
    :func:`new_page`."""
    import pytest

    playwright = pytest.importorskip("playwright.sync_api")
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser: Any) -> Any:
    """A new page of ``browser`` at 1280x800."""
    return browser.new_page(viewport=VIEWPORT)


def shot(page: Any, name: str) -> None:
    """A screenshot of ``page`` in ``test-artifacts/browser/<name>.png``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def panel_state(panel: Any) -> tuple[int, int, int]:
    """(page, pages, matches) as the panel's page line shows them."""
    found = MATCHES.search(panel.locator(".widget-label", has_text="matches").inner_text())
    assert found, "no page line"
    return int(found[1]), int(found[2]), int(found[3].replace(",", ""))


def wait_matches(panel: Any, total: int, page_number: int = 1) -> None:
    """Wait until the panel's page line says page ``page_number`` of ``total`` matches."""
    line = panel.locator(".widget-label", has_text="matches")
    line.filter(has_text=f"page {page_number} of").filter(
        has_text=f"· {total:,} matches").wait_for(timeout=60_000)


def tick_facet(panel: Any, facet: str, category: str) -> str:
    """Tick ``category`` of ``facet`` with one click (unfolding the facet first when folded);
    returns the count shown beside it."""
    option = panel.locator(f".cnb-facet-{facet} label.cnb-option[data-value='{category}']")
    if not option.is_visible():
        panel.locator(f".cnb-facet-{facet} .cnb-facet-toggle").click()
    count = str(option.locator(".cnb-option-count").inner_text())
    option.locator("input").click()
    return count


def assert_labels_whole(panel: Any) -> None:
    """No button of the panel (BASIC/ADVANCED, chips, facet toggles, paging) shows its label
    cut off ("ADVANC..."): each shown one is at least as wide as its text."""
    cut = panel.locator("button").evaluate_all(
        "buttons => buttons.filter(b => b.clientWidth > 0 && b.scrollWidth > b.clientWidth)"
        ".map(b => `${b.textContent.trim()}: ${b.scrollWidth} px in ${b.clientWidth}`)")
    assert not cut, f"labels cut off: {cut}"


def assert_counts_clear_of_grid(panel: Any, gap: float = 6) -> None:
    """Every facet count shown ends at least ``gap`` px left of the results grid (they touched
    its border)."""
    grid = panel.locator(".cnb-grid").bounding_box()
    assert grid
    ends = panel.locator(".cnb-option-count").evaluate_all(
        "counts => counts.filter(c => c.offsetParent)"
        ".map(c => [c.textContent, c.getBoundingClientRect().right])")
    assert ends, "no facet count shown"
    close = [(text, right) for text, right in ends if right > grid["x"] - gap]
    assert not close, f"facet counts within {gap} px of the grid at x={grid['x']}: {close}"
