"""Typed frames from declared column specs: dtypes never come from the data."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import pytest

from catalog_nb.client.audit_trail import AUDIT_COLUMNS
from catalog_nb.client.frames import Column, empty_frame, to_epoch_ms, to_frame
from catalog_nb.client.roles import ROLE_COLUMNS
from catalog_nb.client.users import (
    PERMIT_COLUMNS,
    USER_COLUMNS,
    USER_ROLE_COLUMNS,
    USER_SEARCH_COLUMNS,
)

COLUMNS = (
    Column("key", "string"),
    Column("count", "int"),
    Column("share", "float"),
    Column("flag", "bool"),
    Column("when", "time", "timeOfCreation"),
    Column("tags", "list"),
    Column("attrs", "dict", "attributes"),
    Column("first_name", "string", "attributes.firstName"),
    Column("upper", "string", lambda record: str(record.get("key") or "").upper()),
    Column("raw", "object"),
)
DTYPES = {
    "key": "string",
    "count": "Int64",
    "share": "Float64",
    "flag": "boolean",
    "when": "datetime64[ns, UTC]",
    "tags": "object",
    "attrs": "object",
    "first_name": "string",
    "upper": "string",
    "raw": "object",
}


def _dtypes(frame: pd.DataFrame) -> dict[str, str]:
    return {str(name): str(dtype) for name, dtype in frame.dtypes.items()}


def test_empty_result_keeps_columns_and_dtypes() -> None:
    frame = to_frame([], COLUMNS)
    assert list(frame.columns) == list(DTYPES)
    assert _dtypes(frame) == DTYPES
    assert len(frame) == 0
    assert _dtypes(empty_frame(COLUMNS)) == DTYPES


def test_dtypes_do_not_depend_on_the_first_row() -> None:
    records: list[dict[str, Any]] = [
        {"key": None, "count": None, "share": None, "flag": None, "timeOfCreation": None},
        {"key": "k2", "count": 3, "share": 0.5, "flag": False, "timeOfCreation": 0, "tags": ["a"]},
    ]
    frame = to_frame(records, COLUMNS)
    assert _dtypes(frame) == DTYPES
    assert frame["key"].isna().tolist() == [True, False]
    assert frame["count"].tolist() == [pd.NA, 3]
    assert frame["flag"].tolist() == [pd.NA, False]
    assert frame["tags"].tolist() == [[], ["a"]]
    assert frame["attrs"].tolist() == [{}, {}]
    assert frame["upper"].tolist() == ["", "K2"]


def test_epoch_milliseconds_become_utc_datetimes() -> None:
    frame = to_frame([{"timeOfCreation": 1704067200123}, {"timeOfCreation": None}], COLUMNS)
    when = frame["when"]
    assert when.iloc[0] == pd.Timestamp("2024-01-01T00:00:00.123Z")
    assert str(when.dt.tz) == "UTC"
    assert pd.isna(when.iloc[1])


def test_nested_values_and_types_are_coerced() -> None:
    frame = to_frame(
        [{"key": 7, "attributes": {"firstName": "Ada"}, "count": True, "raw": {"x": [1]}}],
        COLUMNS,
    )
    assert frame.loc[0, "key"] == "7"
    assert frame.loc[0, "first_name"] == "Ada"
    assert frame.loc[0, "count"] == 1
    assert frame.loc[0, "raw"] == {"x": [1]}


def test_lists_of_equal_length_stay_cells() -> None:
    frame = to_frame([{"tags": ["a", "b"]}, {"tags": ["c", "d"]}], COLUMNS)
    assert frame["tags"].tolist() == [["a", "b"], ["c", "d"]]


@pytest.mark.parametrize(
    "columns",
    [
        USER_COLUMNS,
        ROLE_COLUMNS,
        AUDIT_COLUMNS,
        USER_ROLE_COLUMNS,
        USER_SEARCH_COLUMNS,
        PERMIT_COLUMNS,
    ],
)
def test_every_declared_frame_is_typed_when_empty(columns: tuple[Column, ...]) -> None:
    frame = empty_frame(columns)
    assert list(frame.columns) == [column.name for column in columns]
    assert not any(str(dtype) in ("float64", "int64", "str") for dtype in frame.dtypes)


@pytest.mark.parametrize(
    ("value", "millis"),
    [
        (1704067200000, 1704067200000),
        ("2024-01-01", 1704067200000),
        ("2024-01-01T01:00:00+01:00", 1704067200000),
        (dt.datetime(2024, 1, 1), 1704067200000),
        (dt.datetime(2024, 1, 1, tzinfo=dt.UTC), 1704067200000),
        (dt.date(2024, 1, 1), 1704067200000),
        (pd.Timestamp("2024-01-01 00:00:00.5", tz="UTC"), 1704067200500),
    ],
)
def test_to_epoch_ms(value: object, millis: int) -> None:
    assert to_epoch_ms(value) == millis


@pytest.mark.parametrize("bad", [True, None, [1], "not a time"])
def test_to_epoch_ms_refuses_non_times(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)):
        to_epoch_ms(bad)
