"""JSON records -> typed DataFrames, from declared column specs.

Each frame method of the client declares its columns once, as a tuple of :class:`Column`, and
:func:`to_frame` builds the DataFrame from them: the columns and their pandas nullable dtypes come
from the declaration, never from the data, so an empty result has the same columns and dtypes as
a full one, and a column that is ``None`` in the first row is still typed.

=========  ==========================  ==============================================
kind       dtype                       notes
=========  ==========================  ==============================================
string     ``string``                  missing -> ``<NA>``
int        ``Int64``
float      ``Float64``
bool       ``boolean``
time       ``datetime64[ns, UTC]``     from epoch milliseconds; missing -> ``NaT``
list       ``object``                  each cell a list; missing -> ``[]``
dict       ``object``                  each cell a dict; missing -> ``{}``
object     ``object``                  the JSON value as is
=========  ==========================  ==============================================
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from catalog_nb.client.frame_display import CatalogFrame

__all__ = [
    "DTYPES",
    "CatalogFrame",
    "Column",
    "Kind",
    "empty_frame",
    "json_scalar",
    "plain",
    "to_epoch_ms",
    "to_frame",
]

Kind = Literal["string", "int", "float", "bool", "time", "list", "dict", "object"]

#: The pandas dtype of each column kind.
DTYPES: dict[str, str] = {
    "string": "string",
    "int": "Int64",
    "float": "Float64",
    "bool": "boolean",
    "time": "datetime64[ns, UTC]",
    "list": "object",
    "dict": "object",
    "object": "object",
}


@dataclass(frozen=True)
class Column:
    """One declared column: output ``name``, where its value comes from, and its ``kind``.

    ``source`` is a key of the record, a dotted path into nested objects
    (``"attributes.firstName"``), or a function of the record. It defaults to ``name``.

    Example::

        Column("first_name", "string", "attributes.firstName")
    """

    name: str
    kind: Kind
    source: str | Callable[[Mapping[str, Any]], Any] | None = None

    def extract_all(
        self, records: Sequence[Mapping[str, Any]], *, dicts: bool = False
    ) -> list[Any]:
        """The raw value of this column in each of ``records`` (``dicts``: they are all plain
        dicts, so a plain key is one list comprehension, not a call per cell)."""
        source = self.source if self.source is not None else self.name
        if dicts and isinstance(source, str) and "." not in source:
            return [r.get(source) for r in records]
        return [self.extract(r) for r in records]

    def extract(self, record: Mapping[str, Any]) -> Any:
        """The raw value of this column in ``record`` (``None`` when absent)."""
        source = self.source if self.source is not None else self.name
        if callable(source):
            return source(record)
        value: Any = record
        for part in source.split("."):
            # dict first: the ABC check is slow, and frames extract millions of cells
            if not (type(value) is dict or isinstance(value, Mapping)):
                return None
            value = value.get(part)
        return value


def to_epoch_ms(value: Any) -> int:
    """Epoch milliseconds of a datetime, date, ISO string, ``pd.Timestamp`` or number.

    Numbers are taken as epoch milliseconds already. Naive datetimes and strings without a
    zone are read as UTC.

    >>> to_epoch_ms("2024-01-01T00:00:00Z")
    1704067200000
    """
    if isinstance(value, bool):
        raise TypeError("a boolean is not a point in time")
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        value = _dt.datetime(value.year, value.month, value.day, tzinfo=_dt.UTC)
    if isinstance(value, str | _dt.datetime | pd.Timestamp):
        stamp = pd.Timestamp(value)
        if pd.isna(stamp):
            raise ValueError(f"not a point in time: {value!r}")
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return int(stamp.value // 1_000_000)
    raise TypeError(f"cannot read {type(value).__name__} as a point in time")


def json_scalar(value: Any) -> Any:
    """A numpy or pandas scalar as the Python value JSON can carry (``np.int64(5)`` -> 5): the
    way back from a frame cell to a request body."""
    item = getattr(value, "item", None)
    return item() if callable(item) and not isinstance(value, list | dict | str) else value


def _string(value: Any) -> Any:
    if value is None:
        return pd.NA
    return value if isinstance(value, str) else str(value)


def _number(value: Any) -> Any:
    if value is None:
        return pd.NA
    return int(value) if isinstance(value, bool) else value


def _boolean(value: Any) -> Any:
    if value is None:
        return pd.NA
    return bool(value)


#: Value types each kind takes as they are, in one vectorised step (anything else is converted
#: value by value, as ever). ``type(v) in`` on purpose: a bool is no int here.
_PLAIN: dict[str, tuple[type, ...]] = {
    "string": (str, type(None)),
    "int": (int, type(None)),
    "float": (float, int, type(None)),
    "bool": (bool, type(None)),
    "time": (int, type(None)),
}


def plain(kind: str, values: Sequence[Any]) -> bool:
    """Whether every value is of a type ``kind`` takes as it is (checked over the distinct
    types, not the values: cheap on 100,000 rows)."""
    types = _PLAIN.get(kind)
    return types is not None and set(map(type, values)).issubset(types)


def _series(kind: str, values: list[Any]) -> pd.Series:
    if plain(kind, values):
        # The usual case: one C-level conversion for the whole column.
        if kind == "time":
            millis = pd.Series(pd.array(values, dtype="Int64"))
            return pd.to_datetime(millis, unit="ms", utc=True).astype("datetime64[ns, UTC]")
        return pd.Series(values, dtype=DTYPES[kind])
    if kind == "string":
        return pd.Series([_string(v) for v in values], dtype="string")
    if kind == "int":
        return pd.Series([_number(v) for v in values], dtype="Int64")
    if kind == "float":
        return pd.Series([_number(v) for v in values], dtype="Float64")
    if kind == "bool":
        return pd.Series([_boolean(v) for v in values], dtype="boolean")
    if kind == "time":
        millis = pd.Series([None if v is None else to_epoch_ms(v) for v in values], dtype="Int64")
        return pd.to_datetime(millis, unit="ms", utc=True).astype("datetime64[ns, UTC]")
    if kind == "list":
        cells: list[Any] = [list(v) if v is not None else [] for v in values]
    elif kind == "dict":
        cells = [dict(v) if v is not None else {} for v in values]
    elif kind == "object":
        cells = list(values)
    else:
        raise ValueError(f"unknown column kind {kind!r}; expected one of {', '.join(DTYPES)}")
    return pd.Series(cells, dtype=object, index=pd.RangeIndex(len(cells)))


def to_frame(records: Iterable[Mapping[str, Any]], columns: Sequence[Column]) -> pd.DataFrame:
    """Build a DataFrame with exactly ``columns`` (names, order, dtypes) from ``records``.

    The frame is a :class:`~catalog_nb.client.frame_display.CatalogFrame`: its data is as
    declared, its reprs show keys last, lists as text and sizes and counts formatted.

    Example::

        to_frame([{"key": "u1", "timeOfCreation": 1704067200000}],
                 [Column("key", "string"), Column("created", "time", "timeOfCreation")])
    """
    rows = list(records)
    dicts = all(type(row) is dict for row in rows)
    data = {col.name: _series(col.kind, col.extract_all(rows, dicts=dicts)) for col in columns}
    frame = CatalogFrame(data, columns=[col.name for col in columns])
    frame.index = pd.RangeIndex(len(rows))
    return frame


def empty_frame(columns: Sequence[Column]) -> pd.DataFrame:
    """An empty DataFrame with the declared columns and dtypes."""
    return to_frame([], columns)
