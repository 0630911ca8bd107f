"""Reporting exports: Excel workbooks, CSV files and a self-contained HTML report, and the
stewards' spreadsheet round trip.

* :func:`export_all` writes any of the three for a live catalog or an offline snapshot; the
  shell does the same with ``catalog-nb export --xlsx FILE --html FILE --csv DIR``.
* :func:`stewardship_sheet` writes a descriptions-and-tags sheet; :func:`read_stewardship_sheet`
  reads the edited sheet back as a dry-run plan
  (:class:`~catalog_nb.notebook.export.stewardship.StewardshipPlan`) whose ``apply()`` writes it.

Needs the ``reports`` extra (``pip install catalog-nb[reports]``).

Example::

    from catalog_nb.notebook.export import export_all, read_stewardship_sheet, stewardship_sheet

    export_all(cat, xlsx="catalog.xlsx", html="catalog.html")
    export_all(catalog_nb.open_snapshot("snapshots/q2"), xlsx="q2.xlsx", html="q2.html")
    stewardship_sheet(cat, "crm.xlsx", scope="demo_files")
    plan = read_stewardship_sheet(cat, "crm.xlsx")   # after editing it in a spreadsheet
    plan.tags, plan.updates
    report = plan.apply()
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.notebook.export.cells import ExportError, check_writable, neutralise, restore
from catalog_nb.notebook.export.stewardship import (
    StewardshipPlan,
    read_stewardship_sheet,
    stewardship_sheet,
)

__all__ = [
    "ExportError",
    "StewardshipPlan",
    "export_all",
    "export_frames",
    "neutralise",
    "read_stewardship_sheet",
    "restore",
    "stewardship_sheet",
]


def _check_folder(folder: Path) -> None:
    if folder.exists():
        if not folder.is_dir():
            raise ExportError(f"cannot write CSV files to {str(folder)!r}: it is a file")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise ExportError(f"cannot write CSV files to {str(folder)!r}: permission denied")
        return
    ancestor = folder.parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not os.access(ancestor, os.W_OK | os.X_OK):
        raise ExportError(
            f"cannot create the CSV folder {str(folder)!r}: {str(ancestor)!r} is not writable"
        )


def export_frames(source: Any) -> dict[str, pd.DataFrame]:
    """The frames an export holds: the audit findings, then every catalog frame."""
    from catalog_nb.notebook.audits import Frames, run_all

    frames = source.catalog_frames() if hasattr(source, "catalog_frames") else source.frames()
    findings = run_all(Frames(source, frames=frames))
    return {"findings": findings, **frames}


def export_all(
    source: Any,
    *,
    xlsx: str | os.PathLike[str] | None = None,
    html: str | os.PathLike[str] | None = None,
    csv: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    """Write a workbook (one sheet per frame), a CSV folder and/or the HTML report.

    ``source`` is a live :class:`~catalog_nb.client.Catalog` or a
    :class:`~catalog_nb.snapshot.Snapshot`. The frames: findings (every audit of
    :mod:`catalog_nb.notebook.audits`), users, roles, sources, tag_domains, tags,
    associations, resources, fields. Every path is checked before anything is read, and each
    file appears whole or not at all. Returns ``{"xlsx": Path, "html": Path, "csv": [Path]}``
    for what was asked.

    Raises:
        ValueError: no output was asked for.
        ExportError: a path cannot be written (missing folder, permission, wrong kind).

    Example::

        export_all(cat, xlsx="catalog.xlsx", html="catalog.html", csv="catalog-csv")
    """
    if xlsx is None and html is None and csv is None:
        raise ValueError("nothing to export: give xlsx=, html= and/or csv=")
    targets = {
        name: Path(value).expanduser()
        for name, value in (("xlsx", xlsx), ("html", html), ("csv", csv))
        if value is not None
    }
    if "xlsx" in targets:
        check_writable(targets["xlsx"], "workbook")
    if "html" in targets:
        check_writable(targets["html"], "HTML report")
    if "csv" in targets:
        _check_folder(targets["csv"])
    frames = export_frames(source)
    written: dict[str, Any] = {}
    if "xlsx" in targets:
        from catalog_nb.notebook.export.xlsx import write_workbook

        written["xlsx"] = write_workbook(targets["xlsx"], frames)
    if "csv" in targets:
        from catalog_nb.notebook.export.csv import write_csv

        written["csv"] = write_csv(targets["csv"], frames)
    if "html" in targets:
        from catalog_nb.notebook.export.report import write_report

        catalog = {k: v for k, v in frames.items() if k != "findings"}
        written["html"] = write_report(targets["html"], source, catalog, frames["findings"],
                                       title=title)
    return written
