"""Users: typed frames of users, their roles and permissions, and the user writes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.paging import check_limit, warn_truncated
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.refs import lookup
from catalog_nb.client.roles import RoleRef, resolve_role, role_names

__all__ = [
    "PERMIT_COLUMNS",
    "USER_COLUMNS",
    "USER_ROLE_COLUMNS",
    "USER_SEARCH_COLUMNS",
    "UserRef",
    "UsersMixin",
    "resolve_user",
]

#: A user as callers name it: its name, its key, or its JSON dict / frame row (with ``key``).
UserRef = str | Mapping[str, Any] | pd.Series

_NAME_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("name", "string"),
    Column("first_name", "string", "attributes.firstName"),
    Column("last_name", "string", "attributes.lastName"),
    Column("email", "string", "attributes.email"),
)

#: Columns of :meth:`UsersMixin.users` and :meth:`UsersMixin.me`.
USER_COLUMNS: tuple[Column, ...] = (
    *_NAME_COLUMNS,
    Column("roles", "list"),
    Column("access_levels", "list", "accessLevels"),
    Column("admin", "bool"),
    Column("prefilters_enabled", "bool", "prefiltersEnabled"),
    Column("password_set", "bool", "passwordSet"),
    Column("description", "string"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)

#: Columns of :meth:`UsersMixin.find_users`.
USER_SEARCH_COLUMNS: tuple[Column, ...] = _NAME_COLUMNS

#: Columns of :meth:`UsersMixin.user_roles` (long form: one row per user and role).
USER_ROLE_COLUMNS: tuple[Column, ...] = (
    Column("user_key", "string"),
    Column("user_name", "string"),
    Column("role_key", "string"),
    Column("role_name", "string"),
    Column("access_level", "string"),
    Column("assigned_by", "string"),
)

#: Columns of :meth:`UsersMixin.who_can_see`.
PERMIT_COLUMNS: tuple[Column, ...] = (
    Column("user_name", "string"),
    Column("can_see", "bool"),
)

#: Python keyword -> wire field of a user, for ``create_user``/``update_user``.
USER_FIELDS: dict[str, str] = {
    "name": "name",
    "description": "description",
    "rich_description": "richDescription",
    "roles": "roles",
    "prefilters_enabled": "prefiltersEnabled",
    "password": "password",
    "attributes": "attributes",
}
#: Python keyword -> key inside the user's ``attributes``.
ATTRIBUTE_FIELDS: dict[str, str] = {
    "first_name": "firstName",
    "last_name": "lastName",
    "email": "email",
}


def resolve_user(api: CatalogApi, ref: UserRef) -> dict[str, Any]:
    """The User JSON of ``ref``: tried as a user name first, then as a key.

    Raises :class:`NotFoundError` (``USER_NOT_FOUND``) when neither matches.
    """
    return lookup(ref, api.get_user_by_name, api.get_user, "user",
                  contract.ErrorCode.USER_NOT_FOUND.value)


def _user_body(fields: Mapping[str, Any], current_attributes: Mapping[str, Any]) -> dict[str, Any]:
    allowed = set(USER_FIELDS) | set(ATTRIBUTE_FIELDS)
    unknown = sorted(set(fields) - allowed)
    if unknown:
        raise TypeError(
            f"unknown user field(s) {', '.join(unknown)}; expected some of "
            f"{', '.join(sorted(allowed))}"
        )
    body = {USER_FIELDS[k]: v for k, v in fields.items() if k in USER_FIELDS and v is not None}
    if "roles" in body:
        body["roles"] = role_names(_as_list(body["roles"]))
    shortcuts = {ATTRIBUTE_FIELDS[k]: v for k, v in fields.items() if k in ATTRIBUTE_FIELDS}
    shortcuts = {k: v for k, v in shortcuts.items() if v is not None}
    if shortcuts or "attributes" in body:
        body["attributes"] = {**current_attributes, **body.get("attributes", {}), **shortcuts}
    return body


def _as_list(value: RoleRef | Iterable[RoleRef]) -> list[RoleRef]:
    if isinstance(value, str | Mapping | pd.Series):
        return [value]
    return list(value)


class UsersMixin(CatalogPart):
    """User frames and writes; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""


    # -- reads ---------------------------------------------------------------------------------

    @overload
    def users(self, name: str | None = ..., *, as_frame: Literal[True] = ...) -> pd.DataFrame: ...
    @overload
    def users(
        self, name: str | None = ..., *, as_frame: Literal[False]
    ) -> list[dict[str, Any]]: ...
    def users(
        self, name: str | None = None, *, as_frame: bool = True
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Every user (or the one called ``name``), one row each.

        Columns: key, name, first_name, last_name, email, roles and access_levels (lists),
        admin, prefilters_enabled, password_set (booleans), description, created, changed
        (UTC datetimes). ``as_frame=False`` returns the JSON list.

        Example::

            cat.users().loc[lambda u: ~u.password_set, ["name", "email"]]
        """
        records = self.api.list_users(name)
        return to_frame(records, USER_COLUMNS) if as_frame else records

    @overload
    def me(self, *, as_frame: Literal[True] = True) -> pd.DataFrame: ...
    @overload
    def me(self, *, as_frame: Literal[False]) -> dict[str, Any]: ...
    def me(self, *, as_frame: bool = True) -> pd.DataFrame | dict[str, Any]:
        """The logged-in user as a one-row frame with the columns of :meth:`users`.

        A one-row frame (not a Series) keeps the dtypes and concatenates with :meth:`users`;
        ``cat.me().iloc[0]`` gives the row as a Series. ``as_frame=False`` returns the JSON.
        """
        record: dict[str, Any] = self.api.get_me()
        return to_frame([record], USER_COLUMNS) if as_frame else record

    def user(self, name_or_key: UserRef) -> dict[str, Any]:
        """One user's JSON, by name or key: ``cat.user("ada")["roles"]``."""
        return resolve_user(self.api, name_or_key)

    def user_roles(self) -> pd.DataFrame:
        """Who holds which role: one row per user and role.

        Columns: user_key, user_name, role_key, role_name, access_level, assigned_by (the user
        who assigned the role, when the service knows it).

        Example::

            cat.user_roles().groupby("role_name")["user_name"].agg(list)
        """
        roles_by_name = {role.get("name"): role for role in self.api.list_roles()}
        rows: list[dict[str, Any]] = []
        for user in self.api.list_users():
            assigned_by = user.get("assignedByMap") or {}
            for role_name in user.get("roles") or []:
                role = roles_by_name.get(role_name) or {}
                rows.append(
                    {
                        "user_key": user.get("key"),
                        "user_name": user.get("name"),
                        "role_key": role.get("key"),
                        "role_name": role_name,
                        "access_level": role.get("accessLevel"),
                        "assigned_by": assigned_by.get(role_name),
                    }
                )
        return to_frame(rows, USER_ROLE_COLUMNS)

    @overload
    def find_users(
        self, chars: str, limit: int | None = ..., *, as_frame: Literal[True] = ...
    ) -> pd.DataFrame: ...
    @overload
    def find_users(
        self, chars: str, limit: int | None = ..., *, as_frame: Literal[False]
    ) -> list[dict[str, Any]]: ...
    def find_users(
        self,
        chars: str,
        limit: int | None = contract.USER_SEARCH_DEFAULT_LIMIT,
        *,
        as_frame: bool = True,
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Users whose name, first or last name or email contains ``chars`` (any case).

        Columns: key, name, first_name, last_name, email. At most ``limit`` rows (``None``: the
        service's maximum); a :class:`TruncatedResultWarning` says when more users matched.

        Example::

            cat.find_users("smith")
        """
        cap = contract.USER_SEARCH_MAX_LIMIT
        check_limit(limit, f"the service's maximum of {cap}")
        wanted = cap if limit is None else limit
        records = self.api.search_users(chars, min(wanted + 1, cap))
        if len(records) > wanted or (wanted >= cap and len(records) >= cap):
            more = "more than" if len(records) > wanted else "possibly more than"
            records = records[:wanted]
            warn_truncated(
                f"find_users({chars!r})", shown=len(records), total=f"{more} {wanted}",
                noun="users",
                because=f"limit={limit}" if limit is not None else f"the service sends {cap}",
                remedy=f"narrow the search or raise limit= (the service allows up to {cap})",
            )
        return to_frame(records, USER_SEARCH_COLUMNS) if as_frame else records

    @overload
    def who_can_see(
        self, source: str, path: str | None = ..., *, as_frame: Literal[True] = ...
    ) -> pd.DataFrame: ...
    @overload
    def who_can_see(
        self, source: str, path: str | None = ..., *, as_frame: Literal[False]
    ) -> dict[str, bool]: ...
    def who_can_see(
        self, source: str, path: str | None = None, *, as_frame: bool = True
    ) -> pd.DataFrame | dict[str, bool]:
        """Which users can see data source ``source`` (or the resource at ``path`` in it).

        Columns: user_name, can_see (boolean), sorted by user name. ``as_frame=False`` returns
        the service's ``{userName: bool}`` map.

        Example::

            cat.who_can_see("finance", "ledger/2024.csv").query("can_see")
        """
        if path is None:
            permits = self.api.permit_source(source)
        else:
            permits = self.api.permit_resource(source, path)
        if not as_frame:
            return permits
        rows = [{"user_name": name, "can_see": permits[name]} for name in sorted(permits)]
        return to_frame(rows, PERMIT_COLUMNS)

    # -- writes --------------------------------------------------------------------------------

    def create_user(
        self,
        name: str,
        *,
        roles: Iterable[RoleRef] | str | None = None,
        password: str | None = None,
        email: str | None = None,
        first_name: str | None = None,
        last_name: str | None = None,
        description: str | None = None,
        attributes: Mapping[str, Any] | None = None,
        prefilters_enabled: bool | None = None,
    ) -> dict[str, Any]:
        """Create a user and return its JSON (with the key the service assigned).

        ``roles`` are role names (or role dicts); without them the service assigns the default
        roles. A user without ``password`` cannot log in until one is set.

        Example::

            cat.create_user("ada", roles=["Analysts"], email="ada@example.org", password=pw)
        """
        body = _user_body(
            {
                "name": name,
                "roles": roles,
                "password": password,
                "email": email,
                "first_name": first_name,
                "last_name": last_name,
                "description": description,
                "attributes": dict(attributes) if attributes is not None else None,
                "prefilters_enabled": prefilters_enabled,
            },
            {},
        )
        created: dict[str, Any] = self.api.create_user(body)
        return created

    def update_user(self, name_or_key: UserRef, **changes: Any) -> dict[str, Any]:
        """Change some fields of a user and return the updated JSON.

        Fields: name, description, rich_description, roles (replaces the set),
        prefilters_enabled, password, attributes (a dict merged into the existing ones), and
        the attribute shortcuts first_name, last_name, email.

        Example::

            cat.update_user("ada", email="ada@new.example.org", roles=["Stewards"])
        """
        user = resolve_user(self.api, name_or_key)
        body = _user_body(changes, user.get("attributes") or {})
        if body:
            self.api.update_user(user["key"], body)
        updated: dict[str, Any] = self.api.get_user(user["key"])
        return updated

    def delete_user(self, name_or_key: UserRef) -> None:
        """Delete a user (by name or key). The last administrator cannot be deleted."""
        user = resolve_user(self.api, name_or_key)
        self.api.delete_user(user["key"])

    def set_password(self, user: UserRef, password: str) -> None:
        """Set a user's password (Administrator only). Weak passwords raise BadRequestError."""
        key = resolve_user(self.api, user)["key"]
        self.api.update_user(key, {"password": password})

    def assign_role(self, user: UserRef, role: RoleRef) -> dict[str, Any]:
        """Give ``user`` the role ``role`` (names or keys); returns the updated user JSON.

        Example::

            cat.assign_role("ada", "Stewards")
        """
        user_name = resolve_user(self.api, user)["name"]
        role_name = resolve_role(self.api, role)["name"]
        updated: dict[str, Any] = self.api.assign_role(user_name, role_name)
        return updated

    def remove_role(
        self, user: UserRef, role_or_roles: RoleRef | Iterable[RoleRef]
    ) -> dict[str, Any]:
        """Take one role or several away from ``user``; returns the updated user JSON.

        A user keeps at least one role: removing the last one raises ``ConflictError``
        (use :meth:`replace_role`).
        """
        record = resolve_user(self.api, user)
        held = set(record.get("roles") or [])
        names = [
            ref if isinstance(ref, str) and ref in held else resolve_role(self.api, ref)["name"]
            for ref in _as_list(role_or_roles)
        ]
        updated = self.api.remove_roles({record["key"]: names})
        for candidate in updated or []:
            if candidate.get("key") == record["key"]:
                return dict(candidate)
        refreshed: dict[str, Any] = self.api.get_user(record["key"])
        return refreshed

    def replace_role(self, user: UserRef, old: RoleRef, new: RoleRef) -> dict[str, Any]:
        """Swap role ``old`` for ``new``: assigns ``new`` first, then removes ``old``.

        That order works even when ``old`` is the user's last role. Returns the user JSON.

        Example::

            cat.replace_role("ada", "Analysts", "Stewards")
        """
        record = resolve_user(self.api, user)
        self.assign_role(record, new)
        return self.remove_role(record, old)
