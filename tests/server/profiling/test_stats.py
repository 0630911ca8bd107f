"""Column statistics: exact figures on small known data, type inference, chunking, sampling."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from catalog_nb.server.profiling import inference, sampling
from catalog_nb.server.profiling.inference import python_column
from catalog_nb.server.profiling.model import DataType, FieldProfile
from catalog_nb.server.profiling.sampling import Reservoir, RowSample, pattern_of
from catalog_nb.server.profiling.stats import TableProfiler, profile_frame, profile_series


def _by_name(fields: list[FieldProfile]) -> dict[str, FieldProfile]:
    return {f.name: f for f in fields}


TEXT = pd.DataFrame(
    {
        "qty": ["1", "2", "3", None, "2", "10"],
        "price": ["1.5", "2", "2.25", "-1", None, "3"],
        "code": ["AB-12", "CD-345", "AB-12", None, None, "x"],
        "zip": ["007", "12", "12", "3", "4", "5"],
        "flag": ["true", "False", None, "TRUE", "true", "false"],
        "day": ["2024-01-31", "2023-12-01", None, "2024-02-29", "2024-01-31", "2024-01-01"],
        "at": ["2024-01-31 10:00:00", "2024-01-31T11:30:00", None, None, None, "2023-05-01"],
        "big": ["123456789012345678901", "1", "2", "3", "4", "5"],
        "empty": [None] * 6,
    },
    dtype=object,
)


def test_exact_statistics_of_small_text_columns() -> None:
    fields = _by_name(profile_frame(TEXT, infer_types=True))
    qty = fields["qty"]
    assert qty.data_type is DataType.LONG and qty.nullable
    expected = {
        "density": pytest.approx(5 / 6),
        "valueCount": 5,
        "nullCount": 1,
        "distinctCount": 4,
        "distinctCountApproximate": False,
        "min": 1,
        "max": 10,
        "mean": pytest.approx(3.6),
        "sampled": False,
        "sampleSize": 6,
    }
    assert {key: qty.properties[key] for key in expected} == expected
    assert qty.properties["mostFrequent"][0] == {"value": 2, "count": 2}
    assert qty.properties["patterns"] == [
        {"pattern": "9", "count": 4},
        {"pattern": "99", "count": 1},
    ]
    price = fields["price"]
    assert price.data_type is DataType.DOUBLE
    assert (price.properties["min"], price.properties["max"]) == (-1.0, 3.0)
    assert price.properties["mean"] == pytest.approx(7.75 / 5)
    code = fields["code"]
    assert code.data_type is DataType.STRING
    assert code.properties["minLength"] == 1 and code.properties["maxLength"] == 6
    assert (code.properties["min"], code.properties["max"]) == ("AB-12", "x")
    assert code.properties["distinctCount"] == 3
    assert code.properties["mostFrequent"][0] == {"value": "AB-12", "count": 2}
    assert code.properties["patterns"][0] == {"pattern": "AA-99", "count": 2}
    assert "mean" not in code.properties


def test_type_inference_keeps_text_where_numbers_would_lose_it() -> None:
    fields = _by_name(profile_frame(TEXT, infer_types=True))
    assert fields["zip"].data_type is DataType.STRING  # leading zero
    assert fields["big"].data_type is DataType.STRING  # beyond 64 bits
    assert fields["flag"].data_type is DataType.BOOLEAN
    assert fields["flag"].properties["mostFrequent"] == [
        {"value": True, "count": 3},
        {"value": False, "count": 2},
    ]
    day = fields["day"]
    assert day.data_type is DataType.DATE
    assert (day.properties["min"], day.properties["max"]) == ("2023-12-01", "2024-02-29")
    at = fields["at"]
    assert at.data_type is DataType.TIMESTAMP
    assert (at.properties["min"], at.properties["max"]) == (
        "2023-05-01T00:00:00",
        "2024-01-31T11:30:00",
    )
    empty = fields["empty"]
    assert empty.data_type is DataType.STRING and empty.properties["density"] == 0
    assert empty.properties["distinctCount"] == 0 and empty.sketch is not None


def _comparable(fields: list[FieldProfile]) -> list[tuple[Any, ...]]:
    def rounded(props: dict[str, Any]) -> dict[str, Any]:
        return {k: round(v, 9) if isinstance(v, float) else v for k, v in props.items()}

    return [
        (f.name, f.data_type, f.nullable, rounded(f.properties), f.sketch and f.sketch.to_dict())
        for f in fields
    ]


def test_tiny_chunks_give_the_same_statistics_as_one_chunk() -> None:
    frame = pd.concat([TEXT] * 50, ignore_index=True)
    one = profile_frame(frame, infer_types=True, chunk_rows=10_000)
    tiny = profile_frame(frame, infer_types=True, chunk_rows=7)
    assert _comparable(tiny) == _comparable(one)


def test_the_sample_does_not_depend_on_chunking() -> None:
    frame = pd.DataFrame({"n": [str(i % 97) for i in range(5_000)]})
    one = profile_frame(frame, sample_rows=500, infer_types=True, chunk_rows=5_000)
    tiny = profile_frame(frame, sample_rows=500, infer_types=True, chunk_rows=33)
    assert _comparable(tiny) == _comparable(one)
    props = one[0].properties
    assert props["sampled"] is True and props["sampleSize"] == 500
    assert props["valueCount"] == 5_000  # streaming counts see every row
    assert props["distinctCount"] == 97 and props["distinctCountApproximate"] is False
    assert sum(item["count"] for item in props["patterns"]) == 500


def test_distinct_count_over_the_sample_is_estimated_and_flagged() -> None:
    frame = pd.DataFrame({"id": range(20_000)})
    (field,) = profile_frame(frame, sample_rows=1_000)
    assert field.properties["sampled"] is True
    assert field.properties["distinctCountApproximate"] is True
    assert field.properties["distinctCount"] == pytest.approx(20_000, rel=0.2)


def test_reservoir_is_uniform_enough_and_deterministic() -> None:
    first, second = Reservoir(100, seed=1), Reservoir(100, seed=1)
    kept: dict[int, int] = {}
    for start in range(0, 10_000, 250):
        rows, slots = first.offer(250)
        assert len(set(slots.tolist())) == len(slots)
        for row, slot in zip(rows.tolist(), slots.tolist(), strict=True):
            kept[slot] = start + row
        rows2, slots2 = second.offer(250)
        assert rows.tolist() == rows2.tolist() and slots.tolist() == slots2.tolist()
    assert len(kept) == 100
    assert sum(1 for row in kept.values() if row >= 5_000) == pytest.approx(50, abs=20)


def test_row_sample_keeps_the_last_write_of_every_slot_for_every_column() -> None:
    # The reservoir's slots feed a plain dictionary model alongside: whatever the compactions
    # (capacity 50, chunks of 40 rows over 1,000 rows) and a column first seen half-way, each
    # column's sample must be the model's value in every slot.
    reservoir, sample = Reservoir(50, seed=3), RowSample(50)
    model: dict[str, dict[int, Any]] = {"a": {}, "late": {}}
    sample.add_column("a")
    for start in range(0, 1_000, 40):
        if start == 520:
            sample.add_column("late")
        rows, slots = reservoir.offer(40)
        values = {"a": pa.array([start + r for r in rows.tolist()], pa.int64())}
        if start >= 520:
            values["late"] = pa.array([f"v{start + r}" for r in rows.tolist()], pa.string())
        sample.put(slots, values)
        for row, slot in zip(rows.tolist(), slots.tolist(), strict=True):
            model["a"][slot] = start + row
            model["late"][slot] = f"v{start + row}" if start >= 520 else None
    sample.arrange(50)
    assert sample.values("a").to_pylist() == [model["a"][slot] for slot in range(50)]
    assert sample.values("late").to_pylist() == [model["late"][slot] for slot in range(50)]
    assert sample.values("late").null_count > 0  # rows kept from before the column appeared


def test_row_sample_of_fewer_rows_than_capacity_is_in_order() -> None:
    sample = RowSample(100)
    sample.add_column("x")
    sample.put(Reservoir(100).offer(7)[1], {"x": pa.array(list("abcdefg"))})
    sample.arrange(7)
    assert sample.values("x").to_pylist() == list("abcdefg")
    sample.put(np.array([3]), {"x": pa.array(["z"])})  # written after arrange(): stale order
    with pytest.raises(RuntimeError):
        sample.values("x")


def test_typed_pandas_columns() -> None:
    frame = pd.DataFrame(
        {
            "n": pd.array([1, None, 3], dtype="Int64"),
            "when": pd.to_datetime(pd.Series(["2024-01-01 10:00", None, "2023-01-01 00:00"])),
            "mixed": [1, "a", None],
            "items": [[1, 2], None, []],
        }
    )
    fields = _by_name(profile_frame(frame))
    assert fields["n"].data_type is DataType.LONG and fields["n"].properties["mean"] == 2.0
    assert fields["when"].data_type is DataType.TIMESTAMP
    assert fields["when"].properties["max"] == "2024-01-01T10:00:00"
    assert fields["mixed"].data_type is DataType.STRING
    items = fields["items"]
    assert items.data_type is DataType.ARRAY and items.sketch is None
    assert items.properties["valueCount"] == 2 and "mostFrequent" not in items.properties
    series = profile_series(pd.Series([1.5, None, 2.5], name="x"))
    assert series.name == "x" and series.properties["mean"] == 2.0


def test_columns_may_appear_late_and_types_join_across_chunks() -> None:
    profiler = TableProfiler()
    profiler.add_chunk({"a": python_column([1, 2])}, 2)
    profiler.add_chunk({"a": python_column([2.5, None]), "b": python_column(["x", "y"])}, 2)
    profiler.add_chunk({"a": python_column(["text"])}, 1)
    fields = _by_name(profiler.fields())
    assert fields["a"].data_type is DataType.STRING
    assert fields["a"].properties["valueCount"] == 4
    assert fields["b"].properties["nullCount"] == 3 and fields["b"].properties["valueCount"] == 2
    assert list(fields) == ["a", "b"]


def test_declared_types_win() -> None:
    profiler = TableProfiler(declared={"x": (DataType.DOUBLE, False)})
    profiler.add_chunk({"x": pa.array([1, 2, 4])}, 3)
    (field,) = profiler.fields()
    assert field.data_type is DataType.DOUBLE and field.nullable is False
    assert field.properties["min"] == 1.0 and field.properties["mean"] == pytest.approx(7 / 3)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("AB-123", "AA-999"),
        ("john.doe@mail.com", "aaaa.aaa@aaaa.aaa"),
        ("+33 1 23", "+99 9 99"),
        ("Zürich 8001", "Aaaaaa 9999"),
        ("x" * 45, "a" * 40 + "…"),
        ("", ""),
    ],
)
def test_patterns(text: str, pattern: str) -> None:
    assert pattern_of(text) == pattern


@pytest.mark.parametrize(
    ("data_type", "values"),
    [
        (DataType.STRING, ["AB-12", "ab-12", "AB-12", None, "x" * 50, "Zoë 7", "ẞig", ""]),
        (DataType.STRING, ["b", "a", "b", "a", "c"]),  # ties ordered by value
        (DataType.LONG, [" 7", "8", "7", "10", None]),
        (DataType.DOUBLE, [1.5, 2.0, 1.5, -0.25, 1e-7, 3e20]),
        (DataType.DOUBLE, ["1.50", "1.5", " 2", "2.0", "1e-7", None, "-0.25"]),  # CSV text
        (DataType.BOOLEAN, ["true", "FALSE", "true"]),
        (DataType.DATE, ["2024-01-05", "2024-01-05", "2023-12-31"]),
        (DataType.STRING, ["日本語", "東京 12", "Ελλάδα", "日本語"]),
    ],
)
def test_few_values_are_counted_as_many_are(
    monkeypatch: pytest.MonkeyPatch, data_type: DataType, values: list[object]
) -> None:
    sample = pa.array(values)
    few = sampling.sample_stats(data_type, sample)
    monkeypatch.setattr(sampling, "FEW_SHAPES", 0)  # the Arrow path, as for a large sample
    assert sampling.sample_stats(data_type, sample) == few
    # ... and either way of counting a large sample (mostly distinct values or not)
    assert sampling.sample_stats(data_type, sample, distinct_share=1.0) == few


@pytest.mark.parametrize("values", [
    [" 12", "7 ", "3"], ["\u00a05", "6"], ["8\u3000"], ["1", "2"], ["", " ", None, "4"],
    ["\t2024-01-02", "2024-01-03"], ["true ", "False"], ["é", "x"], [None],
])
def test_few_values_find_blank_ends_as_many_do(
    values: list[str | None], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A few values' ends are looked at in Python (a wide document's one-value columns), many
    values' with NumPy: the same type and the same values either way."""
    few = inference.infer_text(pa.array(values, pa.string()), None)
    monkeypatch.setattr(inference, "FEW_VALUES", 0)
    many = inference.infer_text(pa.array(values, pa.string()), None)
    assert few[0] == many[0] and few[1].to_pylist() == many[1].to_pylist()
