"""``cat.snapshot(path)``: the catalog's frames to Parquet files with a manifest.

The snapshot holds what the caller may see: users, roles, data sources, tag domains, tags,
tag associations, data resources (with their ``cp_`` custom property columns) and every field
with its statistics. Open it offline with :func:`catalog_nb.open_snapshot`; compare two with
:func:`catalog_nb.diff`.

The catalog's identity in the manifest is the service URL and a stable catalog id. The service
has no id of its own, so it is derived from what every store is given once at its creation and
keeps for its life: the key of the built-in, immutable tag domain (``Sensitive``), which
cannot be deleted or renamed (``id_basis: "builtin-tag-domain"``). Should no immutable domain
be visible, the key of the built-in ``Administrator`` role is used (``"administrator-role"``),
and as a last resort the URL itself (``"url"``). The same store answers the same id under any
URL, and two stores never share one.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.client.errors import CatalogError
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.resources.frames import fields_frame, resources_frame

__all__ = ["SnapshotMixin", "catalog_identity"]


def _stable_id(basis: str, value: str) -> str:
    return hashlib.sha256(f"{basis}:{value}".encode()).hexdigest()[:24]


def catalog_identity(cat: Any) -> dict[str, Any]:
    """``{url, id, id_basis, service}`` of a catalog (see the module docstring for the id).

    Example::

        catalog_identity(cat)["id"]
    """
    service: dict[str, Any] = {}
    try:
        service = dict(cat.version())
    except CatalogError:
        service = {}
    basis, value = "url", str(cat.url)
    try:
        domains = cat.tag_domains()
        builtin = domains[domains["immutable"].fillna(False)].sort_values("created")
        if len(builtin):
            basis, value = "builtin-tag-domain", str(builtin["key"].iloc[0])
    except CatalogError:
        pass
    if basis == "url":
        try:
            roles = cat.roles()
            admin = roles[roles["name"] == "Administrator"]
            if len(admin):
                basis, value = "administrator-role", str(admin["key"].iloc[0])
        except CatalogError:
            pass
    return {
        "url": str(cat.url),
        "id": _stable_id(basis, value),
        "id_basis": basis,
        "service": service,
        "user": cat.username,
    }


class SnapshotMixin(CatalogPart):
    """``snapshot(path)``; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    def catalog_frames(self) -> dict[str, pd.DataFrame]:
        """Every frame a snapshot holds, read now from the service, by table name.

        Keys: users, roles, sources, tag_domains, tags, associations, resources, fields.
        """
        cat: Any = self
        records = cat.resources(as_frame=False, fields=True, progress=False)
        definitions = cat.api.list_custom_properties()
        return {
            "users": cat.users(),
            "roles": cat.roles(),
            "sources": cat.sources(),
            "tag_domains": cat.tag_domains(),
            "tags": cat.tags(),
            "associations": cat.associations(progress=False),
            "resources": resources_frame(records, definitions=definitions),
            "fields": fields_frame(records, long=True),
        }

    def snapshot(self, path: str | os.PathLike[str]) -> Path:
        """Write the catalog's frames to Parquet files and a manifest in the new folder ``path``.

        The manifest records the format version, the catalog (URL and stable id), the time,
        and each file's row count and SHA-256. Nothing is left behind when writing fails.
        Returns the folder. Needs ``pip install catalog-nb[reports]``.

        Raises:
            SnapshotError: ``path`` exists and is not an empty folder, its parent folder is
                missing, or it cannot be written.

        Example::

            cat.snapshot("snapshots/2024-q2")
            catalog_nb.diff("snapshots/2024-q1", "snapshots/2024-q2").summary
        """
        from catalog_nb.snapshot.files import reports_import, write_snapshot

        reports_import("pyarrow")
        taken_at = pd.Timestamp.now(tz="UTC")
        frames = self.catalog_frames()
        return write_snapshot(path, frames, catalog_identity(self), taken_at=taken_at)
