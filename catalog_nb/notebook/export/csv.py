"""CSV files from frames: one ``<name>.csv`` per frame in a folder.

UTF-8 with a header row; times in ISO 8601 (UTC), lists as ``a; b``, dicts as JSON text, and
text that a spreadsheet program would run as a formula neutralised (see
:mod:`catalog_nb.notebook.export.cells`), since CSV files are opened in spreadsheets too.
"""

from __future__ import annotations

import csv as _csv
import datetime as dt
import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from catalog_nb.notebook.export.cells import ExportError, atomic_path, plain_value

__all__ = ["write_csv"]


def _text(value: object) -> object:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return "" if value is None else value


def write_csv(folder: str | os.PathLike[str], frames: Mapping[str, pd.DataFrame]) -> list[Path]:
    """Write each frame to ``folder/<name>.csv`` (the folder is created if missing).

    Returns the files written. Each file appears whole or not at all.

    Raises:
        ExportError: the folder cannot be created or written, or ``folder`` is a file.

    Example::

        write_csv("exports/2024-q2", {"users": cat.users(), "tags": cat.tags()})
    """
    target = Path(folder).expanduser()
    if target.exists() and not target.is_dir():
        raise ExportError(f"cannot write CSV files to {str(target)!r}: it is a file, not a folder")
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(
            f"cannot create the CSV folder {str(target)!r}: {exc.strerror or exc}"
        ) from exc
    written = []
    for name, frame in frames.items():
        file = target / f"{name}.csv"
        with atomic_path(file, "CSV file") as work, work.open("w", newline="",
                                                              encoding="utf-8") as handle:
            writer = _csv.writer(handle)
            writer.writerow([str(c) for c in frame.columns])
            for record in frame.itertuples(index=False, name=None):
                writer.writerow([_text(plain_value(v)) for v in record])
        written.append(file)
    return written
