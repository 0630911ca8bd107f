"""How the client's frames read in a notebook: :class:`CatalogFrame` and its text and HTML reprs.

Every frame of the client is a :class:`CatalogFrame`, a plain :class:`pandas.DataFrame` in all
but its reprs: the data, the dtypes and the column order stay exactly as declared (numbers stay
``Int64``/``Float64``, tags stay lists), and only what is *shown* changes:

* key columns (``key``, ``*_key``: 32-hex identifiers nobody reads) are shown last;
* lists read as text (``PII.Email, PII.Phone``), dicts as ``name: value`` pairs;
* missing values show as ``—`` rather than ``<NA>``/``NaT``;
* counts get thousands separators (``25,337``), byte sizes read as ``25.3 kB``, shares as
  ``42%``, times as ``2024-01-31 09:15`` (UTC);
* in HTML, text is never cut (an audit ``detail`` is read whole) but wraps, and the table
  scrolls inside the cell rather than widening it.

A :class:`pandas.io.formats.style.Styler` would do the formatting too, but it is not a frame:
``df.loc``, ``df.query`` and friends would be gone. A subclass keeps them, and pandas carries the
class through slicing, ``head``, ``sort_values``, ``query``... (``_constructor``).

Example::

    frame = cat.resources()          # a CatalogFrame
    frame["size"].dtype              # Int64: sums and sorts as numbers
    frame                            # in Jupyter: "25.3 kB", tags as text, keys last
"""

from __future__ import annotations

import html
import numbers
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["CatalogFrame", "JobSeries", "cell_text", "display_order", "formatter", "is_key_column"]

#: Columns holding sizes in bytes.
BYTE_COLUMNS = frozenset({"size", "resource_size", "total_size", "bytes"})
#: Columns holding a share between 0 and 1, shown as a percentage.
SHARE_COLUMNS = frozenset(
    {"share", "resource_share", "density", "left_in_right", "right_in_left", "progress"}
)
#: Times to the minute, as every part of the toolkit shows them.
TIME_FORMAT = "%Y-%m-%d %H:%M"
#: Shown in place of a missing value.
MISSING = "—"
#: Decimal units, as the service's size facets ("<1 MB") and the resource view write them.
_UNITS = ("B", "kB", "MB", "GB", "TB", "PB")

_STYLE = (
    "<style>"
    ".catalog-frame{max-width:100%;overflow-x:auto}"
    ".catalog-frame table{border-collapse:collapse;width:auto;font-size:12px}"
    ".catalog-frame th,.catalog-frame td{padding:2px 8px;vertical-align:top}"
    ".catalog-frame thead th{text-align:left;white-space:nowrap;"
    "border-bottom:1px solid #bbb}"
    ".catalog-frame thead th.num{text-align:right}"
    ".catalog-frame td.text{text-align:left;white-space:normal;max-width:36em;"
    "overflow-wrap:anywhere}"
    ".catalog-frame td.num{text-align:right;white-space:nowrap;"
    "font-variant-numeric:tabular-nums}"
    ".catalog-frame td.key{text-align:left;font-family:monospace;font-size:10px;color:#888}"
    ".catalog-frame td.missing{color:#aaa}"
    ".catalog-frame td.more{text-align:center;color:#888}"
    ".catalog-frame p.shape{color:#666;font-size:11px;margin:2px 0}"
    "</style>"
)


def is_key_column(name: Any, dtype: Any = None) -> bool:
    """Whether a column holds keys (``key``, ``resource_key``... of text, or of unknown
    ``dtype``): shown last. ``primary_key``, a list of field names, is no key column.

    >>> is_key_column("tag_key"), is_key_column("keys_found"), is_key_column("key", "Int64")
    (True, False, False)
    """
    text = str(name)
    named = (text == "key" or text.endswith("_key")) and text != "primary_key"
    return named and (dtype is None or pd.api.types.is_string_dtype(dtype))


def display_order(columns: Any, dtypes: Mapping[Any, Any] | None = None) -> list[Any]:
    """``columns`` with the key columns moved last (each group keeps its order).

    >>> display_order(["key", "name", "resource_key", "size"])
    ['name', 'size', 'key', 'resource_key']
    """
    names = list(columns)
    keys = {c for c in names if is_key_column(c, None if dtypes is None else dtypes.get(c))}
    return [c for c in names if c not in keys] + [c for c in names if c in keys]


def human_size(value: float) -> str:
    """A size in bytes as people read it, in decimal units (1000 bytes a kB): the one size
    format of the toolkit (frames, the facet search panel, the resource view, the report).

    >>> human_size(25337), human_size(512), human_size(3 * 1000 ** 3)
    ('25.3 kB', '512 B', '3.0 GB')
    """
    size, unit = float(value), 0
    while abs(size) >= 1000 and unit < len(_UNITS) - 1:
        size, unit = size / 1000, unit + 1
    return f"{int(size)} B" if unit == 0 else f"{size:,.1f} {_UNITS[unit]}"


def known_size(size: Any, kind: Any = None, rows: Any = None) -> int | None:
    """A resource's size in bytes, or ``None`` where the catalog does not know it: the
    service answers 0 for sizes it has not measured (tables, views, unread partitions), and
    only a file profiled as empty really has 0 bytes. ``kind`` is the resource's type.

    >>> known_size(0, "table"), known_size(0, "file", rows=0), known_size(25337, "file")
    (None, 0, 25337)
    """
    if is_missing(size):
        return None
    if int(size) == 0 and not (kind == "file" and not is_missing(rows) and rows == 0):
        return None  # rows may be pd.NA, whose "== 0" has no truth value
    return int(size)


def is_missing(value: Any) -> bool:
    """Whether a cell holds no value (None, NA, NaN, NaT); a list, even empty, is a value."""
    if value is None:
        return True
    if isinstance(value, list | tuple | dict | set):
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def cell_text(value: Any) -> str:
    """One cell as text: lists joined by ``, ``, dicts as ``name: value``, missing as ``—``.

    >>> cell_text(["PII.Email", "PII.Phone"]), cell_text(pd.NA), cell_text({"a": 1})
    ('PII.Email, PII.Phone', '—', 'a: 1')
    """
    if is_missing(value):
        return MISSING
    if isinstance(value, list | tuple | set):
        return ", ".join(cell_text(item) for item in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}: {cell_text(v)}" for k, v in value.items())
    if isinstance(value, pd.Timestamp):
        return f"{value:{TIME_FORMAT}}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def formatter(name: Any, dtype: Any) -> tuple[Callable[[Any], str], str]:
    """The cell formatter of a column and its HTML class (``num``, ``text`` or ``key``)."""
    if is_key_column(name, dtype):
        return cell_text, "key"
    text_name = str(name)
    if pd.api.types.is_bool_dtype(dtype):
        return cell_text, "text"
    if pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype):
        if text_name in BYTE_COLUMNS or text_name.endswith("_bytes"):
            return _or_missing(human_size), "num"
        if text_name in SHARE_COLUMNS or text_name.endswith("_share"):
            return _or_missing(lambda v: f"{float(v):.0%}"), "num"
        if pd.api.types.is_integer_dtype(dtype):
            return _or_missing(lambda v: f"{int(v):,}"), "num"
        return _or_missing(_decimal), "num"
    return cell_text, "text"


def _decimal(value: Any) -> str:
    number = float(value)
    return f"{number:,.0f}" if number.is_integer() and abs(number) >= 1000 else f"{number:,.4g}"


def _or_missing(format_one: Callable[[Any], str]) -> Callable[[Any], str]:
    def format_cell(value: Any) -> str:
        return MISSING if is_missing(value) else format_one(value)

    return format_cell


def _shown_rows(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The rows a repr shows (pandas' ``display.max_rows``/``min_rows`` rules): all of them,
    or a head and a tail."""
    limit = pd.get_option("display.max_rows")
    if limit is None or len(frame) <= limit:
        return frame, None
    keep = min(pd.get_option("display.min_rows") or limit, limit)
    head = max(keep - keep // 2, 1)
    return frame.iloc[:head], frame.iloc[len(frame) - keep // 2 :]


def _positions(frame: pd.DataFrame) -> list[int]:
    """Column positions in display order (positions: names may repeat after a concat)."""
    keys = [is_key_column(name, dtype) for name, dtype in zip(frame.columns, frame.dtypes,
                                                                strict=True)]
    return ([i for i, key in enumerate(keys) if not key]
            + [i for i, key in enumerate(keys) if key])


def _shown_columns(frame: pd.DataFrame) -> tuple[list[int], list[int]]:
    """Positions of the columns shown (display order) and of those ``display.max_columns``
    leaves out."""
    order = _positions(frame)
    limit = pd.get_option("display.max_columns")
    if not limit or len(order) <= limit:
        return order, []
    return order[:limit], order[limit:]


def _label(value: Any) -> str:
    if isinstance(value, tuple):
        return " / ".join(cell_text(part) for part in value)
    return cell_text(value)


def _cells(part: pd.DataFrame, columns: list[int]) -> list[list[tuple[str, str]]]:
    formats = [formatter(part.columns[i], part.dtypes.iloc[i]) for i in columns]
    values = [part.iloc[:, i].tolist() for i in columns]
    return [
        [(fmt(column[row]), css) for (fmt, css), column in zip(formats, values, strict=True)]
        for row in range(len(part))
    ]


def frame_html(frame: pd.DataFrame, *, shape: bool = True) -> str:
    """The HTML repr of a frame (see the module docstring); ``shape=False`` leaves out the
    line under it that counts its rows and columns."""
    columns, hidden = _shown_columns(frame)
    head, tail = _shown_rows(frame)
    out = [_STYLE, '<div class="catalog-frame"><table class="dataframe"><thead><tr><th></th>']
    for i in columns:
        name = frame.columns[i]
        numeric = formatter(name, frame.dtypes.iloc[i])[1] == "num"
        out.append(f'<th class="{"num" if numeric else "text"}">{html.escape(str(name))}</th>')
    out.append("</tr></thead><tbody>")
    parts = [head] if tail is None else [head, tail]
    for number, part in enumerate(parts):
        if number:
            more = len(frame) - len(head) - len(tail)  # type: ignore[arg-type]
            out.append(f'<tr><td class="more" colspan="{len(columns) + 1}">'
                       f"… {more:,} more rows …</td></tr>")
        for label, row in zip(part.index, _cells(part, columns), strict=True):
            out.append(f"<tr><th>{html.escape(_label(label))}</th>")
            out += [
                f'<td class="{css}{" missing" if text == MISSING else ""}">'
                f"{html.escape(text)}</td>"
                for text, css in row
            ]
            out.append("</tr>")
    out.append("</tbody></table>")
    counted = f"{len(frame):,} row{'' if len(frame) == 1 else 's'}, {len(frame.columns)} columns"
    if hidden:
        counted += f"; not shown: {', '.join(str(frame.columns[i]) for i in hidden)}"
    if shape or hidden:
        out.append(f'<p class="shape">{html.escape(counted)}</p>')
    out.append("</div>")
    return "".join(out)


def frame_text(frame: pd.DataFrame) -> str:
    """The text repr of a frame: pandas' layout of the readable cells."""
    columns = _positions(frame)
    if len(frame.columns) == 0:
        return pd.DataFrame.__repr__(pd.DataFrame(frame))
    if frame.empty:
        return f"Empty {type(frame).__name__} ({len(frame.columns)} columns: " + ", ".join(
            str(frame.columns[i]) for i in columns) + ")"
    head, tail = _shown_rows(frame)
    parts = [head] if tail is None else [head, tail]
    rows: list[list[str]] = []
    labels: list[str] = []
    for number, part in enumerate(parts):
        if number:
            rows.append(["…"] * len(columns))
            labels.append("…")
        rows += [[text for text, _ in row] for row in _cells(part, columns)]
        labels += [_label(label) for label in part.index]
    shown = pd.DataFrame(rows, columns=[_label(frame.columns[i]) for i in columns], index=labels)
    with pd.option_context("display.max_rows", len(shown) + 1, "display.min_rows", len(shown)):
        text = pd.DataFrame.__repr__(shown)
    if tail is not None or len(columns) > (pd.get_option("display.max_columns") or len(columns)):
        text += f"\n\n[{len(frame):,} rows x {len(frame.columns)} columns]"
    return text


class CatalogFrame(pd.DataFrame):
    """A DataFrame whose reprs read well (see the module docstring); the data is untouched.

    Example::

        CatalogFrame({"key": ["k1"], "name": ["orders"], "size": pd.array([25337], "Int64")})
        # shown as: name "orders", size "25.3 kB", key last
    """

    @property
    def _constructor(self) -> Callable[..., CatalogFrame]:
        return CatalogFrame

    def _repr_html_(self) -> str | None:
        try:
            return frame_html(self)
        except Exception:  # noqa: BLE001 - a repr must show something: pandas' own then
            return pd.DataFrame(self).to_html(max_rows=pd.get_option("display.max_rows"))

    def __repr__(self) -> str:
        try:
            return frame_text(self)
        except Exception:  # noqa: BLE001 - a repr must show something: pandas' own then
            return pd.DataFrame.__repr__(pd.DataFrame(self))


def _record_rows(series: pd.Series) -> list[tuple[str, str, str]]:
    """(name, text, css class) of each value of a one-record Series, formatted as its column
    would be in a frame."""
    rows = []
    for name in display_order(series.index, {n: "string" for n in series.index}):
        value = series[name]
        dtype = ("boolean" if isinstance(value, bool | np.bool_) else "Int64"
                 if isinstance(value, numbers.Integral) else "Float64"
                 if isinstance(value, float) else object)
        format_one, css = formatter(name, dtype)
        rows.append((str(name), format_one(value), css))
    return rows


class JobSeries(pd.Series):
    """A job (``cat.profile(...)``, ``cat.job(key)``...) as a Series whose reprs lead with what
    happened, the job's ``message`` whole, then every field (keys last).

    It is a :class:`pandas.Series` indexed by the job columns: ``job["state"]``,
    ``job.message``, ``job.to_dict()`` work as on any Series.

    Example::

        job = cat.profile("demo_files")
        job                   # PROFILE job of demo_files: SUCCEEDED (100%) + the message
        job["resources_created"]
    """

    def headline(self) -> str:
        """One line: the job type, the data source (and path), the state and the progress.

        >>> JobSeries({"job_type": "PROFILE", "source": "demo", "state": "RUNNING",
        ...            "progress": 0.5}).headline()
        'PROFILE job of demo: RUNNING (50%)'
        """
        def get(name: str) -> Any:
            value = self.get(name)
            return None if is_missing(value) else value

        what = f"{get('job_type') or 'A'} job"
        if get("source"):
            what += f" of {get('source')}"
        if get("resource_path"):
            what += f" ({get('resource_path')})"
        line = f"{what}: {get('state') or 'state unknown'}"
        if get("progress") is not None:
            line += f" ({float(get('progress')):.0%})"
        return line

    def _message(self) -> str | None:
        value = self.get("message")
        return None if is_missing(value) or not str(value).strip() else str(value)

    def _repr_html_(self) -> str:
        message = self._message()
        out = [_STYLE, '<div class="catalog-frame">',
               f"<p><b>{html.escape(self.headline())}</b></p>"]
        if message:
            out.append(f'<p style="white-space:pre-wrap">{html.escape(message)}</p>')
        out.append('<table class="dataframe"><tbody>')
        out += [
            f'<tr><th style="text-align:left">{html.escape(name)}</th>'
            f'<td class="{css}">{html.escape(text)}</td></tr>'
            for name, text, css in _record_rows(self)
            if name != "message"
        ]
        out.append("</tbody></table></div>")
        return "".join(out)

    def __repr__(self) -> str:
        lines = [self.headline()]
        message = self._message()
        if message:
            lines.append(message)
        rows = [(name, text) for name, text, _ in _record_rows(self) if name != "message"]
        width = max((len(name) for name, _ in rows), default=0)
        lines.append("")
        lines += [f"{name.ljust(width)}  {text}" for name, text in rows]
        return "\n".join(lines)
