"""Virtual folders and data sets: named groups of resources defined by path specifications.

A path specification is ``{sourcePath, includePattern, excludePattern}``: the resources at or
under ``sourcePath`` whose paths match the include glob and not the exclude glob. Membership is
computed by the service from paths, so a folder follows its files as they come and go.

Path specifications can be given as plain strings (a source path), snake_case dicts
(``{"source_path": "crm", "include": "*.csv"}``) or the service's camelCase dicts.

Example::

    cat.create_virtual_folder("Customer data", "demo_files", source_path="crm", include="*.csv")
    cat.resources(virtual_folder="Customer data")
    cat.create_dataset("Sales 2024", {"demo_files": ["sales/orders"], "demo_sql": ["sales."]})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.refs import pick
from catalog_nb.client.resources.sources import SourceRef, resolve_source

__all__ = [
    "DATASET_COLUMNS",
    "FOLDER_COLUMNS",
    "FoldersMixin",
    "PathSpec",
    "path_spec",
    "resolve_dataset",
    "resolve_virtual_folder",
]

#: A path specification: a source path, or a dict (snake_case or the service's camelCase).
PathSpec = str | Mapping[str, Any]
#: A virtual folder or data set as callers name it: name, key, or JSON dict / frame row.
GroupRef = str | Mapping[str, Any] | pd.Series

_SPEC_KEYS = {
    "sourcePath": "sourcePath",
    "source_path": "sourcePath",
    "path": "sourcePath",
    "includePattern": "includePattern",
    "include_pattern": "includePattern",
    "include": "includePattern",
    "excludePattern": "excludePattern",
    "exclude_pattern": "excludePattern",
    "exclude": "excludePattern",
}

#: Columns of :meth:`FoldersMixin.virtual_folders`.
FOLDER_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("name", "string"),
    Column("description", "string"),
    Column("source", "string", "dataSourceName"),
    Column("source_key", "string", "dataSourceKey"),
    Column("parent_key", "string", "parentKey"),
    Column("path_specs", "list", "pathSpecs"),
    Column("resource_count", "int", "resourceCount"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)

#: Columns of :meth:`FoldersMixin.datasets`.
DATASET_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("name", "string"),
    Column("description", "string"),
    Column("sources", "list", "_sourceNames"),
    Column("source_keys", "list", lambda r: sorted(r.get("dataSetPathSpecs") or {})),
    Column("path_specs", "dict", "dataSetPathSpecs"),
    Column("resource_count", "int", "resourceCount"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)


def path_spec(spec: PathSpec) -> dict[str, Any]:
    """The wire form ``{sourcePath, includePattern?, excludePattern?}`` of a path spec.

    >>> path_spec({"source_path": "crm", "include": "*.csv"})
    {'sourcePath': 'crm', 'includePattern': '*.csv'}
    """
    if isinstance(spec, str):
        return {"sourcePath": spec}
    body: dict[str, Any] = {}
    for name, value in spec.items():
        if name not in _SPEC_KEYS:
            raise TypeError(
                f"unknown path specification key {name!r}; expected sourcePath/source_path, "
                "includePattern/include, excludePattern/exclude"
            )
        if value is not None:
            body[_SPEC_KEYS[name]] = value
    if "sourcePath" not in body:
        body["sourcePath"] = ""
    return body


def _specs(
    path_specs: PathSpec | Iterable[PathSpec] | None,
    source_path: str | None,
    include: str | None,
    exclude: str | None,
) -> list[dict[str, Any]] | None:
    specs: list[dict[str, Any]] = []
    if path_specs is not None:
        items = [path_specs] if isinstance(path_specs, str | Mapping) else list(path_specs)
        specs.extend(path_spec(item) for item in items)
    if source_path is not None or include is not None or exclude is not None:
        specs.append(
            path_spec({"sourcePath": source_path or "", "include": include, "exclude": exclude})
        )
    return specs if specs or path_specs is not None else None


def resolve_virtual_folder(api: CatalogApi, ref: GroupRef) -> dict[str, Any]:
    """The VirtualFolder JSON of ``ref`` (name, key, or record); 404 when none matches."""
    code = contract.ErrorCode.VIRTUAL_FOLDER_NOT_FOUND.value
    return pick(api.list_virtual_folders(), ref, "virtual folder", code)


def resolve_dataset(api: CatalogApi, ref: GroupRef) -> dict[str, Any]:
    """The DataSet JSON of ``ref`` (name, key, or record); 404 when none matches."""
    return pick(api.list_datasets(), ref, "data set", contract.ErrorCode.DATASET_NOT_FOUND.value)


def _drop_none(body: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in body.items() if value is not None}


class FoldersMixin(CatalogPart):
    """Virtual folder and data set frames and writes; mixed into ``Catalog``."""

    def _source_key(self, source: SourceRef) -> str:
        return str(resolve_source(self.api, source)["key"])

    # -- virtual folders -----------------------------------------------------------------------

    @overload
    def virtual_folders(self, *, as_frame: Literal[True] = True) -> pd.DataFrame: ...
    @overload
    def virtual_folders(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def virtual_folders(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """Every virtual folder you may see, one row each.

        Columns: key, name, description, source, source_key, parent_key, path_specs (list of
        ``{sourcePath, includePattern, excludePattern}``), resource_count, created, changed.

        Example::

            cat.virtual_folders()[["name", "source", "resource_count"]]
        """
        records = self.api.list_virtual_folders()
        return to_frame(records, FOLDER_COLUMNS) if as_frame else records

    def virtual_folder(self, name_or_key: GroupRef) -> dict[str, Any]:
        """One virtual folder's JSON, by name or key."""
        return resolve_virtual_folder(self.api, name_or_key)

    def create_virtual_folder(
        self,
        name: str,
        source: SourceRef,
        path_specs: PathSpec | Iterable[PathSpec] | None = None,
        *,
        source_path: str | None = None,
        include: str | None = None,
        exclude: str | None = None,
        parent: GroupRef | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Create a virtual folder over data source ``source`` and return its JSON.

        Give ``path_specs`` (a list), or one specification through ``source_path``,
        ``include`` and ``exclude``; with neither, the folder spans the whole source.
        ``parent`` is another folder (name or key).

        Example::

            cat.create_virtual_folder("HR", "demo_files", source_path="hr", exclude="*.tmp")
            cat.create_virtual_folder("Money", "demo_files", ["finance", "sales/orders"])
        """
        specs = _specs(path_specs, source_path, include, exclude) or [{"sourcePath": ""}]
        body = _drop_none(
            {
                "name": name,
                "description": description,
                "dataSourceKey": self._source_key(source),
                "parentKey": None
                if parent is None
                else resolve_virtual_folder(self.api, parent)["key"],
                "pathSpecs": specs,
            }
        )
        created: dict[str, Any] = self.api.create_virtual_folder(body)
        return created

    def update_virtual_folder(
        self,
        name_or_key: GroupRef,
        *,
        name: str | None = None,
        description: str | None = None,
        source: SourceRef | None = None,
        path_specs: PathSpec | Iterable[PathSpec] | None = None,
        source_path: str | None = None,
        include: str | None = None,
        exclude: str | None = None,
        parent: GroupRef | None = None,
    ) -> dict[str, Any]:
        """Change a virtual folder; ``None`` leaves a property unchanged.

        New ``path_specs`` replace the old ones. ``source_path``, ``include`` and ``exclude``
        alone change the folder's one path specification and keep the rest of it (a folder
        with several needs ``path_specs``).

        Example::

            cat.update_virtual_folder("HR", include="*.csv")   # still under its source path
        """
        folder = resolve_virtual_folder(self.api, name_or_key)
        key = folder["key"]
        if path_specs is None and (source_path, include, exclude) != (None, None, None):
            current = list(folder.get("pathSpecs") or [])
            if len(current) > 1:
                raise ValueError(
                    f"virtual folder {folder.get('name')!r} has {len(current)} path "
                    "specifications; pass path_specs= to replace them all"
                )
            merged = {k: v for k, v in (current[0] if current else {}).items() if v is not None}
            changes = {"sourcePath": source_path, "include": include, "exclude": exclude}
            path_specs = [{**merged, **{k: v for k, v in changes.items() if v is not None}}]
            source_path = include = exclude = None
        body = _drop_none(
            {
                "name": name,
                "description": description,
                "dataSourceKey": None if source is None else self._source_key(source),
                "parentKey": None
                if parent is None
                else resolve_virtual_folder(self.api, parent)["key"],
                "pathSpecs": _specs(path_specs, source_path, include, exclude),
            }
        )
        updated: dict[str, Any] = self.api.update_virtual_folder(key, body)
        return updated

    def delete_virtual_folder(self, name_or_key: GroupRef) -> None:
        """Delete a virtual folder (409 while it has child folders or a role is granted it)."""
        self.api.delete_virtual_folder(resolve_virtual_folder(self.api, name_or_key)["key"])

    # -- data sets -----------------------------------------------------------------------------

    @overload
    def datasets(self, *, as_frame: Literal[True] = True) -> pd.DataFrame: ...
    @overload
    def datasets(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def datasets(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """Every data set you may see, one row each.

        Columns: key, name, description, sources (names) and source_keys (lists), path_specs
        (dict of source key to specifications), resource_count, created, changed.

        Example::

            cat.datasets().sort_values("resource_count", ascending=False)
        """
        records = self.api.list_datasets()
        if not as_frame:
            return records
        names: dict[str, str] = {}
        if any(record.get("dataSetPathSpecs") for record in records):
            names = {str(s.get("key")): str(s.get("name")) for s in self.api.list_sources()}
        rows = [
            {
                **record,
                "_sourceNames": sorted(
                    names.get(key, key) for key in record.get("dataSetPathSpecs") or {}
                ),
            }
            for record in records
        ]
        return to_frame(rows, DATASET_COLUMNS)

    def dataset(self, name_or_key: GroupRef) -> dict[str, Any]:
        """One data set's JSON, by name or key."""
        return resolve_dataset(self.api, name_or_key)

    def _dataset_specs(
        self, specs: Mapping[Any, PathSpec | Iterable[PathSpec]]
    ) -> dict[str, list[dict[str, Any]]]:
        sources = self.api.list_sources()
        code = contract.ErrorCode.DATA_SOURCE_NOT_FOUND.value
        wire: dict[str, list[dict[str, Any]]] = {}
        for source, items in specs.items():
            key = str(pick(sources, source, "data source", code)["key"])
            listed = [items] if isinstance(items, str | Mapping) else list(items)
            wire.setdefault(key, []).extend(path_spec(item) for item in listed)
        return wire

    def create_dataset(
        self,
        name: str,
        specs: Mapping[Any, PathSpec | Iterable[PathSpec]],
        *,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Create a data set from path specifications per data source and return its JSON.

        ``specs`` maps a data source (name or key) to its path specifications.

        Example::

            cat.create_dataset("Customers", {"demo_files": ["crm"],
                                             "demo_sql": ["sales.customers"]})
        """
        body = _drop_none(
            {
                "name": name,
                "description": description,
                "dataSetPathSpecs": self._dataset_specs(specs),
            }
        )
        created: dict[str, Any] = self.api.create_dataset(body)
        return created

    def update_dataset(
        self,
        name_or_key: GroupRef,
        *,
        name: str | None = None,
        description: str | None = None,
        specs: Mapping[Any, PathSpec | Iterable[PathSpec]] | None = None,
    ) -> dict[str, Any]:
        """Change a data set; new ``specs`` replace the old ones (``None``: unchanged).

        Example::

            cat.update_dataset("Customers", description="Everything about customers")
        """
        key = resolve_dataset(self.api, name_or_key)["key"]
        body = _drop_none(
            {
                "name": name,
                "description": description,
                "dataSetPathSpecs": None if specs is None else self._dataset_specs(specs),
            }
        )
        updated: dict[str, Any] = self.api.update_dataset(key, body)
        return updated

    def delete_dataset(self, name_or_key: GroupRef) -> None:
        """Delete a data set (its resources stay)."""
        self.api.delete_dataset(resolve_dataset(self.api, name_or_key)["key"])
