"""Recognising files: format, text encoding, CSV dialect and header, and a cheap schema.

Everything here reads at most the head of a file, except :func:`detect_encoding`, which streams
the whole file once in 1 MB blocks (pure-ASCII blocks cost almost nothing) because a file that
turns invalid in its last megabyte must not fail half-way through profiling.

Encodings, in order: a byte-order mark decides (``utf-8-sig``, ``utf-16``); a file that is valid
UTF-8 throughout is ``utf-8``; a file holding both valid multi-byte UTF-8 and invalid bytes is a
*mixed* file, read as UTF-8 with the invalid bytes replaced by U+FFFD and a warning; otherwise
``cp1252`` (Windows Western European, a superset of the printable part of Latin-1) when every
byte is defined there, else ``latin-1``, which decodes anything.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from catalog_nb.server.profiling.locations import open_stream
from catalog_nb.server.profiling.model import FileFormat, ProfilingError

if TYPE_CHECKING:
    from catalog_nb.server.profiling.locations import DataFile

HEAD_BYTES = 64 * 1024
BLOCK_BYTES = 1024 * 1024
SNIFF_ROWS = 50
DELIMITERS = (",", ";", "\t", "|")
EXTENSIONS = {
    ".csv": FileFormat.CSV,
    ".tsv": FileFormat.TSV,
    ".tab": FileFormat.TSV,
    ".jsonl": FileFormat.JSONL,
    ".ndjson": FileFormat.JSONL,
    ".json": FileFormat.JSON,
    ".parquet": FileFormat.PARQUET,
    ".parq": FileFormat.PARQUET,
    ".pq": FileFormat.PARQUET,
}
PARQUET_MAGIC = b"PAR1"
_CP1252_UNDEFINED = re.compile(rb"[\x81\x8d\x8f\x90\x9d]")
_NON_ASCII_TEXT = re.compile(r"[^\x00-\x7f\ufffd]")
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")
_VALUE_LIKE = re.compile(
    r"^\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|\d{4}-\d{2}-\d{2}.*|true|false)\s*$", re.I
)
_NAME_LIKE = re.compile(r"^[^\W\d][\w .\-/()#%$&:]{0,127}$")


@dataclass
class Encoding:
    """How to decode a text file: codec name, error handling, and a warning when lossy."""

    name: str
    errors: str = "strict"
    warning: str | None = None


@dataclass
class Dialect:
    """A CSV file's shape: separator, header and column names."""

    delimiter: str
    header: bool
    columns: list[str] = field(default_factory=list)


def read_head(path: DataFile, size: int = HEAD_BYTES) -> bytes:
    """The first ``size`` bytes of a file."""
    with path.open("rb") as fh:
        return fh.read(size)


def check_text(head: bytes) -> None:
    """Raise ProfilingError when the head of a file looks binary rather than text."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return
    if b"\x00" in head:
        raise ProfilingError("The file holds binary content (NUL bytes), not delimited text.")
    controls = len(_CONTROL.findall(head))
    if head and controls / len(head) > 0.05:
        raise ProfilingError("The file holds binary content (control bytes), not text.")


def detect_encoding(path: DataFile) -> Encoding:
    """Detect the text encoding of a whole file (see the module docstring)."""
    head = read_head(path, 4)
    if head.startswith(codecs.BOM_UTF8):
        name = "utf-8-sig"
    elif head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return Encoding("utf-16")
    else:
        name = "utf-8"
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    invalid = 0
    multibyte = False
    cp1252 = True
    with open_stream(path) as fh:
        while block := fh.read(BLOCK_BYTES):
            if block.isascii():
                continue
            text = decoder.decode(block)
            invalid += text.count("\ufffd") - block.count(b"\xef\xbf\xbd")
            multibyte = multibyte or _NON_ASCII_TEXT.search(text) is not None
            cp1252 = cp1252 and _CP1252_UNDEFINED.search(block) is None
    invalid += decoder.decode(b"", final=True).count("\ufffd")
    if invalid <= 0:
        return Encoding(name)
    if multibyte:
        return Encoding(
            "utf-8",
            "replace",
            f"Mixed encodings: mostly UTF-8, but {invalid} invalid byte sequence(s) were "
            "replaced by U+FFFD.",
        )
    return Encoding("cp1252" if cp1252 else "latin-1")


def head_text(path: DataFile, encoding: Encoding, size: int = HEAD_BYTES) -> tuple[str, bool]:
    """The decoded head of a text file and whether the file is longer than the head."""
    with path.open("rb") as fh:
        raw = fh.read(size + 1)
    truncated = len(raw) > size
    text = raw[:size].decode(encoding.name, errors="replace")
    return text, truncated


def _records(text: str, delimiter: str, truncated: bool) -> list[list[str]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows: list[list[str]] = []
    try:
        for row in reader:
            if any(cell.strip() for cell in row):  # blank lines are not records
                rows.append(row)
            if len(rows) > SNIFF_ROWS:
                break
    except csv.Error:
        pass  # a quote left open by the cut: the rows read so far are enough
    if truncated and 1 < len(rows) <= SNIFF_ROWS:
        rows.pop()  # the last record may be cut in the middle
    return rows[:SNIFF_ROWS]


def sniff_delimiter(text: str, truncated: bool = False) -> str:
    """The delimiter among ``, ; TAB |`` that splits the head into the most consistent columns.

    Like ``csv.Sniffer`` restricted to those candidates, but scored on whole parsed records
    (quotes respected): the share of records with the most common field count, then that count.
    """
    best: tuple[float, int, int] = (0.0, 1, 0)
    choice = ","
    for rank, delimiter in enumerate(DELIMITERS):
        counts = Counter(len(r) for r in _records(text, delimiter, truncated))
        if not counts:
            continue
        width, hits = counts.most_common(1)[0]
        if width < 2:
            continue
        score = (hits / sum(counts.values()), width, -rank)
        if score > best:
            best, choice = score, delimiter
    return choice


def sniff_dialect(text: str, truncated: bool = False) -> Dialect:
    """Delimiter, header presence and column names of a CSV head."""
    delimiter = sniff_delimiter(text, truncated)
    rows = _records(text, delimiter, truncated)
    if not rows:
        return Dialect(delimiter, False, [])
    width = Counter(len(r) for r in rows).most_common(1)[0][0]
    header = _has_header(rows, width)
    names = rows[0] if header else []
    return Dialect(delimiter, header, column_names(names, width if not header else len(names)))


def _has_header(rows: list[list[str]], width: int) -> bool:
    first = [cell.strip() for cell in rows[0]]
    if len(first) != width or any(_VALUE_LIKE.match(c) for c in first if c):
        return False
    named = [c for c in first if c]
    if not named or len(set(named)) != len(named):
        return False
    data = rows[1:]
    for index, name in enumerate(first):
        column = [r[index].strip() for r in data if index < len(r) and r[index].strip()]
        if column and sum(bool(_VALUE_LIKE.match(v)) for v in column) > len(column) / 2:
            return True  # a text cell above a column of numbers or dates: a header
        if name in column:
            return False  # the "name" is also a value of its column: data, not a header
    return all(_NAME_LIKE.match(c) for c in named)


def column_names(raw: list[str], width: int) -> list[str]:
    """Clean, unique column names: blanks named ``column_<n>``, duplicates suffixed ``_2``..."""
    names: list[str] = []
    seen: set[str] = set()
    for index in range(width):
        base = raw[index].strip() if index < len(raw) else ""
        base = base or f"column_{index + 1}"
        name, suffix = base, 2
        while name in seen:
            name, suffix = f"{base}_{suffix}", suffix + 1
        seen.add(name)
        names.append(name)
    return names


def detect_format(path: DataFile) -> FileFormat | None:
    """The format of a data file from its extension, checked or completed by its first bytes.

    ``.json`` files holding one object per line are JSON lines; files without a known extension
    are recognised by content only when they are Parquet (magic bytes) or JSON lines.
    """
    by_name = EXTENSIONS.get(path.suffix.lower())
    try:
        head = read_head(path, 4096)
    except OSError:
        return by_name
    if head.startswith(PARQUET_MAGIC) or by_name is FileFormat.PARQUET:
        return FileFormat.PARQUET
    if by_name in (FileFormat.CSV, FileFormat.TSV, FileFormat.JSONL):
        return by_name
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if by_name is FileFormat.JSON:
        return FileFormat.JSONL if _looks_like_json_lines(text) else FileFormat.JSON
    if by_name is None and text.startswith("{") and _looks_like_json_lines(text):
        return FileFormat.JSONL
    return by_name


def _looks_like_json_lines(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2 or not lines[0].lstrip().startswith("{"):
        return False
    try:
        json.loads(lines[0])
    except ValueError:
        return False
    return lines[1].lstrip().startswith("{")


def flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested objects as dotted names: ``{"a": {"b": 1}}`` -> ``{"a.b": 1}``.

    Arrays stay values; an empty object becomes an empty (null) field so the name is kept.
    """
    flat: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = None if isinstance(value, dict) else value
    return flat
