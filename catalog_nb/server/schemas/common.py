"""Bases shared by every request and response model: camelCase on the wire, strict payloads."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    PrivateAttr,
    model_validator,
)
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
    """A request body: camelCase keys, unknown keys refused (400), read-only keys named.

    A class whose ``read_form`` is true accepts the read form of its object (a client reads an
    object, changes a field and sends it back): the read-only properties it was sent are kept in
    :attr:`read_back`, out of the fields, for the service to compare with the current object
    (``services.read_back``). Other classes refuse them by name at parsing, as before.
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", str_max_length=100_000
    )

    #: Wire names a client may read but never change.
    read_only: ClassVar[frozenset[str]] = frozenset()
    #: Whether the read-only properties are kept for comparison rather than refused here.
    read_form: ClassVar[bool] = False

    _read_back: dict[str, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _split_read_only(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        ro = cls.read_only
        kept: dict[str, Any] = {}
        if isinstance(data, dict) and ro:
            named = sorted(k for k in data if k in ro)
            if named and not cls.read_form:
                raise ValueError(
                    f"read-only properties cannot be written: {', '.join(named)}"
                )
            kept = {k: data[k] for k in named}
            data = {k: v for k, v in data.items() if k not in ro}
        model = handler(data)
        if isinstance(model, Payload):
            model._read_back = kept
        return model

    @property
    def read_back(self) -> dict[str, Any]:
        """The read-only properties the body carried, by wire name, as sent."""
        return self._read_back

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
