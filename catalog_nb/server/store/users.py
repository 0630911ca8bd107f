"""User profiles, their roles and their (hashed) passwords.

Rules kept here, inside each write's transaction: a user always keeps at least one role, a
user created without roles gets the default roles, no change may leave the catalog without
an administrator, and a name is stored NFKC-normalised and may not look like another user's
(:func:`~catalog_nb.server.store.common.claim_name`: 409 CONFUSABLE_NAME).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select, update

from catalog_nb.contract import AccessLevel, ErrorCode
from catalog_nb.server.confusables import canonical_name
from catalog_nb.server.errors import BadRequest, Conflict, NotFound
from catalog_nb.server.store import roles as role_store
from catalog_nb.server.store.common import (
    chunks,
    claim_name,
    fold,
    lock_memberships,
    name_forms,
    new_key,
    now_ms,
    unique_name,
)
from catalog_nb.server.store.schema import roles, user_roles, users

#: User columns a create or update may set (store names).
USER_COLUMNS = ("name", "description", "rich_description", "attributes", "prefilters_enabled")


@dataclass
class UserRecord:
    key: str
    name: str
    description: str | None
    rich_description: str | None
    attributes: dict[str, Any]
    prefilters_enabled: bool
    password_hash: str | None
    created_ms: int
    changed_ms: int
    roles: list[role_store.RoleRecord] = field(default_factory=list)
    assigned_by: dict[str, str | None] = field(default_factory=dict)

    @property
    def access_levels(self) -> list[str]:
        """Distinct access levels of the user's roles, most powerful first."""
        order = list(AccessLevel)
        levels = {r.access_level for r in self.roles}
        return [lvl.value for lvl in order if lvl.value in levels]

    @property
    def admin(self) -> bool:
        return AccessLevel.ADMINISTRATOR.value in self.access_levels


def _record(row: Any) -> UserRecord:
    """A user row as a record, without its roles."""
    return UserRecord(**{k: v for k, v in row.items() if k != "name_fold"})


def _with_roles(conn: Connection, rows: Iterable[Any]) -> list[UserRecord]:
    """Users with the roles they hold, in two queries whatever their number: their roles
    (joined through user_roles, never every role of the catalog), then those roles' grants."""
    found = [_record(row) for row in rows]
    if not found:
        return found
    by_key = {u.key: u for u in found}
    links: list[Any] = []
    for keys in chunks(list(by_key)):
        links.extend(conn.execute(
            select(user_roles.c.user_key, user_roles.c.assigned_by, *roles.c)
            .join(roles, roles.c.key == user_roles.c.role_key)
            .where(user_roles.c.user_key.in_(keys))
        ).mappings())
    role_rows = {link["key"]: {c.name: link[c.name] for c in roles.c} for link in links}
    held = {r.key: r for r in role_store.records(conn, role_rows.values())}
    for link in links:
        user = by_key[link["user_key"]]
        role = held[link["key"]]
        user.roles.append(role)
        user.assigned_by[role.name] = link["assigned_by"]
    for user in found:
        user.roles.sort(key=lambda r: fold(r.name))
    return found


def list_all(conn: Connection, name: str | None = None) -> list[UserRecord]:
    """Every user by name, or the one with ``name`` (case-insensitive, in its NFKC form too)."""
    query = select(users).order_by(users.c.name_fold)
    if name is not None:
        query = query.where(users.c.name_fold.in_(name_forms(name)))
    return _with_roles(conn, conn.execute(query).mappings())


def find(conn: Connection, key: str) -> UserRecord | None:
    """The user with this key, or None."""
    found = _with_roles(conn, conn.execute(select(users).where(users.c.key == key)).mappings())
    return found[0] if found else None


def get(conn: Connection, key: str) -> UserRecord:
    """The user with this key; 404 when there is none."""
    record = find(conn, key)
    if record is None:
        raise NotFound(f"There is no user with key '{key}'.", ErrorCode.USER_NOT_FOUND)
    return record


def find_by_name(conn: Connection, name: str, *, normalise: bool = False,
                 roles: bool = True) -> UserRecord | None:
    """The user with this name (case-insensitive), or None; without their roles when ``roles``
    is False (one query instead of three: a login needs only the name and the password).

    Exactly the name given unless ``normalise``, which also finds it by its NFKC form
    (``admin`` in fullwidth letters finds ``admin``). Login looks names up exactly on purpose:
    its throttle counts failures per name as typed, and a look-up wider than that count would
    let every spelling of one name try its own round of passwords. Login normalises the name
    itself (:func:`canonical_name`) before both.
    """
    forms = name_forms(name) if normalise else [fold(name)]
    query = select(users).where(users.c.name_fold.in_(forms))
    rows = conn.execute(query).mappings()
    found = _with_roles(conn, rows) if roles else [_record(row) for row in rows]
    # The canonical form first: an older user stored as typed is found only by that spelling.
    rank = {form: i for i, form in enumerate(forms)}
    found.sort(key=lambda u: rank.get(fold(u.name), len(forms)))
    return found[0] if found else None


def get_by_name(conn: Connection, name: str) -> UserRecord:
    """The user with this name, or its NFKC form; 404 when there is none."""
    record = find_by_name(conn, name, normalise=True)
    if record is None:
        raise NotFound(f"There is no user named '{name}'.", ErrorCode.USER_NOT_FOUND)
    return record


def search(conn: Connection, chars: str, limit: int) -> list[UserRecord]:
    """Users whose name, first name, last name or email contain ``chars`` (case-insensitive).

    Attributes are JSON, whose querying differs between dialects, so the name match runs in SQL
    and the attribute match in Python over the (small) user table.
    """
    # Both sides NFKC-normalised: names are stored that way, attributes are not.
    needle = canonical_name(chars).casefold()
    matched = []
    for user in conn.execute(select(users).order_by(users.c.name_fold)).mappings():
        attrs = user["attributes"] or {}
        texts = [user["name"], *(attrs.get(k) for k in ("firstName", "lastName", "email"))]
        if any(isinstance(t, str) and needle in canonical_name(t).casefold() for t in texts):
            matched.append(user)
            if len(matched) >= limit:
                break
    return _with_roles(conn, matched)


def _link(conn: Connection, user_key: str, role_keys: Iterable[str], assigned_by: str) -> None:
    now = now_ms()
    held = set(
        conn.execute(
            select(user_roles.c.role_key).where(user_roles.c.user_key == user_key)
        ).scalars()
    )
    rows = [
        {"user_key": user_key, "role_key": k, "assigned_by": assigned_by, "assigned_ms": now}
        for k in dict.fromkeys(role_keys)
        if k not in held
    ]
    if rows:
        conn.execute(insert(user_roles), rows)


def _unlink(conn: Connection, user_key: str, role_keys: Iterable[str]) -> None:
    lock_memberships(conn)
    keys = list(role_keys)
    if keys:
        conn.execute(
            delete(user_roles).where(
                user_roles.c.user_key == user_key, user_roles.c.role_key.in_(keys)
            )
        )
    left = conn.execute(
        select(func.count()).select_from(user_roles).where(user_roles.c.user_key == user_key)
    ).scalar_one()
    if not left:
        raise Conflict(
            "A user must keep at least one role; assign the new role first, then remove the old.",
            ErrorCode.LAST_ROLE,
        )


def create(
    conn: Connection,
    values: Mapping[str, Any],
    role_names: list[str] | None,
    assigned_by: str,
    password_hash: str | None = None,
) -> UserRecord:
    """Create a user; without ``role_names`` the default roles are assigned."""
    if role_names:
        granted = role_store.resolve_names(conn, role_names)
    else:
        granted = role_store.defaults(conn)
        if not granted:
            raise BadRequest(
                "No roles were given and no role is marked defaultRole; name the user's roles.",
                ErrorCode.INVALID_PAYLOAD,
            )
    now = now_ms()
    key = new_key()
    row = {c: values.get(c) for c in USER_COLUMNS}
    name = claim_name(conn, users, "user", str(row["name"]))
    row.update(
        name=name,
        key=key,
        name_fold=fold(name),
        attributes=row["attributes"] or {},
        prefilters_enabled=bool(row["prefilters_enabled"]),
        password_hash=password_hash,
        created_ms=now,
        changed_ms=now,
    )
    with unique_name("user", str(row["name"])):
        conn.execute(insert(users).values(**row))
    _link(conn, key, [r.key for r in granted], assigned_by)
    return get(conn, key)


def update_user(
    conn: Connection,
    key: str,
    values: Mapping[str, Any],
    role_names: list[str] | None,
    assigned_by: str,
    password_hash: str | None = None,
) -> UserRecord:
    """Change the given columns; ``role_names`` (when given) replaces the user's roles."""
    current = get(conn, key)
    row = {c: v for c, v in values.items() if c in USER_COLUMNS}
    if "name" in row:
        if canonical_name(row["name"]) != current.name:
            row["name"] = claim_name(conn, users, "user", row["name"], key)
        else:
            # Unchanged: names that looked alike before the rule existed are left alone.
            row["name"] = current.name
        row["name_fold"] = fold(row["name"])
    if password_hash is not None:
        row["password_hash"] = password_hash
    row["changed_ms"] = now_ms()
    with role_store.keeps_administrator(conn):
        with unique_name("user", row.get("name", "")):
            conn.execute(update(users).where(users.c.key == key).values(**row))
        if role_names is not None:
            wanted = role_store.resolve_names(conn, role_names) if role_names else []
            wanted_keys = {r.key for r in wanted}
            _link(conn, key, wanted_keys, assigned_by)
            _unlink(conn, key, [r.key for r in current.roles if r.key not in wanted_keys])
    return get(conn, key)


def set_password_hash(conn: Connection, key: str, password_hash: str | None) -> UserRecord:
    """Replace a user's password hash (None removes the password: the user cannot log in)."""
    get(conn, key)
    conn.execute(
        update(users)
        .where(users.c.key == key)
        .values(password_hash=password_hash, changed_ms=now_ms())
    )
    return get(conn, key)


def delete_user(conn: Connection, key: str, actor_key: str | None) -> UserRecord:
    """Delete a user (and their sessions); 409 for oneself or the last administrator."""
    record = get(conn, key)
    if key == actor_key:
        raise Conflict(
            "You cannot delete your own user profile; ask another administrator.",
            ErrorCode.CANNOT_DELETE_SELF,
        )
    with role_store.keeps_administrator(conn):
        conn.execute(delete(user_roles).where(user_roles.c.user_key == key))
        conn.execute(delete(users).where(users.c.key == key))
    return record


def assign_role(conn: Connection, user_key: str, role_name: str, assigned_by: str) -> UserRecord:
    """Give a user one more role (assigning a role already held changes nothing)."""
    (role,) = role_store.resolve_names(conn, [role_name])
    _link(conn, user_key, [role.key], assigned_by)
    conn.execute(update(users).where(users.c.key == user_key).values(changed_ms=now_ms()))
    return get(conn, user_key)


def remove_roles(conn: Connection, user_key: str, role_names: list[str]) -> UserRecord:
    """Take roles from a user; 409 when none would be left or no administrator would be."""
    current = get(conn, user_key)
    removing = {r.key for r in role_store.resolve_names(conn, role_names)}
    with role_store.keeps_administrator(conn):
        _unlink(conn, user_key, [r.key for r in current.roles if r.key in removing])
    conn.execute(update(users).where(users.c.key == user_key).values(changed_ms=now_ms()))
    return get(conn, user_key)


def count(conn: Connection) -> int:
    """How many users there are."""
    return int(conn.execute(select(func.count()).select_from(users)).scalar_one())
