"""One data resource, readable in a notebook: :class:`Resource`.

``cat.resource("demo_files", "crm/customers.csv")`` returns a :class:`Resource`. In Jupyter it
renders as a summary and a table of its fields (``_repr_html_``); in a terminal ``repr`` prints
the same as text. ``.fields`` is the frame of :data:`~catalog_nb.client.resources.frames.
FIELD_COLUMNS`, ``.inferred_keys`` the keys profiling inferred from the data, ``.joins`` its join
conditions best first, ``.raw`` the service's JSON, and ``res["rowCount"]`` reads the JSON
directly.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from catalog_nb.client.frame_display import frame_html, human_size, known_size
from catalog_nb.client.frames import to_frame
from catalog_nb.client.relations.frames import JOIN_CONDITION_COLUMNS
from catalog_nb.client.resources.frames import (
    RESOURCE_COLUMNS,
    custom_values,
    fields_frame,
    profiled_count,
    short_type,
)

__all__ = ["InferredKeys", "Resource"]

#: Field columns shown by ``repr`` and ``_repr_html_`` (``.fields`` has them all).
SUMMARY_FIELD_COLUMNS = (
    "name",
    "data_type",
    "nullable",
    "density",
    "distinct_count",
    "min",
    "max",
    "description",
)
#: Most field rows shown by ``repr`` / ``_repr_html_``.
MAX_SHOWN_FIELDS = 60


def _size(value: Any, kind: str | None, rows: int | None) -> str:
    size = known_size(value, kind, rows)
    return "unknown" if size is None else human_size(size)


def _time(value: Any) -> str | None:
    if value is None:
        return None
    return pd.Timestamp(int(value), unit="ms", tz="UTC").strftime("%Y-%m-%d %H:%M UTC")


def _short(value: Any, width: int = 40) -> Any:
    if isinstance(value, str) and len(value) > width:
        return value[: width - 1] + "…"
    return value


@dataclass(frozen=True)
class InferredKeys:
    """The keys profiling inferred from a resource's data (its ``inferredKeys``): column
    names. ``primary_key`` is one column, or empty when no column is unique (a composite key
    may still be); ``composite_keys`` are pairs unique together while neither is alone.

    Example::

        cat.resource("demo_sql", "sales.order_items").inferred_keys.composite_keys
        # [('order_id', 'line_no')]
    """

    primary_key: tuple[str, ...] = ()
    unique_columns: tuple[str, ...] = ()
    composite_keys: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def from_json(cls, raw: Any) -> InferredKeys:
        """The keys of an ``inferredKeys`` JSON (``None`` or missing parts: none)."""
        raw = raw if isinstance(raw, Mapping) else {}
        return cls(
            primary_key=tuple(map(str, raw.get("primaryKey") or ())),
            unique_columns=tuple(map(str, raw.get("uniqueColumns") or ())),
            composite_keys=tuple(tuple(map(str, pair)) for pair in raw.get("compositeKeys") or ()),
        )

    def __bool__(self) -> bool:
        return bool(self.primary_key or self.unique_columns or self.composite_keys)

    def describe(self) -> str | None:
        """One line for the resource summary: ``order_id; composite (a, b)``, or None."""
        parts = [", ".join(self.primary_key)] if self.primary_key else []
        parts += [f"composite ({', '.join(pair)})" for pair in self.composite_keys]
        return "; ".join(parts) or None


@dataclass(frozen=True, repr=False, eq=False)
class Resource(Mapping[str, Any]):
    """A data resource: ``raw`` JSON, ``fields`` frame, and a readable summary.

    It is also a read-only mapping over the JSON (``res["fileFormat"]``, ``res.get("owner")``,
    ``dict(res)``), so it can be passed wherever a resource record is accepted
    (``cat.update_resource(res, description=...)``).

    Example::

        res = cat.resource("demo_files", "crm/customers.csv")
        res                      # summary and fields table in Jupyter
        res.fields.query("density < 0.5")
        res.rows, res.custom
    """

    raw: dict[str, Any]
    fields: pd.DataFrame = field(compare=False)

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Resource:
        """A :class:`Resource` of a DataResource JSON."""
        record = dict(raw)
        return cls(record, fields_frame([record], long=False))

    # -- mapping over the JSON -----------------------------------------------------------------

    def __getitem__(self, name: str) -> Any:
        return self.raw[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    # -- the facts analysts read ---------------------------------------------------------------

    @property
    def key(self) -> str:
        """The resource key."""
        return str(self.raw.get("key"))

    @property
    def name(self) -> str | None:
        """The resource name (last part of its path)."""
        return self.raw.get("name")

    @property
    def source(self) -> str | None:
        """The name of its data source."""
        return self.raw.get("dataSourceName")

    @property
    def path(self) -> str | None:
        """Its path in the data source (``schema.table`` for SQL)."""
        return self.raw.get("resourcePath")

    @property
    def type(self) -> str | None:
        """``file``, ``collection``, ``table`` or ``view``."""
        return short_type(self.raw.get("resourceType"))

    @property
    def format(self) -> str | None:
        """File format (``csv``, ``parquet``...), ``None`` for tables."""
        return self.raw.get("fileFormat")

    @property
    def rows(self) -> int | None:
        """Row count written by profiling (``None`` before the resource is profiled)."""
        value = profiled_count(self.raw, "rowCount")
        return None if value is None else int(value)

    @property
    def custom(self) -> dict[str, Any]:
        """Custom property values, ``{name: value}``."""
        return custom_values(self.raw)

    @property
    def inferred_keys(self) -> InferredKeys:
        """The keys profiling inferred from the data (``inferredKeys``): the primary key,
        every unique column and the composite keys. A key declared by an SQL source is in
        ``raw["sourceDetails"]["primaryKey"]``."""
        return InferredKeys.from_json(self.raw.get("inferredKeys"))

    @property
    def joins(self) -> pd.DataFrame:
        """Its join conditions (``joinConditions``), one row per condition, best score first:
        the columns of :meth:`Catalog.join_conditions`."""
        frame = to_frame(list(self.raw.get("joinConditions") or []), JOIN_CONDITION_COLUMNS)
        return frame.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)

    def to_series(self) -> pd.Series:
        """The row this resource has in :meth:`Catalog.resources` (without ``cp_`` columns)."""
        return to_frame([self.raw], RESOURCE_COLUMNS).iloc[0]

    # -- display -------------------------------------------------------------------------------

    def _facts(self) -> list[tuple[str, Any]]:
        raw = self.raw
        fields = profiled_count(raw, "fieldCount")
        facts: list[tuple[str, Any]] = [
            ("type", self.type),
            ("format", self.format),
            ("rows", None if self.rows is None else f"{self.rows:,}"),
            ("fields", None if fields is None else f"{int(fields):,}"),
            ("partitions", raw.get("partitionCount") or None),
            ("size", _size(raw.get("resourceSize"), self.type, self.rows)),
            ("state", raw.get("resourceState")),
            ("status", raw.get("status")),
            ("error", raw.get("errorMsg")),
            ("inferred key", self.inferred_keys.describe()),
            ("owner", raw.get("owner")),
            ("description", raw.get("description")),
            ("modified", _time(raw.get("timeOfResourceChange"))),
            ("profiled", _time(raw.get("timeOfLastProfile"))),
        ]
        facts.extend((f"cp {name}", value) for name, value in sorted(self.custom.items()))
        return [(label, value) for label, value in facts if value not in (None, "", [])]

    def _summary_fields(self) -> pd.DataFrame:
        """The fields the reprs show, their columns of :data:`SUMMARY_FIELD_COLUMNS`, long
        values cut; dtypes kept."""
        shown = self.fields.loc[:, list(SUMMARY_FIELD_COLUMNS)].head(MAX_SHOWN_FIELDS).copy()
        for column in ("min", "max", "description"):
            shown[column] = shown[column].map(_short, na_action="ignore")
        return shown

    def _shown_fields(self) -> pd.DataFrame:
        shown = self._summary_fields()
        return shown.astype(object).where(shown.notna(), "")

    def _title(self) -> str:
        return f"{self.source}:{self.path}"

    def __repr__(self) -> str:
        lines = [f"<Resource {self._title()} key={self.key}>"]
        lines.extend(f"  {label}: {value}" for label, value in self._facts())
        if len(self.fields):
            table = self._shown_fields().to_string(index=False, na_rep="")
            lines.append("  field statistics:")
            lines.extend("    " + line for line in table.splitlines())
            hidden = len(self.fields) - MAX_SHOWN_FIELDS
            if hidden > 0:
                lines.append(f"    ... {hidden} more fields in .fields")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = "".join(
            f"<tr><th style='text-align:left'>{esc(label)}</th><td style='text-align:left'>"
            f"{esc(str(value))}</td></tr>"
            for label, value in self._facts()
        )
        parts = [
            "<div class='catalog-nb-resource'>",
            f"<h4 style='margin:0.2em 0'>{esc(str(self.name))} "
            f"<small style='font-weight:normal'>{esc(self._title())} "
            f"(key {esc(self.key)})</small></h4>",
            f"<table>{rows}</table>",
        ]
        if len(self.fields):
            # the fields' own names head their rows; numbers read as in every frame
            parts.append(frame_html(self._summary_fields().set_index("name"), shape=False))
            hidden = len(self.fields) - MAX_SHOWN_FIELDS
            if hidden > 0:
                parts.append(f"<p>... {hidden} more fields in <code>.fields</code></p>")
        parts.append("</div>")
        return "".join(parts)
