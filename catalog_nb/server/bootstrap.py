"""What a new store is given on first start: the built-in roles, the built-in tag domain
``Sensitive`` with its tags, and the first administrator.

The built-in tags are checked on every start: a store that lacks them (made by an older release)
gets them, and their code-owned definitions follow the release (``seed_builtin_tags``). So are
the query planner's statistics: tables that grew or shrank since they were last analysed are
analysed again (``store/maintenance.py``).
"""

from __future__ import annotations

import logging

from sqlalchemy import Connection

from catalog_nb.contract import MIN_PASSWORD_LENGTH, AccessLevel
from catalog_nb.server.discovery.builtin import BUILTIN_TAGS, DOMAIN_DESCRIPTION, DOMAIN_NAME
from catalog_nb.server.passwords import hash_password
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import discovery as discovery_store
from catalog_nb.server.store import maintenance
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


def seed_builtin_tags(conn: Connection) -> dict[str, int]:
    """Create the built-in domain and tags where missing, refresh their definitions elsewhere.

    Idempotent: a second call changes nothing. Returns how many tags were ``created``,
    ``refreshed`` and left ``unchanged``. People's own domain of the same name is left alone
    (with a warning): the built-ins are not poured into it.
    """
    outcomes = dict.fromkeys(("created", "refreshed", "unchanged"), 0)
    domain = discovery_store.seed_domain(conn, DOMAIN_NAME, DOMAIN_DESCRIPTION)
    if domain is None:
        log.warning(
            "A tag domain named %r exists that is not the built-in one: the built-in sensitive "
            "data tags were not created. Rename that domain and restart to get them.",
            DOMAIN_NAME,
        )
        return outcomes
    for tag in BUILTIN_TAGS:
        outcome = discovery_store.seed_tag(
            conn, domain, tag.name, tag.code_columns(), tag.tuned_columns()
        )
        outcomes[outcome] += 1
    if outcomes["created"] or outcomes["refreshed"]:
        log.info("Built-in tags of %r: %s", DOMAIN_NAME, outcomes)
    return outcomes


def bootstrap(conn: Connection, settings: Settings) -> None:
    """Give an empty store its built-in roles and, when configured, its first administrator;
    give every store the built-in tags.

    Raises ValueError when the configured administrator password is too short.
    """
    analysed = maintenance.refresh_statistics(conn)
    if analysed:
        log.info("Planner statistics refreshed for %s.", ", ".join(analysed))
    if not role_store.list_all(conn):
        for name, values in BUILTIN_ROLES.items():
            role_store.create(conn, {"name": name, **values}, {})
    seed_builtin_tags(conn)
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
