"""``export_all`` and the stewardship sheet round trip against a real service.

One server per module whose data roots hold a demo lake profiled through the client (so
discovery's suggestions and lineage are the service's own). The sheet is edited the way a
spreadsheet program would, with openpyxl, and read back into a dry-run plan, then applied.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from catalog_nb.client import Catalog
from catalog_nb.notebook.export import (
    ExportError,
    export_all,
    read_stewardship_sheet,
    stewardship_sheet,
)
from catalog_nb.notebook.export.stewardship import SHEET_COLUMNS, UPDATE_COLUMNS
from tests.client.shared_lake import profiled_catalog

FILES = "demo_files"
CUSTOMERS = "crm/customers.csv"
STORES = "ref/stores.json"


@pytest.fixture(scope="module")
def cat(
    make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Catalog]:
    catalog = profiled_catalog(make_server, tmp_path_factory, "export-lake")[0]
    yield catalog
    catalog.close()


def test_export_from_a_live_catalog(cat: Catalog, tmp_path: Path) -> None:
    out = export_all(cat, xlsx=tmp_path / "c.xlsx", html=tmp_path / "c.html", csv=tmp_path / "csv")
    book = openpyxl.load_workbook(out["xlsx"], read_only=True)
    assert book.sheetnames[0] == "findings" and "fields" in book.sheetnames
    assert len(out["csv"]) == len(book.sheetnames)
    book.close()
    html = out["html"].read_text(encoding="utf-8")
    assert f"Catalog {cat.url}" in html and "snapshot of" not in html
    lineage = html.split('id="lineage"')[1]
    assert cat.lineage_graph().number_of_nodes() > 0  # the demo's views and copies
    assert "data:image/png;base64," in lineage and "unavailable" not in lineage
    coverage = html.split('id="coverage"')[1].split('id="lineage"')[0]
    assert "data:image/png;base64," in coverage and "demo_files" in coverage
    joins = html.split('id="joins"')[1]
    assert "data:image/png;base64," in joins and "unavailable" not in joins
    assert len(re.findall("data:image/png", html)) == 5  # two charts, coverage, lineage, joins
    with pytest.raises(ExportError, match="does not exist"):
        export_all(cat, xlsx=tmp_path / "missing" / "c.xlsx")


def _edit(path: Path, edits: Callable[[dict[tuple[str, str], int], Any, dict[str, int]], None]
          ) -> None:
    """Open the sheet as a spreadsheet program would, let ``edits`` change cells, save."""
    book = openpyxl.load_workbook(path)
    sheet = book["stewardship"]
    header = {c.value: c.column for c in sheet[1]}
    rows = {
        (str(sheet.cell(r, header["path"]).value), str(sheet.cell(r, header["field"]).value or "")):
        r for r in range(2, sheet.max_row + 1)
    }
    edits(rows, sheet, header)
    book.save(path)


def test_stewardship_round_trip(cat: Catalog, tmp_path: Path) -> None:
    domain = f"Stew{uuid.uuid4().hex[:6]}"
    cat.create_tag_domain(domain)
    cat.create_tags([{"full_name": f"{domain}.Keep"}, {"full_name": f"{domain}.Drop"},
                     {"full_name": f"{domain}.New"}])
    cat.tag((FILES, CUSTOMERS), f"{domain}.Keep")
    cat.tag((FILES, CUSTOMERS), f"{domain}.Drop", field="contact")
    cat.update_resource(FILES, STORES, description="Stores")
    path = stewardship_sheet(cat, tmp_path / "sheet.xlsx", scope=FILES)

    book = openpyxl.load_workbook(path)
    sheet = book["stewardship"]
    assert [c.value for c in sheet[1]] == list(SHEET_COLUMNS)
    assert sheet.column_dimensions["J"].hidden and sheet.column_dimensions["L"].hidden
    assert sheet.freeze_panes == "A2" and "how to" in book.sheetnames
    values = [[c.value for c in row] for row in sheet.iter_rows(min_row=2)]
    assert {v[0] for v in values} == {FILES}
    resource_row = next(v for v in values if v[1] == CUSTOMERS and v[3] == "resource")
    assert resource_row[6] == f"{domain}.Keep"
    contact = next(v for v in values if v[1] == CUSTOMERS and v[2] == "contact")
    assert contact[6] == f"{domain}.Drop"
    assert "Sensitive.EmailAddress" in (contact[7] or "")  # discovery's suggestion, shown
    book.close()

    def edits(rows: dict[tuple[str, str], int], sheet: Any, col: dict[str, int]) -> None:
        sheet.cell(rows[(CUSTOMERS, "")], col["description"]).value = "=Customer master"
        sheet.cell(rows[(CUSTOMERS, "")], col["owner"]).value = "crm-team"
        sheet.cell(rows[(CUSTOMERS, "")], col["tags"]).value = f"{domain}.Keep; {domain}.New"
        sheet.cell(rows[(CUSTOMERS, "contact")], col["tags"]).value = (
            "Sensitive.EmailAddress")  # accept the suggestion, drop the other tag
        sheet.cell(rows[(CUSTOMERS, "contact")], col["description"]).value = "e-mail"
        sheet.cell(rows[(CUSTOMERS, "contact")], col["owner"]).value = "nobody"
        sheet.cell(rows[(CUSTOMERS, "born")], col["tags"]).value = f"{domain}.Nope"
        sheet.cell(rows[(STORES, "")], col["description"]).value = "Shops"

    _edit(path, edits)
    # someone changes the stores' description in the catalog after the export
    cat.update_resource(FILES, STORES, description="Retail stores")

    plan = read_stewardship_sheet(cat, path)
    assert not plan.applied and "dry run" in repr(plan)
    tags = plan.tags.set_index("tag")
    assert tags.loc[f"{domain}.New", "action"] == "create"
    assert tags.loc[f"{domain}.Drop", "new_state"] == "REJECTED"
    assert tags.loc[f"{domain}.Drop", "action"] == "change state"
    assert tags.loc["Sensitive.EmailAddress", "action"] == "change state"
    assert tags.loc["Sensitive.EmailAddress", "current_state"] == "SUGGESTED"
    assert "unknown tag" in str(plan.tags.loc[plan.tags.action == "error", "reason"].item())
    updates = plan.updates
    assert list(updates.columns) == list(UPDATE_COLUMNS)
    by = {(r["path"], r["field"] if isinstance(r["field"], str) else None, r["property"]): r
          for r in updates.to_dict("records")}
    assert by[(CUSTOMERS, None, "description")]["new"] == "=Customer master"  # restored
    assert by[(CUSTOMERS, None, "description")]["action"] == "update"
    assert by[(CUSTOMERS, None, "owner")]["action"] == "update"
    assert by[(CUSTOMERS, "contact", "description")]["action"] == "update"
    assert by[(CUSTOMERS, "contact", "owner")]["action"] == "error"
    assert by[(STORES, None, "description")]["action"] == "conflict"
    assert "Retail stores" in by[(STORES, None, "description")]["reason"]
    # the dry run wrote nothing
    assert cat.resource(FILES, CUSTOMERS)["description"] in (None, "")

    report = plan.apply()
    assert report.applied
    assert set(report.tags.loc[report.tags.action != "error", "result"]) == {"applied"}
    results = report.updates[report.updates["field"].isna()].set_index(["path", "property"])
    assert results.loc[(STORES, "description"), "result"] == "skipped"
    assert results.loc[(CUSTOMERS, "owner"), "result"] == "applied"
    resource = cat.resource(FILES, CUSTOMERS)
    assert resource["description"] == "=Customer master" and resource["owner"] == "crm-team"
    fields = cat.fields(FILES, CUSTOMERS).set_index("name")
    assert fields.loc["contact", "description"] == "e-mail"
    states = cat.associations(FILES, CUSTOMERS).set_index(["field", "tag"])["state"]
    assert states[("contact", "Sensitive.EmailAddress")] == "ACCEPTED"
    assert states[("contact", f"{domain}.Drop")] == "REJECTED"
    assert cat.resource(FILES, STORES)["description"] == "Retail stores"

    # reading the same sheet again: everything is already so, except the conflict
    again = read_stewardship_sheet(cat, path)
    assert set(again.tags.action) == {"unchanged", "error"}
    rows = again.updates[again.updates["field"].isna()].set_index(["path", "property"])
    assert rows.loc[(CUSTOMERS, "owner"), "action"] == "unchanged"
    assert rows.loc[(CUSTOMERS, "description"), "action"] == "unchanged"
    assert rows.loc[(STORES, "description"), "action"] == "conflict"
    forced = again.apply(force=True)
    assert cat.resource(FILES, STORES)["description"] == "Shops"
    assert "applied" in set(forced.updates["result"])

    # a fresh export read back untouched plans nothing (the neutralised '= text round-trips)
    fresh = stewardship_sheet(cat, tmp_path / "fresh.xlsx", scope=FILES)
    cell = openpyxl.load_workbook(fresh)["stewardship"]
    assert any(c.value == "'=Customer master" for c in cell["E"])
    untouched = read_stewardship_sheet(cat, fresh)
    assert untouched.tags.empty and untouched.updates.empty


def test_bad_stewardship_sheets_are_refused(cat: Catalog, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="no such file"):
        read_stewardship_sheet(cat, tmp_path / "none.xlsx")
    (tmp_path / "text.xlsx").write_text("not a workbook")
    with pytest.raises(ExportError, match="not an Excel workbook"):
        read_stewardship_sheet(cat, tmp_path / "text.xlsx")
    book = openpyxl.Workbook()
    book.active.title = "stewardship"
    book.active.append(["source", "path", "description"])
    book.save(tmp_path / "short.xlsx")
    with pytest.raises(ExportError, match="lacks the column"):
        read_stewardship_sheet(cat, tmp_path / "short.xlsx")
    with pytest.raises(ExportError, match="does not exist"):
        stewardship_sheet(cat, tmp_path / "no" / "s.xlsx")
    keys = cat.resources(FILES, path="crm")["key"].tolist()
    scoped = stewardship_sheet(cat, tmp_path / "scoped.xlsx", scope=keys)
    sheet = openpyxl.load_workbook(scoped)["stewardship"]
    paths = {row[1] for row in sheet.iter_rows(min_row=2, values_only=True)}
    assert paths and all(str(p).startswith("crm/") for p in paths)


def test_report_of_the_demo_reads_for_people(cat: Catalog, tmp_path: Path) -> None:
    """On the demo every tag is a suggestion: the report says so beside the coverage, lists
    the suggestions in words, folds partition files under their collection."""
    from bs4 import BeautifulSoup

    from catalog_nb.notebook import audit
    from catalog_nb.notebook.export.report_sections import AUDIT_TITLES

    out = export_all(cat, html=tmp_path / "r.html")
    page = BeautifulSoup(out["html"].read_text(encoding="utf-8"), "html.parser")
    suggested = cat.associations(state="SUGGESTED")
    assert len(suggested) > 0
    note = page.select_one("#coverage-note").get_text()
    assert f"Discovery has also suggested {len(suggested):,} tags" in note
    rows = [[td.get_text() for td in tr.find_all("td")]
            for tr in page.select("table.coverage tbody tr")]
    files = next(row for row in rows if row[0] == FILES)
    accepted, with_suggestions = (int(cell.split(" ")[0].replace(",", "")) for cell in files[2:4])
    assert with_suggestions > accepted

    pending = page.select_one("details#findings-pending_suggestions")
    assert AUDIT_TITLES["pending_suggestions"] in pending.summary.get_text()
    details = [tr.find_all("td")[3].get_text() for tr in pending.select("tbody tr")]
    assert details and all("suggested" in d and " today " in d and "confidence" in d
                           for d in details)
    assert not any("weight" in d or "0 days ago" in d for d in details)
    findings = audit.run_all(cat)
    counts = [int(re.search(r"(\d+) findings?:", g.summary.get_text()).group(1))  # type: ignore[union-attr]
              for g in page.select("details.group")]
    assert sum(counts) == len(findings)

    collections = cat.resources(type="collection")
    assert len(collections) > 0
    summaries = {d.summary.select_one(".path").get_text(): d.summary.get_text(" ", strip=True)
                 for d in page.select("details.resource")}
    members = [p for p in cat.resources()["path"]
               if any(p.startswith(c.rstrip("/") + "/") for c in collections["path"])]
    assert not set(members) & set(summaries)
    assert any("member files" in summaries[c] for c in collections["path"])
