"""Build the demo data lake: a small retailer's files and SQL databases, with their ground truth.

``build_lake(target)`` writes, deterministically for a seed and scale (same bytes every time)::

    <target>/truth.json                 the ground truth (``catalog_nb.demo.truth.LakeTruth``)
    <target>/files/                     the FILE data source
        crm/customers.csv               CRM export of sales.customers, columns renamed
        crm/customers_clean.csv         a cleaned subset of customers.csv
        hr/employees.csv                HR export: ';'-separated, cp1252, CRLF
        sales/orders/YYYY-MM.csv        monthly partitions of one orders export
        finance/payments.parquet        card / transfer / cash payments
        finance/payments_2024.csv       payments.parquet filtered to 2024, as CSV
        web/access_log.jsonl            web server log, nested JSON lines
        ref/stores.json                 a JSON array of shops, nested objects
    <target>/sql/                       the SQL data source (see ``lake_sql``)
        company.sqlite3 (empty main), sales.sqlite3, hr.sqlite3

Sensitive values hide under non-obvious names (``contact``, ``reach_no``, ``ident``, ``pan_ref``,
``client.ip``...), next to decoys that look alike (order numbers, product codes, loyalty numbers,
16-digit references that fail Luhn, four-part app versions). File times are fixed too, sources
older than what derives from them, so change detection and lineage inference see a stable lake.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from catalog_nb.demo.lake_data import Company, generate_company
from catalog_nb.demo.lake_layout import (
    DERIVATIONS,
    FILE_FORMATS,
    JOIN_DOMAINS,
    SENSITIVE,
    file_frames,
)
from catalog_nb.demo.lake_sql import (
    MAIN_DB,
    SCHEMA_FILES,
    TABLE_KEYS,
    VIEWS,
    read_sql_resources,
    split_attachments,
    sqlite_engine_with_schemas,
    sqlite_url,
    write_databases,
)
from catalog_nb.demo.truth import (
    TRUTH_FILE,
    ColumnTruth,
    DerivationTruth,
    JoinTruth,
    LakeTruth,
    PartitionTruth,
    ResourceTruth,
    SqlTruth,
    original_side,
)

__all__ = [
    "LakeTruth",
    "build_lake",
    "lake_sources",
    "load_truth",
    "split_attachments",
    "sql_url",
    "sqlite_engine_with_schemas",
]

FILES_DIR = "files"
SQL_DIR = "sql"
# The lake's clock: every file time is fixed relative to this instant.
LAKE_TIME = datetime(2025, 1, 31, tzinfo=UTC)
_PAYMENTS_SCHEMA = pa.schema([
    ("payment_id", pa.int64()), ("order_no", pa.string()), ("customer_id", pa.int64()),
    ("paid_at", pa.timestamp("ms")), ("method", pa.string()), ("pan_ref", pa.string()),
    ("acct", pa.string()), ("origin", pa.string()), ("amount", pa.float64()),
    ("currency", pa.string()), ("txn_ref", pa.string()),
])


def build_lake(target: Path, *, seed: int = 7, scale: float = 1.0) -> LakeTruth:
    """Build the demo lake in ``target`` and return its ground truth.

    ``scale`` multiplies row counts (1.0: about 3,000 customers and 14,000 orders, a few
    seconds; 0.1 for tests). Rebuilding over an existing lake replaces it; the new lake is
    built beside it and swapped in, so a failed build leaves the old one intact. A non-empty
    folder that is not a lake (no ``truth.json``) is refused rather than deleted.
    """
    target = Path(target)
    if scale <= 0:
        raise ValueError(f"scale must be positive, not {scale}")
    if target.exists() and (not target.is_dir() or (
            any(target.iterdir()) and not (target / TRUTH_FILE).is_file())):
        raise FileExistsError(f"{target} exists and is not a demo lake; refusing to replace it")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.building")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        truth = _build_into(staging, seed, scale)
        if target.exists():
            retired = target.with_name(f".{target.name}.retired")
            shutil.rmtree(retired, ignore_errors=True)
            target.rename(retired)
            staging.rename(target)
            shutil.rmtree(retired)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return truth


def load_truth(target: Path) -> LakeTruth:
    """The ground truth of the lake built in ``target``."""
    return LakeTruth.from_json((Path(target) / TRUTH_FILE).read_text(encoding="utf-8"))


def sql_url(target: Path) -> str:
    """The SQLAlchemy URL of the lake's SQL source (open it with ``sqlite_engine_with_schemas``)."""
    return sqlite_url(Path(target).resolve() / SQL_DIR / MAIN_DB, SCHEMA_FILES)


def lake_sources(target: Path) -> list[dict[str, Any]]:
    """Data source definitions (``/datasource`` payloads) for the lake's two sources."""
    folder = Path(target).resolve()
    return [
        {"name": "demo_files", "sourceType": "FILE", "uri": str(folder / FILES_DIR),
         "description": "Acme Outfitters data lake: CRM, HR, sales, finance and web files"},
        {"name": "demo_sql", "sourceType": "SQL", "uri": sql_url(folder),
         "description": "Acme Outfitters operational database (schemas sales and hr)"},
    ]


def _build_into(root: Path, seed: int, scale: float) -> LakeTruth:
    company = generate_company(seed, scale)
    frames = file_frames(company)
    partitions = _write_files(root / FILES_DIR, company, frames)
    write_databases(root / SQL_DIR, company)
    frames.update(read_sql_resources(root / SQL_DIR))
    derivations = tuple(DerivationTruth(*spec) for spec in DERIVATIONS)
    truth = LakeTruth(
        seed=seed, scale=scale, files_root=FILES_DIR,
        sql=SqlTruth(main=f"{SQL_DIR}/{MAIN_DB}",
                     schemas={name: f"{SQL_DIR}/{file}" for name, file in SCHEMA_FILES.items()}),
        resources=tuple(_resource(path, frame, partitions.get(path, ()))
                        for path, frame in frames.items()),
        joins=tuple(_joins(frames, derivations)),
        derivations=derivations,
        views=VIEWS,
    )
    (root / TRUTH_FILE).write_text(truth.to_json(), encoding="utf-8")
    _fix_times(root, partitions)
    return truth


def _write_files(folder: Path, company: Company,
                 frames: dict[str, pd.DataFrame]) -> dict[str, tuple[PartitionTruth, ...]]:
    """Write every file; returns the partitions of the partitioned folders."""
    for sub in ("crm", "hr", "sales/orders", "finance", "web", "ref"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    for path in ("crm/customers.csv", "crm/customers_clean.csv", "finance/payments_2024.csv"):
        frames[path].to_csv(folder / path, index=False, lineterminator="\n")
    # A Windows-made HR export: semicolons, cp1252 (accented names) and CRLF line ends.
    frames["hr/employees.csv"].to_csv(folder / "hr/employees.csv", index=False, sep=";",
                                      encoding="cp1252", lineterminator="\r\n")
    orders = frames["sales/orders"]
    months = orders["ordered_at"].str.slice(0, 7)
    parts = []
    for month in sorted(months.unique()):
        member = f"sales/orders/{month}.csv"
        chunk = orders[months == month]
        chunk.to_csv(folder / member, index=False, lineterminator="\n")
        parts.append(PartitionTruth(path=member, row_count=len(chunk)))
    payments = frames["finance/payments.parquet"]
    table = pa.Table.from_pandas(payments.assign(paid_at=pd.to_datetime(payments["paid_at"])),
                                 schema=_PAYMENTS_SCHEMA, preserve_index=False)
    pq.write_table(table, folder / "finance/payments.parquet", compression="snappy")
    with (folder / "web/access_log.jsonl").open("w", encoding="utf-8", newline="\n") as out:
        out.writelines(json.dumps(event, ensure_ascii=False) + "\n" for event in company.weblog)
    (folder / "ref/stores.json").write_text(
        json.dumps(company.stores, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"sales/orders": tuple(parts)}


def _keys(values: pd.Series) -> set[str]:
    """Distinct non-null values as strings, so that 42, 42.0 and "42" compare equal."""
    found = set()
    for value in values.dropna():
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        found.add(str(value))
    return found


def _column(path: str, name: str, values: pd.Series) -> ColumnTruth:
    distinct = len(_keys(values))
    present = int(values.notna().sum())
    return ColumnTruth(name=name, kind=SENSITIVE.get(path, {}).get(name),
                       nullable=present < len(values), unique=present > 0 and distinct == present,
                       distinct=distinct)


def _resource(path: str, frame: pd.DataFrame,
              partitions: tuple[PartitionTruth, ...]) -> ResourceTruth:
    for name in SENSITIVE.get(path, {}):
        if name not in frame.columns:
            raise AssertionError(f"truth names {path}.{name}, which the lake does not have")
    columns = tuple(_column(path, str(name), frame[name]) for name in frame.columns)
    if "/" in path:
        file_format, encoding, separator = FILE_FORMATS[path]
        return ResourceTruth(path=path, source_type="FILE",
                             resource_type="collection" if partitions else "file",
                             row_count=len(frame), columns=columns, file_format=file_format,
                             encoding=encoding, separator=separator, partitions=partitions)
    keys = TABLE_KEYS.get(path)
    return ResourceTruth(path=path, source_type="SQL",
                         resource_type="table" if keys else "view", row_count=len(frame),
                         columns=columns, primary_key=keys[0] if keys else ())


def _declared(left: tuple[str, str], right: tuple[str, str]) -> bool:
    _, foreign_keys = TABLE_KEYS.get(right[0], ((), []))
    return any(cols == (right[1],) and table == left[0] and refs == (left[1],)
               for cols, table, refs in foreign_keys)


#: Share of the other side's distinct values a key must hold to join them: a lookup that
#: misses more than one value in five (the top ten customers against every order) is no key
#: of those values.
HOLDS = 0.8


def _joins(frames: dict[str, pd.DataFrame],
           derivations: Iterable[DerivationTruth]) -> Iterable[JoinTruth]:
    """The joins of issue 14: per key domain, each pair of partners (copy groups, named by
    their originals) where one side is unique and holds the other's values, key side first.
    Copies are lineage (never paired with each other); two foreign keys (N:M) are no join."""
    derivations = tuple(derivations)
    for domain, members in JOIN_DOMAINS.items():
        # Copies of one column collapse onto the original's column: one join per partner.
        sides = list(dict.fromkeys(
            (resource, columns[0]) for resource, columns in
            (original_side(derivations, path, [column]) for path, column in members)))
        keys = {side: _keys(frames[side[0]][side[1]]) for side in sides}
        unique = {side: frames[side[0]][side[1]].dropna().is_unique for side in sides}
        for first, second in combinations(sides, 2):
            declared = _declared(first, second) or _declared(second, first)
            if first[0] == second[0] and not declared:
                continue  # two columns of one table join only through a declared self-FK
            shared = keys[first] & keys[second]
            if not shared:
                continue
            # the share of each side's values the other side, when unique, holds
            held = {side: len(shared) / len(keys[side]) if unique[other] else 0.0
                    for side, other in ((first, second), (second, first))}
            left, right = (first, second) if held[second] >= held[first] else (second, first)
            if held[right] < HOLDS and not declared:
                continue  # no key side holding the other's values: N:M or a partial lookup
            yield JoinTruth(
                domain=domain, left=left[0], left_columns=(left[1],), right=right[0],
                right_columns=(right[1],), cardinality="1:1" if unique[right] else "1:N",
                declared_fk=_declared(left, right),
                left_in_right=round(len(shared) / len(keys[left]), 4),
                right_in_left=round(len(shared) / len(keys[right]), 4),
            )


def _fix_times(root: Path, partitions: dict[str, tuple[PartitionTruth, ...]]) -> None:
    """Give every file a fixed time: databases oldest, then exports, then derived files."""
    def stamp(path: Path, moment: datetime) -> None:
        seconds = moment.timestamp()
        os.utime(path, (seconds, seconds))

    for file in SCHEMA_FILES.values():
        stamp(root / SQL_DIR / file, LAKE_TIME - timedelta(days=20))
    stamp(root / SQL_DIR / MAIN_DB, LAKE_TIME - timedelta(days=20))
    files = root / FILES_DIR
    for path in ("crm/customers.csv", "hr/employees.csv", "finance/payments.parquet",
                 "web/access_log.jsonl", "ref/stores.json"):
        stamp(files / path, LAKE_TIME - timedelta(days=10))
    for path in ("crm/customers_clean.csv", "finance/payments_2024.csv"):
        stamp(files / path, LAKE_TIME - timedelta(days=2))  # derived from the files above
    for part in partitions["sales/orders"]:
        year, month = map(int, Path(part.path).stem.split("-"))
        closed = datetime(year + month // 12, month % 12 + 1, 1, 2, tzinfo=UTC)
        stamp(files / part.path, closed)  # each month's file was written when it closed
    stamp(root / TRUTH_FILE, LAKE_TIME)
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        stamp(folder, LAKE_TIME)
    stamp(root, LAKE_TIME)
