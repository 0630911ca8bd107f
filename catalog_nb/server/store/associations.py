"""Tag associations: which tag applies to which resource or field, in which state.

Keyed by (resource, field or none, tag). The rules of DESIGN.md live here, inside each write's
transaction:

* discovery writes SUGGESTED associations with a ``weight`` and the ``rules`` that fired;
* a REJECTED association is remembered, so discovery never suggests it again;
* an ACCEPTED association is never downgraded by discovery;
* people creating an association that exists as SUGGESTED or REJECTED promote it to the state
  they ask for; one that exists in the asked state, or ACCEPTED when a suggestion is asked for,
  is answered unchanged.

Reads for people apply the caller's visibility in SQL (an association is visible with its
resource), and the associations of a whole page of resources load in one query
(``of_resources``). Permission checks are the caller's (``routes/associations.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import Connection, Select, bindparam, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from catalog_nb.contract import ErrorCode, TagAssociationState
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.store import search
from catalog_nb.server.store.common import any_key, code_points, new_key, now_ms
from catalog_nb.server.store.schema import (
    data_resources,
    data_sources,
    resource_fields,
    tag_associations,
    tag_domains,
    tags,
)
from catalog_nb.server.store.visible import visible_condition
from catalog_nb.server.visibility import Visibility

#: Who discovery writes as, in ``created_by`` / ``changed_by``.
DISCOVERY = "discovery"

SuggestionOutcome = Literal["created", "updated", "unchanged", "rejected", "accepted"]


def scope(field: str | None) -> str:
    """The stored ``field_scope`` of a field name (``""`` for the resource itself)."""
    return field or ""


def find(
    conn: Connection, resource_key: str, field: str | None, tag_key: str, *, lock: bool = False
) -> dict[str, Any] | None:
    """The association of a tag with a resource (``field`` None) or one of its fields, or None.

    ``lock`` holds the row until the transaction ends (PostgreSQL; SQLite writers take turns
    anyway), so a writer that decides from it cannot lose it to a concurrent delete.
    """
    query = select(tag_associations).where(
        tag_associations.c.resource_key == resource_key,
        tag_associations.c.field_scope == scope(field),
        tag_associations.c.tag_key == tag_key,
    )
    if lock:
        query = query.with_for_update()
    row = conn.execute(query).mappings().first()
    return dict(row) if row else None


def record_suggestion(
    conn: Connection,
    resource_key: str,
    field: str | None,
    tag_key: str,
    weight: float,
    rules: Iterable[str],
    *,
    refresh_index: bool = True,
) -> SuggestionOutcome:
    """Write discovery's suggestion of a tag for a resource or field, keeping people's word.

    Returns what happened: ``created`` (a new SUGGESTED association), ``updated`` (an existing
    suggestion got a new weight or rules), ``unchanged``, ``rejected`` (people rejected it: left
    alone, never suggested again) or ``accepted`` (people accepted it: never downgraded).
    ``refresh_index=False`` leaves the resource's search document to the caller, who writes many
    suggestions of one resource and refreshes it once (the refresh reads all its fields).
    """
    (outcome,) = record_suggestions(conn, resource_key, [(field, tag_key, weight, rules)])
    if refresh_index and outcome in ("created", "updated"):
        search.refresh(conn, [resource_key])
    return outcome


#: One suggestion of :func:`record_suggestions`: (field or None, tag key, weight, rules).
Suggestion = tuple["str | None", str, float, Iterable[str]]


def record_suggestions(
    conn: Connection, resource_key: str, suggestions: Iterable[Suggestion]
) -> list[SuggestionOutcome]:
    """:func:`record_suggestion` for many suggestions of one resource, in three statements
    (the existing associations read at once, the new ones inserted together, the changed ones
    updated together) instead of two per suggestion; the outcomes in the suggestions' order.

    The resource's search document is the caller's to refresh. Each (field, tag) may come once.

    Example::

        record_suggestions(conn, key, [("email", tag_key, 0.9, ["regex:Email"])])
    """
    now = now_ms()
    wanted = [(scope(field), tag_key, round(min(1.0, max(0.0, float(weight))), 4),
               sorted(set(rules))) for field, tag_key, weight, rules in suggestions]
    if not wanted:
        return []
    scopes = sorted({field_scope for field_scope, *_ in wanted})
    existing = {
        (row.field_scope, row.tag_key): row
        for row in conn.execute(
            select(*(tag_associations.c[name] for name in
                     ("key", "field_scope", "tag_key", "state", "weight", "rules")))
            .where(tag_associations.c.resource_key == resource_key,
                   any_key(conn, tag_associations.c.field_scope, scopes))
        )
    }
    outcomes: list[SuggestionOutcome] = []
    created: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    for field_scope, tag_key, weight, fired in wanted:
        current = existing.get((field_scope, tag_key))
        if current is None:
            created.append({
                "key": new_key(), "resource_key": resource_key, "field_scope": field_scope,
                "tag_key": tag_key, "state": TagAssociationState.SUGGESTED.value,
                "semantic": None, "description": None, "weight": weight, "rules": fired,
                "created_by": DISCOVERY, "changed_by": DISCOVERY, "created_ms": now,
                "changed_ms": now,
            })
            outcomes.append("created")
        elif current.state == TagAssociationState.REJECTED.value:
            outcomes.append("rejected")
        elif current.state == TagAssociationState.ACCEPTED.value:
            outcomes.append("accepted")
        elif current.weight == weight and list(current.rules or []) == fired:
            outcomes.append("unchanged")
        else:
            changed.append({"row_key": current.key, "weight": weight, "rules": fired})
            outcomes.append("updated")
    if created:
        conn.execute(insert(tag_associations), created)
    if changed:
        conn.execute(
            update(tag_associations).where(tag_associations.c.key == bindparam("row_key"))
            .values(weight=bindparam("weight"), rules=bindparam("rules"),
                    changed_by=DISCOVERY, changed_ms=now),
            changed,
        )
    return outcomes


# ------------------------------------------------------------------------ reads for people

A, T, D, R, S = tag_associations, tags, tag_domains, data_resources, data_sources

#: What people's writes answer: the association was created, its state changed, or neither.
WriteOutcome = Literal["created", "changed", "unchanged"]


def _tagged() -> Select[Any]:
    """Associations with their tag and domain (no resource columns)."""
    return (
        select(A, T.c.name.label("tag_name"), T.c.full_name.label("tag_full_name"),
               T.c.domain_key.label("domain_key"), D.c.name.label("domain_name"),
               T.c.sensitivity.label("tag_sensitivity"))
        .join(T, T.c.key == A.c.tag_key)
        .join(D, D.c.key == T.c.domain_key)
    )


def _views() -> Select[Any]:
    """Associations with their tag, domain, resource and data source."""
    return (
        _tagged()
        .add_columns(R.c.path.label("resource_path"), R.c.data_source_key.label("data_source_key"),
                     S.c.name.label("source_name"))
        .join(R, R.c.key == A.c.resource_key)
        .join(S, S.c.key == R.c.data_source_key)
    )


def _order(conn: Connection, *, by_resource: bool) -> list[Any]:
    def c(column: Any) -> Any:
        return code_points(conn, column)

    head = [c(S.c.name_fold), c(R.c.path)] if by_resource else [A.c.resource_key]
    return [*head, c(A.c.field_scope), c(T.c.full_name), A.c.key]


def of_resources(conn: Connection, keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The associations of many resources in one query, by resource key (resource level
    first, then by field, then by tag full name)."""
    wanted = sorted(set(keys))
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if not wanted:
        return found
    query = _tagged().where(A.c.resource_key.in_(wanted)).order_by(*_order(conn, by_resource=False))
    result = conn.execute(query)
    names = list(result.keys())
    for row in result:
        item = dict(zip(names, row, strict=True))
        found[item["resource_key"]].append(item)
    return found


def get_visible(conn: Connection, vis: Visibility, key: str) -> dict[str, Any]:
    """The association with this key, when its resource is visible; else 404."""
    row = conn.execute(
        _views().where(A.c.key == key, visible_condition(conn, vis))
    ).mappings().first()
    if row is None:
        raise NotFound(f"There is no tag association with key '{key}'.",
                       ErrorCode.TAG_ASSOCIATION_NOT_FOUND)
    return dict(row)


@dataclass
class AssociationFilter:
    """Criteria of ``GET /tagassociation`` (ANDed; None: any)."""

    state: str | None = None
    tag_key: str | None = None
    data_source_key: str | None = None
    resource_key: str | None = None
    field: str | None = None
    min_weight: float | None = None


def page(
    conn: Connection, vis: Visibility, criteria: AssociationFilter, start: int, size: int
) -> tuple[list[dict[str, Any]], int]:
    """One page of the visible associations matching ``criteria``, and how many match."""
    where = [visible_condition(conn, vis)]
    if criteria.state is not None:
        where.append(A.c.state == criteria.state)
    if criteria.tag_key is not None:
        where.append(A.c.tag_key == criteria.tag_key)
    if criteria.data_source_key is not None:
        where.append(R.c.data_source_key == criteria.data_source_key)
    if criteria.resource_key is not None:
        where.append(A.c.resource_key == criteria.resource_key)
    if criteria.field is not None:
        where.append(A.c.field_scope == scope(criteria.field))
    if criteria.min_weight is not None:
        where.append(A.c.weight >= criteria.min_weight)
    joined = A.join(R, R.c.key == A.c.resource_key)
    total = int(conn.execute(select(func.count()).select_from(joined).where(*where)).scalar_one())
    if start >= total:
        return [], total
    query = _views().where(*where).order_by(*_order(conn, by_resource=True))
    rows = conn.execute(query.offset(start).limit(size)).mappings()
    return [dict(r) for r in rows], total


# ----------------------------------------------------------------------- writes by people


def check_field(conn: Connection, resource: Mapping[str, Any], field: str) -> None:
    """400 ``UNKNOWN_FIELD`` unless the resource has a field of this name."""
    found = conn.execute(
        select(resource_fields.c.name).where(
            resource_fields.c.resource_key == resource["key"], resource_fields.c.name == field,
        )
    ).first()
    if found is None:
        raise BadRequest(
            f"The resource '{resource['path']}' has no field named '{field}'.",
            ErrorCode.UNKNOWN_FIELD, field="field", unknown=[field],
        )


def _promotes(current: str, wanted: str) -> bool:
    """Whether asking for ``wanted`` changes an association that is ``current``: a suggestion
    never downgrades an ACCEPTED one; any other different state is a person's decision."""
    if current == wanted:
        return False
    return not (current == TagAssociationState.ACCEPTED.value
                and wanted == TagAssociationState.SUGGESTED.value)


def create(
    conn: Connection,
    resource: Mapping[str, Any],
    tag: Mapping[str, Any],
    field: str | None,
    values: Mapping[str, Any],
    actor: str,
) -> tuple[str, WriteOutcome]:
    """Associate a tag with a resource or one of its fields, or promote the existing association.

    ``values`` holds ``state`` and optionally ``semantic`` and ``description``. Returns the
    association's key and what happened. Two requests racing to create the same association
    both succeed: the loser finds the winner's row and promotes it as it would have. The row
    found is locked, so a delete racing with this request either ends first (and the
    association is created anew) or waits for this one.
    """
    if field is not None:
        check_field(conn, resource, field)
    state = str(values["state"])
    current = find(conn, resource["key"], field, tag["key"], lock=True)
    if current is None:
        now, key = now_ms(), new_key()
        try:
            with conn.begin_nested():
                conn.execute(insert(A).values(
                    key=key, resource_key=resource["key"], field_scope=scope(field),
                    tag_key=tag["key"], state=state, semantic=values.get("semantic"),
                    description=values.get("description"), weight=None, rules=[],
                    created_by=actor, changed_by=actor, created_ms=now, changed_ms=now,
                ))
            search.refresh(conn, [resource["key"]])
            return key, "created"
        except IntegrityError:
            current = find(conn, resource["key"], field, tag["key"], lock=True)
            if current is None:
                raise
    if not _promotes(current["state"], state):
        return current["key"], "unchanged"
    change(conn, current, values, actor)
    return current["key"], "changed"


def change(
    conn: Connection, current: Mapping[str, Any], values: Mapping[str, Any], actor: str
) -> bool:
    """Write a person's change of ``state``, ``semantic`` or ``description``; False when the
    values are those already stored (nothing is written then)."""
    changed = {k: v for k, v in values.items()
               if k in ("state", "semantic", "description") and current.get(k) != v}
    if not changed:
        return False
    conn.execute(update(A).where(A.c.key == current["key"]).values(
        **changed, changed_by=actor, changed_ms=now_ms(),
    ))
    search.refresh(conn, [current["resource_key"]])
    return True


def remove(conn: Connection, key: str) -> None:
    """Delete one association."""
    resources = list(conn.execute(select(A.c.resource_key).where(A.c.key == key)).scalars())
    conn.execute(delete(A).where(A.c.key == key))
    search.refresh(conn, resources)
