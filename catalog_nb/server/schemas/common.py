"""Bases shared by every request and response model: camelCase on the wire, strict payloads."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, ConfigDict, model_validator
from pydantic.alias_generators import to_camel

from catalog_nb.contract import MAX_NAME_LENGTH


def _clean_name(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("must not be empty or only white space")
    if len(value) > MAX_NAME_LENGTH:
        raise ValueError(f"must be at most {MAX_NAME_LENGTH} characters (got {len(value)})")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in value):
        raise ValueError("must not contain control characters")
    return value


#: A user, role, ... name: trimmed, non-empty, bounded, printable (any script).
Name = Annotated[str, AfterValidator(_clean_name)]


class Payload(BaseModel):
    """A request body: camelCase keys, unknown keys refused (400), read-only keys named."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", str_max_length=100_000
    )

    #: Wire names a client may read but never write; naming one is a 400 that lists them.
    read_only: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _refuse_read_only(cls, data: Any) -> Any:
        ro = cls.read_only
        if isinstance(data, dict):
            named = sorted(k for k in data if k in ro)
            if named:
                raise ValueError(
                    f"read-only properties cannot be written: {', '.join(named)}"
                )
        return data

    def changes(self) -> dict[str, Any]:
        """The fields the caller actually sent, by Python name."""
        return {k: getattr(self, k) for k in self.model_fields_set}


class Wire(BaseModel):
    """A response body: camelCase keys on the wire."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class EntityOut(Wire):
    """Fields every entity of the spec carries."""

    key: str
    type: str
    description: str | None = None
    rich_description: str | None = None
    time_of_creation: int
    time_of_last_change: int
    restricted: list[str] = []
    view_able: list[str] = []
    updateable: list[str] = []
    score: float = 0.0
    custom_properties: list[dict[str, Any]] = []
