"""Writing what people add to a data resource: descriptions, owner, custom values and field
annotations, checked against the custom property definitions, in one audited transaction."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Connection

from catalog_nb.contract import AccessLevel, AuditAction, AuditObjectType, ErrorCode
from catalog_nb.server.auditing import audited
from catalog_nb.server.errors import NotFound
from catalog_nb.server.schemas.resource_query import parse_update
from catalog_nb.server.security import Caller, require_level
from catalog_nb.server.services.resource_views import shape
from catalog_nb.server.store import Store
from catalog_nb.server.store import custom_properties as property_store
from catalog_nb.server.store import folders as folder_store
from catalog_nb.server.store import resources as resource_store
from catalog_nb.server.store.visible import visibility
from catalog_nb.server.visibility import Visibility


def update_resource(
    store: Store, caller: Caller, body: Any, key: str | None, source_name: str | None = None,
    path: str | None = None, folder_name: str | None = None,
) -> orjson.Fragment:
    """Write people-owned properties of the resource with this key, or at ``path`` of the data
    source ``source_name`` (Steward+), in one audited transaction; the updated resource's wire
    form.

    ``folder_name`` (the product's ``PUT /dataresource?virtualFolderName=&resourcePath=``) names
    the virtual folder that includes the resource, ``path`` being relative to its data source's
    root: the resource must be in the folder (else 404). A name that is no virtual folder the
    caller sees is taken as a data source's name: the product gives every data source a root
    virtual folder of its own name.
    """
    target = key or f"{folder_name or source_name}:{path}"
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.DATA_RESOURCE,
                 key=key, name=None if key else target) as w:
        require_level(caller, AccessLevel.STEWARD, "Changing data resources")
        vis = visibility(w.conn, caller.roles)
        if key is not None:
            row = resource_store.get_visible(w.conn, vis, key)
        elif folder_name is not None:
            row = _in_folder(w.conn, vis, folder_name, str(path))
        else:
            row = resource_store.get_visible_by_path(w.conn, vis, str(source_name), str(path))
        w.target(row["key"], f"{row['source_name']}:{row['path']}")
        resource_store.lock_for_update(w.conn, row["key"])
        changes = parse_update(body)
        definitions = property_store.by_names(w.conn, changes.custom)
        custom = {}
        for name, value in changes.custom.items():
            definition = definitions[name.casefold()]
            custom[definition["key"]] = None if value is None else property_store.check_value(
                definition["type"], value, definition["name"]
            )
        resource_store.annotate(w.conn, row["key"], changes.values, changes.fields)
        property_store.set_values(w.conn, row["key"], custom)
        w.message = f"changed {changes.summary()}"
        updated = resource_store.get_visible(w.conn, vis, row["key"])
        return shape(w.conn, caller, vis, [updated], joins=True)[0]


def _in_folder(conn: Connection, vis: Visibility, folder_name: str, path: str) -> dict[str, Any]:
    """The resource at ``path`` of the virtual folder (or root folder: data source) named."""
    folder = folder_store.folder_by_name(conn, vis, folder_name)
    if folder is None:
        return resource_store.get_visible_by_path(conn, vis, folder_name, path)
    row = resource_store.get_visible_by_path(conn, vis, folder["data_source_name"], path)
    specs = folder_store.specs_of(folder).get(folder["data_source_key"], [])
    if not any(spec.matches(row["path"]) for spec in specs):
        raise NotFound(
            f"There is no data resource at path '{path}' in virtual folder '{folder['name']}'.",
            ErrorCode.RESOURCE_NOT_FOUND,
        )
    return row
