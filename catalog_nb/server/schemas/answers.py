"""The answers the routes build as plain dicts, described for the OpenAPI document only.

Data resources, search results, join conditions, reviews, favorites, configuration properties
and table comparisons are shaped by hand (``schemas.resources``, ``schemas.joins``...) because
validating each answer again on the way out would cost more than the query; a route names its
model here with ``responses={200: {"model": Model}}``, never ``response_model=``, so the answer
is neither filtered nor validated. ``tests/server/test_openapi_contract.py`` checks real answers
against these schemas, and schemathesis checks every answer of its run.

A property is ``X | None`` only where the service answers null; the spec's required booleans
and numbers are never null (``schemas.resources``).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.associations import AssociationView
from catalog_nb.server.schemas.common import Wire
from catalog_nb.server.schemas.examples import examples
from catalog_nb.server.schemas.joins import JoinCondition

_Ops = ex.OPERATIONS


def _without_defaults(schema: dict[str, Any]) -> None:
    # The defaults below only make properties optional (a page may leave them out); the
    # document must not claim the service fills them in.
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


class FieldProperty(Wire):
    """A profiling statistic of a field: its name, value and wire type (LONG, DOUBLE...)."""

    name: str
    value: Any
    type: str


class AbstractField(Wire):
    """A field of a data resource, with its statistics and tag associations."""

    name: str
    display_name: str | None
    description: str | None
    comment: str | None
    data_type: str
    nullable: bool
    position: int
    properties: list[FieldProperty]
    tags: list[AssociationView]


class StatusDetail(Wire):
    """A stage (browse, profile, discover) of the processing of a data resource
    (``store.ingest``, ``store.discovery``); catalog_nb has no workflows (always null)."""

    stage_name: str
    status: str
    error_msg: str | None
    run_id: str | None
    workflow_id: str | None
    start_time: int
    end_time: int
    number_sampled_rows: int | None
    last_partition_profile: bool


class JoinConditionPage(Wire):
    """``GET /joincondition``: every join condition once, as stored."""

    model_config = examples(_Ops[("GET", "/joincondition")])

    items: list[JoinCondition] = Field(alias="list")
    total_count: int
    start: int
    size: int


class Experts(Wire):
    """The spec's Experts (catalog_nb answers null)."""

    experts_type: str
    experts: list[str]


class DataResourceSummary(Wire):
    """A data resource as pages list it: a metadata page may carry only the properties its
    ``properties=`` or ``views=resource_path`` asked for, so none is required here; search
    entities and favorites carry every one but ``fields`` and ``tagAssociationViewList``
    (favorites add ``favoriteTime``, search results a ``score``)."""

    model_config = ConfigDict(json_schema_extra=_without_defaults)

    key: str = ""
    type: str = "dataresource"
    name: str = ""
    resource_path: str = ""
    resource_type: str = ""
    data_source_name: str = ""
    data_source_key: str = ""
    data_source_type: str = ""
    data_source_uri: str | None = None
    description: str | None = None
    rich_description: str | None = None
    owner: str | None = None
    time_of_creation: int = 0
    time_of_last_change: int = 0
    time_of_resource_change: int | None = None
    time_of_resource_creation: int | None = None
    time_of_resource_access: int | None = None
    time_of_last_profile: int | None = None
    time_of_last_refresh: int | None = None
    collection_root: bool = False
    collection_key: str | None = None
    member_paths: list[str] = []
    header: bool = False
    header_row: int = 0
    separator: str | None = None
    encoding: str | None = None
    partition_count: int = 0
    field_count: int = 0
    row_count: int = 0
    resource_size: int = 0
    resource_state: str = ""
    status: str = ""
    error_msg: str | None = None
    table_name: str | None = None
    table_type: str | None = None
    database_name: str | None = None
    data_schema_name: str | None = None
    file_format: str | None = None
    file_format_display: str | None = None
    inferred_keys: dict[str, list[Any]] = Field(
        default_factory=dict, description="primaryKey, uniqueColumns (names) and compositeKeys "
        "(lists of names) found by profiling.")
    source_details: dict[str, Any] = {}
    restricted: list[str] = []
    view_able: list[str] = []
    updateable: list[str] = []
    score: float = 0.0
    custom_properties: list[dict[str, Any]] = []
    can_associate_tag: bool = False
    can_disassociate_tag: bool = False
    can_run_job: bool = False
    can_add_or_remove_resource_from_dataset: bool = False
    can_create_hive_table_or_view: bool = False
    permitted_to_read: bool = True
    data_permitted: bool = False
    data_set_root: bool = False
    data_set_member: bool = False
    parquet_binary_as_string: bool = False
    last_partition_profile: bool = False
    favorite: bool = False
    favorite_time: int = Field(default=0, description="When the caller made it a favorite "
                               "(``GET /favorites`` only).")
    subscribers_count: int = 0
    curation_count: int = 0
    data_set_schema_version: int = 0
    usage_count: int = 0
    processed_time: int = 0
    average_rating: float = 0.0
    rating_count: int = 0
    run_id: str | None = None
    sensitivity: str | None = None
    landing: bool = False
    data_set_id: str | None = None
    xml_row_tag: str | None = None
    xml_root_tag: str | None = None
    dataset_virtual_folder_name: str | None = None
    logical_folder_context: str | None = None
    data_set_root_resource: str | None = None
    browse_context_dataset: str | None = None
    virtual_folder_context_name: str | None = None
    allowed_tag_domain_keys: list[str] = []
    data_set_virtual_folders: list[str] = []
    join_resources: list[str] = []
    partition_definition: list[str] = []
    origins: list[str] = []
    logical_folders: list[str] = []
    perm_to_read_map: dict[str, bool] = {}
    reported_fields: list[dict[str, Any]] = []
    data_set_path_specs: dict[str, list[dict[str, Any]]] = {}
    experts: Experts | None = None
    join_conditions: list[JoinCondition] = []
    detailed_status: list[StatusDetail] = []
    fields: list[AbstractField] = Field(default_factory=list, description="With the "
                                        "viewFields view, or on a resource read by itself.")
    tag_association_view_list: list[AssociationView] = Field(
        default_factory=list, description="With the viewTags view, or on a resource read by "
        "itself.")


#: What a data resource read by itself always carries.
_WHOLE = ["key", "type", "name", "resourcePath", "resourceType", "dataSourceName",
          "dataSourceKey", "timeOfCreation", "timeOfLastChange", "score", "canAssociateTag",
          "canDisassociateTag", "canRunJob", "canAddOrRemoveResourceFromDataset",
          "canCreateHiveTableOrView", "permittedToRead", "dataPermitted", "dataSetRoot",
          "dataSetMember", "collectionRoot", "parquetBinaryAsString", "lastPartitionProfile",
          "favorite", "header", "partitionCount", "subscribersCount", "processedTime",
          "fieldCount", "curationCount", "headerRow", "rowCount", "dataSetSchemaVersion",
          "averageRating", "resourceSize", "usageCount", "ratingCount", "fields",
          "tagAssociationViewList", "detailedStatus", "joinConditions"]


def _whole(schema: dict[str, Any]) -> None:
    _without_defaults(schema)
    schema["required"] = _WHOLE
    schema["examples"] = [ex.RESOURCE]


class DataResource(DataResourceSummary):
    """A data resource read by itself (or as changed by ``PUT``): every property, with its
    fields, tag associations and join conditions."""

    model_config = ConfigDict(json_schema_extra=_whole)


class MetadataPage(Wire):
    """``GET /dataresource/metadata`` as JSON: ``nextCursor`` is null on the last page."""

    model_config = examples(_Ops[("GET", "/dataresource/metadata")])

    items: list[DataResourceSummary] = Field(alias="list")
    total_count: int
    start: int
    page_size: int
    next_cursor: str | None


class FacetResult(Wire):
    """The counts of one facet's categories among a search's matches."""

    name: str
    display_name: str
    total_count: int
    category_counts: dict[str, int]
    selected_categories: list[str] = []


class FacetSelection(Wire):
    """A facet and categories of it (selected ones, or the facet catalogue's)."""

    facet_name: str
    display_name: str | None = None
    facet_categories: list[str]


class SearchResult(Wire):
    """SearchResult: one page of a stored search (``key``), its counts and facets;
    ``nextCursor`` continues it and is null on the last page."""

    model_config = examples(_Ops[("POST", "/search/new")])

    key: str
    search_phrase: str | None
    facet_results: list[FacetResult]
    pre_filters: list[FacetSelection]
    facet_selections: list[FacetSelection]
    entities: list[DataResourceSummary]
    matched_entity_count: int
    total_result_count: int
    response_entity_count: int
    matched_keys: list[str]
    start: int
    size: int
    removed_since_search: int
    facet_groups: list[dict[str, Any]]
    ref_data_resources: list[dict[str, Any]]
    next_cursor: str | None


class FacetCatalogue(Wire):
    """``GET /search/facets``: the facets of data resources with the categories in use."""

    model_config = examples(_Ops[("GET", "/search/facets")])

    data_resource: list[FacetSelection] = Field(alias="DATA_RESOURCE")


class TableComparison(Wire):
    """TableComparisionTO: the field names two tables share and those only one has
    (``virtualFolder`` is ``""`` when the request named none)."""

    model_config = examples(_Ops[("GET", "/overlap/table")])

    virtual_folder: str
    table_one: str
    table_two: str
    common_fields: list[str]
    table_one_unique_fields: list[str]
    table_two_unique_fields: list[str]
    overlap_percent: float = Field(ge=0, le=100)


class Favorite(Wire):
    """A resource kept as the caller's favorite, and since when."""

    model_config = examples(_Ops[("POST", "/favorites/{entity_key}")])

    entity_key: str
    favorite_time: int


class FavoritePage(Wire):
    """``GET /favorites``: the caller's favorites they still see, newest first."""

    model_config = examples(_Ops[("GET", "/favorites")])

    items: list[DataResourceSummary] = Field(alias="list")
    total_count: int


class ReviewOut(Wire):
    """A review of a data resource."""

    model_config = examples(_Ops[("GET", "/reviews/{key}")])

    key: str
    entity_key: str
    user_name: str
    rating: int = Field(ge=1, le=5)
    title: str | None
    text: str | None
    time_of_creation: int
    time_of_last_change: int
    resource_path: str
    data_source_name: str


class ReviewPage(Wire):
    """``GET /reviews``: reviews newest first, with their average (0 without any)."""

    model_config = examples(_Ops[("GET", "/reviews")])

    items: list[ReviewOut] = Field(alias="list")
    total_count: int
    average_rating: float
    rating_count: int


class ConfigProperty(Wire):
    """A configuration property: its value in force (of its ``type``), its bounds and last
    change (null when it has the start-up value); a read-only one has no ``defaultValue``."""

    model_config = examples(_Ops[("GET", "/config/{name}")])

    name: str
    value: bool | int | float | str | None
    type: str
    description: str
    read_only: bool
    default_value: bool | int | float | str | None
    minimum: float | None
    maximum: float | None
    changed_by: str | None
    time_of_last_change: int | None


class LogoutAnswer(Wire):
    """``GET /logout``, as the product answers it: where to log in again."""

    model_config = examples(_Ops[("GET", "/logout")])

    redirect_url: str
    message: str
