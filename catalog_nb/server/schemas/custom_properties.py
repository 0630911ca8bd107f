"""Request and response models of custom property definitions (``/customproperty``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from catalog_nb.contract import CustomPropertyType
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Name, Payload, Wire
from catalog_nb.server.schemas.examples import examples

_READ_ONLY = frozenset({"key", "timeOfCreation", "timeOfLastChange"})
_TEXT = 10_000


class CustomPropertyFields(Payload):
    read_only = _READ_ONLY
    read_form = True  # see services.read_back

    display_name: str | None = Field(default=None, max_length=_TEXT)
    description: str | None = Field(default=None, max_length=_TEXT)

    def values(self) -> dict[str, Any]:
        """Store column values of the fields that were sent."""
        return {k: (v.value if isinstance(v, CustomPropertyType) else v)
                for k, v in self.changes().items()}


class CustomPropertyCreate(CustomPropertyFields):
    """Body of ``POST /customproperty``; ``type`` defaults to STRING."""

    model_config = examples(ex.CUSTOM_PROPERTY_IN)

    name: Name
    type: CustomPropertyType = CustomPropertyType.STRING
    facet_able: StrictBool = False

    def values(self) -> dict[str, Any]:
        return {**super().values(), "type": self.type.value, "facet_able": self.facet_able}


class CustomPropertyUpdate(CustomPropertyFields):
    """Body of ``PUT /customproperty/{key}``: absent properties stay unchanged."""

    model_config = examples(ex.CUSTOM_PROPERTY_IN)

    name: Name | None = None
    type: CustomPropertyType | None = None
    facet_able: StrictBool | None = None

    def null_required(self) -> list[str]:
        """Wire names of the required properties the body sets to null."""
        sent = self.changes()
        wire = {"name": "name", "type": "type", "facet_able": "facetAble"}
        return sorted(w for k, w in wire.items() if k in sent and sent[k] is None)


class CustomPropertyOut(Wire):
    model_config = examples(ex.CUSTOM_PROPERTY)

    key: str
    name: str
    display_name: str | None
    description: str | None
    type: str
    facet_able: bool
    time_of_creation: int
    time_of_last_change: int


def custom_property_out(row: dict[str, Any]) -> CustomPropertyOut:
    """The wire form of a stored definition."""
    return CustomPropertyOut(
        key=row["key"],
        name=row["name"],
        display_name=row["display_name"],
        description=row["description"],
        type=row["type"],
        facet_able=bool(row["facet_able"]),
        time_of_creation=row["created_ms"],
        time_of_last_change=row["changed_ms"],
    )
