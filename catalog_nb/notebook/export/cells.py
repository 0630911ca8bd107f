"""What every export shares: cell values from frame values, formula neutralising, safe writes.

A text cell that a spreadsheet program would read as a formula (it starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return) gets a leading ``'``, so opening an export never runs
what someone typed into a description (CSV/formula injection). Numbers stay numbers: only text
is neutralised, so ``-1`` stored as a number is untouched.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.snapshot.files import usual_mode

__all__ = [
    "FORMULA_STARTS",
    "ExportError",
    "atomic_path",
    "check_writable",
    "neutralise",
    "plain_value",
    "restore",
]

#: First characters that make a spreadsheet program read text as a formula.
FORMULA_STARTS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")


class ExportError(Exception):
    """An export cannot be written; the message names the path and the reason."""


def neutralise(text: str) -> str:
    """``text`` made inert for spreadsheet programs.

    >>> neutralise("=HYPERLINK(\\"http://x\\")")
    '\\'=HYPERLINK("http://x")'
    >>> neutralise("plain")
    'plain'
    """
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def restore(text: str) -> str:
    """Undo :func:`neutralise` on text read back from an export.

    >>> restore("'=1+1")
    '=1+1'
    """
    if text.startswith("'") and text[1:].startswith(FORMULA_STARTS):
        return text[1:]
    return text


def _json_default(value: Any) -> Any:
    if isinstance(value, pd.Timestamp | dt.datetime | dt.date):
        return value.isoformat()
    return str(value)


def _missing(value: Any) -> bool:
    if isinstance(value, list | tuple | dict):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def plain_value(value: Any) -> Any:
    """A frame cell as ``None``, bool, int, float, a naive UTC datetime or (neutralised) text.

    Lists become ``"a; b"``, dicts JSON text; timezone-aware times are given in UTC.
    """
    if value is None or _missing(value):
        return None
    if isinstance(value, bool):
        return value
    if hasattr(value, "item") and not isinstance(value, str | list | dict):
        value = value.item()  # numpy scalars
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value
    if isinstance(value, dt.date):
        return value
    if isinstance(value, list | tuple):
        text = "; ".join("" if _missing(v) else str(v) for v in value)
    elif isinstance(value, dict):
        text = json.dumps(value, default=_json_default, ensure_ascii=False)
    else:
        text = str(value)
    return neutralise(text)


def check_writable(path: Path, what: str) -> None:
    """Raise :class:`ExportError` unless a file can be created at ``path``."""
    parent = path.parent
    if path.is_dir():
        raise ExportError(f"cannot write the {what} to {str(path)!r}: it is a folder")
    if not parent.is_dir():
        raise ExportError(
            f"cannot write the {what} to {str(path)!r}: the folder {str(parent)!r} does not exist"
        )
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ExportError(f"cannot write the {what} to {str(path)!r}: permission denied")


@contextlib.contextmanager
def atomic_path(path: Path, what: str) -> Iterator[Path]:
    """A temporary path next to ``path``, renamed onto it when the block succeeds.

    A failing write leaves neither a half-written file nor the temporary one.
    """
    check_writable(path, what)
    try:
        handle, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise ExportError(f"cannot write the {what} to {str(path)!r}: {exc.strerror}") from exc
    os.close(handle)
    work = Path(name)
    work.chmod(usual_mode())
    try:
        yield work
        work.replace(path)
    except OSError as exc:
        work.unlink(missing_ok=True)
        raise ExportError(f"cannot write the {what} to {str(path)!r}: {exc.strerror}") from exc
    except BaseException:
        work.unlink(missing_ok=True)
        raise


def write_text(path: Path, what: str, writer: Callable[[Path], None]) -> Path:
    """Run ``writer`` on a temporary path and move the result to ``path``."""
    with atomic_path(path, what) as work:
        writer(work)
    return path
