"""How the facet search panel writes values: counts, sizes, times, highlighted terms, and the
rows of its results grid (partitions folded under their collection).

Everything here is plain Python over the search frame, so the grid in the browser and the
static HTML fallback (what GitHub or an untrusted notebook shows) read the same.

>>> human_count(25337)
'25,337'
>>> human_size(1_234_567)
'1.2 MB'
>>> human_size(None)
'unknown'
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from catalog_nb.client.frame_display import TIME_FORMAT, is_missing, known_size
from catalog_nb.client.frame_display import human_size as frame_size

__all__ = [
    "COLUMNS",
    "UNKNOWN",
    "GridColumn",
    "grid_rows",
    "highlight",
    "human_count",
    "human_size",
    "human_time",
    "search_terms",
    "static_table",
]

#: What a value the catalog does not know reads as (never a made-up 0).
UNKNOWN = "unknown"
_WORD = re.compile(r"[^\W_]+")
_OPERATORS = {"AND", "OR", "NOT"}


@dataclass(frozen=True)
class GridColumn:
    """One column of the results grid: the frame column it shows, its header, whether it is
    right-aligned (numbers: header and cells alike) and the sort field its header sorts by."""

    name: str
    label: str
    numeric: bool = False
    sort: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The column as the front end reads it."""
        return {"name": self.name, "label": self.label, "numeric": self.numeric,
                "sort": self.sort}


#: The grid's columns; the path is written under the name so the grid fits a notebook cell.
COLUMNS: tuple[GridColumn, ...] = (
    GridColumn("name", "Name / path", sort="name"),
    GridColumn("source", "Source", sort="source"),
    GridColumn("kind", "Type"),
    GridColumn("tags", "Tags"),
    GridColumn("rows", "Rows", numeric=True, sort="rows"),
    GridColumn("size", "Size", numeric=True, sort="size"),
    GridColumn("modified", "Modified", sort="modified"),
    GridColumn("score", "Score", numeric=True, sort="score"),
)


def human_count(value: Any) -> str:
    """A count with thousands separators; ``unknown`` when the catalog has none.

    >>> human_count(None), human_count(0)
    ('unknown', '0')
    """
    return UNKNOWN if is_missing(value) else f"{int(value):,}"


def human_size(value: Any) -> str:
    """A byte size as every part of the toolkit writes it (``frame_display.human_size``).

    >>> human_size(999), human_size(25_337_000)
    ('999 B', '25.3 MB')
    """
    return UNKNOWN if is_missing(value) else frame_size(value)


def human_time(value: Any) -> str:
    """A timestamp to the minute (UTC), ``unknown`` when missing."""
    if is_missing(value):
        return UNKNOWN
    return str(pd.Timestamp(value).strftime(TIME_FORMAT))


def search_terms(text: str, *, advanced: bool = False) -> list[str]:
    """The words of a search phrase worth highlighting (operators and ``field:`` names
    dropped), longest first so a longer match wins.

    >>> search_terms('name:orders AND NOT "big customers"', advanced=True)
    ['customers', 'orders', 'big']
    """
    words: list[str] = []
    for chunk in text.split():
        if advanced and chunk in _OPERATORS:
            continue
        if advanced and ":" in chunk:
            chunk = chunk.split(":", 1)[1]
        words.extend(word.casefold() for word in _WORD.findall(chunk))
    return sorted(dict.fromkeys(words), key=lambda word: (-len(word), word))


def highlight(text: str, terms: Sequence[str]) -> str:
    """``text`` HTML-escaped, the ``terms`` (case-insensitive) wrapped in ``<mark>``.

    >>> highlight("big_customers.csv", ["customers"])
    'big_<mark>customers</mark>.csv'
    """
    if not terms:
        return html.escape(text)
    pattern = re.compile("|".join(re.escape(term) for term in terms), re.IGNORECASE)
    out: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        out.append(html.escape(text[last : match.start()]))
        out.append(f"<mark>{html.escape(match.group(0))}</mark>")
        last = match.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


def _size_of(row: Mapping[str, Any]) -> str:
    return human_size(known_size(row.get("size"), row.get("type"), row.get("rows")))


def _cell_row(row: Mapping[str, Any], terms: Sequence[str]) -> dict[str, Any]:
    name = str(row.get("name") or row.get("path") or row.get("key"))
    path = str(row.get("path") or "")
    kind = " · ".join(str(v) for v in (row.get("type"), row.get("format")) if not is_missing(v))
    tags = list(row.get("tags") or [])
    score = row.get("score")
    return {
        "key": str(row["key"]),
        "name": f"<b>{highlight(name, terms)}</b><br><small>{highlight(path, terms)}</small>",
        "source": html.escape(str(row.get("source") or "")),
        "kind": html.escape(kind),
        "tags": _tags(tags, terms),
        "rows": human_count(row.get("rows")),
        "size": _size_of(row),
        "modified": human_time(row.get("modified"))[:10],
        "score": "—" if is_missing(score) or not score else f"{float(score):.3f}",
        "children": [],
    }


#: Tags written in a grid cell; the others are counted ("+2 more"), the details list them all.
SHOWN_TAGS = 3


def _tags(tags: Sequence[str], terms: Sequence[str]) -> str:
    shown = ", ".join(highlight(str(tag), terms) for tag in tags[:SHOWN_TAGS]) or "—"
    more = len(tags) - SHOWN_TAGS
    return shown + (f" <small>+{more} more</small>" if more > 0 else "")


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def grid_rows(
    frame: pd.DataFrame, terms: Sequence[str], collections: Iterable[tuple[str, str]] = ()
) -> list[dict[str, Any]]:
    """The grid's rows for one page of results: cells as HTML, partitions folded.

    A file whose folder is a collection (``collections``: ``(source, path)`` pairs, plus the
    collections on the page) is listed under that collection's row as a child; when the
    collection itself is not on the page, its members on the page are gathered under one row
    that says so.
    """
    records: list[dict[str, Any]] = [
        {str(k): v for k, v in r.items()} for r in frame.to_dict("records")
    ]
    known = set(collections) | {
        (str(r["source"]), str(r["path"])) for r in records if r.get("type") == "collection"
    }
    rows: list[dict[str, Any]] = []
    by_collection: dict[tuple[str, str], dict[str, Any]] = {}
    for record in records:
        cells = _cell_row(record, terms)
        source, path = str(record.get("source") or ""), str(record.get("path") or "")
        home = (source, _parent(path))
        if record.get("type") == "collection":
            by_collection[(source, path)] = cells
            rows.append(cells)
        elif record.get("type") == "file" and home in known:
            group = by_collection.get(home)
            if group is None:
                group = {
                    "key": "", "name": f"<b>{html.escape(home[1])}/</b><br>"
                    "<small>partitions of a collection</small>",
                    "source": html.escape(source), "kind": "collection", "tags": "—",
                    "rows": "", "size": "", "modified": "", "score": "", "children": [],
                }
                by_collection[home] = group
                rows.append(group)
            group["children"].append(cells)
        else:
            rows.append(cells)
    return rows


def static_table(rows: Sequence[Mapping[str, Any]], *, caption: str = "") -> str:
    """The grid as a plain HTML table (the fallback of saved notebooks), folded rows indented."""
    if not rows:
        return "<p><i>No matching resources.</i></p>"
    head = "".join(
        f"<th style='text-align:{'right' if c.numeric else 'left'}'>{html.escape(c.label)}</th>"
        for c in COLUMNS
    )
    body: list[str] = []

    def add(row: Mapping[str, Any], indent: bool) -> None:
        cells = "".join(
            f"<td style='text-align:{'right' if c.numeric else 'left'}"
            f"{';padding-left:2em' if indent and c.name == 'name' else ''}'>{row[c.name]}</td>"
            for c in COLUMNS
        )
        body.append(f"<tr data-key='{html.escape(str(row['key']))}'>{cells}</tr>")

    for row in rows:
        add(row, False)
        for child in row.get("children") or []:
            add(child, True)
    title = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (
        "<table class='catalog-nb-results' style='border-collapse:collapse'>"
        f"{title}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )
