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

from pydantic import AfterValidator, Field, StrictBool, StrictFloat, StrictInt, model_validator

from catalog_nb.contract import (
    TAG_DEFAULT_MIN_SCORE,
    Sensitivity,
    TagAssociationState,
    TagState,
)
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import EntityOut, Name, Payload, Wire, name_schema
from catalog_nb.server.schemas.examples import examples
from catalog_nb.server.security import Caller, stewards_domain

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
TagName = Annotated[Name, AfterValidator(_no_dot), name_schema(".")]

#: Read-only properties of a TagDomain (``createTags``, ``deleteTags``, ``readTags``: what the
#: caller may do with its tags; ``semantic``: BUILT_IN for the domains the service seeds).
_DOMAIN_READ_ONLY = frozenset({"key", "immutable", "tagCount", "timeOfCreation",
                               "timeOfLastChange", "createTags", "deleteTags", "readTags",
                               "semantic"})
#: A TagDomain's ``semantic``: seeded by the service (and immutable), or made by people.
BUILT_IN, USER_CREATED = "BUILT_IN", "USER_CREATED"
_COLOR = 32
#: Derived properties of a Tag: compared with the current tag on update, ignored on create.
TAG_DERIVED = frozenset({
    "type", "fullName", "domainName", "children", "immutable", "allSensitivities",
    "associationCount", "timeOfCreation", "timeOfLastChange", "restricted", "viewAble",
    "updateable", "score", "customProperties",
})


class DomainIn(Payload):
    """Body of ``POST /tagdomain`` (and each item of ``POST /tagdomain/list``)."""

    model_config = examples(ex.DOMAIN_IN)

    read_only = _DOMAIN_READ_ONLY
    read_form = True  # see services.read_back

    name: TagName
    description: str | None = Field(default=None, max_length=_TEXT)
    color: str | None = Field(default=None, max_length=_COLOR)


class DomainUpdate(Payload):
    """Body of ``PUT /tagdomain/{key}``: absent properties stay unchanged."""

    model_config = examples(ex.DOMAIN_IN)

    read_only = _DOMAIN_READ_ONLY
    read_form = True  # see services.read_back

    name: TagName | None = None
    description: str | None = Field(default=None, max_length=_TEXT)
    color: str | None = Field(default=None, max_length=_COLOR)

    def values(self) -> dict[str, Any]:
        return self.changes()


class DomainOut(Wire):
    model_config = examples(ex.DOMAIN)

    key: str
    name: str
    description: str | None
    immutable: bool
    tag_count: int
    time_of_creation: int
    time_of_last_change: int
    color: str | None
    semantic: str
    create_tags: bool
    delete_tags: bool
    read_tags: bool


def domain_out(row: Mapping[str, Any], caller: Caller) -> DomainOut:
    """The wire form of a stored tag domain (with its ``tag_count``) as ``caller`` sees it:
    ``createTags``/``deleteTags`` say whether they may write its tags (Steward of it, or
    Administrator), ``readTags`` that they may read them (every signed-in user may)."""
    writes = stewards_domain(caller, row["key"])
    return DomainOut(
        key=row["key"], name=row["name"], description=row["description"],
        immutable=bool(row["immutable"]), tag_count=row["tag_count"],
        time_of_creation=row["created_ms"], time_of_last_change=row["changed_ms"],
        color=row.get("color"), semantic=BUILT_IN if row["immutable"] else USER_CREATED,
        create_tags=writes, delete_tags=writes, read_tags=True,
    )


#: Wire names whose unset value a Tag answers as "" / as 0.
_UNSET_TEXT = frozenset({"sensitivity", "externalId", "externalSourceName"})
_UNSET_LENGTH = frozenset({"regexMinLen", "regexMaxLen"})


class _TagFields(Payload):
    description: str | None = Field(default=None, max_length=_TEXT)
    rich_description: str | None = Field(default=None, max_length=_TEXT)
    domain_key: str | None = Field(default=None, max_length=_KEY)
    parent_key: str | None = Field(default=None, max_length=_KEY)
    tag_state: TagState | None = None
    state: TagAssociationState | None = None
    enable: StrictBool | None = None
    learning_enabled: StrictBool | None = None
    min_score: StrictFloat | None = Field(default=None, ge=0, le=1)
    reg_ex: str | None = Field(default=None, max_length=_PATTERN)
    regex_min_len: StrictInt | None = Field(default=None, ge=0, le=1_000_000)
    regex_max_len: StrictInt | None = Field(default=None, ge=0, le=1_000_000)
    regex_filter_class: str | None = Field(default=None, max_length=64)
    synonyms: list[Annotated[str, Field(max_length=255)]] | None = Field(
        default=None, max_length=1000)
    sensitivity: Sensitivity | None = None
    external_id: str | None = Field(default=None, max_length=_SHORT)
    external_source_name: str | None = Field(default=None, max_length=_SHORT)

    @model_validator(mode="before")
    @classmethod
    def _unset_as_answered(cls, data: Any) -> Any:
        """A Tag answers an unset ``sensitivity``, ``externalId`` or ``externalSourceName`` as
        "" and an unset ``regexMinLen``/``regexMaxLen`` as 0 (the spec types them as string and
        number, not null): sent back, those values mean unset again."""
        if isinstance(data, dict):
            unset = {k: None for k, v in data.items()
                     if (k in _UNSET_TEXT and v == "") or (k in _UNSET_LENGTH and v == 0
                                                           and not isinstance(v, bool))}
            if unset:
                return {**data, **unset}
        return data

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

    model_config = examples(ex.TAG_CREATE)

    read_only = TAG_DERIVED | {"key"}
    read_form = True  # see services.read_back

    name: TagName


class TagUpdate(_TagFields):
    """Body of ``PUT /tag/{key}`` (absent properties unchanged) and item of ``PUT /tag/list``."""

    model_config = examples(ex.TAG_UPDATE)

    read_only = TAG_DERIVED
    read_form = True  # see services.read_back

    key: str | None = Field(default=None, max_length=_KEY)
    name: TagName | None = None


class TagOut(EntityOut):
    model_config = examples(ex.TAG)

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
    min_score: float
    reg_ex: str | None
    regex_min_len: int
    regex_max_len: int
    regex_filter_class: str | None
    synonyms: list[str]
    sensitivity: str
    all_sensitivities: list[str]
    external_id: str
    external_source_name: str
    association_count: int


ALL_SENSITIVITIES = [s.value for s in Sensitivity]


def _or(value: Any, unset: Any) -> Any:
    return unset if value is None else value


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
        # Unset values as the spec types them (number, string; not null): discovery's default
        # minScore, 0 for no length bound, "" for no sensitivity or external reference.
        min_score=_or(row["min_score"], TAG_DEFAULT_MIN_SCORE), reg_ex=row["reg_ex"],
        regex_min_len=_or(row["regex_min_len"], 0), regex_max_len=_or(row["regex_max_len"], 0),
        regex_filter_class=row["regex_filter_class"], synonyms=list(row["synonyms"] or []),
        sensitivity=row["sensitivity"] or "", all_sensitivities=ALL_SENSITIVITIES,
        external_id=row["external_id"] or "",
        external_source_name=row["external_source_name"] or "",
        association_count=counts.get(row["key"], 0),
    )
