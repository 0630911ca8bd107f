"""Inferred keys and column-pair sketches (``profiling/keys.py``), and the sketch details
composite joins and copies rely on: pair sketches survive storage, Parquet decimals sketch as
their CSV text does."""

from __future__ import annotations

import random
from decimal import Decimal

import pandas as pd
import pyarrow as pa

from catalog_nb.server.profiling.keys import id_like
from catalog_nb.server.profiling.model import DataType
from catalog_nb.server.profiling.sampling import canonical_texts
from catalog_nb.server.profiling.sketch import ValueSketch, build_sketch
from catalog_nb.server.profiling.stats import TableProfiler, _series_column, profile_frame


def _profiled(frame: pd.DataFrame, sample_rows: int = 100_000) -> TableProfiler:
    profiler = TableProfiler(sample_rows)
    for start in range(0, len(frame), 500):
        part = frame.iloc[start:start + 500]
        profiler.add_chunk({c: _series_column(part[c], False) for c in part}, len(part))
    profiler.fields()
    return profiler


def _weather() -> pd.DataFrame:
    rng = random.Random(1)
    rows = [(f"2024-01-{d:02d}", f"ST{s:02d}", round(rng.uniform(0, 9), 1), f"Note {d} {s}")
            for d in range(1, 29) for s in range(12)]
    return pd.DataFrame(rows, columns=["day", "station_code", "rain", "remark"])


def test_a_pair_unique_together_is_a_composite_key_and_is_sketched() -> None:
    profiler = _profiled(_weather())
    assert profiler.keys.composite == [("day", "station_code")]
    # The remark is unique but prose: no key.
    assert profiler.keys.unique == [] and profiler.keys.primary_key == []
    pair = profiler.keys.pairs[("day", "station_code")]
    # 336 pairs: more than the sketch keeps, so their count is estimated (about 6 % off).
    assert pair.unique and abs(pair.sketch.distinct_count() / (28 * 12) - 1) < 0.2
    assert profiler.keys.to_dict()["compositeKeys"] == [["day", "station_code"]]


def test_composite_keys_need_every_row() -> None:
    """A pair unique in a sample may repeat outside it: a sampled table gets none."""
    profiler = _profiled(_weather(), sample_rows=100)
    assert profiler.keys.composite == []


def test_identifier_pairs_of_a_fact_table_ride_on_the_first_column_sketch() -> None:
    rng = random.Random(3)
    frame = pd.DataFrame({"line_no": range(2000),
                          "part_key": [rng.randrange(300) for _ in range(2000)],
                          "supp_key": [rng.randrange(40) for _ in range(2000)],
                          "qty": [rng.randrange(1, 50) for _ in range(2000)]})
    profiler = TableProfiler()
    profiler.add_chunk({c: pa.array(frame[c]) for c in frame}, len(frame))
    fields = {f.name: f for f in profiler.fields()}
    assert profiler.keys.primary_key == ["line_no"]
    pair = fields["part_key"].sketch.pairs["supp_key"]  # type: ignore[union-attr]
    assert not pair.unique
    stored = ValueSketch.from_dict(fields["part_key"].sketch.to_dict(),  # type: ignore[union-attr]
                                   with_sample=False)
    assert stored.pairs["supp_key"].unique is False
    assert list(stored.pairs["supp_key"].sketch.hashes) == list(pair.sketch.hashes)


def test_a_table_with_no_key_has_none() -> None:
    frame = pd.DataFrame({"a": [1, 1, 2, 2], "b": ["x", "x", "y", "y"]})
    profiler = _profiled(frame)
    assert not profiler.keys and profiler.keys.composite == []
    assert [f.name for f in profile_frame(frame)] == ["a", "b"]


def test_identifier_names() -> None:
    assert [id_like(n) for n in ("l_orderkey", "customer_id", "orderId", "dept_no", "code")] == [
        True, True, True, True, True]
    assert [id_like(n) for n in ("valid", "amount", "monkey_business", "keynote")] == [
        False, False, False, False]


def test_parquet_decimals_sketch_like_their_csv_text() -> None:
    """Arrow divides a decimal by its scale in floating point (9987.71 -> 9987.710000000001):
    a Parquet DECIMAL column must still meet the same CSV column, value for value."""
    values = [Decimal("9987.71"), Decimal("-994.79"), Decimal("0.10")]
    texts = canonical_texts(pa.array(values, pa.decimal128(15, 2)), DataType.DOUBLE)
    assert texts.to_pylist() == ["9987.71", "-994.79", "0.1"]
    sketched = build_sketch(texts.to_pylist())
    assert sketched.containment_in(build_sketch([9987.71, -994.79, 0.1])).value == 1.0
