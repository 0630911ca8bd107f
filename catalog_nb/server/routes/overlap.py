"""Table overlap (the spec's /overlap/table): compare two SQL tables' schemas.

Reads only: any signed-in caller, over the tables they see. Every form resolves all its names
in a fixed number of queries (``store.overlap``) and fails whole on the first bad item.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query, Request
from fastapi.responses import Response
from sqlalchemy import Connection
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from catalog_nb.contract import ErrorCode
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.schemas import overlap as schema
from catalog_nb.server.schemas.answers import TableComparison
from catalog_nb.server.security import Caller
from catalog_nb.server.store import Store
from catalog_nb.server.store import overlap as overlap_store
from catalog_nb.server.store.visible import visibility

router = APIRouter(tags=["overlap"])

#: Largest CSV upload read (10,000 rows of long names fit comfortably).
MAX_UPLOAD_BYTES = 8 * 1024 * 1024


def _resolve(
    conn: Connection, caller: Caller, requests: list[tuple[str, schema.Request]]
) -> list[dict[str, Any]]:
    """The comparisons of labelled requests (``Item 0``, ``Line 3``...), in order."""
    vis = visibility(conn, caller.roles)
    folders: dict[str, dict[str, Any]] = {}
    names: dict[str | None, set[overlap_store.TableName]] = {}
    parsed = []
    for label, request in requests:
        with schema.where(label, **_extra(label)):
            folder_key = request.virtual_folder.casefold() if request.virtual_folder else None
            if request.virtual_folder and folder_key not in folders:
                folders[str(folder_key)] = overlap_store.folder_by_name(
                    conn, vis, request.virtual_folder)
            one = overlap_store.split_name(request.table_one)
            two = overlap_store.split_name(request.table_two)
        names.setdefault(folder_key, set()).update((one, two))
        parsed.append((label, request, folder_key, one, two))
    found = {
        folder_key: overlap_store.find_tables(
            conn, vis, wanted, folders[folder_key] if folder_key else None)
        for folder_key, wanted in names.items()
    }
    chosen: dict[tuple[str | None, overlap_store.TableName], str] = {}
    for label, request, folder_key, one, two in parsed:
        with schema.where(label, **_extra(label)):
            for name, given in ((one, request.table_one), (two, request.table_two)):
                chosen[(folder_key, name)] = _one(found[folder_key][name], given, request)
    fields = overlap_store.field_names(conn, sorted(set(chosen.values())))
    return [
        schema.comparison_out(request, schema.compare(
            fields.get(chosen[(folder_key, one)], []), fields.get(chosen[(folder_key, two)], [])))
        for _, request, folder_key, one, two in parsed
    ]


def _extra(label: str) -> dict[str, int]:
    kind, _, number = label.partition(" ")
    return {"index": int(number)} if kind == "Item" else {"line": int(number)} if number else {}


def _one(matches: list[dict[str, Any]], given: str, request: schema.Request) -> str:
    """The one table a name resolves to: 404 when none, 400 when several sources hold it."""
    scope = f" in virtual folder '{request.virtual_folder}'" if request.virtual_folder else ""
    if not matches:
        raise NotFound(f"There is no table '{given}'{scope}.", ErrorCode.TABLE_NOT_FOUND,
                       table=given)
    sources = sorted({m["source_name"] for m in matches})
    if len(matches) > 1:
        raise BadRequest(
            f"Table '{given}' is found in several data sources ({', '.join(sources)}); name a "
            "virtual folder to choose one.", ErrorCode.AMBIGUOUS_TABLE, table=given,
            sources=sources)
    return str(matches[0]["key"])


def _compare(store: Store, caller: Caller,
             requests: list[tuple[str, schema.Request]]) -> list[dict[str, Any]]:
    with store.read() as conn:
        return _resolve(conn, caller, requests)


#: ``schema.table_name``: exactly one dot, something printable on each side
#: (``store.overlap.split_name`` checks it).
_TABLE_NAME: dict[str, Any] = {"pattern": r"^[^.]*[^.\s][^.]*\.[^.]*[^.\s][^.]*$",
                               "examples": ["sales.orders"]}
#: The body of ``POST /overlap/table`` (``schema.parse_items`` checks it).
_COMPARISONS = {"requestBody": {"required": True, "content": {"application/json": {
    "schema": {
        "type": "array", "maxItems": schema.MAX_ITEMS,
        "items": {
            "type": "object", "required": ["tableOne", "tableTwo"],
            "properties": {
                "virtualFolder": {"type": ["string", "null"]},
                "tableOne": {"type": "string", **_TABLE_NAME},
                "tableTwo": {"type": "string", **_TABLE_NAME},
            },
        },
    },
    "example": [{"virtualFolder": "Finance", "tableOne": "sales.orders",
                 "tableTwo": "sales.orders_2023"}],
}}}}


@router.get("/overlap/table", responses={200: {"model": TableComparison}})
def overlap_table(
    caller: CallerDep,
    store: StoreDep,
    table1: Annotated[str, Query(min_length=1, json_schema_extra=_TABLE_NAME)],
    table2: Annotated[str, Query(min_length=1, json_schema_extra=_TABLE_NAME)],
    virtual_folder: Annotated[str | None, Query(alias="virtualFolder")] = None,
) -> JSONResponse:
    """The TableComparisionTO of two tables (``schema.table_name`` each)."""
    request = schema.Request(virtual_folder or None, table1, table2)
    with store.read() as conn:
        vis = visibility(conn, caller.roles)
        folder = overlap_store.folder_by_name(conn, vis, virtual_folder) if virtual_folder else None
        one, two = overlap_store.split_name(table1), overlap_store.split_name(table2)
        found = overlap_store.find_tables(conn, vis, [one, two], folder)
        keys = [_one(found[one], table1, request), _one(found[two], table2, request)]
        fields = overlap_store.field_names(conn, keys)
    lists = schema.compare(fields.get(keys[0], []), fields.get(keys[1], []))
    return JSONResponse(schema.comparison_out(request, lists))


@router.post("/overlap/table", status_code=201, openapi_extra=_COMPARISONS,
             responses={201: {"model": list[TableComparison]}})
def overlap_tables(
    caller: CallerDep, store: StoreDep, body: Annotated[Any, Body()] = None
) -> JSONResponse:
    """Many comparisons at once (at most 1000), answered in order; one bad item fails all."""
    requests = schema.parse_items(body)
    labelled = [(f"Item {i}", r) for i, r in enumerate(requests)]
    return JSONResponse(_compare(store, caller, labelled), status_code=201)


#: The CSV upload and the CSV answer, as the OpenAPI document says them (the route reads the
#: multipart form itself, so FastAPI cannot derive them).
_CSV_ANSWER_EXAMPLE = ("virtualFolder,tableOne,tableTwo,commonFields,tableOneUniqueFields,"
                       "tableTwoUniqueFields,overlapPercent\n"
                       ",sales.orders,sales.orders_2023,id|customer_id|total,status,region,60\n")
_CSV_UPLOAD = {
    "requestBody": {
        "required": True,
        "content": {"multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["fileStream"],
                "properties": {"fileStream": {
                    "type": "string", "format": "binary",
                    "description": "The CSV file: one comparison per line, "
                                   "virtualFolder,tableOne,tableTwo (an optional header line of "
                                   f"those names); at most {MAX_UPLOAD_BYTES} bytes.",
                }},
                "description": "Other parts (at most 10 in all) are ignored.",
            },
            "encoding": {"fileStream": {"contentType": "text/csv, text/plain, "
                                                       "application/octet-stream"}},
            "example": {"fileStream": ",sales.orders,sales.orders_2023\n"},
        }},
    },
}


@router.post(
    "/overlap/table/csv", status_code=201, response_class=Response, openapi_extra=_CSV_UPLOAD,
    responses={201: {
        "description": "The comparisons as a CSV file (overlap.csv), written with the separator.",
        "content": {"text/csv": {"schema": {"type": "string"}, "example": _CSV_ANSWER_EXAMPLE}},
        "headers": {"Content-Disposition": {"schema": {"type": "string"},
                                            "example": 'attachment; filename="overlap.csv"'}},
    }},
)
async def overlap_csv(
    request: Request,
    caller: CallerDep,
    store: StoreDep,
    separator: Annotated[str, Query(
        description="The one-character separator of the file and of the answer (not a quote "
                    "or a line break).",
        json_schema_extra={"minLength": 1, "maxLength": 1, "pattern": '^[^"\r\n]$'},
    )] = ",",
) -> Response:
    """Comparisons read from the CSV file of the multipart field ``fileStream``; answers a CSV
    file (``overlap.csv``) written with the same separator."""
    schema.check_separator(separator)
    try:
        form = await request.form(max_files=1, max_fields=10)
    except Exception as exc:  # noqa: BLE001 - any unreadable body is the caller's bad request
        raise BadRequest(f"The body is not a readable multipart form ({exc}).",
                         ErrorCode.MISSING_FILE_PART) from None
    part = form.get("fileStream")
    if part is None:
        raise BadRequest("The multipart form has no 'fileStream' part (the CSV file).",
                         ErrorCode.MISSING_FILE_PART)
    if isinstance(part, UploadFile):
        content = await part.read(MAX_UPLOAD_BYTES + 1)
    else:
        content = str(part).encode("utf-8")
    if len(content) > MAX_UPLOAD_BYTES:
        raise BadRequest(f"The file is larger than {MAX_UPLOAD_BYTES} bytes.",
                         ErrorCode.INVALID_CSV)
    rows = schema.parse_csv(content, separator)
    labelled = [(f"Line {line}", r) for line, r in rows]
    items = await run_in_threadpool(_compare, store, caller, labelled)
    return Response(
        schema.csv_out(items, separator), status_code=201, media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="overlap.csv"'},
    )
