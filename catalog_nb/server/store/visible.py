"""What a caller sees, read from the store and applied in SQL.

:func:`visibility` resolves a caller's roles once per request into a
:class:`~catalog_nb.server.visibility.Visibility` (reading their granted folders and data sets);
:func:`visible_condition` turns it into the one SQL condition every read of resources uses:
whole sources as ``data_source_key IN (...)``, path specifications of granted folders and data
sets as path prefixes, and only the glob patterns are matched in Python (over the key and path
of the candidate resources, never their content). So a ``totalCount`` and its page come from the
same condition, and an invisible resource is never counted. :func:`readable_roles` applies the
same rules to what roles grant, so reading another role never shows a non-administrator the
keys of what they may not see.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Connection,
    Select,
    and_,
    bindparam,
    false,
    func,
    or_,
    select,
    true,
)

from catalog_nb.server.security import Caller, granted_domains
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.roles import RoleRecord
from catalog_nb.server.store.schema import data_resources as R
from catalog_nb.server.visibility import (
    PathSpec,
    Visibility,
    granted_keys,
    resolve,
    sees_every_source,
)


def visibility(conn: Connection, roles: Sequence[RoleRecord]) -> Visibility:
    """Resolve what these roles see, reading their granted folders and data sets once."""
    if sees_every_source(roles):
        return Visibility(everything=True)
    folders = source_store.virtual_folders_by_key(conn, granted_keys(roles, "VIRTUAL_FOLDER"))
    datasets = source_store.datasets_by_key(conn, granted_keys(roles, "DATASET"))
    return resolve(roles, folders, datasets)


def visibilities(
    conn: Connection, role_lists: Sequence[Sequence[RoleRecord]]
) -> list[Visibility]:
    """What each of many callers' roles sees, reading all their folders and data sets once
    (two queries however many callers)."""
    every = [r for roles in role_lists for r in roles]
    folders = source_store.virtual_folders_by_key(conn, granted_keys(every, "VIRTUAL_FOLDER"))
    datasets = source_store.datasets_by_key(conn, granted_keys(every, "DATASET"))
    return [resolve(roles, folders, datasets) for roles in role_lists]


def readable_roles(conn: Connection, caller: Caller,
                   records: Sequence[RoleRecord]) -> list[RoleRecord]:
    """Roles as ``caller`` may read them: whole for an Administrator; for anyone else every grant
    list keeps only the keys the caller's own roles grant.

    A data source, virtual folder or data set key stays when the caller may see that object
    (``metadataAccessOption = ALL`` sees every source, and the folders and data sets on them);
    a tag domain key stays when one of the caller's roles grants that domain. The caller's own
    roles therefore read whole. Any grant kind not named here is hidden.
    """
    if caller.admin:
        return list(records)
    seen = visibility(conn, caller.roles)
    domains = granted_domains(caller.roles)
    folders = {f["key"]: f for f in source_store.virtual_folders_by_key(
        conn, {k for r in records for k in r.granted("VIRTUAL_FOLDER")})}
    datasets = {d["key"]: d for d in source_store.datasets_by_key(
        conn, {k for r in records for k in r.granted("DATASET")})}

    def keep(kind: str, key: str) -> bool:
        if kind == "DATA_SOURCE":
            return seen.sees_source(key)
        if kind == "VIRTUAL_FOLDER":
            return key in folders and seen.sees_folder(folders[key])
        if kind == "DATASET":
            return key in datasets and seen.sees_dataset(datasets[key])
        if kind == "DOMAIN":
            return key in domains
        return False

    return [
        replace(r, grants={kind: [k for k in keys if keep(kind, k)]
                           for kind, keys in r.grants.items()})
        for r in records
    ]


def _keys_in(keys: Sequence[str]) -> ColumnElement[bool]:
    """``key IN (...)`` rendered inline: a grant may cover thousands of keys, more than the
    bound parameters some drivers take. Keys are the service's own hex strings, and SQLAlchemy
    quotes them anyway."""
    if not keys:
        return false()
    param: BindParameter[Any] = bindparam(None, list(keys), expanding=True, literal_execute=True)
    return R.c.key.in_(param)


def under(base: str) -> ColumnElement[bool]:
    """Resources at ``base`` or below it (a case-sensitive prefix on whole path segments)."""
    base = base.strip("/")
    if not base:
        return true()
    # substr, not LIKE: SQLite's LIKE ignores ASCII case and would need escaping of % and _.
    return or_(R.c.path == base, func.substr(R.c.path, 1, len(base) + 1) == base + "/")


def specs_condition(
    conn: Connection, specs: Mapping[str, Sequence[PathSpec]]
) -> ColumnElement[bool]:
    """Resources matched by path specifications, per source key.

    Prefix-only specifications become SQL; those with glob patterns are matched in Python over
    the key and path of the resources under their prefix, and enter the condition as keys.
    """
    conditions: list[ColumnElement[bool]] = []
    patterned: list[ColumnElement[bool]] = []
    checks: dict[str, list[PathSpec]] = defaultdict(list)
    for source_key, listed in specs.items():
        for spec in listed:
            scope = and_(R.c.data_source_key == source_key, under(spec.base))
            if spec.has_patterns:
                patterned.append(scope)
                checks[source_key].append(spec)
            else:
                conditions.append(scope)
    if patterned:
        query = select(R.c.key, R.c.data_source_key, R.c.path).where(or_(*patterned))
        keys = [
            key for key, source_key, path in conn.execute(query)
            if any(spec.matches(path) for spec in checks[source_key])
        ]
        conditions.append(_keys_in(keys))
    return or_(*conditions) if conditions else false()


def visible_condition(conn: Connection, vis: Visibility) -> ColumnElement[bool]:
    """The SQL condition selecting exactly the resources ``vis`` sees."""
    if vis.everything:
        return true()
    conditions = [specs_condition(conn, vis.specs)] if vis.specs else []
    if vis.sources:
        conditions.append(R.c.data_source_key.in_(sorted(vis.sources)))
    return or_(*conditions) if conditions else false()


def visible_keys(conn: Connection, vis: Visibility) -> Select[Any]:
    """The keys of the resources ``vis`` sees, as a subquery to filter other tables by."""
    return select(R.c.key).where(visible_condition(conn, vis))


def seen_through_grants_only(conn: Connection, vis: Visibility) -> ColumnElement[bool] | None:
    """The resources ``vis`` sees through folder and data set grants only, not with their whole
    source; None when there are none (it sees everything, or grants no folder or data set)."""
    if vis.everything or not vis.specs:
        return None
    return and_(specs_condition(conn, vis.specs), R.c.data_source_key.not_in(sorted(vis.sources)))
