"""Join conditions: what join discovery reads and writes, and the reads behind the wire forms.

Discovery (``discovery.joins``) reads the profiled fields' value sketches through the sketch
index (``store.sketches``) and the declared foreign keys of SQL tables here, and replaces all
conditions, or those of the resources that changed, in one transaction. The reads
for people apply the caller's visibility in SQL: a condition is only returned when both of its
resources are visible (``key IN (visible keys)`` on each side), so a hidden resource is never
named and never counted. Each read is a fixed number of queries whatever the number of
resources or conditions: the conditions, then the resources they name, then the ACCEPTED tags
of those resources and of their fields.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    delete,
    func,
    insert,
    or_,
    select,
)

from catalog_nb.contract import TagAssociationState
from catalog_nb.server.store.common import advisory_lock, chunks, new_key, now_ms
from catalog_nb.server.store.schema import (
    data_resources,
    data_sources,
    join_conditions,
    resource_fields,
    tag_associations,
    tag_domains,
    tags,
)
from catalog_nb.server.store.visible import visible_keys
from catalog_nb.server.visibility import Visibility

J, R, S, F = join_conditions, data_resources, data_sources, resource_fields
A, T, D = tag_associations, tags, tag_domains

#: Origins of stored conditions; discovery owns both and replaces both on every run.
DECLARED = "DECLARED"
DISCOVERED = "DISCOVERED"
ORIGINS = (DECLARED, DISCOVERED)
#: Serialises concurrent replacements on PostgreSQL (two jobs' discoveries ending together).
_JOINS_LOCK = 7_242_018


# --------------------------------------------------------------------------- discovery side


def tagged_fields(conn: Connection, external_ids: Iterable[str],
                  external_source: str) -> set[tuple[str, str]]:
    """``(resource key, field name)`` of the fields holding a SUGGESTED or ACCEPTED association
    with one of the tags named by ``external_ids`` (the built-in tags' ``builtin:<Name>``)."""
    query = (
        select(A.c.resource_key, A.c.field_scope)
        .join(T, T.c.key == A.c.tag_key)
        .where(A.c.field_scope != "",
               A.c.state.in_([TagAssociationState.SUGGESTED.value,
                              TagAssociationState.ACCEPTED.value]),
               T.c.external_source_name == external_source,
               T.c.external_id.in_(list(external_ids)))
    )
    return {(str(key), str(name)) for key, name in conn.execute(query)}


def sql_tables(conn: Connection) -> list[dict[str, Any]]:
    """Tables and views of SQL sources: key, source, schema, table name, ``extra`` and fields."""
    query = (
        select(R.c.key, R.c.data_source_key, R.c.data_schema_name, R.c.table_name, R.c.extra)
        .join(S, S.c.key == R.c.data_source_key)
        .where(S.c.source_type == "SQL", R.c.table_name.is_not(None))
    )
    tables = [dict(row) for row in conn.execute(query).mappings()]
    fields: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    wanted = [t["key"] for t in tables]
    if wanted:
        rows = conn.execute(
            select(F.c.resource_key, F.c.name, F.c.properties).where(F.c.resource_key.in_(wanted))
        )
        for key, name, properties in rows:
            fields[key][name] = dict(properties or {})
    for table in tables:
        table["fields"] = fields.get(table["key"], {})
    return tables


@dataclass(frozen=True)
class NewCondition:
    """One condition discovery found: ``left`` is the unique side when one side is unique."""

    left_key: str
    right_key: str
    left_cols: tuple[str, ...]
    right_cols: tuple[str, ...]
    origin: str
    cardinality: str
    left_in_right: float | None
    right_in_left: float | None
    score: float
    stats: Mapping[str, Any] = field(default_factory=dict)

    @property
    def signature(self) -> str:
        """Identifies the pair of column lists within the pair of resources."""
        return ",".join(self.left_cols) + "=" + ",".join(self.right_cols)


def replace_all(conn: Connection, conditions: Sequence[NewCondition]) -> None:
    """Replace every DECLARED and DISCOVERED condition by ``conditions`` (caller's transaction).

    Conditions naming a resource that no longer exists are skipped (a job may have removed it
    since discovery read the catalog).
    """
    advisory_lock(conn, _JOINS_LOCK)
    conn.execute(delete(J).where(J.c.origin.in_(ORIGINS)))
    _insert(conn, conditions)


def replace_touching(conn: Connection, conditions: Sequence[NewCondition],
                     changed: Iterable[str]) -> None:
    """Replace every DECLARED condition, and the DISCOVERED ones with a side in ``changed``,
    by ``conditions`` (caller's transaction): what incremental discovery found."""
    advisory_lock(conn, _JOINS_LOCK)
    conn.execute(delete(J).where(J.c.origin == DECLARED))
    keys = sorted(set(changed))
    for chunk in chunks(keys):
        conn.execute(delete(J).where(J.c.origin == DISCOVERED,
                                     or_(J.c.left_key.in_(chunk), J.c.right_key.in_(chunk))))
    _insert(conn, conditions)


def _insert(conn: Connection, conditions: Sequence[NewCondition]) -> None:
    if not conditions:
        return
    keys = sorted({c.left_key for c in conditions} | {c.right_key for c in conditions})
    existing: set[str] = set()
    for chunk in chunks(keys):
        existing.update(conn.execute(select(R.c.key).where(R.c.key.in_(chunk))).scalars())
    now = now_ms()
    rows = [
        {
            "key": new_key(), "left_key": c.left_key, "right_key": c.right_key,
            "left_cols": list(c.left_cols), "right_cols": list(c.right_cols),
            "signature": c.signature, "origin": c.origin, "cardinality": c.cardinality,
            "left_in_right": c.left_in_right, "right_in_left": c.right_in_left,
            "score": c.score, "stats": dict(c.stats), "created_ms": now, "changed_ms": now,
        }
        for c in conditions if c.left_key in existing and c.right_key in existing
    ]
    if rows:
        conn.execute(insert(J), rows)


# --------------------------------------------------------------------------- reads for people


@dataclass
class Loaded:
    """Conditions with what their wire form names: resources (joined with their source) by
    key, resource-level ACCEPTED tags by resource key, field ACCEPTED tags by (key, field), each
    tag a stored tag row with its ``domain_name``."""

    conditions: list[dict[str, Any]] = field(default_factory=list)
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    resource_tags: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    field_tags: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)


def _both_visible(conn: Connection, vis: Visibility) -> list[ColumnElement[bool]]:
    if vis.everything:
        return []
    seen = visible_keys(conn, vis)
    return [J.c.left_key.in_(seen), J.c.right_key.in_(seen)]


def _conditions(conn: Connection, query: Select[Any]) -> list[dict[str, Any]]:
    result = conn.execute(query)
    names = list(result.keys())
    return [dict(zip(names, row, strict=True)) for row in result]


def _complete(conn: Connection, conditions: list[dict[str, Any]]) -> Loaded:
    """Load the resources and ACCEPTED tags the conditions name (two queries)."""
    loaded = Loaded(conditions=conditions)
    keys = sorted({c["left_key"] for c in conditions} | {c["right_key"] for c in conditions})
    if not keys:
        return loaded
    query = (
        select(R.c.key, R.c.name, R.c.path, R.c.data_source_key, R.c.file_format, R.c.owner,
               R.c.resource_size, R.c.changed_ms, R.c.time_of_resource_change,
               S.c.name.label("source_name"))
        .join(S, S.c.key == R.c.data_source_key)
        .where(R.c.key.in_(keys))
    )
    loaded.resources = {row["key"]: dict(row) for row in conn.execute(query).mappings()}
    # Whole tags: JoinConditionTO's leftTags, rightTags and tags are arrays of Tag.
    tagged = (
        select(A.c.resource_key, A.c.field_scope, *T.c, D.c.name.label("domain_name"))
        .join(T, T.c.key == A.c.tag_key)
        .join(D, D.c.key == T.c.domain_key)
        .where(A.c.resource_key.in_(keys), A.c.state == TagAssociationState.ACCEPTED.value)
        .order_by(A.c.resource_key, T.c.full_name, T.c.key)
    )
    by_resource: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_field: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in conn.execute(tagged).mappings():
        tag = {k: v for k, v in row.items() if k not in ("resource_key", "field_scope")}
        if row["field_scope"]:
            by_field[(row["resource_key"], row["field_scope"])].append(tag)
        else:
            by_resource[row["resource_key"]].append(tag)
    loaded.resource_tags, loaded.field_tags = dict(by_resource), dict(by_field)
    return loaded


def of_resources(conn: Connection, vis: Visibility, keys: Iterable[str]) -> Loaded:
    """The conditions with one of ``keys`` on a side and both sides visible, best first.

    Three queries whatever the number of resources and conditions.
    """
    wanted = sorted(set(keys))
    if not wanted:
        return Loaded()
    query = (
        select(J)
        .where(or_(J.c.left_key.in_(wanted), J.c.right_key.in_(wanted)),
               *_both_visible(conn, vis))
        .order_by(J.c.score.desc(), J.c.key)
    )
    return _complete(conn, _conditions(conn, query))


@dataclass
class ListQuery:
    """A parsed ``GET /joincondition``: ``scope`` keeps conditions with an end matched by it."""

    start: int = 0
    size: int = 1000
    scope: ColumnElement[bool] | None = None
    min_score: float | None = None
    origins: Sequence[str] = ()


def list_page(conn: Connection, vis: Visibility, query: ListQuery) -> tuple[Loaded, int]:
    """One page of visible conditions (each once), best score first, and how many match."""
    where = _both_visible(conn, vis)
    if query.scope is not None:
        inside = select(R.c.key).where(query.scope)
        where.append(or_(J.c.left_key.in_(inside), J.c.right_key.in_(inside)))
    if query.min_score is not None:
        where.append(J.c.score >= query.min_score)
    if query.origins:
        where.append(J.c.origin.in_(list(query.origins)))
    condition = and_(*where) if where else None
    count = select(func.count()).select_from(J)
    page = select(J).order_by(J.c.score.desc(), J.c.key).offset(query.start).limit(query.size)
    if condition is not None:
        count, page = count.where(condition), page.where(condition)
    total = int(conn.execute(count).scalar_one())
    if query.start >= total:
        return Loaded(), total
    return _complete(conn, _conditions(conn, page)), total
