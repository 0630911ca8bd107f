"""Request and response models of tag domains (``/tagdomain``) and tags (``/tag``).

A Tag or TagDomain as read can be sent back to every write (``services.read_back``): on
``PUT`` its derived properties (``fullName``, ``domainName``, ``immutable``, ...) are ignored
when they equal the current object's and refused by name when changed (``children``,
``associationCount`` and ``tagCount`` move with other writes and are always ignored); on
``POST`` they are ignored, but ``type`` must be ``tag``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Field

from catalog_nb.contract import Sensitivity, TagAssociationState, TagState
from catalog_nb.server.schemas.common import EntityOut, Name, Payload, Wire

_TEXT = 100_000
_SHORT = 1024
_KEY = 64
_PATTERN = 4096
#: Most items a ``/list`` body takes.
MAX_LIST = 1000


def _no_dot(value: str) -> str:
    if "." in value:
        raise ValueError("must not contain '.' (full names are dotted paths)")
    return value


#: A tag or domain name: a Name without dots.
TagName = Annotated[Name, AfterValidator(_no_dot)]

#: Read-only properties of a TagDomain.
_DOMAIN_READ_ONLY = frozenset({"key", "immutable", "tagCount", "timeOfCreation",
                               "timeOfLastChange"})
#: Derived properties of a Tag: compared with the current tag on update, ignored on create.
TAG_DERIVED = frozenset({
    "type", "fullName", "domainName", "children", "immutable", "allSensitivities",
    "associationCount", "timeOfCreation", "timeOfLastChange", "restricted", "viewAble",
    "updateable", "score", "customProperties",
})


class DomainIn(Payload):
    """Body of ``POST /tagdomain`` (and each item of ``POST /tagdomain/list``)."""

    read_only = _DOMAIN_READ_ONLY
    read_form = True  # see services.read_back

    name: TagName
    description: str | None = Field(default=None, max_length=_TEXT)


class DomainUpdate(Payload):
    """Body of ``PUT /tagdomain/{key}``: absent properties stay unchanged."""

    read_only = _DOMAIN_READ_ONLY
    read_form = True  # see services.read_back

    name: TagName | None = None
    description: str | None = Field(default=None, max_length=_TEXT)

    def values(self) -> dict[str, Any]:
        return self.changes()


class DomainOut(Wire):
    key: str
    name: str
    description: str | None
    immutable: bool
    tag_count: int
    time_of_creation: int
    time_of_last_change: int


def domain_out(row: Mapping[str, Any]) -> DomainOut:
    """The wire form of a stored tag domain (with its ``tag_count``)."""
    return DomainOut(
        key=row["key"], name=row["name"], description=row["description"],
        immutable=bool(row["immutable"]), tag_count=row["tag_count"],
        time_of_creation=row["created_ms"], time_of_last_change=row["changed_ms"],
    )


class _TagFields(Payload):
    description: str | None = Field(default=None, max_length=_TEXT)
    rich_description: str | None = Field(default=None, max_length=_TEXT)
    domain_key: str | None = Field(default=None, max_length=_KEY)
    parent_key: str | None = Field(default=None, max_length=_KEY)
    tag_state: TagState | None = None
    state: TagAssociationState | None = None
    enable: bool | None = None
    learning_enabled: bool | None = None
    min_score: float | None = Field(default=None, ge=0, le=1)
    reg_ex: str | None = Field(default=None, max_length=_PATTERN)
    regex_min_len: int | None = Field(default=None, ge=0, le=1_000_000)
    regex_max_len: int | None = Field(default=None, ge=0, le=1_000_000)
    regex_filter_class: str | None = Field(default=None, max_length=64)
    synonyms: list[Annotated[str, Field(max_length=255)]] | None = Field(
        default=None, max_length=1000)
    sensitivity: Sensitivity | None = None
    external_id: str | None = Field(default=None, max_length=_SHORT)
    external_source_name: str | None = Field(default=None, max_length=_SHORT)

    #: Properties that cannot be null when sent.
    not_null: ClassVar[tuple[str, ...]] = (
        "name", "domain_key", "tag_state", "state", "enable", "learning_enabled", "synonyms",
    )

    def values(self) -> dict[str, Any]:
        """Store column values of the properties that were sent (enums as their values)."""
        return {k: (v.value if hasattr(v, "value") else v) for k, v in self.changes().items()
                if k != "key"}

    def nulls(self) -> list[str]:
        """Wire names of the not-null properties sent as null."""
        fields = type(self).model_fields
        return sorted(fields[k].alias or k for k, v in self.changes().items()
                      if v is None and k in self.not_null)


class TagCreate(_TagFields):
    """Body of ``POST /tag`` (and each item of ``POST /tag/list``)."""

    read_only = TAG_DERIVED | {"key"}
    read_form = True  # see services.read_back

    name: TagName


class TagUpdate(_TagFields):
    """Body of ``PUT /tag/{key}`` (absent properties unchanged) and item of ``PUT /tag/list``."""

    read_only = TAG_DERIVED
    read_form = True  # see services.read_back

    key: str | None = Field(default=None, max_length=_KEY)
    name: TagName | None = None


class TagOut(EntityOut):
    name: str
    full_name: str
    domain_key: str
    domain_name: str
    parent_key: str | None
    children: list[TagOut]
    tag_state: str
    state: str
    enable: bool
    learning_enabled: bool
    immutable: bool
    min_score: float | None
    reg_ex: str | None
    regex_min_len: int | None
    regex_max_len: int | None
    regex_filter_class: str | None
    synonyms: list[str]
    sensitivity: str | None
    all_sensitivities: list[str]
    external_id: str | None
    external_source_name: str | None
    association_count: int


ALL_SENSITIVITIES = [s.value for s in Sensitivity]


def tag_out(
    row: Mapping[str, Any],
    counts: Mapping[str, int],
    children: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
) -> TagOut:
    """The wire form of a stored tag; ``children`` maps parent keys to their direct children
    (None: this is itself a child, shown without children)."""
    kids = [tag_out(c, counts) for c in (children or {}).get(row["key"], [])]
    return TagOut(
        key=row["key"], type="tag", description=row["description"],
        rich_description=row["rich_description"], time_of_creation=row["created_ms"],
        time_of_last_change=row["changed_ms"], name=row["name"], full_name=row["full_name"],
        domain_key=row["domain_key"], domain_name=row["domain_name"],
        parent_key=row["parent_key"], children=kids, tag_state=row["tag_state"],
        state=row["state"], enable=bool(row["enable"]),
        learning_enabled=bool(row["learning_enabled"]), immutable=bool(row["immutable"]),
        min_score=row["min_score"], reg_ex=row["reg_ex"], regex_min_len=row["regex_min_len"],
        regex_max_len=row["regex_max_len"], regex_filter_class=row["regex_filter_class"],
        synonyms=list(row["synonyms"] or []), sensitivity=row["sensitivity"],
        all_sensitivities=ALL_SENSITIVITIES, external_id=row["external_id"],
        external_source_name=row["external_source_name"],
        association_count=counts.get(row["key"], 0),
    )
