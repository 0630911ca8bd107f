"""Request and response models of tag associations (``/tagassociation``).

The read form, TagAssociationView, is built as a plain dict (``view_out``): a metadata page
carries the associations of up to 1,000 resources. ``AssociationView`` documents the same shape
for the association endpoints.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, field_validator

from catalog_nb.contract import ASSOCIATION_LIST_MAX, TagAssociationState
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Payload, Wire
from catalog_nb.server.schemas.examples import examples

_KEY = 64
#: An association's ``semantic`` when none was given, and a person's association's ``weight``.
UNSET_SEMANTIC = "OTHER"
PERSON_WEIGHT = 1.0
_TEXT = 100_000
#: Most items ``POST /tagassociation/list`` takes.
MAX_BULK = ASSOCIATION_LIST_MAX

_READ_ONLY = frozenset({
    "key", "tagName", "tagFullName", "domainKey", "domainName", "resourcePath",
    "dataSourceName", "weight", "rules", "sensitivity", "createdBy", "changedBy",
    "timeOfCreation", "timeOfLastChange",
})


class _Fields(Payload):
    read_only = _READ_ONLY
    read_form = True  # a TagAssociationView sent back: see services.read_back

    field: str | None = Field(default=None, max_length=10_000)
    state: TagAssociationState | None = None
    semantic: str | None = Field(default=None, max_length=32)
    description: str | None = Field(default=None, max_length=_TEXT)

    @field_validator("field")
    @classmethod
    def _resource_level(cls, value: str | None) -> str | None:
        return value or None


class AssociationIn(_Fields):
    """Body of ``POST /tagassociation`` and item of ``POST /tagassociation/list``; may be a
    TagAssociationView as read (its tag's and resource's names must be those of ``tagKey`` and
    ``resourceKey``, its key, weight, rules and times are assigned)."""

    model_config = examples(ex.ASSOCIATION_IN)

    resource_key: str = Field(max_length=_KEY)
    tag_key: str = Field(max_length=_KEY)


class AssociationUpdate(_Fields):
    """Body of ``PUT /tagassociation/tagassociation/{key}``: ``state``, ``semantic`` and
    ``description`` change; ``resourceKey``, ``tagKey`` and ``field`` may be sent but must name
    the association's own. May be the association as read: its read-only properties are
    compared with the association's own (``services.read_back``)."""

    model_config = examples(ex.ASSOCIATION_UPDATE)

    resource_key: str | None = Field(default=None, max_length=_KEY)
    tag_key: str | None = Field(default=None, max_length=_KEY)


class AssociationView(Wire):
    """TagAssociationView: an association with its tag, domain and resource."""

    model_config = examples(ex.ASSOCIATION)

    key: str
    tag_key: str
    tag_name: str
    tag_full_name: str
    domain_key: str
    domain_name: str
    resource_key: str
    resource_path: str | None
    data_source_name: str | None
    field: str
    state: str
    semantic: str
    description: str | None
    weight: float
    rules: list[str]
    sensitivity: str | None
    created_by: str | None
    changed_by: str | None
    time_of_creation: int
    time_of_last_change: int


class ItemError(Wire):
    status: int
    error_code: str
    message: str


class BulkItem(Wire):
    """One answer of ``POST /tagassociation/list``: the item's outcome, in request order."""

    model_config = examples(ex.BULK_ITEM)

    index: int
    ok: bool
    outcome: str | None = None
    association: AssociationView | None = None
    error: ItemError | None = None


class AssociationPage(Wire):
    model_config = examples(ex.ASSOCIATION_PAGE)

    items: list[AssociationView] = Field(alias="list")
    total_count: int
    start: int
    page_size: int


def view_out(
    row: Mapping[str, Any], path: str | None = None, source_name: str | None = None
) -> dict[str, Any]:
    """The TagAssociationView of a stored association joined with its tag and domain (and its
    resource and source, or those given)."""
    return {
        "key": row["key"],
        "tagKey": row["tag_key"],
        "tagName": row["tag_name"],
        "tagFullName": row["tag_full_name"],
        "domainKey": row["domain_key"],
        "domainName": row["domain_name"],
        "resourceKey": row["resource_key"],
        "resourcePath": row.get("resource_path", path),
        "dataSourceName": row.get("source_name", source_name),
        # As the spec types them (string, number; not null): "" for a resource-level
        # association, OTHER (the one value the spec shows) when none was given, and full
        # confidence for an association a person made rather than discovery.
        "field": row["field_scope"] or "",
        "state": row["state"],
        "semantic": row["semantic"] or UNSET_SEMANTIC,
        "description": row["description"],
        "weight": PERSON_WEIGHT if row["weight"] is None else row["weight"],
        "rules": list(row["rules"] or []),
        "sensitivity": row["tag_sensitivity"],
        "createdBy": row["created_by"],
        "changedBy": row["changed_by"],
        "timeOfCreation": row["created_ms"],
        "timeOfLastChange": row["changed_ms"],
    }
