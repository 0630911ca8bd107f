"""Profiling real files written in tmp_path: sniffing, formats, errors, chunking."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog_nb.server.profiling import readers
from catalog_nb.server.profiling.files import profile_file
from catalog_nb.server.profiling.model import DataType, ResourceProfile


def _write(path: Path, text: str, encoding: str = "utf-8") -> Path:
    path.write_bytes(text.encode(encoding))
    return path


def _ok(profile: ResourceProfile) -> ResourceProfile:
    assert profile.state == "OK", profile.error_msg
    return profile


@pytest.mark.parametrize(
    ("delimiter", "file_format"), [(",", "csv"), (";", "csv"), ("\t", "tsv"), ("|", "csv")]
)
def test_delimiter_and_header_are_sniffed(tmp_path: Path, delimiter: str, file_format: str) -> None:
    rows = [["name", "city", "amount"], ["Ann", "Paris, FR", "1.5"], ["Bob", "Rome", "2"]]
    text = "\n".join(delimiter.join(f'"{c}"' if "," in c else c for c in r) for r in rows)
    profile = _ok(profile_file(_write(tmp_path / "people.csv", text + "\n")))
    assert (profile.separator, profile.file_format) == (delimiter, file_format)
    assert profile.header is True and profile.header_row == 1
    assert [f.name for f in profile.fields] == ["name", "city", "amount"]
    assert profile.row_count == 2 and profile.field_count == 3
    assert profile.field("city").properties["mostFrequent"][0]["value"] in {"Paris, FR", "Rome"}
    assert profile.field("amount").data_type is DataType.DOUBLE


def test_file_without_header(tmp_path: Path) -> None:
    raw = _write(tmp_path / "raw.csv", "1,Ann,2024-01-01\n2,Bob,2024-02-01\n")
    profile = _ok(profile_file(raw))
    assert profile.header is False and profile.header_row == 0
    assert [f.name for f in profile.fields] == ["column_1", "column_2", "column_3"]
    assert [f.data_type for f in profile.fields] == [DataType.LONG, DataType.STRING, DataType.DATE]
    assert profile.row_count == 2


def test_pandas_written_csv_round_trip(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {
            "id": [1, 2, 3, 4],
            "score": [0.5, None, 1.5, 2.0],
            "email": ["a@x.io", "b@y.io", None, "a@x.io"],
        }
    )
    frame.to_csv(tmp_path / "scores.csv", index=False)
    profile = _ok(profile_file(tmp_path / "scores.csv"))
    score = profile.field("score").properties
    assert (score["valueCount"], score["nullCount"], score["min"], score["max"]) == (3, 1, 0.5, 2.0)
    assert score["mean"] == pytest.approx(4 / 3)
    email = profile.field("email")
    assert email.properties["patterns"][0] == {"pattern": "a@a.aa", "count": 3}
    assert email.sketch is not None and sorted(email.sketch.sample) == ["a@x.io", "b@y.io"]
    assert profile.resource_size == (tmp_path / "scores.csv").stat().st_size
    assert profile.modified_ms and profile.created_ms


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [("utf-8", "utf-8"), ("utf-8-sig", "utf-8-sig"), ("cp1252", "cp1252"), ("utf-16", "utf-16")],
)
def test_encoding_is_detected(tmp_path: Path, encoding: str, expected: str) -> None:
    text = "name;city;price\nJosé;Zürich;€5\nAnna;Köln;€7\n"
    profile = _ok(profile_file(_write(tmp_path / "e.csv", text, encoding)))
    assert profile.encoding == expected
    assert profile.field("city").properties["min"] == "Köln"
    assert profile.fields[0].name == "name"  # no BOM left in the first name


def test_latin1_when_cp1252_cannot_decode(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_bytes(b"a,b\n\x81x,\xe9t\xe9\n")
    profile = _ok(profile_file(path))
    assert profile.encoding == "latin-1"
    assert profile.field("b").properties["min"] == "été"


def test_mixed_encodings_are_read_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_bytes("name\nZürich\n".encode() + "Köln\n".encode("cp1252"))
    profile = _ok(profile_file(path))
    assert profile.encoding == "utf-8"
    assert "Mixed encodings" in profile.extra["warnings"][0]
    assert profile.row_count == 2
    sketch = profile.field("name").sketch
    assert sketch is not None and "Zürich" in sketch.sample


def test_ragged_rows_are_skipped_and_counted(tmp_path: Path) -> None:
    lines = ["a,b,c"] + [f"{i},{i},{i}" for i in range(8)] + ["1,2", "1,2,3,4"]
    profile = _ok(profile_file(_write(tmp_path / "r.csv", "\n".join(lines) + "\n")))
    assert profile.row_count == 8
    assert profile.extra["raggedRows"] == 2
    assert "ragged" in profile.extra["warnings"][0]


def test_mostly_ragged_file_is_an_error(tmp_path: Path) -> None:
    lines = ["a,b,c", "1,2,3", "1,2", "1,2,3,4", "1", "1,2,3,4,5", "7,8,9"]
    profile = profile_file(_write(tmp_path / "r.csv", "\n".join(lines) + "\n"))
    assert profile.state == "ERROR"
    assert "4 of 6 rows have a different number of fields" in (profile.error_msg or "")


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    profile = profile_file(_write(tmp_path / "empty.csv", ""))
    assert profile.state == "ERROR" and "empty" in (profile.error_msg or "")
    blank = profile_file(_write(tmp_path / "blank.csv", "\n\n  \n"))
    assert blank.state == "ERROR"


def test_header_only_file_has_fields_and_no_rows(tmp_path: Path) -> None:
    profile = _ok(profile_file(_write(tmp_path / "h.csv", "id,name,born\n")))
    assert profile.row_count == 0 and profile.header is True
    assert [f.name for f in profile.fields] == ["id", "name", "born"]
    props = profile.field("id").properties
    assert props["valueCount"] == 0 and props["density"] is None


def test_binary_junk_with_a_csv_name_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.csv"
    path.write_bytes(bytes(range(256)) * 40)
    profile = profile_file(path)
    assert profile.state == "ERROR"
    assert "binary" in (profile.error_msg or "")


def test_deleted_file_is_an_error(tmp_path: Path) -> None:
    profile = profile_file("gone.csv", root=tmp_path)
    assert profile.state == "ERROR" and profile.path == "gone.csv"
    assert "file no longer exists" in (profile.error_msg or "")


def test_path_outside_the_root_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    _write(tmp_path / "secret.csv", "a\n1\n")
    profile = profile_file("../secret.csv", root=tmp_path / "root")
    assert profile.state == "ERROR" and "outside" in (profile.error_msg or "")


def test_json_lines_are_flattened_and_bad_lines_counted(tmp_path: Path) -> None:
    records = [
        {"id": 1, "address": {"city": "Paris", "geo": {"lat": 48.8}}, "tags": ["a"]},
        {"id": 2, "address": {"city": "Rome"}, "active": True, "meta": {}},
    ]
    lines = [json.dumps(r) for r in records] + ["{broken", "", json.dumps({"id": 3})]
    text = "\n".join(lines) + "\n"
    profile = _ok(profile_file(_write(tmp_path / "p.jsonl", text)))
    assert profile.file_format == "jsonl" and profile.row_count == 3
    names = [f.name for f in profile.fields]
    assert names == ["id", "address.city", "address.geo.lat", "tags", "active", "meta"]
    assert profile.field("address.city").properties["nullCount"] == 1
    assert profile.field("address.geo.lat").data_type is DataType.DOUBLE
    assert profile.field("tags").data_type is DataType.ARRAY
    assert profile.field("active").data_type is DataType.BOOLEAN
    assert profile.extra["badRecords"] == 1


def test_json_array_is_streamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "BLOCK_BYTES", 16)  # force many refills mid-element
    records = [{"n": i, "s": f"v{i}", "when": "2024-01-0" + str(i % 9 + 1)} for i in range(300)]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(records, indent=1))
    profile = _ok(profile_file(path, chunk_rows=50))
    assert profile.file_format == "json" and profile.row_count == 300
    assert profile.field("n").properties["max"] == 299
    assert profile.field("when").data_type is DataType.DATE


def test_json_document_and_bad_json(tmp_path: Path) -> None:
    one = _ok(profile_file(_write(tmp_path / "one.json", '{"a": {"b": 1}, "c": [1, 2]}')))
    assert one.row_count == 1 and [f.name for f in one.fields] == ["a.b", "c"]
    bad = profile_file(_write(tmp_path / "bad.json", '[{"a": 1}, {"a": '))
    assert bad.state == "ERROR" and "JSON" in (bad.error_msg or "")


def test_parquet_schema_from_metadata_and_nested_fields(tmp_path: Path) -> None:
    table = pa.table(
        {
            "id": pa.array(range(1_000), pa.int32()),
            "price": pa.array([i / 4 for i in range(1_000)]),
            "who": pa.array([{"name": f"n{i % 10}", "age": i % 70} for i in range(1_000)]),
            "blob": pa.array([b"x"] * 1_000),
            "day": pa.array(pd.date_range("2024-01-01", periods=1_000).date),
        },
        schema=pa.schema(
            [
                pa.field("id", pa.int32(), nullable=False),
                pa.field("price", pa.float64()),
                pa.field("who", pa.struct([("name", pa.string()), ("age", pa.int64())])),
                pa.field("blob", pa.binary()),
                pa.field("day", pa.date32()),
            ]
        ),
    )
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=100)
    profile = _ok(profile_file(tmp_path / "t.parquet", chunk_rows=64))
    assert profile.file_format == "parquet" and profile.row_count == 1_000
    types = {f.name: (f.data_type, f.nullable) for f in profile.fields}
    assert types == {
        "id": (DataType.LONG, False),
        "price": (DataType.DOUBLE, True),
        "who.name": (DataType.STRING, True),
        "who.age": (DataType.LONG, True),
        "blob": (DataType.BINARY, True),
        "day": (DataType.DATE, True),
    }
    assert profile.field("id").properties["distinctCount"] == 1_000
    assert profile.field("who.name").properties["distinctCount"] == 10
    assert profile.field("price").properties["mean"] == pytest.approx(999 / 8)
    assert profile.field("day").properties["max"] == "2026-09-26"
    assert profile.field("blob").sketch is None


def test_corrupt_parquet_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.parquet"
    path.write_bytes(b"PAR1" + b"\x00" * 50)
    profile = profile_file(path)
    assert profile.state == "ERROR" and "PARQUET" in (profile.error_msg or "")


def test_unknown_format_is_an_error(tmp_path: Path) -> None:
    profile = profile_file(_write(tmp_path / "notes.txt", "hello"))
    assert profile.state == "ERROR" and "Not a data file" in (profile.error_msg or "")


def test_chunking_is_used_and_changes_nothing(tmp_path: Path) -> None:
    rows = ["id,grp,when,score"] + [
        f"{i},g{i % 7},2024-01-{i % 28 + 1:02d} 10:00:00,{i % 13 / 2}" for i in range(2_000)
    ]
    path = _write(tmp_path / "big.csv", "\n".join(rows) + "\n")
    one = _ok(profile_file(path, chunk_rows=100_000))
    tiny = _ok(profile_file(path, chunk_rows=3))
    for a, b in zip(one.fields, tiny.fields, strict=True):
        assert (a.name, a.data_type, a.sketch.to_dict() if a.sketch else None) == (
            b.name,
            b.data_type,
            b.sketch.to_dict() if b.sketch else None,
        )
        assert {k: v for k, v in a.properties.items() if k != "mean"} == {
            k: v for k, v in b.properties.items() if k != "mean"
        }
        assert a.properties.get("mean") == pytest.approx(b.properties.get("mean"))
    assert one.field("when").data_type is DataType.TIMESTAMP


def test_sample_bounds_the_expensive_statistics(tmp_path: Path) -> None:
    rows = ["id,grp"] + [f"{i},g{i % 5}" for i in range(3_000)]
    profile = _ok(profile_file(_write(tmp_path / "s.csv", "\n".join(rows)), sample_rows=200))
    props = profile.field("id").properties
    assert profile.row_count == 3_000 and props["valueCount"] == 3_000
    assert props["sampled"] is True and props["sampleSize"] == 200
    assert (props["min"], props["max"]) == (0, 2_999)  # streaming, not sampled
    assert props["distinctCountApproximate"] is True
    assert props["distinctCount"] == pytest.approx(3_000, rel=0.2)
    assert profile.field("grp").properties["distinctCount"] == 5


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_text_range_of_a_column_that_turns_string_late_covers_every_row(
    tmp_path: Path, fmt: str
) -> None:
    # numbers for 300 rows (many chunks of 50), then words: the column is STRING, and its text
    # range must include the numbers read before it turned (read again for them)
    values = [str(1000 + i) for i in range(300)] + ["mango", "kiwi-fruit"]
    if fmt == "csv":
        path = _write(tmp_path / "late.csv", "code,n\n" + "".join(f"{v},{i}\n" for i, v in
                                                               enumerate(values)))
    else:
        path = _write(tmp_path / "late.jsonl", "".join(
            json.dumps({"code": int(v) if v.isdigit() else v, "n": i}) + "\n"
            for i, v in enumerate(values)))
    one_chunk = _ok(profile_file(path, chunk_rows=100_000)).field("code").properties
    chunked = _ok(profile_file(path, chunk_rows=50))
    code = chunked.field("code")
    assert code.data_type is DataType.STRING
    # the smallest text and the shortest are numbers' ("1000" < "kiwi-fruit" < "mango")
    assert (code.properties["min"], code.properties["max"]) == ("1000", "mango")
    assert (code.properties["minLength"], code.properties["maxLength"]) == (4, 10)
    for key in ("min", "max", "minLength", "maxLength"):
        assert code.properties[key] == one_chunk[key]
    assert chunked.field("n").data_type is DataType.LONG


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_read_progress_grows_to_the_file_size(tmp_path: Path, fmt: str) -> None:
    frame = pd.DataFrame({"id": range(30_000), "name": [f"n{i % 91}" for i in range(30_000)]})
    path = tmp_path / f"data.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, row_group_size=5_000)
    heard: list[int] = []
    profile = _ok(profile_file(path, chunk_rows=4_000, on_read=heard.append))
    assert profile.row_count == 30_000
    assert heard == sorted(heard) and len(heard) > 2  # heard along the way, never back
    assert heard[-1] == path.stat().st_size
    assert 0 < heard[0] < path.stat().st_size
