"""Virtual folders and data sets: definitions by path specification, and their membership.

A virtual folder belongs to one data source and lists path specifications; a data set lists
path specifications per data source key. A resource is a member when a specification matches
its path (``visibility.PathSpec``): membership is computed, never stored, so a resource found by
a later browse joins every folder whose paths it matches.

Writes check their references against what the caller sees (an invisible source or parent is
answered like an unknown one) and refuse a parent cycle. A folder with child folders, and a
folder or data set granted to a role, cannot be deleted (409): a role would otherwise keep a
grant of nothing.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Select, Table, delete, insert, select, update

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest, Conflict, Forbidden, NotFound
from catalog_nb.server.store.common import fold, new_key, now_ms, unique_name
from catalog_nb.server.store.schema import (
    data_resources,
    data_sources,
    datasets,
    role_grants,
    roles,
    virtual_folders,
)
from catalog_nb.server.visibility import PathSpec, Visibility

VF, DS = virtual_folders, datasets

#: Item kind -> (table, grant kind in role_grants, wire name, not-found code).
_KINDS: dict[str, tuple[Table, str, str, ErrorCode]] = {
    "folder": (VF, "VIRTUAL_FOLDER", "virtual folder", ErrorCode.VIRTUAL_FOLDER_NOT_FOUND),
    "dataset": (DS, "DATASET", "data set", ErrorCode.DATASET_NOT_FOUND),
}


def _clean(row: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in row.items() if k != "name_fold"}


def specs_of(item: Mapping[str, Any]) -> dict[str, list[PathSpec]]:
    """The compiled path specifications of a stored folder or data set, per source key."""
    if "data_source_key" in item:
        return {str(item["data_source_key"]): [PathSpec.of(s) for s in item["path_specs"] or []]}
    return {k: [PathSpec.of(s) for s in v or []] for k, v in (item["path_specs"] or {}).items()}


# ------------------------------------------------------------------------------------ reads


def _folders_query() -> Select[Any]:
    return select(VF, data_sources.c.name.label("data_source_name")).join(
        data_sources, data_sources.c.key == VF.c.data_source_key
    )


def list_folders(conn: Connection, vis: Visibility) -> list[dict[str, Any]]:
    """The virtual folders the caller sees, by name."""
    rows = [_clean(r) for r in conn.execute(_folders_query().order_by(VF.c.name_fold)).mappings()]
    return [r for r in rows if vis.sees_folder(r)]


def folder_by_name(conn: Connection, vis: Visibility, name: str) -> dict[str, Any] | None:
    """The virtual folder of this name (case-insensitive) the caller sees, else None."""
    query = _folders_query().where(VF.c.name_fold == fold(name.strip()))
    found = conn.execute(query).mappings().first()
    row = _clean(found) if found is not None else None
    return row if row is not None and vis.sees_folder(row) else None


def folders_in_sources(conn: Connection, source_keys: Iterable[str]) -> list[dict[str, Any]]:
    """Every virtual folder of these data sources (visibility is the caller's to apply)."""
    wanted = sorted(set(source_keys))
    if not wanted:
        return []
    query = select(VF).where(VF.c.data_source_key.in_(wanted)).order_by(VF.c.name_fold)
    return [_clean(r) for r in conn.execute(query).mappings()]


def list_datasets(conn: Connection, vis: Visibility) -> list[dict[str, Any]]:
    """The data sets the caller sees, by name."""
    rows = [_clean(r) for r in conn.execute(select(DS).order_by(DS.c.name_fold)).mappings()]
    return [r for r in rows if vis.sees_dataset(r)]


def get_item(conn: Connection, vis: Visibility, kind: str, key: str) -> dict[str, Any]:
    """The folder or data set with this key; 404 when unknown or invisible."""
    table, _, label, code = _KINDS[kind]
    query: Select[Any] = _folders_query() if kind == "folder" else select(DS)
    found = conn.execute(query.where(table.c.key == key)).mappings().first()
    row = _clean(found) if found is not None else None
    if row is None or not (vis.sees_folder(row) if kind == "folder" else vis.sees_dataset(row)):
        raise NotFound(f"There is no {label} with key '{key}'.", code)
    return row


def writable_item(conn: Connection, vis: Visibility, kind: str, key: str) -> dict[str, Any]:
    """The item, when the caller sees every data source it draws on whole (else 403).

    Seeing a folder only through a grant on it is not enough to change it: widening its paths
    would widen what the grant shows.
    """
    item = get_item(conn, vis, kind, key)
    if not all(vis.sees_source(s) for s in specs_of(item)):
        raise Forbidden(
            f"Changing this {_KINDS[kind][2]} needs access to every data source it draws on.",
            ErrorCode.PERMISSION_DENIED,
        )
    return item


def resource_counts(
    conn: Connection, vis: Visibility, items: Sequence[Mapping[str, Any]]
) -> dict[str, int]:
    """How many resources the caller sees in each folder or data set, by item key.

    The key and path of the resources of the sources involved are read once and sorted, so a
    specification's prefix is a range found by bisection; only its patterns are matched.
    """
    wanted = {s: specs for item in items for s, specs in specs_of(item).items() if specs}
    paths: dict[str, list[tuple[str, str]]] = defaultdict(list)
    if wanted:
        query = select(data_resources.c.data_source_key, data_resources.c.path,
                       data_resources.c.key).where(
            data_resources.c.data_source_key.in_(sorted(wanted)),
        )
        for source_key, path, key in conn.execute(query):
            if vis.sees(source_key, path):
                paths[source_key].append((path, key))
        for listed in paths.values():
            listed.sort()
    counts: dict[str, int] = {}
    for item in items:
        members: set[str] = set()
        for source_key, specs in specs_of(item).items():
            listed = paths.get(source_key, [])
            for spec in specs:
                members.update(key for path, key in _under(listed, spec.base)
                               if not spec.has_patterns or spec.matches(path))
        counts[str(item["key"])] = len(members)
    return counts


def _under(listed: list[tuple[str, str]], base: str) -> Iterable[tuple[str, str]]:
    """The (path, key) pairs of a sorted list at ``base`` or below it."""
    if not base:
        return listed
    at = bisect.bisect_left(listed, (base,))
    exact = listed[at:at + 1] if at < len(listed) and listed[at][0] == base else []
    # "/" sorts just before "0": the paths starting with base + "/" form one range.
    low = bisect.bisect_left(listed, (base + "/",))
    high = bisect.bisect_left(listed, (base + "0",))
    return exact + listed[low:high]


# ----------------------------------------------------------------------------------- writes


def _check_source(conn: Connection, vis: Visibility, source_key: str, wire: str) -> None:
    exists = conn.execute(
        select(data_sources.c.key).where(data_sources.c.key == source_key)
    ).first()
    if exists is None or not vis.sees_source(source_key):
        raise BadRequest(
            f"{wire} names a data source that does not exist: '{source_key}'.",
            ErrorCode.UNKNOWN_REFERENCE,
            field=wire,
            unknown=[source_key],
        )


def _check_parent(conn: Connection, vis: Visibility, key: str | None, parent: str) -> None:
    """The parent must be a folder the caller sees, and must not lie below ``key``."""
    parents: dict[str, str | None] = {
        key: parent_key for key, parent_key in conn.execute(select(VF.c.key, VF.c.parent_key))
    }
    found = conn.execute(_folders_query().where(VF.c.key == parent)).mappings().first()
    if found is None or not vis.sees_folder(_clean(found)):
        raise BadRequest(
            f"parentKey names a virtual folder that does not exist: '{parent}'.",
            ErrorCode.UNKNOWN_REFERENCE,
            field="parentKey",
            unknown=[parent],
        )
    seen: set[str] = set()
    cursor: str | None = parent
    while cursor is not None and cursor not in seen:
        if cursor == key:
            raise BadRequest(
                "parentKey would make the folder its own ancestor; choose a folder that is not "
                "below it.",
                ErrorCode.PARENT_CYCLE,
                field="parentKey",
            )
        seen.add(cursor)
        cursor = parents.get(cursor)


def create_folder(conn: Connection, vis: Visibility, values: Mapping[str, Any]) -> dict[str, Any]:
    """Create a virtual folder from store-named values; 409 when the name is taken."""
    _check_source(conn, vis, str(values["data_source_key"]), "dataSourceKey")
    if values.get("parent_key"):
        _check_parent(conn, vis, None, str(values["parent_key"]))
    now = now_ms()
    key = new_key()
    row = {
        "key": key, "name": values["name"], "name_fold": fold(values["name"]),
        "description": values.get("description"), "data_source_key": values["data_source_key"],
        "parent_key": values.get("parent_key"), "path_specs": values.get("path_specs") or [],
        "created_ms": now, "changed_ms": now,
    }
    with unique_name("virtual folder", values["name"]):
        conn.execute(insert(VF).values(**row))
    return get_item(conn, vis, "folder", key)


def update_folder(
    conn: Connection, vis: Visibility, key: str, values: Mapping[str, Any]
) -> dict[str, Any]:
    """Change the given columns of a folder the caller may change."""
    writable_item(conn, vis, "folder", key)
    if "data_source_key" in values:
        _check_source(conn, vis, str(values["data_source_key"]), "dataSourceKey")
    if values.get("parent_key"):
        _check_parent(conn, vis, key, str(values["parent_key"]))
    row = dict(values)
    if "name" in row:
        row["name_fold"] = fold(row["name"])
    row["changed_ms"] = now_ms()
    with unique_name("virtual folder", str(values.get("name", ""))):
        conn.execute(update(VF).where(VF.c.key == key).values(**row))
    return get_item(conn, vis, "folder", key)


def create_dataset(
    conn: Connection, vis: Visibility, values: Mapping[str, Any]
) -> dict[str, Any]:
    """Create a data set from store-named values; 409 when the name is taken."""
    for source_key in values.get("path_specs") or {}:
        _check_source(conn, vis, source_key, "dataSetPathSpecs")
    now = now_ms()
    key = new_key()
    row = {
        "key": key, "name": values["name"], "name_fold": fold(values["name"]),
        "description": values.get("description"), "path_specs": values.get("path_specs") or {},
        "created_ms": now, "changed_ms": now,
    }
    with unique_name("data set", values["name"]):
        conn.execute(insert(DS).values(**row))
    return get_item(conn, vis, "dataset", key)


def update_dataset(
    conn: Connection, vis: Visibility, key: str, values: Mapping[str, Any]
) -> dict[str, Any]:
    """Change the given columns of a data set the caller may change."""
    writable_item(conn, vis, "dataset", key)
    for source_key in values.get("path_specs") or {}:
        _check_source(conn, vis, source_key, "dataSetPathSpecs")
    row = dict(values)
    if "name" in row:
        row["name_fold"] = fold(row["name"])
    row["changed_ms"] = now_ms()
    with unique_name("data set", str(values.get("name", ""))):
        conn.execute(update(DS).where(DS.c.key == key).values(**row))
    return get_item(conn, vis, "dataset", key)


def delete_item(conn: Connection, vis: Visibility, kind: str, key: str) -> dict[str, Any]:
    """Delete a folder or data set; 409 while it has child folders or is granted to a role."""
    table, grant_kind, label, _ = _KINDS[kind]
    item = writable_item(conn, vis, kind, key)
    if kind == "folder":
        children = conn.execute(
            select(VF.c.name).where(VF.c.parent_key == key).order_by(VF.c.name_fold)
        ).scalars().all()
        if children:
            raise Conflict(
                f"The virtual folder '{item['name']}' has child folders "
                f"({', '.join(children[:10])}); delete or move them first.",
                ErrorCode.FOLDER_HAS_CHILDREN,
                children=list(children),
            )
    holders = conn.execute(
        select(roles.c.name)
        .join(role_grants, role_grants.c.role_key == roles.c.key)
        .where(role_grants.c.kind == grant_kind, role_grants.c.target_key == key)
        .order_by(roles.c.name_fold)
    ).scalars().all()
    if holders:
        raise Conflict(
            f"The {label} '{item['name']}' is granted to the role(s) {', '.join(holders)}; "
            "remove it from them first.",
            ErrorCode.GRANTED_TO_ROLE,
            roles=list(holders),
        )
    conn.execute(delete(table).where(table.c.key == key))
    return item
