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
from pydantic.json_schema import WithJsonSchema

from catalog_nb.contract import MAX_NAME_LENGTH

#: The control, format and surrogate characters (Unicode categories Cc, Cf and Cs) of the Basic
#: Multilingual Plane, as a regular expression class: a name holds none of them.
_UNPRINTABLE = (
    "\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u0600-\\u0605\\u061c\\u06dd\\u070f\\u0890-\\u0891"
    "\\u08e2\\u180e\\u200b-\\u200f\\u202a-\\u202e\\u2060-\\u2064\\u2066-\\u206f"
    "\\ud800-\\udfff\\ufeff\\ufff9-\\ufffb"
)


def name_schema(excluded: str = "") -> WithJsonSchema:
    """The JSON schema of a :data:`Name` (that also holds none of the ``excluded`` characters):
    1 to 255 printable characters, at least one of them not white space."""
    bad = _UNPRINTABLE + "".join(f"\\u{ord(ch):04x}" for ch in excluded)
    return WithJsonSchema({
        "type": "string", "minLength": 1, "maxLength": MAX_NAME_LENGTH,
        "pattern": f"^[^{bad}]*[^{bad}\\s][^{bad}]*$",
    })


def _clean_name(value: str) -> str:
    # The length is the one sent (as the schema's maxLength says), the name the one trimmed.
    if len(value) > MAX_NAME_LENGTH:
        raise ValueError(f"must be at most {MAX_NAME_LENGTH} characters (got {len(value)})")
    value = value.strip()
    if not value:
        raise ValueError("must not be empty or only white space")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in value):
        raise ValueError("must not contain control characters")
    return value


#: A user, role, ... name: trimmed, non-empty, bounded, printable (any script); its schema says
#: the same (the check also refuses the rarer format characters outside the BMP).
Name = Annotated[str, AfterValidator(_clean_name), name_schema()]


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
