"""Writing user profiles and their roles (Administrator, except one's own preferences), audited.

What the schemas cannot say lives here: a property sent as null is refused (absent means
unchanged), a new password is hashed and ends the user's other sessions, and the body of a role
removal, a free-form object of user keys to role names, is checked after the caller's level so
that a refusal of either kind is on the audit trail. Names are NFKC-normalised and confusable
names refused by the store (see :mod:`catalog_nb.server.confusables`).
"""

from __future__ import annotations

import unicodedata
from typing import Any

from pydantic.alias_generators import to_camel

from catalog_nb.contract import AuditAction, AuditObjectType, ErrorCode
from catalog_nb.server.auditing import audited
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.passwords import hash_password
from catalog_nb.server.schemas.users import (
    AssignRole,
    MeUpdate,
    UserCreate,
    UserUpdate,
    user_out,
)
from catalog_nb.server.security import Caller, require_admin
from catalog_nb.server.services.read_back import merge_map, refuse_changed, refuse_on_create
from catalog_nb.server.store import Store
from catalog_nb.server.store import sessions as session_store
from catalog_nb.server.store import users as user_store
from catalog_nb.server.store.users import UserRecord

_WRITE = "Changing user profiles"


def create(store: Store, caller: Caller, body: UserCreate) -> UserRecord:
    """Create a user (Administrator); without ``roles`` the default roles are given."""
    with audited(store, caller, AuditAction.CREATE, AuditObjectType.USER, name=body.name) as w:
        require_admin(caller, _WRITE)
        refuse_on_create(body, {"type": "user"})
        hashed = hash_password(body.password) if body.password else None
        record = user_store.create(w.conn, body.changes(), body.roles, caller.name, hashed)
        w.target(record.key, record.name)
    return record


def update_own(store: Store, caller: Caller, body: MeUpdate) -> None:
    """Change the caller's own preferences (anyone signed in), audited."""
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.USER,
                 key=caller.key, name=caller.name) as w:
        user_store.update_user(w.conn, caller.key, body.changes(), None, caller.name)


def update(store: Store, caller: Caller, key: str, body: UserUpdate) -> None:
    """Change a user (Administrator); properties absent from the body stay unchanged.

    A change of the password alone is audited as SET_PASSWORD; a new password closes the user's
    sessions other than the caller's. The body may be the user as read (``services.read_back``:
    read-only properties refused only when changed); ``attributes`` is merged into the current
    map (an entry sent as null is removed, ``"attributes": null`` clears it), so a partial
    ``{"attributes": {"firstName": ...}}`` keeps ``lastName`` and ``email``.
    """
    changes = body.changes()
    action = AuditAction.SET_PASSWORD if set(changes) == {"password"} else AuditAction.UPDATE
    with audited(store, caller, action, AuditObjectType.USER, key=key) as w:
        require_admin(caller, _WRITE)
        for field in ("name", "prefilters_enabled", "password", "roles"):
            if field in changes and changes[field] is None:
                raise BadRequest(f"{to_camel(field)} cannot be set to null.",
                                 ErrorCode.INVALID_PAYLOAD)
        current = user_store.get(w.conn, key)
        refuse_changed(body, user_out(current))
        if "attributes" in changes:
            changes["attributes"] = merge_map(current.attributes, changes["attributes"])
        hashed = hash_password(body.password) if body.password else None
        record = user_store.update_user(w.conn, key, changes, body.roles, caller.name, hashed)
        w.target(record.key, record.name)
        if hashed:
            # A new password ends the user's other sessions: whoever knew the old one is out.
            session_store.close_user_sessions(w.conn, key, keep=caller.token)


def delete(store: Store, caller: Caller, key: str) -> None:
    """Delete a user and their sessions (Administrator); not oneself, not the last admin."""
    with audited(store, caller, AuditAction.DELETE, AuditObjectType.USER, key=key) as w:
        require_admin(caller, _WRITE)
        record = user_store.delete_user(w.conn, key, caller.key)
        w.target(record.key, record.name)


def assign_role(store: Store, caller: Caller, body: AssignRole) -> UserRecord:
    """Give a user, found by (NFKC) name, one more role (Administrator)."""
    with audited(store, caller, AuditAction.ASSIGN_ROLE, AuditObjectType.USER,
                 name=body.user_name) as w:
        require_admin(caller, _WRITE)
        user = user_store.find_by_name(w.conn, body.user_name, normalise=True)
        if user is None:
            raise BadRequest(f"There is no user named '{body.user_name}'.", ErrorCode.UNKNOWN_USER)
        w.target(user.key, user.name)
        w.message = f"role {body.role_name}"
        return user_store.assign_role(w.conn, user.key, body.role_name, caller.name)


def _printable(text: str) -> bool:
    """No control, format or lone surrogate characters (they cannot be keys or role names)."""
    return not any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in text)


def _removals(body: Any) -> dict[str, list[str]]:
    """The role names to take from each user key, from the request body as it was sent (a
    name alone stands for a list of one)."""
    if not isinstance(body, dict) or not body:
        raise BadRequest(
            'The body must be an object mapping user keys to role names, e.g. {"<userKey>": '
            '["Analyst"]}.',
            ErrorCode.INVALID_PAYLOAD,
        )
    removals: dict[str, list[str]] = {}
    for user_key, names in body.items():
        listed = [names] if isinstance(names, str) else names
        if not _printable(user_key) or not isinstance(listed, list) or not listed or not all(
            isinstance(n, str) and n.strip() and _printable(n) for n in listed
        ):
            raise BadRequest(
                f"The roles to remove from user {user_key!r} must be a role name or a non-empty "
                "list of role names.",
                ErrorCode.INVALID_PAYLOAD,
            )
        removals[user_key] = [n.strip() for n in listed]
    return removals


def remove_roles(store: Store, caller: Caller, body: Any) -> list[UserRecord]:
    """Take roles from users (Administrator): ``body`` is ``{"<userKey>": ["roleName", ...]}``
    as sent; the users as they are afterwards.

    All or nothing: a user left without a role, or a catalog left without an administrator,
    refuses the whole request.
    """
    updated = []
    with audited(store, caller, AuditAction.REMOVE_ROLE, AuditObjectType.USER) as w:
        require_admin(caller, _WRITE)
        removals = _removals(body)
        single = len(removals) == 1
        for user_key, names in removals.items():
            if single:  # named before the change, so a refusal is recorded against the user
                w.target(user_key)
            user = user_store.find(w.conn, user_key)
            if user is None:
                raise BadRequest(f"There is no user with key '{user_key}'.", ErrorCode.UNKNOWN_USER)
            if single:
                w.target(user.key, user.name)
            updated.append(user_store.remove_roles(w.conn, user_key, names))
        if not single:
            w.target(None, ", ".join(u.name for u in updated))
        w.message = "; ".join(f"{k}: {', '.join(v)}" for k, v in removals.items())
    return updated
