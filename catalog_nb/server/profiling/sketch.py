"""A compact value sketch per field, for join discovery and tag discovery.

Choice: a **bottom-k (KMV, "k minimum values") sketch** of 64-bit hashes, plus a small sample of
raw values.

* Every non-null value is normalised (text form, surrounding blanks stripped, lower-cased; numbers
  in one canonical form so ``7``, ``7.0`` and ``"7"`` agree; dates ISO-8601) and hashed with
  BLAKE2b to 64 bits. BLAKE2b is keyed by nothing and seeded by nothing, so two processes, two
  machines and two releases of Python hash a value the same way (Python's ``hash()`` is salted
  per process and would make stored sketches useless).
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

Serialised form (JSON-safe): ``{"version": 1, "algorithm": "kmv-blake2b64", "k": 256,
"hashes": "<base64 of big-endian uint64s>", "sample": [...]}`` - about 2.7 kB for a full sketch.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from hashlib import blake2b
from operator import methodcaller
from typing import Any

import numpy as np

DEFAULT_K = 256
DEFAULT_SAMPLE = 200
MAX_SAMPLE_CHARS = 256
ALGORITHM = "kmv-blake2b64"
_SPACE = float(2**64)


def value_text(value: Any) -> str | None:
    """The canonical text of a scalar value (None for nulls and NaN).

    Integral floats print as integers so a DOUBLE ``7.0`` meets a LONG ``7``; booleans print as
    ``true``/``false``; dates and times in ISO-8601, time-zone-aware timestamps in UTC without
    the offset (``2024-01-05T10:00:00``), so equal instants compare equal.
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


_BLAKE2B_64 = partial(blake2b, digest_size=8)


def hash_text(text: str) -> int:
    """The 64-bit BLAKE2b hash (big-endian) of an already normalised text."""
    return int.from_bytes(_BLAKE2B_64(text.encode("utf-8", "surrogatepass")).digest())


def _smallest_distinct(values: np.ndarray, k: int) -> np.ndarray:
    """The k smallest distinct values, sorted; a partial sort first, as sorting all is slow."""
    if len(values) > 2 * k:
        small = np.unique(np.partition(values, 2 * k)[: 2 * k + 1])
        if len(small) >= k:
            return small[:k]
    return np.unique(values)[:k]


def normalise(text: str) -> str:
    """Normalise a value's text for hashing: surrounding blanks stripped, lower-cased.

    ``str.lower`` rather than ``casefold`` because Arrow's ``utf8_lower`` (the bulk path of
    :mod:`.stats`) maps characters the same way.
    """
    return text.strip().lower()


@dataclass
class ValueSketch:
    """A bottom-k sketch of a field's distinct values plus a small raw sample.

    ``hashes`` is sorted ascending and holds at most ``k`` distinct 64-bit hashes. Build one with
    :func:`build_sketch` or incrementally with :meth:`update`.
    """

    k: int = DEFAULT_K
    sample_limit: int = DEFAULT_SAMPLE
    hashes: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    # hash -> raw text, only for the ``sample_limit`` smallest hashes
    _raw: dict[int, str] = field(default_factory=dict, repr=False)

    @property
    def full(self) -> bool:
        """True when the field had at least ``k`` distinct values (estimates are approximate)."""
        return len(self.hashes) >= self.k

    @property
    def sample(self) -> list[str]:
        """The raw sample values, in hash order (deterministic)."""
        return [self._raw[h] for h in sorted(self._raw)]

    def update(self, values: Iterable[Any]) -> ValueSketch:
        """Add values (nulls are skipped; duplicates are harmless). Returns self."""
        raws = [t for t in map(value_text, values) if t is not None]
        encoded = [normalise(t).encode("utf-8", "surrogatepass") for t in raws]
        return self.add_encoded(encoded, raws.__getitem__)

    def add_encoded(self, encoded: Sequence[bytes], raw: Callable[[int], str]) -> ValueSketch:
        """Add values given as normalised UTF-8 bytes; ``raw(i)`` gives the i-th raw text.

        The fast path for callers that normalise in bulk (the Arrow kernels of
        :mod:`.sampling`); ``raw`` is only called for the few values that enter the raw sample.
        """
        if not encoded:
            return self
        # map() over C callables: no Python frame per value, hashing is the only real cost
        digests = b"".join(map(methodcaller("digest"), map(_BLAKE2B_64, encoded)))
        batch = np.frombuffer(digests, dtype=">u8").astype(np.uint64)
        self.hashes = _smallest_distinct(np.concatenate([self.hashes, batch]), self.k)
        self._keep_raw(batch, raw)
        return self

    def _keep_raw(self, batch: np.ndarray, raw: Callable[[int], str]) -> None:
        limit = min(self.sample_limit, len(self.hashes))
        if limit == 0:
            self._raw.clear()
            return
        threshold = int(self.hashes[limit - 1])
        # Only the few batch values under the threshold are looked at in Python.
        for index in np.flatnonzero(batch <= np.uint64(threshold)).tolist():
            key = int(batch[index])
            if key not in self._raw:
                self._raw[key] = raw(index)[:MAX_SAMPLE_CHARS]
        for key in [key for key in self._raw if key > threshold]:
            del self._raw[key]

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
        """Estimated share of this field's distinct values that also occur in ``other``."""
        limit = np.uint64(min(self.threshold, other.threshold))
        mine = self.hashes[self.hashes <= limit]
        if len(mine) == 0:
            return Estimate(0.0, 0)
        hits = np.isin(mine, other.hashes, assume_unique=True).sum()
        return Estimate(float(hits) / len(mine), len(mine))

    def jaccard(self, other: ValueSketch) -> Estimate:
        """Estimated Jaccard similarity (shared over all distinct values) of the two fields."""
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
        packed = self.hashes.astype(">u8").tobytes()
        return {
            "version": 1,
            "algorithm": ALGORITHM,
            "k": self.k,
            "sampleLimit": self.sample_limit,
            "hashes": base64.b64encode(packed).decode("ascii"),
            "sample": self.sample,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ValueSketch:
        """Rebuild a sketch from :meth:`to_dict` (ValueError on another algorithm or version)."""
        if data.get("algorithm") != ALGORITHM or data.get("version") != 1:
            raise ValueError(f"not a {ALGORITHM} v1 sketch: {data.get('algorithm')!r}")
        raw = base64.b64decode(data["hashes"])
        hashes = np.frombuffer(raw, dtype=">u8").astype(np.uint64)
        sketch = cls(k=int(data["k"]), sample_limit=int(data.get("sampleLimit", DEFAULT_SAMPLE)))
        sketch.hashes = np.sort(hashes)
        # The sample values are the smallest hashes' values, so re-hashing them restores the map.
        sketch._raw = {hash_text(normalise(text)): text for text in data.get("sample", [])}
        return sketch


@dataclass(frozen=True)
class Estimate:
    """An estimate and the number of hashes it rests on (0 means: nothing to compare)."""

    value: float
    sample_size: int


def build_sketch(
    values: Iterable[Any], k: int = DEFAULT_K, sample_limit: int = DEFAULT_SAMPLE
) -> ValueSketch:
    """A sketch of ``values`` (any iterable of scalars; nulls skipped)."""
    return ValueSketch(k=k, sample_limit=sample_limit).update(values)
