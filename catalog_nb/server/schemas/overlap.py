"""Table overlap: the requests (query, JSON array, CSV file), the comparison and the answers.

The comparison is of schemas only (field names, case-insensitive), as the spec says: a
"preliminary computation from the table schemas". See docs/relations-api.md, Table overlap.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest, ServiceError

#: Most comparisons one JSON request and one CSV file may ask for.
MAX_ITEMS = 1000
MAX_CSV_ROWS = 10_000
CSV_HEADER = ("virtualFolder", "tableOne", "tableTwo", "commonFields", "tableOneUniqueFields",
              "tableTwoUniqueFields", "overlapPercent")
_INPUT_HEADER = ("virtualfolder", "tableone", "tabletwo")


@dataclass(frozen=True)
class Request:
    """One comparison asked for: two ``schema.table_name`` names, maybe a virtual folder."""

    virtual_folder: str | None
    table_one: str
    table_two: str


def compare(one: Sequence[str], two: Sequence[str]) -> dict[str, Any]:
    """The comparison of two tables' field names (the lists part of TableComparisionTO).

    >>> compare(["id", "Name"], ["ID", "city"])["overlapPercent"]
    33.33
    """
    two_folds = {name.casefold() for name in two}
    one_folds = {name.casefold() for name in one}
    common = _unique([n for n in one if n.casefold() in two_folds])
    one_only = _unique([n for n in one if n.casefold() not in two_folds])
    two_only = _unique([n for n in two if n.casefold() not in one_folds])
    union = len(common) + len(one_only) + len(two_only)
    percent = round(100.0 * len(common) / union, 2) if union else 0.0
    return {"commonFields": common, "tableOneUniqueFields": one_only,
            "tableTwoUniqueFields": two_only, "overlapPercent": percent}


def _unique(names: list[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for name in names:
        if name.casefold() not in seen:
            seen.add(name.casefold())
            kept.append(name)
    return kept


def comparison_out(request: Request, lists: dict[str, Any]) -> dict[str, Any]:
    """The TableComparisionTO of one comparison."""
    # virtualFolder is a string in the spec: "" when the request named none.
    return {"virtualFolder": request.virtual_folder or "", "tableOne": request.table_one,
            "tableTwo": request.table_two, **lists}


def _text(value: Any, what: str, required: bool) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise BadRequest(f"{what} is required.", ErrorCode.INVALID_PAYLOAD, field=what)
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{what} must be a string, not {type(value).__name__}.",
                         ErrorCode.INVALID_PAYLOAD, field=what)
    return value.strip()


def parse_items(body: Any) -> list[Request]:
    """The body of ``POST /overlap/table``: a JSON array of ``{virtualFolder?, tableOne,
    tableTwo}``; 400 naming the first bad item's index."""
    if not isinstance(body, list):
        raise BadRequest("The body must be a JSON array of {virtualFolder, tableOne, tableTwo}.",
                         ErrorCode.INVALID_PAYLOAD)
    if len(body) > MAX_ITEMS:
        raise BadRequest(f"At most {MAX_ITEMS} comparisons per request, not {len(body)}.",
                         ErrorCode.INVALID_PAYLOAD)
    found = []
    for index, item in enumerate(body):
        with where(f"Item {index}", index=index):
            if not isinstance(item, dict):
                raise BadRequest("must be an object {virtualFolder, tableOne, tableTwo}.",
                                 ErrorCode.INVALID_PAYLOAD)
            found.append(Request(
                virtual_folder=_text(item.get("virtualFolder"), "virtualFolder", False),
                table_one=str(_text(item.get("tableOne"), "tableOne", True)),
                table_two=str(_text(item.get("tableTwo"), "tableTwo", True)),
            ))
    return found


def check_separator(separator: str) -> str:
    """The CSV separator; 400 INVALID_CSV unless it is exactly one character (not a quote or
    a line break)."""
    if len(separator) != 1 or separator in "\"\r\n":
        raise BadRequest(f"The separator must be one character (not a quote or line break), "
                         f"not {separator!r}.", ErrorCode.INVALID_CSV)
    return separator


def parse_csv(content: bytes, separator: str) -> list[tuple[int, Request]]:
    """The rows of an uploaded CSV file as (line number, request); 400 INVALID_CSV naming the
    line of the first bad row. Blank lines are skipped; a first row ``virtualFolder,tableOne,
    tableTwo`` (any case) is a header."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadRequest(f"The file is not UTF-8 text (byte {exc.start}).",
                         ErrorCode.INVALID_CSV) from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=separator, strict=True)
    rows: list[tuple[int, Request]] = []
    first = True
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise BadRequest(f"Line {line}: not valid CSV ({exc}).", ErrorCode.INVALID_CSV,
                             line=line) from None
        if not any(cell.strip() for cell in row):
            continue
        if first and [c.strip().casefold() for c in row] == list(_INPUT_HEADER):
            first = False
            continue
        first = False
        if len(row) != 3:
            raise BadRequest(
                f"Line {line}: {len(row)} column(s); each row must be virtualFolder"
                f"{separator}tableOne{separator}tableTwo.", ErrorCode.INVALID_CSV, line=line)
        if len(rows) >= MAX_CSV_ROWS:
            raise BadRequest(f"Line {line}: at most {MAX_CSV_ROWS} rows per file.",
                             ErrorCode.INVALID_CSV, line=line)
        folder, one, two = (cell.strip() for cell in row)
        rows.append((line, Request(folder or None, one, two)))
    return rows


def csv_out(items: Sequence[dict[str, Any]], separator: str) -> str:
    """The CSV answer: :data:`CSV_HEADER`, one row per comparison, lists joined by ``|``."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=separator, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for item in items:
        writer.writerow([
            item["virtualFolder"] or "", item["tableOne"], item["tableTwo"],
            "|".join(item["commonFields"]), "|".join(item["tableOneUniqueFields"]),
            "|".join(item["tableTwoUniqueFields"]), f"{item['overlapPercent']:g}",
        ])
    return out.getvalue()


@contextmanager
def where(label: str, **extra: Any) -> Iterator[None]:
    """Prefix a ServiceError raised inside the block with ``label`` (``Item 3``, ``Line 7``)
    and add ``extra`` (``index``, ``line``) to its body."""
    try:
        yield
    except ServiceError as exc:
        if exc.message.startswith(("Item ", "Line ")):
            raise
        message = f"{label}: {exc.message[0].lower()}{exc.message[1:]}"
        raise type(exc)(message, exc.code, headers=exc.headers,
                        **{**exc.extra, **extra}) from None
