"""Roles: typed frames of roles and the role writes of the :class:`Catalog` facade."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.refs import lookup

__all__ = ["ROLE_COLUMNS", "ROLE_FIELDS", "RoleRef", "RolesMixin", "resolve_role"]

#: A role as callers name it: its name, its key, or its JSON dict / frame row (with ``key``).
RoleRef = str | Mapping[str, Any] | pd.Series

#: Columns of :meth:`RolesMixin.roles`.
ROLE_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("name", "string"),
    Column("access_level", "string", "accessLevel"),
    Column("description", "string"),
    Column("default_role", "bool", "defaultRole"),
    Column("metadata_access_option", "string", "metadataAccessOption"),
    Column("data_access_option", "string", "dataAccessOption"),
    Column("data_source_keys", "list", "dataSourceKeys"),
    Column("domain_keys", "list", "domainKeys"),
    Column("virtual_folder_keys", "list", "virtualFolderKeys"),
    Column("dataset_keys", "list", "datasetKeys"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)

#: Python keyword -> wire field of a role, for :meth:`RolesMixin.create_role`/``update_role``.
ROLE_FIELDS: dict[str, str] = {
    "name": "name",
    "access_level": "accessLevel",
    "description": "description",
    "rich_description": "richDescription",
    "default_role": "defaultRole",
    "metadata_access_option": "metadataAccessOption",
    "data_access_option": "dataAccessOption",
    "resource_read_access_level": "resourceReadAccessLevel",
    "job_template_creation_allowed": "jobTemplateCreationAllowed",
    "job_execution_allowed": "jobExecutionAllowed",
    "data_source_keys": "dataSourceKeys",
    "domain_keys": "domainKeys",
    "virtual_folder_keys": "virtualFolderKeys",
    "dataset_keys": "datasetKeys",
}


def _normalize(field: str, value: Any) -> Any:
    """Spell enumerations the way the service does (``"analyst"`` -> ``"Analyst"``)."""
    if value is None:
        return None
    if field == "access_level":
        for level in contract.AccessLevel:
            if str(value).lower() == level.value.lower():
                return level.value
        return str(value)
    if field in ("metadata_access_option", "data_access_option"):
        return str(value).upper()
    if field.endswith("_keys"):
        return [str(key) for key in value]
    return value


def role_body(fields: Mapping[str, Any]) -> dict[str, Any]:
    """Wire body from snake_case ``fields``; unknown names raise :class:`TypeError`."""
    unknown = sorted(set(fields) - set(ROLE_FIELDS))
    if unknown:
        raise TypeError(
            f"unknown role field(s) {', '.join(unknown)}; expected some of "
            f"{', '.join(sorted(ROLE_FIELDS))}"
        )
    return {
        ROLE_FIELDS[name]: _normalize(name, value)
        for name, value in fields.items()
        if value is not None
    }


def resolve_role(api: CatalogApi, ref: RoleRef) -> dict[str, Any]:
    """The Role JSON of ``ref``: tried as a name first, then as a key.

    Raises :class:`NotFoundError` (``ROLE_NOT_FOUND``) when neither matches.
    """
    return lookup(ref, api.get_role_by_name, api.get_role, "role",
                  contract.ErrorCode.ROLE_NOT_FOUND.value)


def role_names(refs: Iterable[RoleRef]) -> list[str]:
    """Role names of ``refs`` for bodies that take names (strings are taken as names)."""
    names: list[str] = []
    for ref in refs:
        if isinstance(ref, str):
            names.append(ref)
        elif hasattr(ref, "get") and ref.get("name") is not None:
            names.append(str(ref.get("name")))
        else:
            raise ValueError(f"cannot tell which role {ref!r} is: it has no 'name'")
    return names


class RolesMixin(CatalogPart):
    """Role frames and writes; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    @overload
    def roles(self, *, as_frame: Literal[True] = True) -> pd.DataFrame: ...
    @overload
    def roles(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def roles(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """Every role, one row each (``as_frame=False``: the JSON list).

        Columns: key, name, access_level, description, default_role, metadata_access_option,
        data_access_option, data_source_keys, domain_keys, virtual_folder_keys, dataset_keys
        (lists), created, changed (UTC datetimes).

        Example::

            cat.roles().query("access_level == 'Administrator'")["name"]
        """
        records = self.api.list_roles()
        return to_frame(records, ROLE_COLUMNS) if as_frame else records

    @overload
    def my_roles(self, *, as_frame: Literal[True] = True) -> pd.DataFrame: ...
    @overload
    def my_roles(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def my_roles(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """The roles of the logged-in user, with the columns of :meth:`roles`."""
        records = self.api.list_my_roles()
        return to_frame(records, ROLE_COLUMNS) if as_frame else records

    def role(self, name_or_key: RoleRef) -> dict[str, Any]:
        """One role's JSON, by name or key: ``cat.role("Analysts")["accessLevel"]``."""
        return resolve_role(self.api, name_or_key)

    def create_role(
        self,
        name: str,
        access_level: str | contract.AccessLevel,
        *,
        description: str | None = None,
        default_role: bool = False,
        metadata_access_option: str | contract.MetadataAccessOption | None = None,
        data_access_option: str | contract.DataAccessOption | None = None,
        data_source_keys: Iterable[str] | None = None,
        domain_keys: Iterable[str] | None = None,
        virtual_folder_keys: Iterable[str] | None = None,
        dataset_keys: Iterable[str] | None = None,
        **more: Any,
    ) -> dict[str, Any]:
        """Create a role and return its JSON.

        ``access_level`` is one of Administrator, Steward, Analyst, Guest (any case).
        ``more`` takes the remaining role fields in snake_case (``rich_description``,
        ``resource_read_access_level``, ``job_template_creation_allowed``,
        ``job_execution_allowed``).

        Example::

            cat.create_role("Finance analysts", "Analyst", data_source_keys=[finance_key])
        """
        body = role_body(
            {
                "name": name,
                "access_level": access_level,
                "description": description,
                "default_role": default_role,
                "metadata_access_option": metadata_access_option,
                "data_access_option": data_access_option,
                "data_source_keys": data_source_keys,
                "domain_keys": domain_keys,
                "virtual_folder_keys": virtual_folder_keys,
                "dataset_keys": dataset_keys,
                **more,
            }
        )
        created: dict[str, Any] = self.api.create_role(body)
        return created

    def update_role(self, name_or_key: RoleRef, **changes: Any) -> dict[str, Any]:
        """Change some fields of a role (snake_case names, see ``ROLE_FIELDS``); returns it.

        Example::

            cat.update_role("Finance analysts", description="Reads finance", domain_keys=[k])
        """
        body = role_body(changes)
        key = resolve_role(self.api, name_or_key)["key"]
        updated: dict[str, Any] = self.api.update_role(key, body)
        if not isinstance(updated, dict):  # tolerate a 204 answer
            updated = self.api.get_role(key)
        return updated

    def delete_role(self, name_or_key: RoleRef) -> None:
        """Delete a role. A role still needed (someone's last role) raises ``ConflictError``."""
        key = resolve_role(self.api, name_or_key)["key"]
        self.api.delete_role(key)
