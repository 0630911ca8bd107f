"""The search facets (docs/search-api.md): their names, display names and kinds.

Kinds say how ``store.search`` counts and filters a facet:

* ``column``: a property of the resource row (or its data source); the sensitivity is one too,
  kept on the row by the index refresh;
* ``bits``: the field data types, kept on the resource row by the index refresh as a bit mask
  (:data:`FIELD_TYPE_BITS`): a resource is in every category whose bit it holds;
* ``derived``: categories kept per resource in ``search_facet_values`` by the index refresh
  (tags, custom property values);
* ``bucket``: ranges over a resource property (size, last modification);
* ``folder``: virtual folders, matched by their path specifications.

Custom properties marked ``facetAble`` are facets too, named ``cp.<name>``.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalog_nb.contract import ResourceType, Sensitivity
from catalog_nb.server.profiling.model import DataType

MB = 1024 * 1024
DAY_MS = 86_400_000

#: (category, upper bound in bytes) of the size ranges; above the last: ``>1 GB``.
SIZE_RANGES = (("<1 MB", MB), ("1-10 MB", 10 * MB), ("10-100 MB", 100 * MB),
               ("100 MB-1 GB", 1024 * MB))
SIZE_ABOVE, UNKNOWN = ">1 GB", "unknown"
#: (category, age in milliseconds) of the last-modified ranges; beyond the last: ``older``.
AGE_RANGES = (("last day", DAY_MS), ("last week", 7 * DAY_MS), ("last month", 30 * DAY_MS),
              ("last year", 365 * DAY_MS))
AGE_ABOVE = "older"
NO_SENSITIVITY = "NONE"
CUSTOM_PREFIX = "cp."
#: Resource types are shown without it (``resource_type_file`` is ``file``).
TYPE_PREFIX = "resource_type_"


#: The bit of each field data type in ``data_resources.facet_field_types`` (a stored format:
#: new types take new bits, existing ones never move).
FIELD_TYPE_BITS = {t.value: 1 << i for i, t in enumerate(DataType)}


@dataclass(frozen=True)
class Facet:
    """One facet: ``name`` on the wire, ``kind`` (see the module docstring), ``fixed``: its
    complete list of categories when known in advance (others are what the catalog holds)."""

    name: str
    display_name: str
    kind: str
    fixed: tuple[str, ...] | None = None
    #: the ``search_facet_values.facet`` of a derived facet
    stored: str | None = None


BUILT_IN: tuple[Facet, ...] = (
    Facet("dataSource", "Data source", "column"),
    Facet("resourceType", "Resource type", "column",
          tuple(t.value.removeprefix(TYPE_PREFIX) for t in ResourceType)),
    Facet("fileFormat", "File format", "column", ("csv", "tsv", "jsonl", "json", "parquet")),
    Facet("tag", "Tag", "derived", stored="tag"),
    Facet("owner", "Owner", "column"),
    Facet("sensitivity", "Sensitivity", "column",
          (*(s.value for s in Sensitivity), NO_SENSITIVITY)),
    Facet("virtualFolder", "Virtual folder", "folder"),
    Facet("fieldDataType", "Field data type", "bits", tuple(t.value for t in DataType)),
    Facet("sizeRange", "Size", "bucket",
          (*(c for c, _ in SIZE_RANGES), SIZE_ABOVE, UNKNOWN)),
    Facet("lastModified", "Last modified", "bucket",
          (*(c for c, _ in AGE_RANGES), AGE_ABOVE, UNKNOWN)),
)


def custom_facet(property_key: str, name: str, display_name: str | None) -> Facet:
    """The facet of a facetAble custom property."""
    return Facet(f"{CUSTOM_PREFIX}{name}", display_name or name, "derived",
                 stored=stored_custom(property_key))


def stored_custom(property_key: str) -> str:
    """The ``search_facet_values.facet`` of a custom property's values."""
    return f"cp:{property_key}"

