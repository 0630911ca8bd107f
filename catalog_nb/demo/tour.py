"""Execute the tour notebook headless against a running catalog: the end of ``make demo``.

``run_tour(url, data_dir, user, password)`` executes ``notebooks/01-tour.ipynb`` of the source
checkout with nbclient, in a kernel of this very Python (whatever kernels the machine has
registered), the kernel's environment pointing the notebook's ``open_catalog()`` at ``url``.
Into ``<data_dir>/reports`` it writes the executed notebook (``01-tour.ipynb``) and, from the
notebook's own cells, the HTML report (``catalog-report.html``) and the Excel workbook
(``catalog-workbook.xlsx``); it prints where they are.

The executed notebook keeps its widgets: nbclient stores their state in the notebook's metadata
(``widgets`` -> ``application/vnd.jupyter.widget-state+json``), so a trusted viewer renders them,
and every widget output also carries a static ``text/html`` rendering
(:func:`add_html_fallbacks`), so GitHub or an untrusted viewer shows the results table rather
than ``VBox(children=...)``.

Example::

    from catalog_nb.demo.tour import run_tour

    run_tour("http://127.0.0.1:8765", Path(".catalog-demo"), "admin", "catalog-demo")
"""

from __future__ import annotations

import html
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog_nb.notebook.session import ENV_REPORT_DIR

__all__ = [
    "REPORT_NAME",
    "TOUR_NOTEBOOK",
    "WORKBOOK_NAME",
    "TourError",
    "TourResult",
    "add_html_fallbacks",
    "execute_tour",
    "notebooks_dir",
    "run_tour",
    "take_tour",
]

TOUR_NOTEBOOK = "01-tour.ipynb"
#: The files the tour's last cells write into the report folder.
REPORT_NAME = "catalog-report.html"
WORKBOOK_NAME = "catalog-workbook.xlsx"
#: Seconds one cell may take (a profiling job on a big lake is the slowest).
CELL_TIMEOUT = 600
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _widget_html(models: dict[str, Any], model_id: str, depth: int = 0) -> str:
    """Static HTML of one stored widget model: HTML and labels as they read, boxes as their
    children, progress bars as ``<progress>``; anything else by its description."""
    model = models.get(model_id)
    if model is None or depth > 50:
        return ""
    state = model.get("state") or {}
    name = str(model.get("model_name") or "")
    if name in ("HTMLModel", "HTMLMathModel"):
        return str(state.get("value") or "")
    if name in ("LabelModel", "TextModel"):
        return f"<span>{html.escape(str(state.get('value') or ''))}</span>"
    if name in ("FloatProgressModel", "IntProgressModel"):
        return (f"<progress value='{state.get('value', 0)}' max='{state.get('max', 100)}'>"
                "</progress>")
    children = [str(c).removeprefix("IPY_MODEL_") for c in state.get("children") or []]
    if children:
        inner = "".join(_widget_html(models, child, depth + 1) for child in children)
        return f"<div>{inner}</div>"
    described = state.get("description")
    return f"<span>{html.escape(str(described))}</span>" if described else ""


def add_html_fallbacks(nb: Any) -> int:
    """Give every widget output of ``nb`` without one a ``text/html`` rendering built from the
    stored widget state; returns how many it added."""
    stored = (nb.metadata.get("widgets") or {}).get(WIDGET_STATE) or {}
    models = stored.get("state") or {}
    added = 0
    for cell in nb.cells:
        for output in cell.get("outputs") or []:
            data = output.get("data") or {}
            if WIDGET_VIEW not in data or "text/html" in data:
                continue
            rendered = _widget_html(models, str(data[WIDGET_VIEW].get("model_id")))
            data["text/html"] = rendered or f"<pre>{html.escape(str(data.get('text/plain')))}</pre>"
            added += 1
    return added


class TourError(RuntimeError):
    """The tour could not run, or a cell failed (the message names it; the partly executed
    notebook is saved all the same)."""


@dataclass(frozen=True)
class TourResult:
    """Where the tour left its files, and how long it took."""

    notebook: Path
    report: Path
    workbook: Path
    seconds: float


def notebooks_dir() -> Path:
    """``notebooks/`` of the source checkout this package runs from.

    Raises:
        TourError: this installation has no notebooks (they live in the source checkout).
    """
    folder = Path(__file__).resolve().parents[2] / "notebooks"
    if not (folder / TOUR_NOTEBOOK).is_file():
        raise TourError(f"No {TOUR_NOTEBOOK} in {folder}: the tour runs from a source checkout "
                        "of catalog_nb (installed as `pip install -e .`).")
    return folder


def _kernel_manager_class() -> Any:
    """An AsyncKernelManager whose every kernel name means this interpreter's ipykernel.

    A machine's registered ``python3`` kernel may be another Python (a bare ``python`` on PATH,
    a user-wide install); the tour must run with this one, where catalog_nb is installed.
    """
    import ipykernel.kernelspec
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class ThisPythonKernels(KernelSpecManager):
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return self.kernel_spec_class(resource_dir=ipykernel.kernelspec.RESOURCES,
                                          **ipykernel.kernelspec.get_kernel_dict())

    class ThisPythonKernelManager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _kernel_spec_manager_default(self) -> KernelSpecManager:
            return ThisPythonKernels(data_dir=self.data_dir)

    return ThisPythonKernelManager


def execute_tour(env: dict[str, str], reports: Path, notebook: Path | None = None) -> Path:
    """Execute the tour notebook in a fresh kernel with ``env`` added to its environment and
    save the executed copy in ``reports``; returns its path.

    Raises:
        TourError: a cell raised (the saved copy shows the traceback) or the kernel died.
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    source = notebook or notebooks_dir() / TOUR_NOTEBOOK
    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        kernel_manager_class=_kernel_manager_class(),
        resources={"metadata": {"path": str(source.parent)}},
        store_widget_state=True,
    )
    reports.mkdir(parents=True, exist_ok=True)
    executed = reports / source.name
    # The kernel's own log (start-up warnings, a crash) goes to a file, not into the demo's
    # output; cell errors are in the executed notebook.
    kernel_log = reports / f"{source.stem}.kernel.log"
    try:
        with kernel_log.open("wb") as log:
            client.execute(env={**os.environ, **env}, stderr=log, stdout=log)
    except CellExecutionError as exc:
        raise TourError(f"A cell of {source.name} failed; the executed notebook is "
                        f"{executed}.\n{exc}") from exc
    except DeadKernelError as exc:
        raise TourError(f"The kernel running {source.name} died ({exc}); its log is "
                        f"{kernel_log}.") from exc
    finally:
        add_html_fallbacks(nb)
        nbformat.write(nb, executed)
    return executed


def take_tour(url: str, data_dir: Path, user: str, password: str) -> TourResult:
    """Execute the tour against the catalog at ``url``; the files land in
    ``<data_dir>/reports``.

    Raises:
        TourError: a cell failed, or the report or the workbook was not written.
    """
    reports = (Path(data_dir) / "reports").resolve()
    started = time.monotonic()
    executed = execute_tour(
        {"CATALOG_URL": url, "CATALOG_USER": user, "CATALOG_PASSWORD": password,
         ENV_REPORT_DIR: str(reports)},
        reports,
    )
    result = TourResult(executed, reports / REPORT_NAME, reports / WORKBOOK_NAME,
                        time.monotonic() - started)
    missing = [str(p) for p in (result.report, result.workbook) if not p.is_file()]
    if missing:
        raise TourError(f"The tour ran but did not write {' and '.join(missing)}.")
    return result


def run_tour(url: str, data_dir: Path, user: str, password: str) -> int:
    """:func:`take_tour`, saying where the files are; returns an exit code (0: all written)."""
    print(f"\nRunning the tour notebook ({TOUR_NOTEBOOK}) against {url} ...", flush=True)
    try:
        result = take_tour(url, data_dir, user, password)
    except TourError as exc:
        print(f"The tour failed: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"The tour ran in {result.seconds:.0f} s. In {result.notebook.parent}:\n"
          f"    {result.notebook.name:<24} the executed tour notebook\n"
          f"    {result.report.name:<24} the HTML report of the catalog\n"
          f"    {result.workbook.name:<24} the Excel workbook", flush=True)
    return 0
