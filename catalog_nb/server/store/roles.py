"""Roles and their grants (data sources, virtual folders, data sets, tag domains).

Role names are stored NFKC-normalised and may not look like another role's name
(:func:`~catalog_nb.server.store.common.claim_name`: 409 CONFUSABLE_NAME); a name looked up
is found by its NFKC form too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Table, delete, func, insert, select, update

from catalog_nb.contract import AccessLevel, ErrorCode
from catalog_nb.server.confusables import canonical_name
from catalog_nb.server.errors import BadRequest, Conflict, NotFound
from catalog_nb.server.store.common import (
    claim_name,
    fold,
    lock_memberships,
    name_forms,
    new_key,
    now_ms,
    unique_name,
)
from catalog_nb.server.store.schema import (
    data_sources,
    datasets,
    role_grants,
    roles,
    tag_domains,
    user_roles,
    users,
    virtual_folders,
)

#: Grant kind -> (wire field name, table the keys refer to).
GRANT_KINDS: dict[str, tuple[str, Table]] = {
    "DATA_SOURCE": ("dataSourceKeys", data_sources),
    "VIRTUAL_FOLDER": ("virtualFolderKeys", virtual_folders),
    "DATASET": ("datasetKeys", datasets),
    "DOMAIN": ("domainKeys", tag_domains),
}

#: Role columns a create or update may set (store names).
ROLE_COLUMNS = (
    "name",
    "access_level",
    "description",
    "rich_description",
    "default_role",
    "metadata_access_option",
    "data_access_option",
    "resource_read_access_level",
    "job_template_creation_allowed",
    "job_execution_allowed",
)


@dataclass
class RoleRecord:
    key: str
    name: str
    access_level: str
    description: str | None
    rich_description: str | None
    default_role: bool
    metadata_access_option: str
    data_access_option: str
    resource_read_access_level: str | None
    job_template_creation_allowed: bool
    job_execution_allowed: bool
    created_ms: int
    changed_ms: int
    grants: dict[str, list[str]] = field(default_factory=dict)

    def granted(self, kind: str) -> list[str]:
        """Keys granted to this role of one kind (``DATA_SOURCE``, ``DOMAIN``, ...)."""
        return self.grants.get(kind, [])


def records(conn: Connection, rows: Iterable[Any]) -> list[RoleRecord]:
    """Role records from rows of the roles table, with their grants (one query)."""
    found = [
        RoleRecord(**{k: v for k, v in row.items() if k != "name_fold"}) for row in rows
    ]
    if not found:
        return found
    grants: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    query = (
        select(role_grants)
        .where(role_grants.c.role_key.in_([r.key for r in found]))
        .order_by(role_grants.c.target_key)
    )
    for g in conn.execute(query).mappings():
        grants[g["role_key"]][g["kind"]].append(g["target_key"])
    for record in found:
        record.grants = {k: list(v) for k, v in grants[record.key].items()}
    return found


def list_all(conn: Connection) -> list[RoleRecord]:
    """Every role, by name."""
    return records(conn, conn.execute(select(roles).order_by(roles.c.name_fold)).mappings())


def get(conn: Connection, key: str) -> RoleRecord:
    """The role with this key; 404 when there is none."""
    found = records(conn, conn.execute(select(roles).where(roles.c.key == key)).mappings())
    if not found:
        raise NotFound(f"There is no role with key '{key}'.", ErrorCode.ROLE_NOT_FOUND)
    return found[0]


def find_by_name(conn: Connection, name: str) -> RoleRecord | None:
    """The role with this name (case-insensitive, or in its NFKC form), or None."""
    forms = name_forms(name)
    query = select(roles).where(roles.c.name_fold.in_(forms))
    found = records(conn, conn.execute(query).mappings())
    found.sort(key=lambda r: forms.index(fold(r.name)) if fold(r.name) in forms else len(forms))
    return found[0] if found else None


def get_by_name(conn: Connection, name: str) -> RoleRecord:
    """The role with this name; 404 when there is none."""
    record = find_by_name(conn, name)
    if record is None:
        raise NotFound(f"There is no role named '{name}'.", ErrorCode.ROLE_NOT_FOUND)
    return record


def resolve_names(conn: Connection, names: Iterable[str]) -> list[RoleRecord]:
    """Roles for names given in a payload; an unknown name is a 400 naming every unknown one."""
    wanted = list(dict.fromkeys(names))
    forms = {n: name_forms(n) for n in wanted}
    query = select(roles).where(roles.c.name_fold.in_({f for fs in forms.values() for f in fs}))
    found = {fold(r.name): r for r in records(conn, conn.execute(query).mappings())}
    chosen = {n: next((found[f] for f in forms[n] if f in found), None) for n in wanted}
    missing = [n for n, role in chosen.items() if role is None]
    if missing:
        raise BadRequest(
            f"Unknown role name(s): {', '.join(repr(m) for m in missing)}.",
            ErrorCode.UNKNOWN_ROLE,
            unknown=missing,
        )
    return list({r.key: r for r in chosen.values() if r is not None}.values())


def of_user(conn: Connection, user_key: str) -> list[RoleRecord]:
    """The roles a user holds."""
    query = (
        select(roles)
        .join(user_roles, user_roles.c.role_key == roles.c.key)
        .where(user_roles.c.user_key == user_key)
        .order_by(roles.c.name_fold)
    )
    return records(conn, conn.execute(query).mappings())


def defaults(conn: Connection) -> list[RoleRecord]:
    """The roles marked ``defaultRole``, given to a user created without roles."""
    query = select(roles).where(roles.c.default_role.is_(True)).order_by(roles.c.name_fold)
    return records(conn, conn.execute(query).mappings())


def _check_grants(conn: Connection, grants: Mapping[str, list[str]]) -> None:
    for kind, keys in grants.items():
        wire, table = GRANT_KINDS[kind]
        if not keys:
            continue
        known = set(conn.execute(select(table.c.key).where(table.c.key.in_(keys))).scalars())
        missing = [k for k in keys if k not in known]
        if missing:
            raise BadRequest(
                f"{wire} names keys that do not exist: {', '.join(missing)}.",
                ErrorCode.UNKNOWN_REFERENCE,
                field=wire,
                unknown=missing,
            )


def _write_grants(conn: Connection, key: str, grants: Mapping[str, list[str]]) -> None:
    _check_grants(conn, grants)
    for kind, keys in grants.items():
        conn.execute(
            delete(role_grants).where(role_grants.c.role_key == key, role_grants.c.kind == kind)
        )
        rows = [{"role_key": key, "kind": kind, "target_key": k} for k in dict.fromkeys(keys)]
        if rows:
            conn.execute(insert(role_grants), rows)


def create(
    conn: Connection, values: Mapping[str, Any], grants: Mapping[str, list[str]]
) -> RoleRecord:
    """Create a role from store-named values and grants; 409 on a duplicate name."""
    now = now_ms()
    key = new_key()
    row = {c: values.get(c) for c in ROLE_COLUMNS}
    name = claim_name(conn, roles, "role", str(row["name"]))
    row.update(name=name, key=key, name_fold=fold(name), created_ms=now, changed_ms=now)
    for flag in ("default_role", "job_template_creation_allowed", "job_execution_allowed"):
        row[flag] = bool(row[flag])
    with unique_name("role", str(row["name"])):
        conn.execute(insert(roles).values(**row))
    _write_grants(conn, key, grants)
    return get(conn, key)


def update_role(
    conn: Connection, key: str, values: Mapping[str, Any], grants: Mapping[str, list[str]]
) -> RoleRecord:
    """Change the given columns and grant kinds of a role; the rest stays as it is."""
    current = get(conn, key)
    row = {c: v for c, v in values.items() if c in ROLE_COLUMNS}
    if "name" in row:
        if canonical_name(row["name"]) != current.name:
            row["name"] = claim_name(conn, roles, "role", row["name"], key)
        else:
            # Unchanged: names that looked alike before the rule existed are left alone.
            row["name"] = current.name
        row["name_fold"] = fold(row["name"])
    row["changed_ms"] = now_ms()
    with keeps_administrator(conn):
        with unique_name("role", row.get("name", "")):
            conn.execute(update(roles).where(roles.c.key == key).values(**row))
        _write_grants(conn, key, grants)
    return get(conn, key)


def delete_role(conn: Connection, key: str) -> RoleRecord:
    """Delete a role; 409 while it is some user's only role or the last administrators' role."""
    record = get(conn, key)
    holders = select(user_roles.c.user_key).where(user_roles.c.role_key == key)
    counts = (
        select(user_roles.c.user_key, func.count().label("n"))
        .where(user_roles.c.user_key.in_(holders))
        .group_by(user_roles.c.user_key)
        .subquery()
    )
    only = conn.execute(
        select(users.c.name)
        .join(counts, counts.c.user_key == users.c.key)
        .where(counts.c.n == 1)
        .order_by(users.c.name_fold)
    ).scalars().all()
    if only:
        shown = ", ".join(only[:10]) + (" ..." if len(only) > 10 else "")
        raise Conflict(
            f"Role '{record.name}' is the only role of {len(only)} user(s) ({shown}); give them "
            "another role first.",
            ErrorCode.ROLE_IN_USE,
            users=list(only),
        )
    with keeps_administrator(conn):
        conn.execute(delete(user_roles).where(user_roles.c.role_key == key))
        conn.execute(delete(roles).where(roles.c.key == key))
    return record


def administrator_count(conn: Connection) -> int:
    """How many users hold a role with the Administrator access level."""
    query = (
        select(func.count(func.distinct(user_roles.c.user_key)))
        .join(roles, roles.c.key == user_roles.c.role_key)
        .where(roles.c.access_level == AccessLevel.ADMINISTRATOR.value)
    )
    return int(conn.execute(query).scalar_one())


@contextmanager
def keeps_administrator(conn: Connection) -> Iterator[None]:
    """409 (rolling the transaction back) when the change in the block leaves no administrator.

    Checked after the change, inside its transaction, so every path that could demote the last
    administrator (a role update, a role removal, a deletion) is caught by the same rule. A store
    that had no administrator to begin with (a fresh one, being set up) is left alone.
    """
    lock_memberships(conn)
    before = administrator_count(conn)
    yield
    if before and not administrator_count(conn):
        raise Conflict(
            "This change would leave the catalog without an administrator; make another user an "
            "administrator first.",
            ErrorCode.LAST_ADMINISTRATOR,
        )
