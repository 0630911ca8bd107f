"""The value sketch: determinism, estimates within their documented error, serialisation."""

from __future__ import annotations

import base64
import datetime as dt
import json
import subprocess
import sys
from hashlib import blake2b

import pyarrow as pa
import pytest
import xxhash

from catalog_nb.server.profiling import sketch as sketch_module
from catalog_nb.server.profiling.model import DataType
from catalog_nb.server.profiling.sampling import sketch_chunk
from catalog_nb.server.profiling.sketch import (
    FEW_TEXTS,
    V1_ALGORITHM,
    PairSketch,
    ValueSketch,
    build_sketch,
    hash_text,
    hash_texts,
    pair_hashes,
)


def test_hash_is_xxh64_of_the_normalised_text() -> None:
    # XXH64's published test vectors (seed 0): any engine reproduces these
    assert hash_text("") == 0xEF46DB3751D8E999
    assert hash_text("abc") == 0x44BC2CF5AD770999
    assert build_sketch(["  ABC "]).hashes.tolist() == [0x44BC2CF5AD770999]
    # the bulk path (Polars) and the few-values path (the xxhash binding) agree, on texts
    # beyond one 32-byte stripe and outside ASCII too
    texts = [f"value {i} " + "x" * (i % 70) + "é" * (i % 3) for i in range(FEW_TEXTS + 100)]
    bulk = hash_texts(pa.array(texts)).tolist()
    assert bulk == [hash_text(t) for t in texts]
    assert bulk[:10] == hash_texts(pa.array(texts[:10])).tolist()


def test_hashes_are_the_same_in_another_process() -> None:
    code = "from catalog_nb.server.profiling.sketch import hash_text; print(hash_text('x@y.org'))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(other.stdout) == hash_text("x@y.org")


def test_small_fields_are_exact() -> None:
    sketch = build_sketch(["a", "b", "B", None, "c", "a", float("nan")])
    assert not sketch.full
    assert sketch.distinct_count() == 3  # case-insensitive: b == B
    assert sorted(s.lower() for s in sketch.sample) == ["a", "b", "c"]


@pytest.mark.parametrize("n", [5_000, 50_000])
def test_distinct_estimate_within_three_standard_errors(n: int) -> None:
    sketch = build_sketch(f"id-{i}" for i in range(n))
    assert sketch.full and len(sketch.hashes) == 256
    assert sketch.distinct_count() == pytest.approx(n, rel=3 / (256 - 2) ** 0.5)


def test_numbers_meet_across_types() -> None:
    assert build_sketch([7, 8]).hashes.tolist() == build_sketch([7.0, "8"]).hashes.tolist()


def test_containment_and_jaccard_on_constructed_sets() -> None:
    a = build_sketch(f"k{i}" for i in range(10_000))
    b = build_sketch(f"k{i}" for i in range(5_000, 25_000))  # holds half of a
    inside = build_sketch(f"k{i}" for i in range(2_000, 4_000))  # wholly inside a
    unrelated = build_sketch(f"z{i}" for i in range(10_000))
    half = a.containment_in(b)
    assert half.value == pytest.approx(0.5, abs=0.15) and half.sample_size > 50
    assert inside.containment_in(a).value == pytest.approx(1.0, abs=0.05)
    assert unrelated.containment_in(a).value == 0.0
    # a and b share 5,000 values out of 25,000 in all
    assert a.jaccard(b).value == pytest.approx(0.2, abs=0.08)
    assert a.jaccard(a).value == 1.0


def test_containment_of_small_exact_sets_is_exact() -> None:
    small = build_sketch(["a", "b", "c", "d"])
    big = build_sketch(["a", "b", "x"])
    assert small.containment_in(big).value == 0.5
    assert small.containment_in(big).sample_size == 4
    assert build_sketch([]).containment_in(big).sample_size == 0


def test_order_and_batching_do_not_matter() -> None:
    values = [f"v{i}" for i in range(3_000)]
    one = build_sketch(values)
    batched = ValueSketch()
    for start in range(0, 3_000, 7):
        batched.update(reversed(values[start : start + 7]))
    assert batched.hashes.tolist() == one.hashes.tolist()
    assert batched.sample == one.sample
    assert len(one.sample) == 200


def test_round_trip_through_json() -> None:
    sketch = build_sketch(f"user{i}@example.com" for i in range(1_000))
    data = json.loads(json.dumps(sketch.to_dict()))
    assert data["algorithm"] == "kmv-xxh64" and data["version"] == 3
    assert len(data["sample"]) == 200
    again = ValueSketch.from_dict(data)
    assert again.hashes.tolist() == sketch.hashes.tolist()
    assert again.sample == sketch.sample
    assert again.distinct_count() == sketch.distinct_count()
    with pytest.raises(ValueError):
        ValueSketch.from_dict({**data, "algorithm": "minhash"})
    with pytest.raises(ValueError):
        ValueSketch.from_dict({**data, "version": 4})


def test_a_read_sketch_takes_values_and_merges_as_the_one_it_was_written_from() -> None:
    """The stored sample is hashed again only when needed: after new values or a merge, the
    read sketch's sample is the one the original gets (a wrong hash map would keep the wrong
    values or drop the right ones)."""
    first, more = [f" Value{i} " for i in range(300)], [f"value{i}" for i in range(150, 600)]
    for change in ("update", "merge"):
        original = build_sketch(first, sample_limit=40)
        read = ValueSketch.from_dict(json.loads(json.dumps(original.to_dict())))
        for sketch in (original, read):
            if change == "update":
                sketch.update(more)
            else:
                sketch.merge(build_sketch(more, sample_limit=40))
        assert read.sample == original.sample and len(read.sample) == 40, change
        assert read.hashes.tolist() == original.hashes.tolist()
        assert read.to_dict() == original.to_dict()


def test_a_version_2_sketch_compares_but_loses_its_pairs() -> None:
    """Version 2 hashed values as today and pairs as joined texts: its values still meet
    today's, its pairs (which would meet nothing) are dropped."""
    values = [f"k{i}" for i in range(1_000)]
    sketch = build_sketch(values)
    sketch.pairs["other"] = PairSketch(ValueSketch(sample_limit=0).add_hashes(
        pair_hashes(sketch.hashes, sketch.hashes[::-1])), unique=True)
    data = {**sketch.to_dict(), "version": 2}
    old = ValueSketch.from_dict(data)
    assert old.pairs == {} and old.version == 3
    assert build_sketch(values).containment_in(old).value == 1.0
    assert ValueSketch.from_dict(sketch.to_dict()).pairs["other"].unique


def test_pair_hashes_are_xxh64_of_the_ordered_value_hashes() -> None:
    """The documented form another engine must reproduce: XXH64 (seed 0) of the smaller value
    hash then the larger, 8 bytes each, big-endian; the same above and below the bulk size."""
    one = hash_texts(pa.array([str(i) for i in range(5_000)]))
    two = hash_texts(pa.array([f"s{i % 40}" for i in range(5_000)]))
    bulk = pair_hashes(one, two)
    for i in (0, 1, 4_999):
        low, high = sorted((int(one[i]), int(two[i])))
        expected = xxhash.xxh64_intdigest(low.to_bytes(8, "big") + high.to_bytes(8, "big"))
        assert int(bulk[i]) == expected
    assert pair_hashes(two[:10], one[:10]).tolist() == bulk[:10].tolist()


def _v1_sketch(values: list[str]) -> dict[str, object]:
    """A sketch as stores written before version 2 hold it (BLAKE2b, first 8 bytes)."""
    hashes = sorted({int.from_bytes(blake2b(v.strip().lower().encode(), digest_size=8).digest(),
                                    "big") for v in values})[:256]
    by_hash = {int.from_bytes(blake2b(v.strip().lower().encode(), digest_size=8).digest(),
                              "big"): v for v in values}
    return {"version": 1, "algorithm": V1_ALGORITHM, "k": 256, "sampleLimit": 200,
            "hashes": base64.b64encode(b"".join(h.to_bytes(8, "big") for h in hashes)).decode(),
            "sample": [by_hash[h] for h in hashes[:200]]}


def test_a_v1_sketch_is_read_but_compares_with_nothing_new() -> None:
    values = [f"k{i}" for i in range(1_000)]
    old = ValueSketch.from_dict(_v1_sketch(values))
    assert old.version == 1 and old.algorithm == V1_ALGORITHM
    assert 800 < old.distinct_count() < 1250
    assert old.sample == _v1_sketch(values)["sample"]  # its raw values survive
    new = build_sketch(values)
    assert new.containment_in(old).sample_size == 0
    assert old.jaccard(new).sample_size == 0
    assert 0.35 < old.containment_in(ValueSketch.from_dict(_v1_sketch(values[:500]))).value < 0.65
    assert ValueSketch.from_dict(_v1_sketch(values[:500])).containment_in(old).value == 1.0
    assert old.to_dict()["version"] == 1  # written back as it was, never relabelled
    with pytest.raises(ValueError, match="re-sketch"):
        old.update(["k1"])


@pytest.mark.parametrize(
    ("array", "data_type", "values"),
    [
        (pa.array([1, 2, None]), DataType.LONG, [1, 2]),
        (pa.array([1.5, 2.0, 1e-7, 3e20]), DataType.DOUBLE, [1.5, 2, 1e-7, 3e20]),
        (pa.array([" Abc", "abc ", "XY"]), DataType.STRING, ["abc", "xy"]),
        (pa.array([True, False]), DataType.BOOLEAN, [True, False]),
        (pa.array([dt.date(2024, 1, 5)]), DataType.DATE, [dt.date(2024, 1, 5)]),
        (
            pa.array([dt.datetime(2024, 1, 5, 10), dt.datetime(2024, 1, 5, 10, 0, 0, 5)]),
            DataType.TIMESTAMP,
            [dt.datetime(2024, 1, 5, 10), dt.datetime(2024, 1, 5, 10, 0, 0, 5)],
        ),
        (
            pa.array([dt.datetime(2024, 1, 5, 10)], pa.timestamp("ns", "Europe/Paris")),
            DataType.TIMESTAMP,
            [dt.datetime(2024, 1, 5, 10, tzinfo=dt.UTC)],
        ),
    ],
)
def test_bulk_arrow_path_matches_python_path(
    array: pa.Array, data_type: DataType, values: list[object]
) -> None:
    bulk = ValueSketch()
    sketch_chunk(bulk, array, data_type)
    assert bulk.hashes.tolist() == build_sketch(values).hashes.tolist()


@pytest.mark.parametrize("values", [
    ["x"], [" A", "a ", "b", "B", "c"] * 3, [f"v{i % 23}" for i in range(60)],
    [f"value {i}" for i in range(64)], ["\udcff", "ok", "\udcff"],
])
def test_small_chunks_keep_the_sample_the_bulk_path_keeps(
    values: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A chunk of a few values finds its sample's texts in Python (a wide document has
    300,000 one-value columns); the sample is the one the Arrow path keeps, first occurrence
    of each hash included, chunk after chunk."""
    def sketched() -> ValueSketch:
        sketch = ValueSketch(sample_limit=8)
        for at in range(0, len(values), 7):
            sketch.update(values[at:at + 7])
        return sketch.update(values)

    small = sketched()
    monkeypatch.setattr(sketch_module, "FEW_VALUES", 0)
    bulk = sketched()
    assert small.sample == bulk.sample and small.sample
    assert small.hashes.tolist() == bulk.hashes.tolist()
