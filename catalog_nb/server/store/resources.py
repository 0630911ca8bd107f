"""Reading data resources, and writing what people add to them.

Reads apply the caller's :class:`~catalog_nb.server.security.Visibility` in SQL: whole sources
as ``data_source_key IN (...)``, path specifications of granted folders and data sets as path
prefixes, and only the glob patterns are matched in Python (over the key and path of the
candidate resources, never their content). So ``totalCount`` and the page come from the same
condition, and an invisible resource is never counted.

A page is loaded in a fixed number of queries whatever its size: the resources (joined with
their source), then their fields, custom values and collection members in one query each.

Writes touch only people-owned properties: ``description``, ``rich_description``, ``owner``,
custom values and the fields' ``display_name``/``description``/``comment``. Profiling owns the
rest (``store.ingest``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Connection,
    Select,
    and_,
    bindparam,
    false,
    func,
    or_,
    select,
    true,
    update,
)

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.security import PathSpec, Visibility
from catalog_nb.server.store.common import fold, now_ms
from catalog_nb.server.store.schema import data_resources, data_sources, resource_fields

R, S = data_resources, data_sources

#: People-owned columns of a resource and of a field.
RESOURCE_ANNOTATIONS = ("description", "rich_description", "owner")
FIELD_ANNOTATIONS = ("display_name", "description", "comment")


def _keys_in(keys: Sequence[str]) -> ColumnElement[bool]:
    """``key IN (...)`` rendered inline: a grant may cover thousands of keys, more than the
    bound parameters some drivers take. Keys are the service's own hex strings, and SQLAlchemy
    quotes them anyway."""
    if not keys:
        return false()
    param: BindParameter[Any] = bindparam(None, list(keys), expanding=True, literal_execute=True)
    return R.c.key.in_(param)


def under(base: str) -> ColumnElement[bool]:
    """Resources at ``base`` or below it (a case-sensitive prefix on whole path segments)."""
    base = base.strip("/")
    if not base:
        return true()
    # substr, not LIKE: SQLite's LIKE ignores ASCII case and would need escaping of % and _.
    return or_(R.c.path == base, func.substr(R.c.path, 1, len(base) + 1) == base + "/")


def specs_condition(
    conn: Connection, specs: Mapping[str, Sequence[PathSpec]]
) -> ColumnElement[bool]:
    """Resources matched by path specifications, per source key.

    Prefix-only specifications become SQL; those with glob patterns are matched in Python over
    the key and path of the resources under their prefix, and enter the condition as keys.
    """
    conditions: list[ColumnElement[bool]] = []
    patterned: list[ColumnElement[bool]] = []
    checks: dict[str, list[PathSpec]] = defaultdict(list)
    for source_key, listed in specs.items():
        for spec in listed:
            scope = and_(R.c.data_source_key == source_key, under(spec.base))
            if spec.has_patterns:
                patterned.append(scope)
                checks[source_key].append(spec)
            else:
                conditions.append(scope)
    if patterned:
        query = select(R.c.key, R.c.data_source_key, R.c.path).where(or_(*patterned))
        keys = [
            key for key, source_key, path in conn.execute(query)
            if any(spec.matches(path) for spec in checks[source_key])
        ]
        conditions.append(_keys_in(keys))
    return or_(*conditions) if conditions else false()


def visible_condition(conn: Connection, vis: Visibility) -> ColumnElement[bool]:
    """The SQL condition selecting exactly the resources ``vis`` sees."""
    if vis.everything:
        return true()
    conditions = [specs_condition(conn, vis.specs)] if vis.specs else []
    if vis.sources:
        conditions.append(R.c.data_source_key.in_(sorted(vis.sources)))
    return or_(*conditions) if conditions else false()


def _with_source() -> Select[Any]:
    return select(
        R,
        S.c.name.label("source_name"),
        S.c.source_type.label("source_type"),
        S.c.uri.label("source_uri"),
    ).join(S, S.c.key == R.c.data_source_key)


def get_visible(conn: Connection, vis: Visibility, key: str) -> dict[str, Any]:
    """The resource with this key, with its source; 404 when unknown or invisible."""
    row = conn.execute(
        _with_source().where(R.c.key == key, visible_condition(conn, vis))
    ).mappings().first()
    if row is None:
        raise NotFound(f"There is no data resource with key '{key}'.",
                       ErrorCode.RESOURCE_NOT_FOUND)
    return dict(row)


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
    rows = conn.execute(
        _with_source().where(R.c.data_source_key == source.key, R.c.path.in_(candidates))
    ).mappings().all()
    found = sorted(rows, key=lambda r: candidates.index(r["path"]))
    if not found or not vis.sees(source.key, found[0]["path"]):
        raise NotFound(
            f"There is no data resource at path '{path}' in data source '{source.name}'.",
            ErrorCode.RESOURCE_NOT_FOUND,
        )
    return dict(found[0])


@dataclass
class MetadataQuery:
    """A parsed ``GET /dataresource/metadata`` request (see ``schemas.resource_query``).

    ``filters`` are (property, values) pairs, ANDed, the values of one ORed. ``folders`` holds
    the path specifications of the selected virtual folders per source (None: no folder filter).
    """

    filters: list[tuple[str, list[str]]] = field(default_factory=list)
    folders: dict[str, list[PathSpec]] | None = None
    modified_from: int | None = None
    modified_to: int | None = None
    start: int = 0
    size: int = 100


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
    if conn.dialect.name == "postgresql":
        # Code-point order on every server, as on SQLite: locale collations skip punctuation.
        return [S.c.name_fold.collate("C"), R.c.path.collate("C"), R.c.key]
    return [S.c.name_fold, R.c.path, R.c.key]


def query_page(
    conn: Connection, vis: Visibility, query: MetadataQuery
) -> tuple[list[dict[str, Any]], int]:
    """One page of visible resources matching ``query``, and how many match in all."""
    where = [visible_condition(conn, vis)]
    where.extend(_filter(prop, values) for prop, values in query.filters)
    if query.folders is not None:
        where.append(specs_condition(conn, query.folders))
    if query.modified_from is not None:
        where.append(R.c.time_of_resource_change >= query.modified_from)
    if query.modified_to is not None:
        where.append(R.c.time_of_resource_change <= query.modified_to)
    joined = R.join(S, S.c.key == R.c.data_source_key)
    total = int(conn.execute(select(func.count()).select_from(joined).where(*where)).scalar_one())
    if query.start >= total:
        return [], total
    page = _with_source().where(*where).order_by(*_order(conn))
    result = conn.execute(page.offset(query.start).limit(query.size))
    names = list(result.keys())
    return [dict(zip(names, row, strict=True)) for row in result], total


def fields_of(conn: Connection, keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The fields of many resources in one query, by position (never their value sketch)."""
    wanted = list(keys)
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if not wanted:
        return found
    F = resource_fields
    query = (
        select(F.c.resource_key, F.c.name, F.c.position, F.c.display_name, F.c.description,
               F.c.comment, F.c.data_type, F.c.nullable, F.c.properties)
        .where(F.c.resource_key.in_(wanted))
        .order_by(F.c.resource_key, F.c.position)
    )
    result = conn.execute(query)
    names = list(result.keys())
    for row in result:
        # zip over the keys read once: a RowMapping per row costs more than the query.
        found[row[0]].append(dict(zip(names, row, strict=True)))
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
    # Imported here: store.search reads this module's visibility conditions.
    from catalog_nb.server.store import search

    search.refresh(conn, [key])
