"""A wide, short chunk's columns read in Python (:mod:`.few`) give exactly what Arrow gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from catalog_nb.server.profiling import few, sampling
from catalog_nb.server.profiling.files import profile_file
from catalog_nb.server.profiling.model import DataType, ResourceProfile

#: Values of every kind a JSON document's keys hold, and the edges of the Python path.
VALUES: list[Any] = [
    7, -3, 0, 2**53, 2**53 + 1, -(2**63), 2**63 - 1, 1.5, -0.0, 2.0, 1e-7, 3e20, 1e16, 0.1,
    "text", "  padded  ", "", " ", "UPPER", "x" * 300, "é" * 600, "long " * 300, "Zoë 7",
    "ẞig", "İstanbul", "a\x1cb\x1c", "\x1c", "\t2024-01-05", "2024-01-05", "2024-01-05T10:00:00",
    "2024-01-05 10:00:00+02:00", "2024-13-45", "nan", "Infinity", "true", "FALSE", "007",
    "person1@example.com", "+1 415 555 0001", "a" * 28 + "!", True, False, None,
    [1, 2], [], {"a": 1}, {}, [{"b": None}],
]


def _wide_document() -> dict[str, Any]:
    return {f"k{i}": value for i, value in enumerate(VALUES)}


def _summary(profile: ResourceProfile) -> tuple[Any, ...]:
    fields = [(f.name, f.data_type, f.nullable, f.properties,
               f.sketch.to_dict() if f.sketch is not None else None) for f in profile.fields]
    return profile.state, profile.error_msg, profile.row_count, profile.extra, fields


def _both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    fast = _summary(profile_file(path.name, root=path.parent, sample_rows=50))
    monkeypatch.setattr(few, "FEW_ROWS", 0)  # every column the Arrow way
    return fast, _summary(profile_file(path.name, root=path.parent, sample_rows=50))


def test_a_wide_document_profiles_as_the_arrow_path_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = tmp_path / "wide.json"
    path.write_text(json.dumps(_wide_document()))
    read = few.read_few
    taken: list[bool] = []

    def spy(col: Any, present: list[Any]) -> few.FewChunk | None:
        found = read(col, present)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(few, "read_few", spy)
    fast, arrow = _both_ways(path, monkeypatch)
    assert fast[0] == "OK"
    assert sum(taken) > len(VALUES) / 2  # most columns went the Python way
    assert fast == arrow


def test_a_few_wide_records_profile_as_the_arrow_path_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Several rows per column: sums of several numbers, types mixed between rows, keys
    missing from some records, and more rows than the sample holds."""
    records = [_wide_document(), {k: v for k, v in list(_wide_document().items())[::2]}]
    records.append({f"k{i}": value for i, value in enumerate(reversed(VALUES))})
    records += [{"k0": n, "k7": n / 3, "k14": f"v{n}"} for n in range(60)]
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    fast, arrow = _both_ways(path, monkeypatch)
    assert fast[0] == "OK"
    assert fast == arrow


def test_a_wide_csv_row_profiles_as_the_arrow_path_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [v for v in VALUES if isinstance(v, str) and "\x1c" not in v] + [
        "plain", "Two Words", "inf", "x1", "truest", "-", "e"]
    path = tmp_path / "wide.csv"
    header = ",".join(f"c{i}" for i in range(len(texts)))
    path.write_text(header + "\n" + ",".join(json.dumps(t) for t in texts) + "\n")
    fast, arrow = _both_ways(path, monkeypatch)
    assert fast[0] == "OK"
    assert fast == arrow


@pytest.mark.parametrize("data_type", list(DataType))
@pytest.mark.parametrize("values", [
    pa.array([7, 7, -3, None]), pa.array([2**53 + 1]), pa.array([1.5, 2.0, -0.0, 1e-7, 3e20]),
    pa.array([True, False, True]), pa.array(["AB-12", "ab-12", None, "Zoë", "x" * 50]),
    pa.array([" 7", "8"]), pa.array([None, None]), pa.array([], pa.int64()),
    pa.array([1, 2], pa.int8()), pa.array([float("inf")]),
])
def test_a_few_sampled_values_are_counted_as_arrow_counts_them(
    data_type: DataType, values: pa.Array, monkeypatch: pytest.MonkeyPatch,
) -> None:
    try:
        fast: Any = sampling.sample_stats(data_type, values)
    except Exception as exc:  # noqa: BLE001 - then the Arrow path must fail alike
        fast = type(exc)
    monkeypatch.setattr(few, "FEW_ROWS", 0)
    try:
        arrow: Any = sampling.sample_stats(data_type, values)
    except Exception as exc:  # noqa: BLE001
        arrow = type(exc)
    assert fast == arrow
