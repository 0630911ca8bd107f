"""Exports: Excel workbooks, CSV folders and the HTML report, checked by reading them back.

The workbook's cell rules are tested on a hand-made frame; the whole export runs offline on a
snapshot of a real service (demo lake profiled into its store, a description that tries to
be a formula and one that tries to be a script).
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
import pandas as pd
import pytest

from catalog_nb.client import connect
from catalog_nb.client.frames import empty_frame, to_frame
from catalog_nb.notebook.audit import FINDING_COLUMNS
from catalog_nb.notebook.export import ExportError, export_all, neutralise, restore
from catalog_nb.notebook.export.csv import write_csv
from catalog_nb.notebook.export.report import render_report
from catalog_nb.notebook.export.xlsx import sheet_names, write_workbook
from catalog_nb.snapshot import TABLES, Snapshot, open_snapshot
from tests.server.lake import demo_files, profile_folder

FORMULA = '=HYPERLINK("http://evil.example","click")'
SCRIPT = "<script>alert('x')</script>"


@pytest.fixture(scope="module")
def snapshot(
    make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory
) -> Snapshot:
    server = make_server()
    profile_folder(server.store, "exp_files", demo_files())
    with connect(server.url, server.admin_user, server.admin_password, progress=False) as cat:
        cat.update_resource("exp_files", "crm/customers.csv", description=FORMULA, owner="@crm")
        cat.update_resource("exp_files", "ref/stores.json", description=SCRIPT)
        cat.tag(("exp_files", "crm/customers.csv"), "Sensitive.EmailAddress", field="contact")
        path = cat.snapshot(tmp_path_factory.mktemp("exp") / "snap")
    return open_snapshot(path)


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "text": pd.Series(["=cmd()", "+1", "-1", "@x", "plain", None], dtype="string"),
            "count": pd.Series([-1, 2, None, 4, 5, -6], dtype="Int64"),
            "ratio": pd.Series([-2.5, 0.5, None, 1.0, 0.0, 3.25], dtype="Float64"),
            "flag": pd.Series([True, False, None, True, True, False], dtype="boolean"),
            "when": pd.to_datetime(
                ["2024-03-01T12:30:00Z", None, "2024-01-01T00:00:00Z", None, None, None],
                utc=True,
            ).astype("datetime64[ns, UTC]"),
            "names": pd.Series([["a", "b"], [], ["=x"], [], [], []], dtype=object),
            "extra": pd.Series([{"k": 1}, {}, None, -3, "text\x01bell", 2.5], dtype=object),
        }
    )


def test_workbook_keeps_types_and_neutralises_formulas(tmp_path: Path) -> None:
    path = write_workbook(tmp_path / "t.xlsx", {"data": _frame(), "empty": _frame().head(0)})
    book = openpyxl.load_workbook(path)
    sheet = book["data"]
    assert sheet.freeze_panes == "A2"
    assert sheet.auto_filter.ref == "A1:G7"
    assert [c.value for c in sheet[1]] == list(_frame().columns)
    assert all(c.font.bold for c in sheet[1])
    assert all(sheet.column_dimensions[letter].width >= 6 for letter in "ABCDEFG")
    assert sheet.column_dimensions["E"].width >= 19  # a full date-time fits
    column = {c.value: i for i, c in enumerate(sheet[1])}
    rows = [[c.value for c in row] for row in sheet.iter_rows(min_row=2)]
    texts = [r[column["text"]] for r in rows]
    assert texts == ["'=cmd()", "'+1", "'-1", "'@x", "plain", None]
    assert [r[column["count"]] for r in rows] == [-1, 2, None, 4, 5, -6]
    assert [r[column["ratio"]] for r in rows] == [-2.5, 0.5, None, 1, 0, 3.25]
    assert [r[column["flag"]] for r in rows] == [True, False, None, True, True, False]
    assert rows[0][column["when"]] == dt.datetime(2024, 3, 1, 12, 30)
    assert sheet.cell(row=2, column=column["when"] + 1).number_format == "yyyy-mm-dd hh:mm:ss"
    assert sheet.cell(row=2, column=column["when"] + 1).is_date
    assert [r[column["names"]] for r in rows[:3]] == ["a; b", None, "'=x"]
    assert [r[column["extra"]] for r in rows] == ['{"k": 1}', "{}", None, -3, "textbell", 2.5]
    for row in sheet.iter_rows(min_row=2):
        for cell in row:
            assert cell.data_type != "f"  # nothing is a formula
    empty = book["empty"]
    assert [c.value for c in empty[1]] == list(_frame().columns)
    assert empty.max_row == 1 and empty.freeze_panes == "A2"


def test_neutralise_and_restore() -> None:
    for text in ("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"):
        assert neutralise(text) == "'" + text and restore(neutralise(text)) == text
    assert neutralise("a=b") == "a=b" and restore("'quoted") == "'quoted"
    assert sheet_names(["a/b", "a:b", "x" * 40]) == ["a_b", "a_b (2)", "x" * 31]


def test_export_of_a_snapshot_to_all_three(snapshot: Snapshot, tmp_path: Path) -> None:
    out = export_all(snapshot, xlsx=tmp_path / "c.xlsx", html=tmp_path / "c.html",
                          csv=tmp_path / "csv", title="Quarterly <review>")
    assert out["xlsx"] == tmp_path / "c.xlsx" and out["html"] == tmp_path / "c.html"
    assert [p.name for p in out["csv"]] == [f"{n}.csv" for n in ("findings", *TABLES)]

    book = openpyxl.load_workbook(out["xlsx"])
    assert book.sheetnames == ["findings", *TABLES]
    resources = snapshot.resources()
    sheet = book["resources"]
    assert [c.value for c in sheet[1]] == list(resources.columns)
    assert sheet.max_row == len(resources) + 1
    by_path = {row[2]: row for row in sheet.iter_rows(min_row=2, values_only=True)}
    customers = by_path["crm/customers.csv"]
    header = [c.value for c in sheet[1]]
    assert customers[header.index("description")] == "'" + FORMULA
    assert customers[header.index("owner")] == "'@crm"
    assert isinstance(customers[header.index("rows")], int)
    assert isinstance(customers[header.index("profiled")], dt.datetime)
    findings = book["findings"]
    assert [c.value for c in findings[1]] == [c.name for c in FINDING_COLUMNS]
    assert findings.max_row > 1

    with (tmp_path / "csv" / "resources.csv").open(encoding="utf-8") as handle:
        rows = {r["path"]: r for r in csv.DictReader(handle)}
    assert rows["crm/customers.csv"]["description"] == "'" + FORMULA
    assert rows["ref/stores.json"]["description"] == SCRIPT
    with (tmp_path / "csv" / "users.csv").open(encoding="utf-8") as handle:
        admin = next(csv.DictReader(handle))
    assert admin["roles"] == "Administrator"

    html = out["html"].read_text(encoding="utf-8")
    assert "<title>Quarterly &lt;review&gt;</title>" in html
    for section in ('id="summary"', 'id="findings"', 'id="coverage"', 'id="lineage"'):
        assert section in html
    assert SCRIPT not in html
    assert "snapshot of " in html and "http" in html
    assert "The lineage picture is unavailable: a snapshot holds no lineage" in html
    assert "<style>" in html and "<link" not in html and "src=\"http" not in html
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) == 3  # two summary charts and the tag coverage chart
    assert "exp_files" in html.split('id="coverage"')[1]
    assert not list(tmp_path.glob(".*"))  # no temporary files left


def test_report_says_why_a_picture_is_missing(
    snapshot: Snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "catalog_nb.notebook.drawing", None)
    frames = snapshot.frames()
    html = render_report(snapshot, frames, empty_frame(FINDING_COLUMNS))
    assert "The tag coverage chart is unavailable: the coverage chart is not available" in html
    assert "The audits found nothing to report." in html
    assert html.count("data:image/png") == 2
    finding = to_frame([{"audit": "undocumented", "severity": "low", "object_type": "resource",
                         "object": SCRIPT, "detail": f"{SCRIPT} has no owner"}], FINDING_COLUMNS)
    html = render_report(snapshot, frames, finding)
    assert SCRIPT not in html and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html


def test_unwritable_export_paths_fail_clearly(snapshot: Snapshot, tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    with pytest.raises(ExportError, match="does not exist"):
        export_all(snapshot, xlsx=tmp_path / "no" / "such" / "c.xlsx")
    with pytest.raises(ExportError, match="it is a folder"):
        export_all(snapshot, html=tmp_path)
    with pytest.raises(ExportError, match="it is a file"):
        export_all(snapshot, csv=a_file)
    with pytest.raises(ExportError, match="not writable"):
        export_all(snapshot, csv=a_file / "sub")
    with pytest.raises(ExportError, match="does not exist"):
        write_csv(tmp_path / "ok", {"bad/name": pd.DataFrame({"a": [1]})})
    with pytest.raises(ValueError, match="nothing to export"):
        export_all(snapshot)
    # a bad path checked first: nothing else of the export was written
    with pytest.raises(ExportError):
        export_all(snapshot, xlsx=tmp_path / "fine.xlsx", html=tmp_path / "no" / "r.html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt", "ok"]
    assert not list((tmp_path / "ok").iterdir())


def test_missing_reports_extra_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    with pytest.raises(ImportError, match=r"pip install catalog-nb\[reports\]"):
        write_workbook(tmp_path / "x.xlsx", {"a": pd.DataFrame({"a": [1]})})
    assert not (tmp_path / "x.xlsx").exists()


def test_exported_files_get_the_usual_permissions(snapshot: Snapshot, tmp_path: Path) -> None:
    """Written to a private temporary file first, they must not stay readable by the owner
    only: a report is meant to be shared."""
    old = os.umask(0o022)
    try:
        out = export_all(snapshot, xlsx=tmp_path / "c.xlsx", html=tmp_path / "c.html",
                         csv=tmp_path / "csv")
    finally:
        os.umask(old)
    for path in (out["xlsx"], out["html"], *out["csv"]):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def _report(html: str) -> Any:
    from bs4 import BeautifulSoup

    return BeautifulSoup(html, "html.parser")


def test_report_groups_findings_explains_coverage_and_lists_the_inventory(
    snapshot: Snapshot, tmp_path: Path
) -> None:
    from catalog_nb.notebook import audit
    from catalog_nb.notebook.export.report_sections import AUDIT_TITLES

    frames = snapshot.frames()
    findings = audit.run_all(snapshot)
    assert len(findings) > 0
    page = _report(render_report(snapshot, frames, findings))
    ids = [h2["id"] for h2 in page.find_all("h2")]
    assert ids == ["summary", "findings", "coverage", "inventory", "lineage", "joins"]
    assert "The join picture is unavailable: a snapshot holds no join conditions" in str(page)

    # findings: one collapsible group per audit, its count in the summary
    groups = page.select("details.group")
    by_audit = findings["audit"].value_counts()
    assert len(groups) == len(by_audit)
    for group in groups:
        name = group["id"].removeprefix("findings-")
        summary = group.summary.get_text(" ", strip=True)
        assert AUDIT_TITLES[name] in summary
        assert f"{by_audit[name]} finding" in summary
        assert len(group.select("tbody tr")) == by_audit[name]
    assert f"{len(findings)} finding(s) from {len(by_audit)} audit(s)" in page.get_text()

    # coverage: accepted beside "with suggestions", and a sentence saying why they differ
    table = page.select_one("table.coverage")
    assert [th.get_text() for th in table.select("thead tr")[1].find_all("th")] == [
        "accepted", "with suggestions", "accepted", "with suggestions"]
    row = {tr.td.get_text(): [td.get_text() for td in tr.find_all("td")]
           for tr in table.select("tbody tr")}["exp_files"]
    fields = frames["fields"]
    assert row[1] == f"{(fields['source'] == 'exp_files').sum():,}"
    assert row[2].startswith("1 (")  # the one accepted field tag
    note = page.select_one("#coverage-note").get_text()
    accepted = int((frames["associations"]["state"] == "ACCEPTED").sum())
    assert f"carry one of the {accepted:,} accepted tags" in note

    # inventory: resources with their fields, data types and tags
    resources = {d.summary.select_one(".path").get_text(): d
                 for d in page.select("details.resource")}
    listed = frames["resources"]
    folders = [p.rstrip("/") + "/" for p in listed.loc[listed["type"] == "collection", "path"]]
    members = [p for p in listed["path"] if any(p.startswith(f) for f in folders)]
    assert folders and members  # the lake's monthly order files, members of sales/orders
    assert set(resources) == set(listed["path"]) - set(members)
    assert f"{len(members)} member files" in resources[folders[0].rstrip("/")].summary.get_text()
    customers = resources["crm/customers.csv"]
    cells = {tr.td.get_text(): [td.get_text(" ", strip=True) for td in tr.find_all("td")]
             for tr in customers.select("tbody tr")}
    assert set(cells) == set(fields.loc[fields["resource_path"] == "crm/customers.csv", "name"])
    assert cells["contact"][3] == "Sensitive.EmailAddress"
    assert customers.select_one("td span.tag")["class"] == ["tag", "accepted"]
    assert cells["contact"][1] == fields.set_index(["resource_path", "name"]).loc[
        ("crm/customers.csv", "contact"), "data_type"]
    assert SCRIPT not in str(page)
