"""Excel workbooks from frames: one sheet per frame, typed cells, ready to filter.

Each sheet has a bold, frozen header row, an autofilter over the data and column widths fitted
to the content (capped). Numbers stay numbers, booleans booleans, times are Excel dates (in
UTC, formatted ``yyyy-mm-dd hh:mm:ss``); lists become ``a; b`` text and dicts JSON text. Text
that a spreadsheet program would run as a formula is neutralised (see
:mod:`catalog_nb.notebook.export.cells`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.notebook.export.cells import ExportError, atomic_path, plain_value
from catalog_nb.snapshot.files import reports_import

__all__ = ["MAX_ROWS", "sheet_names", "write_workbook"]

#: Data rows per sheet (Excel's limit minus the header).
MAX_ROWS = 1_048_575
_MAX_WIDTH, _MIN_WIDTH = 60, 6
_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\]")
_DATE_FORMAT = "yyyy-mm-dd hh:mm:ss"


def sheet_names(names: Iterable[str]) -> list[str]:
    """Valid, distinct sheet names (at most 31 characters, none of ``[]:*?/\\``).

    >>> sheet_names(["a/b", "a:b"])
    ['a_b', 'a_b (2)']
    """
    seen: set[str] = set()
    out = []
    for name in names:
        base = _BAD_SHEET_CHARS.sub("_", str(name)).strip("'") or "sheet"
        candidate, n = base[:31], 1
        while candidate.casefold() in seen:
            n += 1
            suffix = f" ({n})"
            candidate = base[: 31 - len(suffix)] + suffix
        seen.add(candidate.casefold())
        out.append(candidate)
    return out


def _clean_text(value: Any, illegal: re.Pattern[str]) -> Any:
    return illegal.sub("", value) if isinstance(value, str) else value


def _fill(sheet: Any, frame: pd.DataFrame, hidden: Iterable[str]) -> None:
    """Fill a write-only sheet: its layout first (written before the first row), then rows."""
    from openpyxl.cell import WriteOnlyCell
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    columns = [str(c) for c in frame.columns]
    dates = [str(frame[c].dtype).startswith("datetime64") for c in frame.columns]
    rows = [
        [_clean_text(plain_value(v), ILLEGAL_CHARACTERS_RE) for v in record]
        for record in frame.itertuples(index=False, name=None)
    ]
    widths = [len(c) for c in columns]
    for values in rows:
        for i, value in enumerate(values):
            if value is not None:
                widths[i] = max(widths[i], 19 if dates[i] else len(str(value)))
    hide = set(hidden)
    for i, width in enumerate(widths, start=1):
        dimension = sheet.column_dimensions[get_column_letter(i)]
        dimension.width = max(_MIN_WIDTH, min(_MAX_WIDTH, width + 2))
        dimension.hidden = columns[i - 1] in hide
    sheet.freeze_panes = "A2"
    if columns:
        sheet.auto_filter.ref = f"A1:{get_column_letter(len(columns))}{len(frame) + 1}"
    bold = Font(bold=True)
    header = []
    for name in columns:
        cell = WriteOnlyCell(sheet, value=name)
        cell.font = bold
        header.append(cell)
    sheet.append(header)
    date_columns = [i for i, is_date in enumerate(dates) if is_date]
    for values in rows:
        out: list[Any] = list(values)
        for i in date_columns:
            if out[i] is not None:
                cell = WriteOnlyCell(sheet, value=out[i])
                cell.number_format = _DATE_FORMAT
                out[i] = cell
        sheet.append(out)


def write_workbook(
    path: str | os.PathLike[str],
    frames: Mapping[str, pd.DataFrame],
    *,
    hidden: Mapping[str, Iterable[str]] | None = None,
) -> Path:
    """Write ``frames`` (sheet name -> frame, in order) to the workbook ``path``.

    ``hidden`` names columns to hide per sheet. The file appears whole or not at all.

    Raises:
        ExportError: the path cannot be written (missing folder, permission, a folder), or a
            frame has more rows than a sheet holds.

    Example::

        write_workbook("catalog.xlsx", {"users": cat.users(), "roles": cat.roles()})
    """
    openpyxl = reports_import("openpyxl")
    target = Path(path).expanduser()
    if not frames:
        raise ExportError(f"nothing to write to {str(target)!r}: no frames were given")
    for name, frame in frames.items():
        if len(frame) > MAX_ROWS:
            raise ExportError(
                f"frame {name!r} has {len(frame)} rows; an Excel sheet holds {MAX_ROWS}. "
                "Export it as CSV instead."
            )
    # write-only: rows stream to disk, so large field frames do not exhaust memory
    workbook = openpyxl.Workbook(write_only=True)
    for title, (name, frame) in zip(sheet_names(frames), frames.items(), strict=True):
        _fill(workbook.create_sheet(title), frame, (hidden or {}).get(name, ()))
    with atomic_path(target, "workbook") as work:
        workbook.save(work)
    return target
