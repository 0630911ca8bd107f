"""Tag domains: CRUD, the 409 rules of deleting one, and the locks tag writes take on them.

A domain's name heads the full names of its tags (``Domain.Parent.Child``): renaming it rewrites
them in the same transaction. Tag writes lock the rows of the domains they touch
(``lock_domains``) so that concurrent writes in one domain run one after the other on
PostgreSQL (SQLite serialises writers anyway). Built-in domains (``immutable``) refuse changes
and deletion (409 ``IMMUTABLE``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Connection, bindparam, delete, func, insert, select, update

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest, Conflict, NotFound
from catalog_nb.server.store import search
from catalog_nb.server.store.common import fold, new_key, now_ms, unique_name
from catalog_nb.server.store.schema import role_grants, roles, tag_domains, tags

D, T = tag_domains, tags


def _clean(row: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in row.items() if k != "name_fold"}


def list_domains(conn: Connection) -> list[dict[str, Any]]:
    """Every tag domain by name, with its ``tag_count``."""
    query = select(T.c.domain_key, func.count()).group_by(T.c.domain_key)
    counts: dict[str, int] = {k: int(n) for k, n in conn.execute(query)}
    rows = conn.execute(select(D).order_by(D.c.name_fold)).mappings()
    return [{**_clean(r), "tag_count": counts.get(r["key"], 0)} for r in rows]


def _domain(conn: Connection, key: str, *, lock: bool = False) -> dict[str, Any] | None:
    query = select(D).where(D.c.key == key)
    row = conn.execute(query.with_for_update() if lock else query).mappings().first()
    if row is None:
        return None
    count = conn.execute(select(func.count()).select_from(T).where(T.c.domain_key == key))
    return {**_clean(row), "tag_count": int(count.scalar_one())}


def get_domain(conn: Connection, key: str, *, lock: bool = False) -> dict[str, Any]:
    """The tag domain with this key (``lock``: held until the transaction ends); else 404."""
    found = _domain(conn, key, lock=lock)
    if found is None:
        raise NotFound(f"There is no tag domain with key '{key}'.", ErrorCode.TAG_DOMAIN_NOT_FOUND)
    return found


def domain_by_name(conn: Connection, name: str) -> dict[str, Any]:
    """The tag domain of this name (case-insensitive); else 404."""
    key = conn.execute(select(D.c.key).where(D.c.name_fold == fold(name.strip()))).scalar()
    if key is None:
        raise NotFound(f"There is no tag domain named '{name}'.", ErrorCode.TAG_DOMAIN_NOT_FOUND)
    return get_domain(conn, key)


def referenced_domain(conn: Connection, key: str, *, lock: bool = False) -> dict[str, Any]:
    found = _domain(conn, key, lock=lock)
    if found is None:
        raise BadRequest(f"domainKey names a tag domain that does not exist: '{key}'.",
                         ErrorCode.UNKNOWN_REFERENCE, field="domainKey", unknown=[key])
    return found


def create_domain(
    conn: Connection, values: Mapping[str, Any], *, immutable: bool = False
) -> dict[str, Any]:
    """Create a tag domain (``name``, ``description``, ``color``); 409 when the name is taken."""
    now, key, name = now_ms(), new_key(), str(values["name"])
    with unique_name("tag domain", name):
        conn.execute(insert(D).values(
            key=key, name=name, name_fold=fold(name), description=values.get("description"),
            color=values.get("color"), immutable=immutable, created_ms=now, changed_ms=now,
        ))
    return get_domain(conn, key)


def immutable(kind: str, name: str, refused: Iterable[str], tunable: str = "") -> Conflict:
    return Conflict(
        f"The {kind} '{name}' is built in: {', '.join(sorted(refused))} cannot be changed"
        f"{tunable}.", ErrorCode.IMMUTABLE, refused=sorted(refused),
    )


def update_domain(conn: Connection, key: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Change a domain's name, description or colour; a rename rewrites its tags' full names.
    A built-in domain's colour may change (it is only how the domain is shown)."""
    current = get_domain(conn, key, lock=True)
    changed = {k: v for k, v in values.items() if current.get(k) != v}
    if current["immutable"] and set(changed) - {"color"}:
        raise immutable("tag domain", current["name"], set(changed) - {"color"},
                        " (its color can)")
    if not changed:
        return current
    if "name" in changed:
        changed["name_fold"] = fold(changed["name"])
    with unique_name("tag domain", str(changed.get("name", ""))):
        conn.execute(update(D).where(D.c.key == key).values(**changed, changed_ms=now_ms()))
    if "name" in changed:
        old, new = current["name"], changed["name"]
        renamed = [
            {"b_key": k, "b_full": new + full[len(old):]}
            for k, full in conn.execute(select(T.c.key, T.c.full_name).where(T.c.domain_key == key))
        ]
        write_full_names(conn, renamed)
    return get_domain(conn, key)


def delete_domain(conn: Connection, key: str) -> dict[str, Any]:
    """Delete a domain; 409 while it holds tags, is granted to a role, or is built in."""
    current = get_domain(conn, key, lock=True)
    if current["immutable"]:
        raise Conflict(f"The tag domain '{current['name']}' is built in and cannot be deleted.",
                       ErrorCode.IMMUTABLE)
    if current["tag_count"]:
        raise Conflict(
            f"The tag domain '{current['name']}' still holds {current['tag_count']} tag(s); "
            "delete or move them first.", ErrorCode.DOMAIN_NOT_EMPTY,
            tagCount=current["tag_count"],
        )
    holders = conn.execute(
        select(roles.c.name).join(role_grants, role_grants.c.role_key == roles.c.key)
        .where(role_grants.c.kind == "DOMAIN", role_grants.c.target_key == key)
        .order_by(roles.c.name_fold)
    ).scalars().all()
    if holders:
        raise Conflict(
            f"The tag domain '{current['name']}' is granted to the role(s) "
            f"{', '.join(holders)}; remove it from them first.",
            ErrorCode.GRANTED_TO_ROLE, roles=list(holders),
        )
    conn.execute(delete(D).where(D.c.key == key))
    return current


def lock_domains(conn: Connection, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Lock the rows of these domains in key order (no deadlock between opposite moves)."""
    return {key: referenced_domain(conn, key, lock=True) for key in sorted(set(keys))}


def write_full_names(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Rewrite tags' full names (and domains, when given): ``[{b_key, b_full, b_domain?}]``."""
    if rows:
        statement = update(T).where(T.c.key == bindparam("b_key")).values(
            full_name=bindparam("b_full"), **({"domain_key": bindparam("b_domain")}
                                              if "b_domain" in rows[0] else {}),
        )
        conn.execute(statement, rows)
        search.refresh(conn, search.resources_tagged(conn, [r["b_key"] for r in rows]))
