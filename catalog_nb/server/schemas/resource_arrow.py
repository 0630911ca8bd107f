"""The Arrow layout of a metadata page: ``GET /dataresource/metadata`` asked for with
``Accept: application/vnd.apache.arrow.stream`` (``contract.ARROW_STREAM``).

The page is one Arrow IPC stream of one record batch: a row per resource, a column per wire
property asked for (``properties=``; every property without it), in the order of the JSON
form, holding the values the JSON form holds. The JSON page's other members (``totalCount``,
``start``, ``pageSize``, ``nextCursor``) are the schema's metadata under
``contract.ARROW_PAGE_METADATA``, as a JSON object; the ``Link`` header is the JSON page's.

Its buffers are LZ4-compressed (Arrow's own compression, which every reader decodes).
Column types, the same on every page: text is ``utf8``; counts and times (epoch milliseconds)
``int64``; ratings and scores ``float64``; flags ``bool``; lists of text (virtual folders,
member paths) ``list<utf8>``; every other list or object (custom properties, inferred keys,
detailed status...) its JSON text, as the canonical ``arrow.json`` extension type. A missing
value is null.

Why: a page is built a column at a time (no JSON object per row, in the database or in
Python), pages may be ten times larger, and the client turns it into typed pandas columns
without decoding a value (see ``client/resources/arrow_frame.py``): 100,000 resources into the
frame in half the time of the JSON pages. Views (fields, tags) are JSON only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa

from catalog_nb.contract import ARROW_PAGE_METADATA
from catalog_nb.server.responses import dumps
from catalog_nb.server.schemas.resources import Shaping
from catalog_nb.server.store.resources import WIRE_COLUMNS, WIRE_KINDS

__all__ = ["OWN_KINDS", "arrow_page"]

#: What each property built in Python (``schemas.resources.OWN``) holds, as ``WIRE_KINDS``
#: says it for those the database builds; ``strings`` is a list of text.
OWN_KINDS: dict[str, str] = {
    "score": "float", "customProperties": "json", "canRunJob": "bool", "dataSetMember": "bool",
    "favorite": "bool", "processedTime": "int", "averageRating": "float", "ratingCount": "int",
    "dataSourceUri": "string", "runId": "string", "sensitivity": "string",
    "dataSetVirtualFolders": "strings", "joinConditions": "json", "detailedStatus": "json",
    "memberPaths": "strings", "sourceDetails": "json",
}

_JSON = pa.json_(pa.string())
_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
    "strings": pa.list_(pa.string()), "json": _JSON,
}


#: A page's buffers are LZ4-compressed (a third of the bytes for a third of a millisecond a
#: page; gzip took 3 ms), so the answer is left out of HTTP compression (server/app.py).
_COMPRESSED = pa.ipc.IpcWriteOptions(compression="lz4")


def _constant_kind(value: Any) -> str:
    """The kind of a property that is the same on every resource (``Shaping.same``)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "strings"
    if isinstance(value, list | dict):
        return "json"
    return "string"  # text, or null: no such property is ever filled with anything else


#: The JSON of the empty values most resources have (no custom values, no details).
_EMPTY: dict[type, str] = {tuple: "[]", list: "[]", dict: "{}"}


def _array(kind: str, values: Sequence[Any], *, json_text: bool = False) -> pa.Array:
    """The Arrow array of a column's values; ``json_text``: JSON values are text already."""
    if kind == "json":
        texts = values if json_text else [
            _EMPTY[type(v)] if not v and type(v) in _EMPTY else dumps(v).decode()
            for v in values]
        return pa.ExtensionArray.from_storage(_JSON, pa.array(texts, pa.string()))
    if kind == "bool":
        # SQLite reads a flag as 0 or 1.
        values = [None if v is None else bool(v) for v in values]
    return pa.array(values, _TYPES[kind])


def arrow_page(rows: Sequence[Mapping[str, Any]], ctx: Shaping, paging: Mapping[str, Any]
               ) -> bytes:
    """The Arrow IPC stream of a metadata page of ``rows`` (read ``separate``, see
    ``store.resources.query_page``) shaped with ``ctx``; ``paging`` is the JSON page's
    ``totalCount``, ``start``, ``pageSize`` and ``nextCursor``.

    Example (what a client reads)::

        table = pyarrow.ipc.open_stream(body).read_all()
        json.loads(table.schema.metadata[b"catalog_nb.page"])["nextCursor"]
    """
    wanted = ctx.properties
    names = [name for name in WIRE_COLUMNS if wanted is None or name in wanted]
    # Each row's wire values are one tuple (store.resources.rows_of): columns in one step.
    columns = list(zip(*(row["wire"] for row in rows), strict=True)) or [() for _ in names]
    arrays = [_array(WIRE_KINDS[name], values, json_text=True)
              for name, values in zip(names, columns, strict=True)]
    for name, value in ctx.same.items():
        # The same on every row: a JSON value is encoded once.
        kind = _constant_kind(value)
        json_text = kind == "json"
        names.append(name)
        arrays.append(_array(kind, [dumps(value).decode() if json_text else value] * len(rows),
                             json_text=json_text))
    own: list[tuple[str, Callable[[Mapping[str, Any], Shaping], Any]]] = ctx.own
    for name, build in own:
        names.append(name)
        arrays.append(_array(OWN_KINDS[name], [build(row, ctx) for row in rows]))
    schema = pa.schema([pa.field(n, a.type) for n, a in zip(names, arrays, strict=True)],
                       metadata={ARROW_PAGE_METADATA: dumps(dict(paging))})
    batch = pa.record_batch(arrays, schema=schema)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, schema, options=_COMPRESSED) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()
