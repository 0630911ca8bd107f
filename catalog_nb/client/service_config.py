"""The service's configuration properties (``/config``): read them, change them at run time.

Not to be confused with :mod:`catalog_nb.client.credentials`, which finds the URL and the
credentials a client connects with.

Example::

    cat.config()[["name", "value", "type", "read_only"]]
    cat.config_value("search.pageMax")
    cat.set_config("search.pageMax", 500)                 # Administrator
"""

from __future__ import annotations

from typing import Any, Literal, overload

import pandas as pd

from catalog_nb.client.frames import Column, json_scalar, to_frame
from catalog_nb.client.part import CatalogPart

__all__ = ["CONFIG_COLUMNS", "ServiceConfigMixin"]

#: Columns of :meth:`ServiceConfigMixin.config`; ``value`` and ``default`` keep their type.
CONFIG_COLUMNS: tuple[Column, ...] = (
    Column("name", "string"),
    Column("value", "object"),
    Column("type", "string"),
    Column("read_only", "bool", "readOnly"),
    Column("default", "object", "defaultValue"),
    Column("minimum", "float"),
    Column("maximum", "float"),
    Column("changed_by", "string", "changedBy"),
    Column("changed", "time", "timeOfLastChange"),
    Column("description", "string"),
)


class ServiceConfigMixin(CatalogPart):
    """The service configuration; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    @overload
    def config(self, *, as_frame: Literal[True] = ...) -> pd.DataFrame: ...
    @overload
    def config(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def config(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """The service's configuration properties: one row each, with the value in force.

        Columns: name, value, type (STRING, INTEGER, DOUBLE, BOOLEAN), read_only, default (the
        value the service started with), minimum, maximum, changed_by, changed, description.
        """
        records = self.api.list_config()
        return to_frame(records, CONFIG_COLUMNS) if as_frame else records

    def config_value(self, name: str) -> Any:
        """The value in force of one property (:class:`NotFoundError` for an unknown name).

        >>> cat.config_value("search.pageMax")  # doctest: +SKIP
        100
        """
        return self.api.get_config(name)["value"]

    def set_config(self, name: str, value: Any) -> dict[str, Any]:
        """Change a property (Administrator); it takes effect at once and survives restarts.

        ``None`` returns it to the value the service started with. A value of the wrong type or
        out of bounds is a :class:`BadRequestError` (``INVALID_CONFIG_VALUE``), a read-only
        property one with ``READ_ONLY_CONFIG``. Returns the updated property.
        """
        answer: dict[str, Any] = self.api.set_config(name, json_scalar(value))
        return answer
