"""What browsing and profiling produce: plain, typed dataclasses with no I/O.

The store turns these into data resources and fields; nothing here knows about the store, HTTP
or jobs.

Data types (``DataType``) are the catalog's portable vocabulary, mapped from every source:

=========  ==================================  ===========================  ===============
type       CSV / TSV text (inferred)           JSON values                  Arrow / SQL
=========  ==================================  ===========================  ===============
STRING     anything else; ``007`` (leading 0)  strings, mixed types         text, varchar
LONG       ``-12``, ``42`` (fits 64 bits)      integers                     integers
DOUBLE     ``1.5``, ``1e5``; ints with floats  numbers with a fraction      float, decimal
BOOLEAN    ``true`` / ``false`` (any case)     ``true`` / ``false``         boolean
DATE       ``2024-01-31``                      ``"2024-01-31"``             date
TIMESTAMP  ``2024-01-31 10:00:00[.f][Z|+hh]``  ISO-8601 date-time strings   timestamp
BINARY     never                               never                        binary, blob
ARRAY      never                               arrays                       list, ARRAY
STRUCT     never                               ``{}`` (others flattened)    struct, map, JSON
=========  ==================================  ===========================  ===============

A column whose values are all null is STRING. Time-of-day and interval columns are STRING.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from catalog_nb.contract import ResourceType

if TYPE_CHECKING:
    from catalog_nb.server.profiling.sketch import ValueSketch


#: Told how far a resource has been read: bytes of a file or collection, rows of a table
#: (cumulative, never decreasing). Profiling calls it from the thread that reads.
ReadProgress = Callable[[int], None]


class DataType(StrEnum):
    """The data type of a field (see the module docstring for the mapping)."""

    STRING = "STRING"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    BOOLEAN = "BOOLEAN"
    DATE = "DATE"
    TIMESTAMP = "TIMESTAMP"
    BINARY = "BINARY"
    ARRAY = "ARRAY"
    STRUCT = "STRUCT"


class FileFormat(StrEnum):
    """File formats the profiler reads (``fileFormat`` of a resource)."""

    CSV = "csv"
    TSV = "tsv"
    JSONL = "jsonl"
    JSON = "json"
    PARQUET = "parquet"


class ResourceState(StrEnum):
    """``resourceState`` of a profiled resource."""

    OK = "OK"
    ERROR = "ERROR"


class ProfilingError(Exception):
    """A data source cannot be browsed or profiled (connection refused, unknown table...).

    The message is a sentence a user can act on; it never contains a password.
    """


@dataclass
class FieldProfile:
    """One field (column) of a resource and its statistics.

    ``properties`` holds JSON-safe values under the spec's property names:

    * always: ``density`` (non-null share 0-1, None when there are no rows), ``valueCount``
      (non-null values), ``nullCount``, ``distinctCount`` and ``distinctCountApproximate``.
      When every row fits the sample the distinct count is exact; otherwise it comes from the
      value sketch over every row: exact (flag False) when the field has fewer than k = 256
      distinct values, estimated within about 6 % (flag True) otherwise - the sketch counts
      trimmed, lower-cased values. ``sampled`` says whether the sample-based statistics below
      saw only part of the rows, ``sampleSize`` how many rows that sample holds;
    * orderable types (numbers, dates, timestamps, strings): ``min`` and ``max`` over every row
      read (dates and timestamps as ISO-8601 text, long strings cut to 100 characters);
    * numbers: ``mean``;
    * strings: ``minLength`` and ``maxLength`` (characters);
    * scalar types, from the sample: ``mostFrequent`` (top 10 ``{value, count}``, most frequent
      first, ties by value) and ``patterns`` (top 5 ``{pattern, count}`` shapes: A-Z -> ``A``,
      a-z -> ``a``, digits -> ``9``, anything else kept; runs are not collapsed, so ``AAA-999``
      says three letters, a dash and three digits; patterns are cut to 40 characters plus ``…``).

    ``sketch`` is the field's value sketch for join and tag discovery (None for ARRAY, STRUCT and
    BINARY fields).
    """

    name: str
    data_type: DataType
    nullable: bool
    properties: dict[str, Any] = field(default_factory=dict)
    sketch: ValueSketch | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form (the sketch in its own JSON form)."""
        return {
            "name": self.name,
            "dataType": self.data_type.value,
            "nullable": self.nullable,
            "properties": dict(self.properties),
            "sketch": self.sketch.to_dict() if self.sketch is not None else None,
        }


@dataclass
class ResourceProfile:
    """A data resource found by browsing, completed by profiling.

    Browsing fills what is cheap to know (path, name, type, format, size, times, members, and for
    CSV the sniffed separator/header/encoding); ``row_count`` and ``fields`` stay empty until the
    resource is profiled. ``path`` is relative to the browsed root (POSIX separators, ``.`` for the
    root itself) for files, and ``schema.table`` for SQL tables and views.

    ``header_row`` is the 1-based line number of the header row, 0 when the file has none.
    ``created_ms``/``modified_ms`` are epoch milliseconds of the file (creation falls back to the
    inode change time where the file system keeps no birth time). ``extra`` holds source-specific
    details: for SQL ``databaseName``, ``dataSchemaName``, ``tableName``, ``tableType``,
    ``primaryKey``, ``foreignKeys`` (``[{columns, referredSchema, referredTable,
    referredColumns}]``) and ``viewDefinition``; for files ``raggedRows``, ``badRecords`` and
    ``warnings`` when reading had to skip or repair something.
    """

    path: str
    name: str
    resource_type: str = ResourceType.FILE.value
    file_format: str | None = None
    separator: str | None = None
    header: bool = False
    header_row: int = 0
    encoding: str | None = None
    row_count: int | None = None
    resource_size: int | None = None
    field_count: int | None = None
    fields: list[FieldProfile] = field(default_factory=list)
    partition_count: int = 0
    members: list[str] = field(default_factory=list)
    created_ms: int | None = None
    modified_ms: int | None = None
    state: str = ResourceState.OK.value
    error_msg: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def fail(self, message: str) -> ResourceProfile:
        """Mark this resource as not profiled (``state`` ERROR) and return it."""
        self.state = ResourceState.ERROR.value
        self.error_msg = message
        return self

    def field(self, name: str) -> FieldProfile:
        """The field called ``name`` (KeyError when there is none)."""
        for candidate in self.fields:
            if candidate.name == name:
                return candidate
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe form with the spec's property names."""
        return {
            "resourcePath": self.path,
            "name": self.name,
            "resourceType": self.resource_type,
            "fileFormat": self.file_format,
            "separator": self.separator,
            "header": self.header,
            "headerRow": self.header_row,
            "encoding": self.encoding,
            "rowCount": self.row_count,
            "resourceSize": self.resource_size,
            "fieldCount": self.field_count,
            "fields": [f.to_dict() for f in self.fields],
            "partitionCount": self.partition_count,
            "members": list(self.members),
            "timeOfResourceCreation": self.created_ms,
            "timeOfResourceChange": self.modified_ms,
            "resourceState": self.state,
            "errorMsg": self.error_msg,
            "extra": dict(self.extra),
        }
