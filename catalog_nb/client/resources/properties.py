"""Custom property definitions: the typed annotations people add to data resources.

Values are set per resource with :meth:`Catalog.update_resource` (``custom={...}``) and read as
the ``cp_<name>`` columns of :meth:`Catalog.resources`.

Example::

    cat.create_custom_property("sensitivity", "STRING", facet_able=True)
    cat.update_resource("demo_files", "crm/customers.csv", custom={"sensitivity": "high"})
    cat.resources().query("cp_sensitivity == 'high'")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.refs import pick

__all__ = ["CUSTOM_PROPERTY_COLUMNS", "CustomPropertiesMixin", "resolve_custom_property"]

#: Columns of :meth:`CustomPropertiesMixin.custom_properties`.
CUSTOM_PROPERTY_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("name", "string"),
    Column("display_name", "string", "displayName"),
    Column("description", "string"),
    Column("type", "string"),
    Column("facet_able", "bool", "facetAble"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)


def resolve_custom_property(api: CatalogApi, ref: str | Mapping[str, Any]) -> dict[str, Any]:
    """The definition JSON of ``ref`` (name, key, or record); 404 when none matches."""
    code = contract.ErrorCode.CUSTOM_PROPERTY_NOT_FOUND.value
    return pick(api.list_custom_properties(), ref, "custom property", code)


def _type(value: str | contract.CustomPropertyType) -> str:
    text = str(value).strip().upper()
    known = [t.value for t in contract.CustomPropertyType]
    if text not in known:
        raise ValueError(f"unknown custom property type {value!r}; expected one of {known}")
    return text


class CustomPropertiesMixin(CatalogPart):
    """Custom property definitions; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    @overload
    def custom_properties(self, *, as_frame: Literal[True] = True) -> pd.DataFrame: ...
    @overload
    def custom_properties(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def custom_properties(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """Every custom property definition.

        Columns: key, name, display_name, description, type (STRING, INTEGER, NUMBER, BOOLEAN,
        DATE, STRING_LIST), facet_able, created, changed.

        Example::

            cat.custom_properties().query("facet_able")["name"]
        """
        records = self.api.list_custom_properties()
        return to_frame(records, CUSTOM_PROPERTY_COLUMNS) if as_frame else records

    def custom_property(self, name_or_key: str | Mapping[str, Any]) -> dict[str, Any]:
        """One definition's JSON, by name or key."""
        return resolve_custom_property(self.api, name_or_key)

    def create_custom_property(
        self,
        name: str,
        type: str | contract.CustomPropertyType,
        *,
        display_name: str | None = None,
        description: str | None = None,
        facet_able: bool = False,
    ) -> dict[str, Any]:
        """Define a custom property (Administrator only) and return the definition.

        ``type`` is one of STRING, INTEGER, NUMBER, BOOLEAN, DATE, STRING_LIST (any case).
        ``facet_able`` properties become search facets.

        Example::

            cat.create_custom_property("retention_days", "INTEGER", display_name="Retention")
        """
        body: dict[str, Any] = {"name": name, "type": _type(type), "facetAble": bool(facet_able)}
        if display_name is not None:
            body["displayName"] = display_name
        if description is not None:
            body["description"] = description
        created: dict[str, Any] = self.api.create_custom_property(body)
        return created

    def update_custom_property(
        self,
        name_or_key: str | Mapping[str, Any],
        *,
        name: str | None = None,
        type: str | contract.CustomPropertyType | None = None,
        display_name: str | None = None,
        description: str | None = None,
        facet_able: bool | None = None,
    ) -> dict[str, Any]:
        """Change a definition; ``None`` leaves a property unchanged.

        Changing ``type`` while values exist that do not fit is refused (``ConflictError``).

        Example::

            cat.update_custom_property("retention_days", facet_able=True)
        """
        key = resolve_custom_property(self.api, name_or_key)["key"]
        changes = {
            "name": name,
            "type": None if type is None else _type(type),
            "displayName": display_name,
            "description": description,
            "facetAble": facet_able,
        }
        body = {field: value for field, value in changes.items() if value is not None}
        updated: dict[str, Any] = self.api.update_custom_property(key, body)
        return updated
