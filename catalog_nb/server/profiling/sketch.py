"""A compact value sketch per field, for join discovery and tag discovery.

Choice: a **bottom-k (KMV, "k minimum values") sketch** of 64-bit hashes, plus a small sample of
raw values.

* Every non-null value is normalised (text form, surrounding blanks stripped, lower-cased; numbers
  in one canonical form so ``7``, ``7.0`` and ``"7"`` agree; dates ISO-8601) and hashed with
  **XXH64, seed 0**, of the normalised text's UTF-8 bytes (versions 2 and 3). XXH64 is a fixed,
  published algorithm (xxhash.com) with implementations in every engine a distributed profiler
  would use (Spark, DuckDB extensions, Polars via ``polars-hash``, the ``xxhash`` C library), so
  any of them builds identical sketches; Python's ``hash()`` is salted per process and would
  not. Here the hashing is vectorised by ``polars-hash`` over Arrow strings (a handful of texts
  go through the ``xxhash`` binding instead, which is faster for them). Version 1 sketches
  (``kmv-blake2b64``: the first 8 bytes of BLAKE2b, big-endian) are still read; a v1 sketch
  never compares with a later one (their hashes differ), and a resource holding v1 sketches is
  profiled again by the next PROFILE job, which writes today's version.
* The sketch keeps the ``k`` smallest distinct hashes (default 256). Hashes behave like uniform
  random numbers, so the k smallest are a uniform random sample of the *distinct* values, chosen
  the same way for every field: two fields holding the same value keep (or drop) it together.
  That is what makes comparisons between sketches possible without the data.
* Estimates: distinct count ``(k - 1) / h_k`` (``h_k`` the k-th smallest hash scaled to (0, 1)),
  relative standard error about ``1 / sqrt(k - 2)`` (6.3 % at k = 256); exact when the field has
  fewer than k distinct values (the sketch then holds them all). Containment of A in B and
  Jaccard similarity look at the hashes below the smaller of the two sketches' thresholds,
  where both sketches are complete; with ``m`` such hashes the standard error is about
  ``sqrt(c (1 - c) / m)``. ``m`` is close to k when A and B have similar distinct counts, and
  shrinks to ``k * |B| / |A|`` when A has many more distinct values than B (and the other way
  round for containment of a small set in a large one: ``k * |A| / |B|`` hashes of A fall under
  B's threshold). Very lopsided pairs therefore get rough estimates; ``sample_size`` says how
  many hashes an estimate rests on, so callers can ignore weak ones.
* ``sample`` keeps up to 200 raw (not lower-cased) values: those with the smallest hashes, so the
  choice is deterministic and independent of row order and chunking. Regex tag discovery runs
  over them. Values longer than 256 characters are cut.

Serialised form (JSON-safe): ``{"version": 3, "algorithm": "kmv-xxh64", "k": 256,
"hashes": "<base64 of big-endian uint64s>", "sample": [...]}`` - about 2.7 kB for a full sketch.
A column may also carry ``"pairs": {"<other column>": {"unique", "k", "hashes"}}``: sketches of
its value pairs with other columns (:mod:`.keys`), read back into ``ValueSketch.pairs``; a pair's
hash is :func:`pair_hashes` of its two values' hashes.

Versions: 3 hashes values as 2 does and differs only in its pairs (version 2 hashed the two
texts joined by a separator), so a version 2 sketch compares with a version 3 one; its pairs
are dropped when read (they would meet no version 3 pair), and a resource holding them is
profiled again by the next PROFILE job, like one holding version 1 sketches.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from hashlib import blake2b
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

DEFAULT_K = 256
#: Up to this many texts are hashed one by one (see :func:`hash_texts`): a Polars call costs
#: about what hashing 4,000 short texts one by one does.
FEW_TEXTS = 4096
#: Up to this many values, the profiler's per-chunk checks run in Python, not in Arrow or NumPy
#: calls (a sample's texts here, blank ends in ``inference``): each call costs more than that
#: work on a wide document's one-value columns.
FEW_VALUES = 64
DEFAULT_SAMPLE = 200
MAX_SAMPLE_CHARS = 256
#: The format new sketches are written in; older ones are read and re-sketched on next profile.
SKETCH_VERSION = 3
ALGORITHM = "kmv-xxh64"
V1_ALGORITHM = "kmv-blake2b64"
_VERSIONS = {ALGORITHM: SKETCH_VERSION, V1_ALGORITHM: 1}
#: The first version whose values hash as today's (versions 2 and 3 differ in pairs only).
VALUE_HASHES_SINCE = 2
_READ_VERSIONS = {ALGORITHM: range(VALUE_HASHES_SINCE, SKETCH_VERSION + 1), V1_ALGORITHM: (1,)}
_SPACE = float(2**64)


def value_text(value: Any) -> str | None:
    """The canonical text of a scalar value (None for nulls and NaN).

    Integral floats print as integers so a DOUBLE ``7.0`` meets a LONG ``7``; other floats as
    Python's ``repr`` (shortest round-trip digits); booleans print as ``true``/``false``; dates
    and times in ISO-8601, time-zone-aware timestamps in UTC without the offset
    (``2024-01-05T10:00:00``), so equal instants compare equal.
    """
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating | Decimal):
        number = float(value)
        if math.isnan(number):
            return None
        if number.is_integer() and abs(number) < 2**63:
            return str(int(number))
        return repr(number)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None).isoformat()
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def hash_texts(texts: pa.Array) -> np.ndarray:
    """XXH64 (seed 0) of each already normalised text, as uint64; the array must hold no null.

    >>> int(hash_texts(pa.array(["abc"]))[0]) == hash_text("abc")
    True
    """
    if len(texts) <= FEW_TEXTS:
        # Arrow's texts are UTF-8 already: encoding them again is their bytes, without a cast.
        return _xxh64_each([text.encode("utf-8") for text in texts.to_pylist()])
    # string views are Polars' own layout: handing them over copies no text
    return _xxh64_bulk(texts.cast(pa.string_view()))


def pair_hashes(one: np.ndarray, two: np.ndarray) -> np.ndarray:
    """The hashes of value pairs from their two values' hashes (uint64 arrays of one length):
    XXH64 (seed 0) of the 16 bytes of the smaller hash then the larger, big-endian.

    Ordering the two hashes makes ``(a, b)`` and ``(b, a)`` one pair, so pairs meet whatever
    the order of their columns; hashing hashes, not joined texts, costs a tenth as much and is
    as easy to reproduce in another engine (two XXH64 calls and a 16-byte concatenation).

    >>> a, b = hash_texts(pa.array(["3"])), hash_texts(pa.array(["5"]))
    >>> bool(pair_hashes(a, b)[0] == pair_hashes(b, a)[0])
    True
    """
    packed = np.empty((len(one), 2), dtype=">u8")
    np.minimum(one, two, out=packed[:, 0])
    np.maximum(one, two, out=packed[:, 1])
    if len(one) <= FEW_TEXTS:
        rows = packed.tobytes()
        return _xxh64_each([rows[i:i + 16] for i in range(0, len(rows), 16)])
    # the packed rows as a binary array of 16-byte values, without copying them
    offsets = np.arange(0, 16 * len(one) + 1, 16, dtype=np.int64)
    return _xxh64_bulk(pa.BinaryArray.from_buffers(
        pa.large_binary(), len(one), [None, pa.py_buffer(offsets), pa.py_buffer(packed)]))


def _xxh64_each(values: list[bytes]) -> np.ndarray:
    """XXH64 (seed 0) of a few byte strings, one by one: a call into Polars costs half a
    millisecond whatever its size, so a wide document's thousands of one-value columns hash
    faster with the reference binding."""
    return np.fromiter(map(xxhash.xxh64_intdigest, values), dtype=np.uint64, count=len(values))


def _xxh64_bulk(values: pa.Array) -> np.ndarray:
    """XXH64 (seed 0) of each value of an Arrow string or binary array, vectorised by
    ``polars-hash``."""
    # Imported here: Polars is only needed once something is sketched, not to start a server.
    import polars as pl
    import polars_hash

    frame = pl.from_arrow(pa.table({"t": values}))
    assert isinstance(frame, pl.DataFrame)
    hashed = frame.select(polars_hash.col("t").nchash.xxhash64()).to_series()
    return hashed.to_numpy().astype(np.uint64, copy=False)


def hash_text(text: str) -> int:
    """The 64-bit XXH64 hash (seed 0) of an already normalised text's UTF-8 bytes."""
    return int(hash_texts(pa.array([_valid_text(text)], pa.string()))[0])


def _blake2b_hash(text: str) -> int:
    """The version 1 hash, kept to read v1 sketches."""
    digest = blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest)


def _valid_text(text: str) -> str:
    """``text`` with lone surrogates (undecodable file names) as U+FFFD: UTF-8 has no room."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def _smallest_distinct(values: np.ndarray, k: int) -> np.ndarray:
    """The k smallest distinct values, sorted; a partial sort first, as sorting all is slow."""
    if len(values) > 2 * k:
        small = np.unique(np.partition(values, 2 * k)[: 2 * k + 1])
        if len(small) >= k:
            return small[:k]
        # Few distinct values repeated many times: hashing finds them faster than sorting all.
        values = pc.unique(pa.array(values, pa.uint64())).to_numpy()
    return np.unique(values)[:k]


def normalise(text: str) -> str:
    """Normalise a value's text for hashing: surrounding blanks stripped, lower-cased.

    ``str.lower`` rather than ``casefold`` because Arrow's ``utf8_lower`` (the bulk path,
    :meth:`ValueSketch.add_texts`) maps characters the same way.
    """
    return text.strip().lower()


def normalise_texts(texts: pa.Array) -> pa.Array:
    """:func:`normalise` over an Arrow string array (ASCII kernels, 4x faster, when it is)."""
    data = texts.buffers()[2]
    if data is None or len(data) == 0 or np.frombuffer(data, dtype=np.uint8).max() < 0x80:
        return pc.ascii_lower(pc.ascii_trim_whitespace(texts))
    return pc.utf8_lower(pc.utf8_trim_whitespace(texts))


@dataclass
class ValueSketch:
    """A bottom-k sketch of a field's distinct values plus a small raw sample.

    ``hashes`` is sorted ascending and holds at most ``k`` distinct 64-bit hashes. Build one with
    :func:`build_sketch`, incrementally with :meth:`update`, or in bulk with :meth:`add_texts`.
    ``algorithm`` is ``kmv-xxh64`` for every sketch built here; a sketch read from the store may
    be an older ``kmv-blake2b64`` one, which compares with nothing of another algorithm.
    """

    k: int = DEFAULT_K
    sample_limit: int = DEFAULT_SAMPLE
    hashes: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    algorithm: str = ALGORITHM
    # hash -> raw text, only for the ``sample_limit`` smallest hashes (see ``_raw``)
    _by_hash: dict[int, str] = field(default_factory=dict, repr=False)
    # The sample of a sketch read by from_dict, in hash order, until something needs its hashes:
    # discovery reads the samples of a 300,000-key document's sketches and never their hashes.
    _stored_sample: list[str] | None = field(default=None, repr=False)
    #: sketches of this column's value pairs with other columns of its table, by the other
    #: column's name (:mod:`.keys`: composite keys and foreign keys)
    pairs: dict[str, PairSketch] = field(default_factory=dict, repr=False)

    @property
    def version(self) -> int:
        """The serialised format's version (3 today; 1 for a sketch read from an old store)."""
        return _VERSIONS[self.algorithm]

    @property
    def full(self) -> bool:
        """True when the field had at least ``k`` distinct values (estimates are approximate)."""
        return len(self.hashes) >= self.k

    @property
    def sample(self) -> list[str]:
        """The raw sample values, in hash order (deterministic)."""
        if self._stored_sample is not None:
            return list(self._stored_sample)
        raw = self._by_hash  # not the property per element: to_dict reads 300,000 samples
        return [raw[h] for h in sorted(raw)]

    @property
    def _raw(self) -> dict[int, str]:
        """The raw sample by hash; a sample read by :meth:`from_dict` is hashed now."""
        if self._stored_sample is not None:
            texts, self._stored_sample = self._stored_sample, None
            self._by_hash = dict(zip(_sample_hashes(self.algorithm, texts), texts, strict=True))
        return self._by_hash

    @_raw.setter
    def _raw(self, by_hash: dict[int, str]) -> None:
        self._stored_sample, self._by_hash = None, by_hash

    def update(self, values: Iterable[Any]) -> ValueSketch:
        """Add values (nulls are skipped; duplicates are harmless). Returns self."""
        raws = [_valid_text(t) for t in map(value_text, values) if t is not None]
        return self.add_texts(pa.array(raws, pa.string()))

    def add_texts(self, raw: pa.Array, normalised: pa.Array | None = None) -> ValueSketch:
        """Add canonical texts (an Arrow string array without nulls; repeats are harmless).

        ``normalised`` may pass :func:`normalise_texts` of ``raw`` when the caller has it.
        Only the few values that enter the raw sample are looked at in Python.
        """
        self._require_current()
        if len(raw) == 0:
            return self
        batch = hash_texts(normalise_texts(raw) if normalised is None else normalised)
        self.add_hashes(batch)
        self._keep_raw(batch, raw)
        return self

    def add_few_texts(self, raw: list[str], normalised: list[str]) -> ValueSketch:
        """:meth:`add_texts` of a few texts held in Python (``normalised``: their
        :func:`normalise_texts`), without an Arrow or NumPy call while the sketch is empty."""
        if len(self.hashes) or self._raw:
            return self.add_texts(pa.array(raw, pa.string()), pa.array(normalised, pa.string()))
        self._require_current()
        batch = [xxhash.xxh64_intdigest(text.encode("utf-8")) for text in normalised]
        distinct = sorted(set(batch))[: self.k]
        self.hashes = np.array(distinct, dtype=np.uint64)
        first: dict[int, str] = {}
        for key, text in zip(batch, raw, strict=True):
            first.setdefault(key, text)
        limit = min(self.sample_limit, len(distinct))
        self._raw = {key: first[key][:MAX_SAMPLE_CHARS] for key in distinct[:limit]}
        return self

    def add_hashes(self, batch: np.ndarray) -> ValueSketch:
        """Add values already hashed (uint64; repeats are harmless), without raw sample: the
        way pair sketches (:func:`pair_hashes`) are built."""
        self._require_current()
        # Once full, only hashes under the k-th smallest can enter: one comparison drops the
        # rest before the partial sort (most of every chunk after the first few).
        entering = batch[batch < self.hashes[-1]] if self.full else batch
        self.hashes = _smallest_distinct(np.concatenate([self.hashes, entering]), self.k)
        return self

    def _require_current(self) -> None:
        if self.algorithm != ALGORITHM:
            raise ValueError(f"a {self.algorithm} sketch cannot take new values: re-sketch it")

    def _keep_raw(self, batch: np.ndarray, raw: pa.Array) -> None:
        kept = self._raw  # once: the property is not for a loop over the sample
        limit = min(self.sample_limit, len(self.hashes))
        if limit == 0:
            kept.clear()
            return
        if len(kept) == limit and all(h in kept for h in self.hashes[:limit].tolist()):
            return  # the raw sample already holds the values of the smallest hashes
        threshold = int(self.hashes[limit - 1])
        wanted = [h for h in self.hashes[:limit].tolist() if h not in kept]
        if wanted:
            for key, text in _first_texts(batch, raw, wanted, threshold):
                kept[key] = str(text)[:MAX_SAMPLE_CHARS]
        for key in [key for key in kept if key > threshold]:
            del kept[key]

    def merge(self, other: ValueSketch) -> ValueSketch:
        """Fold another sketch of the same algorithm in (the union of the two value sets)."""
        self._require_current()
        if other.algorithm != self.algorithm:
            raise ValueError("cannot merge sketches of different algorithms")
        self.hashes = _smallest_distinct(np.concatenate([self.hashes, other.hashes]), self.k)
        # This sketch's raw text wins for a hash both hold: merged in stream order (the Spark
        # engine's partitions), each hash keeps the first text seen, as one stream would.
        self._raw = {**other._raw, **self._raw}
        limit = min(self.sample_limit, len(self.hashes))
        threshold = int(self.hashes[limit - 1]) if limit else -1
        self._raw = {h: t for h, t in self._raw.items() if h <= threshold}
        return self

    # ------------------------------------------------------------------ estimates

    @property
    def threshold(self) -> int:
        """Largest hash the sketch is complete up to (2**64 - 1 when it holds every value)."""
        return int(self.hashes[-1]) if self.full else 2**64 - 1

    def distinct_count(self) -> float:
        """Estimated number of distinct values (exact when the sketch is not full)."""
        if not self.full:
            return float(len(self.hashes))
        kth = (int(self.hashes[self.k - 1]) + 1) / _SPACE
        return (self.k - 1) / kth

    def containment_in(self, other: ValueSketch) -> Estimate:
        """Estimated share of this field's distinct values that also occur in ``other``.

        Sketches of different algorithms share no hash: the estimate rests on nothing.
        """
        if other.algorithm != self.algorithm:
            return Estimate(0.0, 0)
        limit = np.uint64(min(self.threshold, other.threshold))
        mine = self.hashes[self.hashes <= limit]
        if len(mine) == 0:
            return Estimate(0.0, 0)
        hits = np.isin(mine, other.hashes, assume_unique=True).sum()
        return Estimate(float(hits) / len(mine), len(mine))

    def jaccard(self, other: ValueSketch) -> Estimate:
        """Estimated Jaccard similarity (shared over all distinct values) of the two fields."""
        if other.algorithm != self.algorithm:
            return Estimate(0.0, 0)
        k = min(self.k, other.k)
        union = np.union1d(self.hashes, other.hashes)[:k]
        if len(union) == 0:
            return Estimate(0.0, 0)
        both = np.isin(union, self.hashes, assume_unique=True) & np.isin(
            union, other.hashes, assume_unique=True
        )
        return Estimate(float(both.sum()) / len(union), len(union))

    # ------------------------------------------------------------------ serialisation

    def to_dict(self) -> dict[str, Any]:
        """The JSON-safe form described in the module docstring."""
        data = {
            "version": self.version,
            "algorithm": self.algorithm,
            "k": self.k,
            "sampleLimit": self.sample_limit,
            "hashes": _packed(self.hashes),
            "sample": self.sample,
        }
        if self.pairs:
            data["pairs"] = {
                other: {"unique": pair.unique, "k": pair.sketch.k,
                        "hashes": _packed(pair.sketch.hashes)}
                for other, pair in self.pairs.items()}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, with_sample: bool = True) -> ValueSketch:
        """Rebuild a sketch from :meth:`to_dict`, of version 3, 2 or 1 (ValueError otherwise).

        ``with_sample=False`` leaves the raw sample out: comparisons need only the hashes. The
        sample's values are re-hashed only when the sketch takes new values or merges (most of
        the cost of reading one); reading :attr:`sample` needs no hash.

        >>> sketch = ValueSketch.from_dict(build_sketch(["b", "a"]).to_dict())
        >>> sketch.sample == build_sketch(["a", "b"]).sample
        True
        """
        algorithm = data.get("algorithm")
        if algorithm not in _VERSIONS or data.get("version") not in _READ_VERSIONS[algorithm]:
            raise ValueError(
                f"not a known sketch format: {algorithm!r} version {data.get('version')!r}"
            )
        sketch = cls(k=int(data["k"]), sample_limit=int(data.get("sampleLimit", DEFAULT_SAMPLE)),
                     algorithm=str(algorithm))
        sketch.hashes = _unpacked(data["hashes"])
        # pairs of an older version hash joined texts: they would meet no pair of today's
        old_pairs = data.get("version") != _VERSIONS[algorithm]
        for other, pair in ({} if old_pairs else data.get("pairs") or {}).items():
            paired = cls(k=int(pair["k"]), sample_limit=0, algorithm=str(algorithm))
            paired.hashes = _unpacked(pair["hashes"])
            sketch.pairs[str(other)] = PairSketch(paired, bool(pair.get("unique")))
        if with_sample:
            # The sample values are the smallest hashes' values, in hash order (to_dict): the
            # hash map is restored by re-hashing them, once something needs it (``_raw``).
            sketch._stored_sample = [str(t) for t in data.get("sample", [])]
        return sketch


def _sample_hashes(algorithm: str, texts: list[str]) -> list[int]:
    """The hashes of a stored sample's texts, by the sketch's algorithm."""
    if algorithm == V1_ALGORITHM:
        return [_blake2b_hash(normalise(t)) for t in texts]
    valid = pa.array([_valid_text(t) for t in texts], pa.string())
    hashed: list[int] = hash_texts(normalise_texts(valid)).tolist()
    return hashed


def _first_texts(batch: np.ndarray, raw: pa.Array, wanted: list[int],
                 threshold: int) -> list[tuple[int, Any]]:
    """The text of each ``wanted`` hash (all at most ``threshold``) where it first occurs in
    ``batch`` (the hashes of ``raw``'s values); a hash not in the batch is left out."""
    if len(batch) <= FEW_VALUES:
        # A wide document's columns hold a value each: five Arrow calls per column cost more
        # than finding it in Python.
        first: dict[int, int] = {}
        for position, value in enumerate(batch.tolist()):
            first.setdefault(value, position)
        return [(key, raw[first[key]].as_py()) for key in wanted if key in first]
    # Where each wanted hash first occurs in the batch, by hashing rather than sorting (a
    # low-cardinality column brings every row under the threshold); then one take and one
    # conversion for all: indexing values one by one costs a microsecond each.
    under = np.flatnonzero(batch <= np.uint64(threshold))
    at = pc.index_in(pa.array(wanted, pa.uint64()), value_set=pa.array(batch[under]))
    found = [(key, index) for key, index in zip(wanted, at.to_pylist(), strict=True)
             if index is not None]
    if not found:
        return []
    positions = under[np.array([index for _, index in found], dtype=np.int64)]
    texts = raw.take(pa.array(positions)).to_pylist()
    return [(key, text) for (key, _), text in zip(found, texts, strict=True)]


def _packed(hashes: np.ndarray) -> str:
    """Hashes as stored: big-endian 64-bit words, base64."""
    return base64.b64encode(hashes.astype(">u8").tobytes()).decode("ascii")


def _unpacked(text: str) -> np.ndarray:
    """Stored hashes (:func:`_packed`) back as a sorted uint64 array."""
    return np.sort(np.frombuffer(base64.b64decode(text), dtype=">u8").astype(np.uint64))


@dataclass(frozen=True)
class PairSketch:
    """The sketch of two columns' value pairs, and whether the pair is a key of its table."""

    sketch: ValueSketch
    unique: bool


@dataclass(frozen=True)
class Estimate:
    """An estimate and the number of hashes it rests on (0 means: nothing to compare)."""

    value: float
    sample_size: int


def build_sketch(
    values: Iterable[Any], k: int = DEFAULT_K, sample_limit: int = DEFAULT_SAMPLE
) -> ValueSketch:
    """A sketch of ``values`` (any iterable of scalars; nulls skipped).

    >>> build_sketch(["a", "B", "b", None]).distinct_count()
    2.0
    """
    return ValueSketch(k=k, sample_limit=sample_limit).update(values)
