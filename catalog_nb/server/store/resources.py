"""Reading data resources, and writing what people add to them.

Reads apply the caller's :class:`~catalog_nb.server.visibility.Visibility` in SQL, with the one
condition of :func:`~catalog_nb.server.store.visible.visible_condition`, so ``totalCount`` and
the page come from the same condition, and an invisible resource is never counted.

A page is loaded in a fixed number of queries whatever its size: the resources (joined with
their source), then their fields, custom values and collection members in one query each. The
database writes each resource's own wire properties as one JSON text (``wire``, see
:func:`_wire`), so a page reaches Python as a string and a few columns per row; the JSON columns
are read as text and decoded a page at a time (one ``orjson.loads`` per column), and only when
a property built from them in Python is asked for (:func:`shaped_columns`). The page's custom
values, favorites and ratings are read with its keys as one bound value
(:func:`~catalog_nb.server.store.common.any_key`).

Pages come in one order: source name (folded, code points), then path. The first page and every
page after a cursor are read by keyset (:func:`query_page` with ``after``): the rest of the last
row's source by path, then the following sources, each an index range, so reading page 100 costs
what reading page 1 does and rows inserted meanwhile shift nothing. ``start`` (OFFSET) still
works, at the cost of skipping the rows before it.

Writes touch only people-owned properties: ``description``, ``rich_description``, ``owner``,
custom values and the fields' ``display_name``/``description``/``comment``. Profiling owns the
rest (``store.ingest``).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    CursorResult,
    Integer,
    Select,
    String,
    Text,
    and_,
    bindparam,
    case,
    cast,
    func,
    literal_column,
    or_,
    select,
    true,
    update,
)

from catalog_nb.contract import ErrorCode, ResourceType
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.store import search
from catalog_nb.server.store.common import code_points, fold, loads_many, now_ms
from catalog_nb.server.store.schema import (
    data_resources,
    data_sources,
    resource_fields,
)
from catalog_nb.server.store.visible import specs_condition, under, visible_condition
from catalog_nb.server.visibility import PathSpec, Visibility

R, S = data_resources, data_sources

#: People-owned columns of a resource and of a field.
RESOURCE_ANNOTATIONS = ("description", "rich_description", "owner")
FIELD_ANNOTATIONS = ("display_name", "description", "comment")


#: JSON columns of a resource row: read as text, decoded a page at a time (:func:`rows_of`).
JSON_COLUMNS = ("detailed_status", "extra")


#: What the wire form needs of a resource row besides its ``wire`` JSON: a page reads only
#: these (the database wrote the other columns into ``wire`` already; reading them too would
#: cost as much again).
SHAPED_COLUMNS = ("key", "data_source_key", "path", "name", "resource_type", "detailed_status",
                  "extra")
#: The JSON columns of a row and the wire properties Python builds from them
#: (``schemas.resources``): a page that sends none of those does not read the column.
_PYTHON_BUILT = {"detailed_status": frozenset({"detailedStatus", "runId", "processedTime"}),
                 "extra": frozenset({"sourceDetails"})}


def shaped_columns(properties: frozenset[str] | None) -> tuple[str, ...]:
    """The columns of :data:`SHAPED_COLUMNS` a page sending ``properties`` needs (None: all)."""
    if properties is None:
        return SHAPED_COLUMNS
    return tuple(c for c in SHAPED_COLUMNS
                 if c not in _PYTHON_BUILT or _PYTHON_BUILT[c] & properties)


def _columns(alias: Any = None, names: Sequence[str] | None = None) -> list[Any]:
    """The resource columns of a read (all, or those ``names``), the JSON ones as text."""
    table = R if alias is None else alias
    return [cast(table.c[name], Text).label(name) if name in JSON_COLUMNS else table.c[name]
            for name in (names if names is not None else [c.name for c in R.c])]


_SOURCE_COLUMNS = (S.c.name.label("source_name"), S.c.source_type.label("source_type"),
                   S.c.uri.label("source_uri"), S.c.name_fold.label("source_name_fold"))

#: Display names of file formats (``fileFormatDisplay``); others are shown as stored.
FORMAT_DISPLAY = {
    "csv": "CSV", "tsv": "TSV", "json": "JSON", "jsonl": "JSON Lines", "parquet": "Parquet",
}


#: The members of ``inferredKeys`` (every one present, an empty list when not known).
INFERRED_KEY_LISTS = ("primaryKey", "uniqueColumns", "compositeKeys")


def _inferred_keys(r: Any, postgres: bool) -> Any:
    """``inferredKeys`` built from ``extra`` by the database: each list profiling stored
    (``profiling/keys.py``), or an empty one when there is none (before profiling, or data
    without a key). Reading ``extra`` into Python for it cost a JSON decode per row."""
    members: list[Any] = []
    for name in INFERRED_KEY_LISTS:
        if postgres:
            stored = r.extra.op("->")(literal_column("'inferredKeys'")).op("->")(
                literal_column(f"'{name}'"))
            listed: Any = case((func.json_typeof(stored) == "array", stored),
                               else_=literal_column("'[]'::json"))
        else:
            path = f"$.inferredKeys.{name}"
            # json_valid first: SQLite's JSON functions refuse a text holding NaN (which
            # Python's encoder writes), and one such row must not fail the page.
            listed = func.json(case(
                (and_(func.json_valid(r.extra), func.json_type(r.extra, path) == "array"),
                 func.json_extract(r.extra, path)), else_="[]"))
        members += [literal_column(f"'{name}'"), listed]
    built = func.json_build_object(*members) if postgres else func.json_object(*members)
    # Most resources hold no inferred keys: a text search for the member's name answers them
    # without parsing ``extra`` nine times (a quarter of a metadata page's SQL on SQLite).
    none = "{" + ", ".join(f'"{name}": []' for name in INFERRED_KEY_LISTS) + "}"
    return case(
        (func.strpos(cast(r.extra, Text), "inferredKeys") > 0, built) if postgres
        else (func.instr(r.extra, "inferredKeys") > 0, built),
        # json(): the constant must reach an enclosing json_object as JSON, not as a string.
        else_=literal_column(f"'{none}'::json") if postgres else func.json(none))


def _wire_pairs(r: Any, s: Any, postgres: bool = False) -> list[tuple[str, Any, bool]]:
    """(property, SQL expression, is it a boolean) of the wire properties that follow from the
    resource row and its source alone; ``r`` and ``s`` are the column collections to read."""
    def display(column: Any) -> Any:
        return case(*[(func.lower(column) == code, literal_column(f"'{shown}'"))
                      for code, shown in FORMAT_DISPLAY.items()], else_=column)

    return [
        ("key", r.key, False), ("resourcePath", r.path, False), ("name", r.name, False),
        ("resourceType", r.resource_type, False), ("dataSourceName", s.name, False),
        ("description", r.description, False), ("richDescription", r.rich_description, False),
        ("timeOfCreation", r.created_ms, False), ("timeOfLastChange", r.changed_ms, False),
        ("collectionRoot", r.resource_type == ResourceType.COLLECTION.value, True),
        ("header", r.header, True),
        ("partitionCount", func.coalesce(r.partition_count, 0), False),
        ("fieldCount", func.coalesce(r.field_count, 0), False),
        ("headerRow", func.coalesce(r.header_row, 0), False),
        ("rowCount", func.coalesce(r.row_count, 0), False),
        ("resourceSize", func.coalesce(r.resource_size, 0), False),
        ("timeOfResourceChange", r.time_of_resource_change, False),
        ("timeOfResourceCreation", r.time_of_resource_creation, False),
        ("timeOfLastProfile", r.time_of_last_profile, False),
        ("timeOfLastRefresh", r.time_of_last_refresh, False),
        ("owner", r.owner, False), ("separator", r.separator, False),
        ("dataSourceType", s.source_type, False), ("dataSourceKey", r.data_source_key, False),
        ("errorMsg", r.error_msg, False), ("resourceState", r.resource_state, False),
        ("tableName", r.table_name, False), ("tableType", r.table_type, False),
        ("databaseName", r.database_name, False), ("dataSchemaName", r.data_schema_name, False),
        ("fileFormat", r.file_format, False), ("fileFormatDisplay", display(r.file_format), False),
        ("status", r.status, False), ("encoding", r.encoding, False),
        ("collectionKey", r.collection_key, False),
        ("inferredKeys", _inferred_keys(r, postgres), False),
    ]


#: The wire properties the store writes in SQL (:func:`_wire_pairs`), in order.
WIRE_COLUMNS = tuple(name for name, _, _ in _wire_pairs(R.c, S.c))


def _wire_kind(expression: Any, boolean: bool) -> str:
    affinity = expression.type._type_affinity
    if boolean:
        return "bool"
    if affinity is not None and issubclass(affinity, Integer):
        return "int"
    if affinity is not None and issubclass(affinity, String):
        return "string"
    return "json"


#: What each of :data:`WIRE_COLUMNS` holds: ``string``, ``int``, ``bool`` or ``json`` (read as
#: its JSON text from a ``separate`` read), from the type of its SQL expression.
WIRE_KINDS: dict[str, str] = {name: _wire_kind(expression, boolean)
                              for name, expression, boolean in _wire_pairs(R.c, S.c)}


#: What a wire property read as a column of its own is labelled (``separate`` reads).
WIRE_LABEL = "wire:"
#: The wire properties the database writes as JSON (read as their JSON text when separate).
WIRE_JSON = frozenset(name for name, kind in WIRE_KINDS.items() if kind == "json")


def _wire(dialect: str, r: Any = R.c, only: frozenset[str] | None = None,
          separate: bool = False) -> list[Any]:
    """The JSON text of a row's own wire properties (``wire``), built by the database: a page
    of resources reaches Python as one string each instead of some forty values each.

    ``separate``: each property as a column of its own instead (labelled
    :data:`WIRE_LABEL` + its name; booleans as the database reads them, JSON as its text), for
    answers built a column at a time (the Arrow layout of a metadata page).

    SQLite's json_object takes at most 63 pairs (127 arguments) and writes 0/1 for booleans
    unless told they are JSON; PostgreSQL's json_build_object takes at most 50 pairs.
    """
    postgres = dialect == "postgresql"
    pairs = [(name, expression, boolean) for name, expression, boolean
             in _wire_pairs(r, S.c, postgres) if only is None or name in only]
    if separate:
        return [(cast(expression, Text) if name in WIRE_JSON else expression)
                .label(WIRE_LABEL + name) for name, expression, _ in pairs]
    args: list[Any] = []
    for name, expression, boolean in pairs:
        args.append(literal_column(f"'{name}'"))
        if boolean and not postgres:
            expression = func.json(case((expression, "true"), else_="false"))
        args.append(expression)
    built = func.json_build_object(*args) if postgres else func.json_object(*args)
    return [cast(built, Text).label("wire")]


def read_query(
    conn: Connection, names: Sequence[str] | None = None, only: frozenset[str] | None = None,
    separate: bool = False,
) -> Select[Any]:
    """The read of resource rows as the wire form is built from (with their source and their
    ``wire`` JSON), for other families to narrow and to read with :func:`rows_of`: all the
    resource columns or those ``names``, all the wire properties or those ``only``
    (``separate``: as columns of their own, see :func:`_wire`)."""
    return _read_query(conn.dialect.name, None if names is None else tuple(names), only,
                       separate)


@functools.lru_cache(maxsize=128)  # bounded: ``only`` comes from the callers' requests
def _read_query(dialect: str, names: tuple[str, ...] | None,
                only: frozenset[str] | None, separate: bool) -> Select[Any]:
    # Built once per shape: its forty JSON pairs cost more to build than a read of one
    # resource (a Select is immutable; each caller narrows a copy).
    return (select(*_columns(None, names), *_SOURCE_COLUMNS,
                   *_wire(dialect, only=only, separate=separate))
            .join(S, S.c.key == R.c.data_source_key))


def rows_of(result: CursorResult[Any]) -> list[dict[str, Any]]:
    """The rows of a resource read as dicts, their JSON columns decoded in bulk.

    A ``separate`` read's wire properties are not put in the dict one by one: they are the
    tuple ``wire`` (in the order of :data:`WIRE_COLUMNS`), which the Arrow layout turns into
    columns in one step.
    """
    names = list(result.keys())
    fetched = result.all()
    separate = [i for i, name in enumerate(names) if name.startswith(WIRE_LABEL)]
    if separate:
        # Selected last (read_query), so a row splits in two.
        first = separate[0]
        plain = [*names[:first], "wire"]
        rows = [dict(zip(plain, (*row[:first], row[first:]), strict=True)) for row in fetched]
    else:
        # zip over the keys read once: a RowMapping per row costs more than the query.
        rows = [dict(zip(names, row, strict=True)) for row in fetched]
    for column in JSON_COLUMNS:
        if rows and column in rows[0]:
            for row, value in zip(rows, loads_many([r[column] for r in rows]), strict=True):
                row[column] = value
    return rows


def by_keys(conn: Connection, vis: Visibility, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The rows (with their source) of those of ``keys`` the caller sees, by key."""
    if not keys:
        return {}
    if vis.specs and not vis.everything:
        query = (read_query(conn, SHAPED_COLUMNS)
                 .where(R.c.key.in_(list(keys)), visible_condition(conn, vis)))
        return {row["key"]: row for row in rows_of(conn.execute(query))}
    seen = _by_keys(conn.dialect.name, None if vis.everything else vis.sources)
    return {row["key"]: row for row in rows_of(conn.execute(seen, {"keys": list(keys)}))}


@functools.lru_cache(maxsize=64)
def _by_keys(dialect: str, sources: frozenset[str] | None) -> Select[Any]:
    # The same statement object for every page of a caller who sees whole sources (None:
    # everything): SQLAlchemy keys its compiled statements by a walk of the statement, memoized
    # on the object, which for these forty JSON pairs cost 0.5 ms a page when built anew.
    query = _read_query(dialect, SHAPED_COLUMNS, None, False).where(
        R.c.key.in_(bindparam("keys", expanding=True)))
    return query if sources is None else query.where(R.c.data_source_key.in_(sorted(sources)))


def get_visible(conn: Connection, vis: Visibility, key: str) -> dict[str, Any]:
    """The resource with this key, with its source; 404 when unknown or invisible."""
    rows = rows_of(conn.execute(
        read_query(conn).where(R.c.key == key, visible_condition(conn, vis))
    ))
    if not rows:
        raise NotFound(f"There is no data resource with key '{key}'.",
                       ErrorCode.RESOURCE_NOT_FOUND)
    return rows[0]


def get_visible_by_path(
    conn: Connection, vis: Visibility, source_name: str, path: str
) -> dict[str, Any]:
    """The resource at ``path`` of the named source; 404 naming what is unknown or invisible.

    A source of which nothing is visible answers exactly like one that does not exist; a path
    that is invisible answers exactly like one that does not exist.
    """
    source = conn.execute(
        select(S.c.key, S.c.name).where(S.c.name_fold == fold(source_name))
    ).first()
    if source is None or not vis.touches(source.key):
        raise NotFound(f"There is no data source named '{source_name}'.",
                       ErrorCode.DATA_SOURCE_NOT_FOUND)
    # A leading "/" is forgiven: resource paths are relative to the source's root.
    candidates = list(dict.fromkeys([path, path.lstrip("/")]))
    rows = rows_of(conn.execute(
        read_query(conn).where(R.c.data_source_key == source.key, R.c.path.in_(candidates))
    ))
    found = sorted(rows, key=lambda r: candidates.index(r["path"]))
    if not found or not vis.sees(source.key, found[0]["path"]):
        raise NotFound(
            f"There is no data resource at path '{path}' in data source '{source.name}'.",
            ErrorCode.RESOURCE_NOT_FOUND,
        )
    return found[0]


@dataclass
class MetadataQuery:
    """A parsed ``GET /dataresource/metadata`` request (see ``schemas.resource_query``).

    ``filters`` are (property, values) pairs, ANDed, the values of one ORed. ``folders`` holds
    the path specifications of the selected virtual folders per source (None: no folder filter).
    ``after`` is the sort key of the last row of the previous page (source name folded, source
    key, path): the page then starts right after it, whatever ``start`` says.
    """

    filters: list[tuple[str, list[str]]] = field(default_factory=list)
    folders: dict[str, list[PathSpec]] | None = None
    modified_from: int | None = None
    modified_to: int | None = None
    start: int = 0
    size: int = 100
    after: tuple[str, str, str] | None = None
    #: The wire properties asked for (None: all of them).
    properties: frozenset[str] | None = None
    #: Each wire property read as a column of its own (:func:`_wire`'s ``separate``).
    separate: bool = False


def _filter(prop: str, values: list[str]) -> ColumnElement[bool]:
    if prop == "id":
        return R.c.key.in_(values)
    if prop == "resource_type":
        return R.c.resource_type.in_(values)
    if prop == "data_source":
        return S.c.name_fold.in_([fold(v) for v in values])
    if prop == "file_format":
        return func.lower(R.c.file_format).in_([v.lower() for v in values])
    if prop == "owner":
        return func.lower(R.c.owner).in_([v.lower() for v in values])
    if prop == "resource_state":
        return R.c.resource_state.in_(values)
    if prop == "status":
        return R.c.status.in_(values)
    if prop == "name":
        return R.c.name.in_(values)
    if prop == "path":
        return or_(*(under(v) for v in values))
    raise ValueError(f"unknown filter property {prop!r}")  # the parser lets none through


def _order(conn: Connection) -> list[Any]:
    return [code_points(conn, S.c.name_fold), code_points(conn, R.c.path), R.c.key]


def _conditions(
    conn: Connection, vis: Visibility, query: MetadataQuery
) -> tuple[list[ColumnElement[bool]], list[ColumnElement[bool]]]:
    """The query's conditions on resources, and those on their source (``data_source``)."""
    on_resources = [visible_condition(conn, vis)]
    on_sources: list[ColumnElement[bool]] = []
    for prop, values in query.filters:
        (on_sources if prop == "data_source" else on_resources).append(_filter(prop, values))
    if query.folders is not None:
        on_resources.append(specs_condition(conn, query.folders))
    if query.modified_from is not None:
        on_resources.append(R.c.time_of_resource_change >= query.modified_from)
    if query.modified_to is not None:
        on_resources.append(R.c.time_of_resource_change <= query.modified_to)
    return on_resources, on_sources


def count_matching(conn: Connection, vis: Visibility, query: MetadataQuery) -> int:
    """How many visible resources match ``query`` (``totalCount``)."""
    on_resources, on_sources = _conditions(conn, vis, query)
    joined = R.join(S, S.c.key == R.c.data_source_key)
    counted = select(func.count()).select_from(joined).where(*on_resources, *on_sources)
    return int(conn.execute(counted).scalar_one())


def sort_key(row: Mapping[str, Any]) -> tuple[str, str, str]:
    """The keyset position of a page row: (source name folded, source key, path)."""
    return (row["source_name_fold"], row["data_source_key"], row["path"])


def query_page(
    conn: Connection, vis: Visibility, query: MetadataQuery, *, limit: int | None = None
) -> list[dict[str, Any]]:
    """Up to ``limit`` (default ``query.size``) visible resources matching ``query``, in order.

    By keyset after ``query.after``, or from the start when ``query.start`` is 0; by OFFSET
    otherwise. At most two statements: the rest of the last row's source, then what follows.
    """
    size = query.size if limit is None else limit
    on_resources, on_sources = _conditions(conn, vis, query)
    if query.after is None and query.start:
        page = (read_query(conn, shaped_columns(query.properties), query.properties,
                           query.separate)
                .where(*on_resources, *on_sources)
                .order_by(*_order(conn))
                .offset(query.start).limit(size))
        return rows_of(conn.execute(page))
    rows: list[dict[str, Any]] = []
    name_after: str | None = None
    if query.after is not None:
        name_after, source_key, path_after = query.after
        # The rest of the last row's source: one range of the (source, path) index.
        rest = (read_query(conn, shaped_columns(query.properties), query.properties,
                           query.separate)
                .where(R.c.data_source_key == source_key,
                       code_points(conn, R.c.path) > path_after, *on_resources, *on_sources)
                .order_by(code_points(conn, R.c.path)).limit(size))
        rows = rows_of(conn.execute(rest))
    if len(rows) < size:
        rows += rows_of(conn.execute(
            _later_sources(conn, on_resources, on_sources, name_after, size - len(rows),
                           query.properties, query.separate)))
    return rows


def _later_sources(
    conn: Connection, on_resources: list[ColumnElement[bool]],
    on_sources: list[ColumnElement[bool]], name_after: str | None, size: int,
    properties: frozenset[str] | None = None, separate: bool = False,
) -> Select[Any]:
    """The first ``size`` matching resources of the sources named after ``name_after``."""
    named = list(on_sources)
    if name_after is not None:
        named.append(code_points(conn, S.c.name_fold) > name_after)
    if conn.dialect.name != "postgresql":
        # SQLite walks the sources by name and each source's paths by its index, and stops
        # at the limit: no sort.
        return (read_query(conn, shaped_columns(properties), properties, separate)
                .where(*on_resources, *named)
                .order_by(S.c.name_fold, R.c.path).limit(size))
    # PostgreSQL would sort every later resource for the limit: take at most ``size`` of each
    # source from its (source, path) index, then order those.
    each = (select(R).where(R.c.data_source_key == S.c.key, *on_resources)
            .order_by(R.c.path.collate("C")).limit(size).lateral("page"))
    return (select(*_columns(each, shaped_columns(properties)), *_SOURCE_COLUMNS,
                   *_wire(conn.dialect.name, each.c, properties, separate))
            .select_from(S).join(each, true()).where(*named)
            .order_by(S.c.name_fold.collate("C"), each.c.path.collate("C")).limit(size))


def fields_of(conn: Connection, keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The fields of many resources in one query, by position (never their value sketch)."""
    wanted = list(keys)
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if not wanted:
        return found
    F = resource_fields
    query = (
        select(F.c.resource_key, F.c.name, F.c.position, F.c.display_name, F.c.description,
               F.c.comment, F.c.data_type, F.c.nullable,
               cast(F.c.properties, Text).label("properties"))
        .where(F.c.resource_key.in_(wanted))
        .order_by(F.c.resource_key, F.c.position)
    )
    result = conn.execute(query)
    names = list(result.keys())
    rows = result.all()
    properties = loads_many([row[-1] for row in rows])
    for row, decoded in zip(rows, properties, strict=True):
        # zip over the keys read once: a RowMapping per row costs more than the query.
        item = dict(zip(names, row, strict=True))
        item["properties"] = decoded
        found[row[0]].append(item)
    return found


def members_of(conn: Connection, collection_keys: Iterable[str]) -> dict[str, list[str]]:
    """The member paths of many collections in one query."""
    wanted = list(collection_keys)
    found: dict[str, list[str]] = defaultdict(list)
    if not wanted:
        return found
    query = (
        select(R.c.collection_key, R.c.path)
        .where(R.c.collection_key.in_(wanted))
        .order_by(R.c.collection_key, R.c.path)
    )
    for collection_key, path in conn.execute(query):
        found[collection_key].append(path)
    return found


def lock_for_update(conn: Connection, key: str) -> None:
    """Hold the resource's row until the transaction ends (PostgreSQL; SQLite serialises
    writers anyway), so two PUTs of one resource's custom values run one after the other
    instead of colliding on the values' primary key."""
    conn.execute(select(R.c.key).where(R.c.key == key).with_for_update())


def annotate(
    conn: Connection,
    key: str,
    values: Mapping[str, Any],
    field_changes: Mapping[str, Mapping[str, Any]],
) -> None:
    """Write people-owned properties of a resource and of its fields (already validated).

    ``values`` maps resource columns (RESOURCE_ANNOTATIONS) to new values; ``field_changes``
    maps field names to column changes (FIELD_ANNOTATIONS). A field that does not exist is a
    400 naming it, and nothing is written.
    """
    F = resource_fields
    if field_changes:
        existing = set(conn.execute(select(F.c.name).where(F.c.resource_key == key)).scalars())
        unknown = [name for name in field_changes if name not in existing]
        if unknown:
            raise BadRequest(
                f"The resource has no field(s) named {', '.join(repr(u) for u in unknown)}.",
                ErrorCode.UNKNOWN_REFERENCE,
                field="fields",
                unknown=unknown,
            )
        for name, changes in field_changes.items():
            if changes:
                conn.execute(
                    update(F).where(F.c.resource_key == key, F.c.name == name).values(**changes)
                )
    conn.execute(update(R).where(R.c.key == key).values(**values, changed_ms=now_ms()))
    search.refresh(conn, [key])
