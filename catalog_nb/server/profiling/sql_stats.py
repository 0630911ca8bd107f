"""Table statistics computed by the database itself, and samples drawn by the database.

:func:`.sql.profile_table` uses this module for tables larger than the sample on the dialects of
:data:`PUSHDOWN_DIALECTS` (SQLite and PostgreSQL); other databases keep the generic path (an
exact ``COUNT(*)`` and the first ``sample_rows`` rows). Every statement is built with SQLAlchemy
Core on the reflected table, so identifiers are quoted by the dialect and values are bound (the
one constant setting, ``SET LOCAL synchronize_seqscans``, has no identifier or value in it).

**Aggregates** (:func:`aggregate`): one full scan per group of columns (at most
:data:`MAX_AGGREGATES` expressions a statement, so most tables take one statement):

* ``COUNT(col)`` of every column, so ``valueCount``, ``nullCount`` and ``density`` are exact;
* ``MIN``/``MAX`` of numbers, dates, timestamps and text, ``AVG`` of numbers, ``MIN``/``MAX`` of
  ``LENGTH`` of text. Text is compared by code point, as Arrow compares it for files
  (``COLLATE "C"`` on PostgreSQL, ``BINARY`` on SQLite), and shown cut to 100 characters;
* ``COUNT(DISTINCT col)`` of scalar columns when the table has at most ``exact_distinct_rows``
  rows (:data:`EXACT_DISTINCT_ROWS` by default). Above that, neither database has an
  approximate distinct count built in, so the count is estimated from the sample with the
  Haas-Stokes "Duj1" estimator (:func:`duj1`), flagged ``distinctCountApproximate``. That is the
  estimator PostgreSQL's ANALYZE uses for ``pg_stats.n_distinct``; ``pg_stats`` itself is not
  read, because ANALYZE looks at 30,000 rows by default (fewer than our sample) and its figures
  may be stale.

A group whose statement fails (a type the database cannot compare or count, such as XML or
geometric types, a collation the reading connection does not have, or values SQLite's dynamic
typing let in that do not read back as the declared type) is split in halves and retried; a
single column then asks less (no distinct count, then ``COUNT`` alone). What still fails keeps
the statistics of the sample. A minimum or maximum of another type than the column's (SQLite
keeps text in an INTEGER column if asked to) is likewise left to the sample. BINARY, ARRAY and
STRUCT columns (blobs, arrays, JSON) are only counted.

**Sampling** (:func:`sample_batches`), ``sample_rows`` rows at most, fetched in chunks:

* PostgreSQL tables: ``TABLESAMPLE BERNOULLI(p) REPEATABLE(seed)``, ``p`` set so the expected
  draw slightly exceeds the sample, then ``LIMIT``. BERNOULLI rather than SYSTEM: SYSTEM takes
  whole pages, whose rows are alike (inserted together), which biases the distinct estimate
  and the most frequent values. Synchronised scans are turned off for the statement, so the
  sample does not depend on where a concurrent scan of the table stands.
* SQLite rowid tables: rowids drawn with a fixed seed between the smallest and largest rowid,
  about ``1.1 * sample_rows / density`` of them (density = rows / rowid span, capped at 20
  times the sample), fetched ``WHERE rowid IN (...)`` :data:`ID_CHUNK` at a time in the order
  drawn, until the sample is full. Each existing row is equally likely; a table whose rowids
  are mostly gaps may give a smaller sample (``sampleSize`` says how many rows were read).
* SQLite WITHOUT ROWID tables, views (both databases) and anything the database refuses to
  sample: the first ``sample_rows`` rows, as before.

Both samples are deterministic: the same table gives the same sample.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy import REAL, Float, Integer, Table, bindparam, cast, column, func, select, text
from sqlalchemy import types as sqltypes
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.elements import ColumnElement

from catalog_nb.server.profiling.model import DataType, FieldProfile
from catalog_nb.server.profiling.sampling import SHOWN_CHARS, json_number

PUSHDOWN_DIALECTS = frozenset({"sqlite", "postgresql"})
#: Tables up to this many rows get exact ``COUNT(DISTINCT)`` (1 M rows: about a second per
#: column on either database); larger ones an estimate from the sample.
EXACT_DISTINCT_ROWS = 1_000_000
#: Aggregate expressions in one statement (PostgreSQL allows 1,664 result columns, SQLite 2,000).
MAX_AGGREGATES = 500
SAMPLE_SEED = 20240131
#: Rowids per ``IN (...)`` statement (well under SQLite's oldest limit of 999 parameters).
ID_CHUNK = 500
#: At most this many times the sample's rows are probed as rowids of a sparse SQLite table.
MAX_ID_PROBES = 20
_COLLATION = {"postgresql": "C", "sqlite": "BINARY"}
_ROWID_NAMES = ("rowid", "_rowid_", "oid")
#: Types whose values are counted, compared and sketched (not BINARY, ARRAY, STRUCT).
SCALAR_TYPES = frozenset({
    DataType.STRING, DataType.LONG, DataType.DOUBLE, DataType.BOOLEAN, DataType.DATE,
    DataType.TIMESTAMP,
})  # fmt: skip
_COMPOSITE = frozenset({DataType.BINARY, DataType.ARRAY, DataType.STRUCT})
_NUMBER, _TIME, _TEXT = "number", "time", "text"
#: What a failed aggregate statement raises: the database's refusal, or a value SQLAlchemy's
#: result processing cannot read back as the column's type (SQLite's dynamic typing).
_FAILURES = (DBAPIError, ValueError, TypeError, ArithmeticError)


@dataclass
class ColumnStats:
    """What the database computed for one column (None: not computed, the sample decides)."""

    value_count: int | None = None
    range: dict[str, Any] | None = None
    distinct: int | None = None


@dataclass
class _Plan:
    index: int
    name: str
    expr: ColumnElement[Any]
    kind: DataType | None
    range: str | None
    distinct: bool
    stats: ColumnStats = field(default_factory=ColumnStats)


def _range_kind(sql_type: Any, kind: DataType | None) -> str | None:
    if kind in (DataType.LONG, DataType.DOUBLE):
        return _NUMBER
    if kind in (DataType.DATE, DataType.TIMESTAMP):
        return _TIME
    # Only real text: enums, UUIDs, times of day... are STRING too but compare differently
    # (or not at all under a collation); their ranges come from the sample.
    if kind is DataType.STRING and isinstance(sql_type, sqltypes.String) and not isinstance(
        sql_type, sqltypes.Enum
    ):
        return _TEXT
    return None


#: What a statement asks of a column: its count, also its range, also its distinct count.
_COUNT, _RANGE, _ALL = 0, 1, 2


def _expressions(plan: _Plan, collation: str | None, level: int) -> list[ColumnElement[Any]]:
    i, col = plan.index, plan.expr
    found: list[ColumnElement[Any]] = [func.count(col).label(f"n{i}")]
    if level >= _RANGE and plan.range == _NUMBER:
        found += [func.min(col).label(f"lo{i}"), func.max(col).label(f"hi{i}"),
                  func.avg(col, type_=Float()).label(f"mean{i}")]
    elif level >= _RANGE and plan.range == _TIME:
        found += [func.min(col).label(f"lo{i}"), func.max(col).label(f"hi{i}")]
    elif level >= _RANGE and plan.range == _TEXT:
        ordered = col.collate(collation) if collation else col
        length = func.length(col, type_=Integer())
        found += [func.min(ordered).label(f"lo{i}"), func.max(ordered).label(f"hi{i}"),
                  func.min(length).label(f"lmin{i}"), func.max(length).label(f"lmax{i}")]
    if level >= _ALL and plan.distinct:
        found.append(func.count(col.distinct()).label(f"d{i}"))
    return found


def _number(value: Any, kind: DataType | None) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        raise TypeError
    if kind is DataType.LONG and (not isinstance(value, float) or value.is_integer()):
        return int(value)
    return json_number(float(value))


def _naive_utc(value: Any) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        if not isinstance(value, dt.date):
            raise TypeError
        return dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _read_range(plan: _Plan, got: dict[str, Any]) -> dict[str, Any] | None:
    """The range properties of one column (None: a value not of the column's type)."""
    i = plan.index
    low, high = got[f"lo{i}"], got[f"hi{i}"]
    try:
        if plan.range == _NUMBER:
            mean = got[f"mean{i}"]
            if low is None:
                return {"min": None, "max": None, "mean": None}
            return {"min": _number(low, plan.kind), "max": _number(high, plan.kind),
                    "mean": None if mean is None else json_number(float(mean))}
        if plan.range == _TIME:
            if low is None:
                return {"min": None, "max": None}
            first, last = _naive_utc(low), _naive_utc(high)
            if plan.kind is DataType.DATE:
                return {"min": first.date().isoformat(), "max": last.date().isoformat()}
            return {"min": first.isoformat(), "max": last.isoformat()}
        if low is None:
            return {"min": None, "max": None, "minLength": None, "maxLength": None}
        if not isinstance(low, str) or not isinstance(high, str):
            return None
        return {"min": low[:SHOWN_CHARS], "max": high[:SHOWN_CHARS],
                "minLength": int(got[f"lmin{i}"]), "maxLength": int(got[f"lmax{i}"])}
    except (TypeError, ValueError, OverflowError):
        return None


def _run(conn: Connection, table: Table, plans: list[_Plan], collation: str | None,
         level: int) -> None:
    exprs = [e for plan in plans for e in _expressions(plan, collation, level)]
    got = dict(conn.execute(select(*exprs).select_from(table)).one()._mapping)
    for plan in plans:
        plan.stats.value_count = int(got[f"n{plan.index}"])
        if level >= _RANGE and plan.range is not None:
            plan.stats.range = _read_range(plan, got)
        if level >= _ALL and plan.distinct:
            plan.stats.distinct = int(got[f"d{plan.index}"])


def _run_group(conn: Connection, table: Table, plans: list[_Plan], collation: str | None) -> None:
    """Aggregate a group in one statement. A failed statement is split in halves (each half a
    scan of the table, so one bad column of n costs about 2 log2 n scans, not n); a single
    column asks less (no distinct count, then the count alone) until the database answers."""
    attempts: list[tuple[list[_Plan], int]] = [(plans, _ALL)]
    while attempts:
        group, level = attempts.pop(0)
        try:
            _run(conn, table, group, collation, level)
        except _FAILURES:
            conn.rollback()  # PostgreSQL refuses anything more in a failed transaction
            if len(group) > 1:
                half = len(group) // 2
                attempts = [(group[:half], level), (group[half:], level), *attempts]
            elif level > _COUNT:
                attempts.insert(0, (group, level - 1))


def _groups(plans: list[_Plan], collation: str | None) -> list[list[_Plan]]:
    groups: list[list[_Plan]] = [[]]
    size = 0
    for plan in plans:
        width = len(_expressions(plan, collation, _ALL))
        if groups[-1] and size + width > MAX_AGGREGATES:
            groups.append([])
            size = 0
        groups[-1].append(plan)
        size += width
    return groups


def aggregate(
    conn: Connection,
    table: Table,
    kinds: dict[str, DataType | None],
    exact_distinct: bool,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, ColumnStats]:
    """Exact per-column statistics of ``table`` computed by the database (see the module
    docstring); ``progress(done, total)`` hears each finished statement group."""
    collation = _COLLATION.get(conn.dialect.name)
    plans = [
        _Plan(i, c.name, c, kinds.get(c.name), _range_kind(c.type, kinds.get(c.name)),
              # an undeclared type (None: SQLite without one) may still hold scalars
              exact_distinct and kinds.get(c.name) not in _COMPOSITE)
        for i, c in enumerate(table.columns)
    ]
    groups = _groups(plans, collation) if plans else []
    for done, group in enumerate(groups, start=1):
        _run_group(conn, table, group, collation)
        if progress is not None:
            progress(done, len(groups))
    return {plan.name: plan.stats for plan in plans}


def duj1(sample_values: int, sample_distinct: int, singletons: int, values: int) -> int:
    """The Haas-Stokes Duj1 estimate of the distinct values among ``values`` non-null values,
    from a uniform sample of ``sample_values`` of them holding ``sample_distinct`` distinct
    values, ``singletons`` of which were seen once: ``n*d / (n - f1 + f1*n/N)``, kept between
    ``d`` and ``N``."""
    n, d, f1 = sample_values, sample_distinct, singletons
    if n <= 0 or values <= 0:
        return 0
    if n >= values:
        return d
    estimate = n * d / (n - f1 + f1 * n / values)
    return round(min(max(estimate, d), values))


def estimate_distinct(chunks: list[pa.Array], values: int) -> int:
    """:func:`duj1` over one column's sampled values (``chunks``), of ``values`` in the table."""
    if not chunks:
        return 0
    sample = pa.chunked_array(chunks).combine_chunks() if len(chunks) > 1 else chunks[0]
    sample = sample.drop_null()
    if not len(sample):
        return 0
    counts = pc.value_counts(sample).field("counts")
    singletons = int(pc.sum(pc.equal(counts, 1)).as_py() or 0)
    return duj1(len(sample), len(counts), singletons, values)


def apply_stats(
    fields: list[FieldProfile], row_count: int, stats: dict[str, ColumnStats],
    estimates: dict[str, int],
) -> None:
    """Overwrite the sample's figures of ``fields`` with the database's exact ones, and the
    sample's distinct counts with ``estimates`` where the database gave none."""
    for item in fields:
        found = stats.get(item.name)
        if found is None:
            continue
        props = item.properties
        if found.value_count is not None:
            props["valueCount"] = found.value_count
            props["nullCount"] = row_count - found.value_count
            props["density"] = found.value_count / row_count if row_count else None
        if found.range is not None:
            props.update(found.range)
        if item.data_type not in SCALAR_TYPES:
            continue
        if found.distinct is not None:
            props["distinctCount"] = found.distinct
            props["distinctCountApproximate"] = False
        elif item.name in estimates:
            props["distinctCount"] = estimates[item.name]
            props["distinctCountApproximate"] = True


# -- sampling -------------------------------------------------------------------------------------


def first_rows(conn: Connection, table: Table, limit: int, chunk_rows: int
               ) -> Iterator[Sequence[Row[Any]]]:
    """The first ``limit`` rows the database returns, streamed ``chunk_rows`` at a time."""
    result = conn.execution_options(stream_results=True, yield_per=chunk_rows).execute(
        select(table).limit(limit)
    )
    yield from result.partitions()


def _bernoulli(conn: Connection, table: Table, row_count: int, sample_rows: int,
               chunk_rows: int) -> Iterator[Sequence[Row[Any]]]:
    # A margin of four standard deviations: the draw falls short of the sample once in 30,000.
    wanted = sample_rows + 4 * math.sqrt(sample_rows) + 10
    percent = min(100.0, 100.0 * wanted / row_count)
    sampled = table.tablesample(
        func.bernoulli(cast(bindparam("percent", percent), REAL)),
        seed=bindparam("seed", SAMPLE_SEED, type_=Integer()),
    )
    # With LIMIT, which rows are kept depends on the scan's starting page: a synchronised
    # scan could start mid-table and make the sample differ from one run to the next.
    conn.execute(text("SET LOCAL synchronize_seqscans = off"))
    result = conn.execution_options(stream_results=True, yield_per=chunk_rows).execute(
        select(sampled).limit(sample_rows)
    )
    yield from result.partitions()


def _rowid_column(table: Table) -> ColumnElement[Any] | None:
    taken = {c.name.lower() for c in table.columns}
    for name in _ROWID_NAMES:
        if name not in taken:
            return column(name, Integer())
    return None


def draw_ids(low: int, high: int, row_count: int, sample_rows: int,
             seed: int = SAMPLE_SEED) -> np.ndarray:
    """Distinct candidate rowids between ``low`` and ``high``, in a random order, enough to
    find about ``sample_rows`` of the ``row_count`` rows (at most :data:`MAX_ID_PROBES` times
    the sample)."""
    span = high - low + 1
    density = min(1.0, row_count / span) if span > 0 else 1.0
    wanted = min(span, int(1.1 * sample_rows / density) + 100, MAX_ID_PROBES * sample_rows)
    rng = np.random.default_rng(seed)
    if wanted * 2 >= span:
        return low + rng.permutation(span)[:wanted]
    draws = rng.integers(low, high, size=wanted, endpoint=True, dtype=np.int64)
    _, first = np.unique(draws, return_index=True)
    return draws[np.sort(first)]  # distinct, in the order drawn


def _by_rowid(conn: Connection, table: Table, rowid: ColumnElement[Any], row_count: int,
              sample_rows: int, low: int, high: int) -> Iterator[Sequence[Row[Any]]]:
    ids = draw_ids(low, high, row_count, sample_rows)
    chosen = select(table).where(rowid.in_(bindparam("ids", expanding=True)))
    left = sample_rows
    for start in range(0, len(ids), ID_CHUNK):
        chunk = np.sort(ids[start:start + ID_CHUNK]).tolist()
        rows = conn.execute(chosen, {"ids": chunk}).all()
        if rows:
            yield rows[:left]
            left -= min(left, len(rows))
        if left <= 0:
            return


def _rowid_range(conn: Connection, table: Table) -> tuple[ColumnElement[Any], int, int] | None:
    rowid = _rowid_column(table)
    if rowid is None:
        return None
    try:
        low, high = conn.execute(select(func.min(rowid), func.max(rowid)).select_from(table)).one()
    except DBAPIError:  # WITHOUT ROWID: "no such column"
        conn.rollback()
        return None
    if not isinstance(low, int) or not isinstance(high, int):
        return None
    return rowid, low, high


def sample_batches(
    conn: Connection, table: Table, row_count: int, sample_rows: int, chunk_rows: int,
    is_view: bool,
) -> tuple[str, Iterator[Sequence[Row[Any]]]]:
    """How the sample is drawn (``bernoulli``, ``rowid`` or ``first rows``) and its rows, in
    chunks (see the module docstring)."""
    dialect = conn.dialect.name
    if not is_view and dialect == "postgresql":
        return "bernoulli", _bernoulli(conn, table, row_count, sample_rows, chunk_rows)
    if not is_view and dialect == "sqlite":
        found = _rowid_range(conn, table)
        if found is not None:
            rowid, low, high = found
            return "rowid", _by_rowid(conn, table, rowid, row_count, sample_rows, low, high)
    return "first rows", first_rows(conn, table, sample_rows, chunk_rows)
