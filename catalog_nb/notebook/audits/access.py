"""Audits of users and roles: administrators, missing emails, default-only roles, roles
with ALL access.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from catalog_nb.notebook.audits.findings import (
    findings_frame,
    frames_of,
    present,
    role_holders,
    rows_of,
)

__all__ = ["user_role_hygiene"]


def user_role_hygiene(source: Any, *, max_admins: int = 3) -> pd.DataFrame:
    """Users and roles worth a look.

    * every administrator (info; medium each when there are more than ``max_admins``);
    * users without an email (low), holding only a default role (low), without a password
      (info: they cannot log in);
    * roles with ``ALL`` metadata or data access (medium; info for the Administrator level).

    Example::

        audit.user_role_hygiene(cat, max_admins=2)
    """
    frames = frames_of(source)
    users, roles = frames.get("users"), frames.get("roles")
    defaults = set(roles.loc[roles["default_role"].fillna(False).astype(bool), "name"].astype(str))
    admin_roles = set(roles.loc[roles["access_level"] == "Administrator", "name"].astype(str))
    holders = role_holders(frames)
    rows: list[dict[str, Any]] = []

    def user_row(u: Mapping[str, Any], severity: str, detail: str) -> None:
        rows.append({"audit": "user_role_hygiene", "severity": severity, "object_type": "user",
                     "object": u["name"], "detail": detail, "key": u["key"],
                     "users": [u["name"]]})

    admins = [
        u for u in rows_of(users)
        if u["admin"] is True or set(u["roles"] or []) & admin_roles
        or "Administrator" in (u["access_levels"] or [])
    ]
    too_many = len(admins) > max_admins
    for u in admins:
        extra = f" There are {len(admins)} administrators (more than {max_admins})." if (
            too_many) else ""
        user_row(u, "medium" if too_many else "info",
                 f"{u['name']} is an administrator: full control of the catalog.{extra}")
    for u in rows_of(users):
        held = [str(r) for r in u["roles"] or []]
        if not present(u["email"]):
            user_row(u, "low", f"{u['name']} has no email address: nobody can reach them "
                     "about the data they use.")
        if held and set(held) <= defaults:
            user_row(u, "low", f"{u['name']} holds only the default role "
                     f"{', '.join(held)}: probably never given the role their work needs.")
        if u["password_set"] is False:
            user_row(u, "info", f"{u['name']} has no password and cannot log in.")
    for r in rows_of(roles):
        wide = [what for what, column in (("metadata", "metadata_access_option"),
                                          ("data", "data_access_option")) if r[column] == "ALL"]
        if not wide:
            continue
        admin = r["access_level"] == "Administrator"
        who = holders.get(str(r["name"]), [])
        rows.append(
            {
                "audit": "user_role_hygiene",
                "severity": "info" if admin else "medium",
                "object_type": "role",
                "object": r["name"],
                "detail": f"Role {r['name']!r} ({r['access_level']}) has ALL "
                f"{' and '.join(wide)} access: it sees every data source, present and future"
                f" ({len(who)} user(s) hold it).",
                "key": r["key"],
                "role": r["name"],
                "users": who,
                "count": len(who),
            }
        )
    return findings_frame(rows)


#: The audits of :func:`run_all`, by name.
