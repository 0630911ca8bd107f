"""What a new store is given on first start: the built-in roles and the first administrator."""

from __future__ import annotations

import logging

from sqlalchemy import Connection

from catalog_nb.contract import MIN_PASSWORD_LENGTH, AccessLevel
from catalog_nb.server.security import hash_password
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import roles as role_store
from catalog_nb.server.store import users as user_store

log = logging.getLogger(__name__)

#: name -> column values; Analyst is the default role of new users.
BUILTIN_ROLES: dict[str, dict[str, object]] = {
    "Administrator": {
        "access_level": AccessLevel.ADMINISTRATOR.value,
        "description": "Full control of the catalog.",
        "metadata_access_option": "ALL",
        "data_access_option": "ALL",
        "job_template_creation_allowed": True,
        "job_execution_allowed": True,
    },
    "Steward": {
        "access_level": AccessLevel.STEWARD.value,
        "description": "Curates tags and descriptions in the granted domains and sources.",
        "metadata_access_option": "RESTRICTED",
        "data_access_option": "RESTRICTED",
        "job_execution_allowed": True,
    },
    "Analyst": {
        "access_level": AccessLevel.ANALYST.value,
        "description": "Explores granted sources; suggests tags, favorites and reviews.",
        "metadata_access_option": "RESTRICTED",
        "data_access_option": "RESTRICTED",
        "default_role": True,
    },
    "Guest": {
        "access_level": AccessLevel.GUEST.value,
        "description": "Reads the metadata of granted sources.",
        "metadata_access_option": "RESTRICTED",
        "data_access_option": "NONE",
    },
}


def bootstrap(conn: Connection, settings: Settings) -> None:
    """Give an empty store its built-in roles and, when configured, its first administrator.

    Raises ValueError when the configured administrator password is too short.
    """
    if not role_store.list_all(conn):
        for name, values in BUILTIN_ROLES.items():
            role_store.create(conn, {"name": name, **values}, {})
    if user_store.count(conn):
        return
    if not settings.admin_password:
        log.warning(
            "The catalog has no users and CATALOG_ADMIN_PASSWORD is not set: nobody can log in "
            "until an administrator is created with `catalog-nb user create NAME --role "
            "Administrator`."
        )
        return
    if len(settings.admin_password) < MIN_PASSWORD_LENGTH:
        raise ValueError(
            f"CATALOG_ADMIN_PASSWORD must be at least {MIN_PASSWORD_LENGTH} characters long."
        )
    admin_role = next(
        (r for r in role_store.list_all(conn) if r.access_level == AccessLevel.ADMINISTRATOR.value),
        None,
    )
    if admin_role is None:
        admin_role = role_store.create(
            conn, {"name": "Administrator", **BUILTIN_ROLES["Administrator"]}, {}
        )
    user_store.create(
        conn,
        {"name": settings.admin_user, "description": "Administrator created on first start."},
        [admin_role.name],
        "bootstrap",
        hash_password(settings.admin_password),
    )
    log.info("Created the administrator %r.", settings.admin_user)
