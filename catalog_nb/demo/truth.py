"""The demo lake's ground truth, as plain data: what each column holds, what joins, what derives.

The lake generator (``catalog_nb.demo.lake``) writes it as ``truth.json`` next to the data; the
quality benchmarks read it back with ``load_truth`` and score the catalog's discoveries against it.

Naming resources: a file or folder is named by its POSIX path relative to the lake's FILE source
folder (``<lake>/files``), e.g. ``crm/customers.csv`` or the partitioned folder ``sales/orders``;
a table or view by ``schema.table`` (``sales.orders``). File paths always contain a ``/`` and SQL
names never do, so one string names one resource. Nested JSON fields are named with dots
(``client.ip``), as profiling flattens them.

``JoinTruth`` lists the key joins as issue 14 defines a join: identifiers and natural keys (ids,
codes, order numbers, work emails) of one domain, paired when one side is a key (unique) that
holds the other side's values. Copies are lineage, not joins: the resources a derivation links
(``DerivationTruth``: copies, subsets, filtered extracts) form one *copy group*, named by its
original (:meth:`LakeTruth.original`), and a join is listed once per pair of partners, between
the originals. Two foreign keys of one dimension (N:M, no key side) are no join. Names or
postcodes are no join keys and are not listed. ``ViewTruth.columns`` is projection lineage:
for each output column the input columns its value is computed from (columns used only in
joins, filters or grouping are not listed).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

TRUTH_FILE = "truth.json"
TRUTH_VERSION = 1

SENSITIVE_KINDS: tuple[str, ...] = (
    "email", "phone", "national_id", "payment_card", "ip_address", "iban", "date_of_birth",
    "postal_code", "person_name",
)
SourceType = Literal["FILE", "SQL"]
ResourceType = Literal["file", "collection", "table", "view"]
Cardinality = Literal["1:1", "1:N", "N:M"]
DerivationKind = Literal["subset", "copy", "filtered"]


@dataclass(frozen=True)
class ColumnTruth:
    """One column (or dotted nested field): its sensitive kind, if any, and its shape."""

    name: str
    kind: str | None
    nullable: bool
    unique: bool
    distinct: int


@dataclass(frozen=True)
class PartitionTruth:
    """One member file of a partitioned folder."""

    path: str
    row_count: int


@dataclass(frozen=True)
class ResourceTruth:
    """One file, partitioned folder, table or view of the lake."""

    path: str
    source_type: SourceType
    resource_type: ResourceType
    row_count: int
    columns: tuple[ColumnTruth, ...]
    file_format: str | None = None  # csv | parquet | jsonl | json (FILE resources)
    encoding: str | None = None
    separator: str | None = None
    partitions: tuple[PartitionTruth, ...] = ()
    primary_key: tuple[str, ...] = ()

    def column(self, name: str) -> ColumnTruth:
        """The column called ``name``; KeyError if the resource has none."""
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"{self.path} has no column {name!r}")

    @property
    def column_names(self) -> list[str]:
        """The column names in file/table order."""
        return [column.name for column in self.columns]


@dataclass(frozen=True)
class JoinTruth:
    """Two column lists that join: ``right``'s values are keys of the same domain as ``left``'s.

    When one side is unique it is ``left``; cardinality reads left-to-right. The containment
    shares are measured on the generated data (distinct non-null values).
    """

    domain: str
    left: str
    left_columns: tuple[str, ...]
    right: str
    right_columns: tuple[str, ...]
    cardinality: Cardinality
    declared_fk: bool
    left_in_right: float
    right_in_left: float


@dataclass(frozen=True)
class DerivationTruth:
    """``derived`` was made from ``source``.

    ``kind``: ``subset`` (some rows and/or columns, values unchanged), ``filtered`` (the rows
    matching ``predicate``, every column), ``copy`` (every row, columns possibly renamed or
    another format, perhaps with columns added from elsewhere). ``columns`` maps each derived
    column to the source column whose values it carries unchanged; unmapped derived columns are
    computed or come from elsewhere.
    """

    derived: str
    source: str
    kind: DerivationKind
    columns: dict[str, str]
    predicate: str | None = None


def original_side(derivations: Iterable[DerivationTruth], resource: str,
                  columns: Iterable[str]) -> tuple[str, tuple[str, ...]]:
    """A join side named by its copy group: the derivations' original resource, the columns
    mapped up through each derivation's column map (renamed copies meet). A column that a
    derivation computed belongs to the derived resource, which then names itself."""
    up = {d.derived: d for d in derivations}
    names = tuple(columns)
    seen = set()
    while resource in up and resource not in seen:
        seen.add(resource)
        derivation = up[resource]
        if any(name not in derivation.columns for name in names):
            break
        names = tuple(derivation.columns[name] for name in names)
        resource = derivation.source
    return resource, names


@dataclass(frozen=True)
class ViewTruth:
    """A view: its SQL as stored in the database, the tables it reads, its column lineage.

    Table names inside ``sql`` are unqualified and resolve in the view's own schema (SQLite
    only lets a view read its own database); ``tables`` and ``columns`` are qualified.
    """

    view: str
    sql: str
    tables: tuple[str, ...]
    columns: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class SqlTruth:
    """Where the SQLite databases live, relative to the lake root, and how to open them."""

    main: str
    schemas: dict[str, str]
    url_hint: str = (
        "sqlite:///<lake>/sql/company.sqlite3?attach=<schema>:<file>&...; open it with "
        "catalog_nb.demo.lake.sqlite_engine_with_schemas(url)"
    )


@dataclass(frozen=True)
class LakeTruth:
    """Everything the generator knows about one lake."""

    seed: int
    scale: float
    files_root: str
    sql: SqlTruth
    resources: tuple[ResourceTruth, ...]
    joins: tuple[JoinTruth, ...]
    derivations: tuple[DerivationTruth, ...]
    views: tuple[ViewTruth, ...]
    version: int = TRUTH_VERSION
    kinds: tuple[str, ...] = field(default=SENSITIVE_KINDS)

    def resource(self, path: str) -> ResourceTruth:
        """The resource named ``path`` (file path or ``schema.table``); KeyError if unknown."""
        for resource in self.resources:
            if resource.path == path:
                return resource
        raise KeyError(f"the demo lake has no resource {path!r}")

    def column_kinds(self) -> dict[tuple[str, str], str | None]:
        """``(resource path, column) -> sensitive kind or None`` for every column of the lake."""
        return {(resource.path, column.name): column.kind
                for resource in self.resources for column in resource.columns}

    def sensitive_columns(self, kind: str | None = None) -> list[tuple[str, str, str]]:
        """``(resource path, column, kind)`` of every sensitive column (of one ``kind``)."""
        return [(path, column, found) for (path, column), found in self.column_kinds().items()
                if found is not None and (kind is None or found == kind)]

    def original(self, resource: str, columns: Iterable[str]) -> tuple[str, tuple[str, ...]]:
        """A join side named by its copy group (:func:`original_side` over these
        derivations): ``("crm/customers.csv", ["contact"])`` is ``("sales.customers",
        ("email",))``."""
        return original_side(self.derivations, resource, columns)

    def files_path(self, lake: Path) -> Path:
        """The folder to register as the lake's FILE data source."""
        return Path(lake) / self.files_root

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        return asdict(self)

    def to_json(self) -> str:
        """The truth as indented JSON text, stable for a given lake."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LakeTruth:
        """Rebuild a truth from ``to_dict()`` output (or parsed ``truth.json``)."""
        if data.get("version") != TRUTH_VERSION:
            raise ValueError(f"unsupported demo lake truth version {data.get('version')!r}")
        resources = tuple(
            ResourceTruth(
                path=item["path"], source_type=item["source_type"],
                resource_type=item["resource_type"], row_count=item["row_count"],
                columns=tuple(ColumnTruth(**column) for column in item["columns"]),
                file_format=item["file_format"], encoding=item["encoding"],
                separator=item["separator"],
                partitions=tuple(PartitionTruth(**part) for part in item["partitions"]),
                primary_key=tuple(item["primary_key"]),
            )
            for item in data["resources"]
        )
        joins = tuple(
            JoinTruth(**{**item, "left_columns": tuple(item["left_columns"]),
                         "right_columns": tuple(item["right_columns"])})
            for item in data["joins"]
        )
        views = tuple(
            ViewTruth(view=item["view"], sql=item["sql"], tables=tuple(item["tables"]),
                      columns={name: tuple(cols) for name, cols in item["columns"].items()})
            for item in data["views"]
        )
        return cls(
            seed=data["seed"], scale=data["scale"], files_root=data["files_root"],
            sql=SqlTruth(**data["sql"]), resources=resources, joins=joins,
            derivations=tuple(DerivationTruth(**item) for item in data["derivations"]),
            views=views, version=data["version"], kinds=tuple(data["kinds"]),
        )

    @classmethod
    def from_json(cls, text: str) -> LakeTruth:
        """Parse ``to_json()`` output."""
        return cls.from_dict(json.loads(text))
