"""Metadata pages in the Arrow layout, and the frame of :meth:`Catalog.resources` built from
them.

Where pyarrow is installed, :meth:`Catalog.resources` asks for its pages as Arrow IPC streams
(``Accept: application/vnd.apache.arrow.stream``, JSON still accepted: a service without the
Arrow layout answers JSON and the frame is built from that as ever). Such a page holds a column
per property (``server/schemas/resource_arrow.py``); the frame's columns are made from those
columns whole, never a value at a time: the frame of 100,000 resources in a few tenths of a
second instead of the seconds decoding their JSON took. The frame is the one
:func:`~catalog_nb.client.resources.frames.resources_frame` builds from the JSON records (the
tests compare the two).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.errors import CatalogError
from catalog_nb.client.frames import CatalogFrame, Column, to_frame
from catalog_nb.client.resources.frames import (
    RESOURCE_COLUMNS,
    custom_columns,
    resources_frame,
    short_type,
)

__all__ = ["ACCEPT", "ArrowRows", "arrow_available", "decode_page", "is_arrow",
           "number_series", "resources_frame_of"]

#: The ``Accept`` of a metadata page read for a frame: Arrow, else JSON.
ACCEPT = f"{contract.ARROW_STREAM}, application/json;q=0.5"


def arrow_available() -> bool:
    """Whether pyarrow is installed (the Arrow layout is asked for only then)."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        return False
    return True


class ArrowRows(Sequence[dict[str, Any]]):
    """The resources of an Arrow page, as the ``list`` of a page: its length is the table's
    rows, and a row is read as a dict only when asked for (the frame never asks)."""

    def __init__(self, table: Any) -> None:
        self.table = table

    def __len__(self) -> int:
        return int(self.table.num_rows)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if not -len(self) <= index < len(self):
            raise IndexError(index)
        return dict(self.table.slice(index % len(self), 1).to_pylist()[0])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        yield from self.table.to_pylist()


def is_arrow(response: Any) -> bool:
    """Whether an HTTP answer is in the Arrow layout (its ``Content-Type``)."""
    content_type = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    return bool(content_type == contract.ARROW_STREAM)


def decode_page(response: Any, decode: Any) -> Any:
    """A metadata page of either layout: an Arrow stream as ``{list: ArrowRows, totalCount,
    start, pageSize, nextCursor}``, anything else as ``decode`` (the JSON decoder) reads it."""
    if not is_arrow(response):
        return decode(response)
    import pyarrow

    try:
        table = pyarrow.ipc.open_stream(response.content).read_all()
        paging = json.loads((table.schema.metadata or {})[
            contract.ARROW_PAGE_METADATA.encode()])
    except (pyarrow.ArrowException, KeyError, ValueError) as exc:
        raise CatalogError(f"The catalog answered an unreadable Arrow page: {exc}",
                           status=response.status_code, response=response) from exc
    return {**paging, "list": ArrowRows(table)}


def number_series(kind: str, chunked: Any, index: pd.RangeIndex) -> pd.Series:
    """The typed column (as :func:`frames.to_frame` types it) of an Arrow array of numbers:
    ``int``, ``float``, ``bool``, or ``time`` (epoch milliseconds)."""
    import pyarrow

    values = chunked.combine_chunks() if isinstance(chunked, pyarrow.ChunkedArray) else chunked
    mask = values.is_null().to_numpy(zero_copy_only=False)
    data = values.fill_null(False if kind == "bool" else 0).to_numpy(zero_copy_only=False)
    if kind == "bool":
        return pd.Series(pd.arrays.BooleanArray(data, mask), index=index)
    if kind == "float":
        return pd.Series(pd.arrays.FloatingArray(data.astype("float64"), mask), index=index)
    millis = pd.Series(pd.arrays.IntegerArray(data.astype("int64"), mask), index=index)
    if kind == "int":
        return millis
    return pd.to_datetime(millis, unit="ms", utc=True).astype("datetime64[ns, UTC]")


def _text_series(chunked: Any, index: pd.RangeIndex) -> pd.Series:
    import pyarrow

    if pd.StringDtype().storage == "pyarrow":
        strings = chunked.cast(pyarrow.large_string())
        return pd.Series(pd.arrays.ArrowStringArray(strings), index=index)
    return pd.Series(chunked.to_pylist(), dtype="string", index=index)


def _json_values(chunked: Any) -> list[Any]:
    """The decoded values of a column of JSON texts, each distinct text decoded once (most
    resources share a handful): the texts never become Python strings one by one."""
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(chunked.combine_chunks()
                                   if hasattr(chunked, "combine_chunks") else chunked)
    decoded = [None if text is None else json.loads(text)
               for text in encoded.dictionary.to_pylist()]
    indices = encoded.indices
    if indices.null_count:
        return [None if i is None else decoded[i] for i in indices.to_pylist()]
    return [decoded[i] for i in indices.to_numpy().tolist()]


def _storage(chunked: Any) -> Any:
    """The column's values without an extension type (``arrow.json`` is text underneath)."""
    import pyarrow

    if isinstance(chunked.type, pyarrow.BaseExtensionType):
        return pyarrow.chunked_array([c.storage for c in chunked.chunks],
                                     chunked.type.storage_type)
    return chunked


def _profiled(table: Any, name: str) -> Any:
    """A count that only profiling knows: null where it is 0 and the resource was never
    profiled (``resource_frames.profiled_count``)."""
    import pyarrow
    import pyarrow.compute as pc

    values = table.column(name)
    unknown = pc.and_(pc.or_kleene(pc.is_null(values), pc.equal(values, 0)),
                      pc.is_null(table.column("timeOfLastProfile")))
    return pc.if_else(unknown, pyarrow.scalar(None, values.type), values)


def _lists(values: Sequence[Any]) -> pd.Series:
    cells = [list(v) if v is not None else [] for v in values]
    return pd.Series(cells, dtype=object, index=pd.RangeIndex(len(cells)))


def _base_series(column: Column, table: Any, index: pd.RangeIndex) -> pd.Series:
    """One of :data:`RESOURCE_COLUMNS` from the page's columns."""
    name = column.name
    if name == "type":
        kinds = table.column("resourceType").to_pylist()
        shown = {value: short_type(value) for value in set(kinds)}
        return pd.Series([shown[v] for v in kinds], dtype="string", index=index)
    if name in ("rows", "field_count"):
        wire = "rowCount" if name == "rows" else "fieldCount"
        return number_series("int", _profiled(table, wire), index)
    if name == "primary_key":
        keys = _json_values(_storage(table.column("inferredKeys")))
        return _lists([(k or {}).get("primaryKey") for k in keys])
    source = column.source if isinstance(column.source, str) else name
    chunked = table.column(source)
    if column.kind == "string":
        return _text_series(chunked, index)
    if column.kind == "list":
        return _lists(chunked.to_pylist())
    return number_series(column.kind, chunked, index)


def _custom_frame(table: Any, definitions: Sequence[Mapping[str, Any]], index: pd.RangeIndex
                  ) -> pd.DataFrame:
    """The ``cp_`` columns, built from the resources with custom values only (few, usually):
    every other row is the row of a resource without any."""
    import pyarrow.compute as pc

    texts = _storage(table.column("customProperties"))
    # Only the resources with custom values are decoded.
    customised = pc.fill_null(pc.not_equal(texts, "[]"), False)
    positions = pc.indices_nonzero(customised.combine_chunks()).to_numpy().tolist()
    values = _json_values(pc.take(texts, positions)) if positions else []
    records = [{"customProperties": value} for value in values]
    columns = custom_columns(definitions, records)
    # The customised rows, then the row of a resource without custom values, each row taken
    # from there.
    rows = pd.concat([to_frame(records, columns), to_frame([{}], columns)], ignore_index=True)
    order = [len(records)] * len(index)
    for row, position in enumerate(positions):
        order[position] = row
    frame = rows.take(order)
    frame.index = index
    for column in columns:
        if column.kind in ("list", "dict"):
            # A cell of its own in every row, as to_frame makes them.
            fresh = list if column.kind == "list" else dict
            frame[column.name] = pd.Series([fresh(c) for c in frame[column.name]],
                                           dtype=object, index=index)
    return frame


def resources_frame_of(
    tables: Sequence[Any], rows: int, definitions: Sequence[Mapping[str, Any]] | None
) -> pd.DataFrame:
    """The frame of :meth:`Catalog.resources` (without fields and tags) from Arrow pages, cut
    to the first ``rows``; ``definitions`` as :func:`resources_frame` takes them."""
    import pyarrow

    table = pyarrow.concat_tables(tables).slice(0, rows) if tables else None
    index = pd.RangeIndex(rows)
    if table is None:
        return resources_frame([], definitions=definitions)
    data = {c.name: _base_series(c, table, index) for c in RESOURCE_COLUMNS}
    frame = CatalogFrame(data, columns=list(data), index=index)
    if definitions is None:
        return frame
    custom = _custom_frame(table, definitions, index)
    return pd.concat([frame, custom], axis=1) if len(custom.columns) else frame
