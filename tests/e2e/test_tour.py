"""The tour notebook executed as `make demo` does it (the run ``made_demo`` made, in
``tests/e2e/conftest.py``), and a notebook against a named server."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.demo.run import ANALYST_PASSWORD, ANALYST_USER, DEMO_PASSWORD, DEMO_USER
from catalog_nb.demo.tour import REPORT_NAME, WORKBOOK_NAME, TourError, execute_tour, notebooks_dir
from catalog_nb.notebook import session
from tests.e2e.conftest import DemoRun


def _outputs(nb: nbformat.NotebookNode) -> list[dict[str, object]]:
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]


def _mime_types(nb: nbformat.NotebookNode) -> set[str]:
    return {mime for out in _outputs(nb) for mime in out.get("data", {})}


@pytest.mark.slow(seconds=30)
def test_make_demo_runs_the_tour_and_leaves_the_report_and_the_workbook(
    made_demo: DemoRun,
) -> None:
    data_dir = made_demo.data_dir
    reports = (data_dir / "reports").resolve()
    assert f"In {reports}:" in made_demo.stdout
    for name in ("01-tour.ipynb", REPORT_NAME, WORKBOOK_NAME):
        assert name in made_demo.stdout.split("The tour ran in")[1]

    executed = nbformat.read(reports / "01-tour.ipynb", as_version=4)
    assert not [out for out in _outputs(executed) if out.get("output_type") == "error"]
    # Real output: frames, plots and the widget.
    assert {"text/html", "image/png", "application/vnd.jupyter.widget-view+json"} <= (
        _mime_types(executed)
    )

    report = (reports / REPORT_NAME).read_text()
    assert len(report) > 5000 and report.lstrip().lower().startswith("<!doctype html")
    for path in ("crm/customers.csv", "sales.customer_revenue"):
        assert path in report
    workbook = reports / WORKBOOK_NAME
    with zipfile.ZipFile(workbook) as xlsx:  # a real OOXML workbook, several sheets
        sheets = [n for n in xlsx.namelist() if n.startswith("xl/worksheets/sheet")]
    assert len(sheets) >= 2 and workbook.stat().st_size > 5000
    # The demo stopped (--once) and took its server file with it.
    assert not (data_dir / session.SERVER_FILE).exists()


def test_a_failing_cell_fails_the_tour_and_the_notebook_is_kept(tmp_path: Path) -> None:
    source = tmp_path / "broken.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("x = 41 + 1"),
                                       new_code_cell("raise ValueError('boom ' + str(x))"),
                                       new_code_cell("print('never')")]), source)
    with pytest.raises(TourError, match=r"broken\.ipynb failed") as failed:
        execute_tour({}, tmp_path / "reports", source)
    assert "boom 42" in str(failed.value)
    kept = nbformat.read(tmp_path / "reports" / "broken.ipynb", as_version=4)
    assert kept.cells[1].outputs[0]["ename"] == "ValueError"
    assert kept.cells[2].outputs == []


def test_the_kernel_is_this_python_with_the_given_environment(tmp_path: Path) -> None:
    source = tmp_path / "probe.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(
        "import json, os, sys\n"
        "print(json.dumps([sys.executable, os.environ['TOUR_PROBE'], os.getcwd()]))"
    )]), source)
    executed = execute_tour({"TOUR_PROBE": "seen"}, tmp_path / "out", source)
    text = nbformat.read(executed, as_version=4).cells[0].outputs[0]["text"]
    python, probe, cwd = json.loads(text)
    assert Path(python).resolve() == Path(sys.executable).resolve()
    assert probe == "seen" and Path(cwd) == tmp_path  # runs beside the notebook


@pytest.mark.slow(seconds=20)
def test_a_notebook_runs_unmodified_against_a_server_named_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made_demo: DemoRun
) -> None:
    # The server: the demo catalog `make demo` made, served by this process; the notebook's
    # kernel, a process of its own, finds it only through the environment, as a team's
    # server. (Starting a demo of its own, which tests/notebook/test_session.py checks, cost
    # as much as building one.)
    for name in ("CATALOG_URL", "CATALOG_USER", "CATALOG_PASSWORD", "CATALOG_DEMO_DIR"):
        monkeypatch.delenv(name, raising=False)
    server = EmbeddedServer(made_demo.data_dir, admin_user=DEMO_USER,
                            admin_password=DEMO_PASSWORD)
    with server:
        unused = tmp_path / "no-demo-here"
        env = {"CATALOG_URL": server.url, "CATALOG_USER": ANALYST_USER,
               "CATALOG_PASSWORD": ANALYST_PASSWORD, "CATALOG_DEMO_DIR": str(unused),
               "CATALOG_REPORT_DIR": str(tmp_path / "out")}
        executed = execute_tour(env, tmp_path / "out",
                                notebooks_dir() / "02-facet-search.ipynb")
    nb = nbformat.read(executed, as_version=4)
    assert not [out for out in _outputs(nb) if out.get("output_type") == "error"]
    assert not unused.exists()  # it never fell back to a demo of its own
    # It saw what the analyst sees on that server: the files only.
    catalogue = next(c for c in nb.cells if "cat.facets()" in c.source)
    text = json.dumps(catalogue.outputs)
    assert "demo_files" in text and "demo_sql" not in text
    assert {"text/html", "image/png", "application/vnd.jupyter.widget-view+json"} <= (
        _mime_types(nb)
    )


def test_the_stored_notebooks_are_the_generated_ones() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(root / "scripts" / "make-notebooks.py"), "--check"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    stored = sorted(p.name for p in (root / "notebooks").glob("*.ipynb"))
    assert stored == ["01-tour.ipynb", "02-facet-search.ipynb", "03-lineage-and-joins.ipynb",
                      "04-tag-coverage-and-audit.ipynb", "05-reporting-export.ipynb"]
    for name in stored:
        nb = nbformat.read(root / "notebooks" / name, as_version=4)
        assert nb.metadata.kernelspec.name == "python3"
        assert "open_catalog(" in "".join(c.source for c in nb.cells)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
