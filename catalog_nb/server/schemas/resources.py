"""The wire form of a data resource (the spec's DataResource) and of its fields (AbstractField).

Built as plain dicts rather than pydantic models: a metadata page holds up to 1,000 resources
with their fields, and validating each again on the way out would cost more than the query.
Every property of the spec is present; the required booleans and numbers are never null (0 or
false when they do not apply). catalog_nb adds ``encoding``, ``collectionKey``, ``memberPaths``
and ``sourceDetails``. The value sketch of a field is never read, so it cannot leave.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import make_url

from catalog_nb.contract import (
    AccessLevel,
    DataAccessOption,
    ResourceType,
    Sensitivity,
    SourceType,
    TagAssociationState,
)
from catalog_nb.server.schemas.associations import view_out
from catalog_nb.server.security import Caller, PathSpec, Visibility

#: What the ``resource_path`` view keeps.
PATH_VIEW = ("key", "resourcePath", "name", "resourceType", "dataSourceName")

#: Properties people may write with PUT; every other property of a DataResource is system-owned.
WRITABLE = frozenset({"description", "richDescription", "owner", "customProperties", "fields"})
#: Properties of a field people may write; the rest are profiling's.
FIELD_WRITABLE = frozenset({"name", "displayName", "description", "comment"})
FIELD_PROPERTIES = ("name", "displayName", "description", "comment", "dataType", "nullable",
                    "position", "properties", "tags")
#: Rank of each sensitivity, least to most sensitive.
_SENSITIVITY_RANK = {s.value: rank for rank, s in enumerate(Sensitivity)}
_ACCEPTED = TagAssociationState.ACCEPTED.value

_FORMAT_DISPLAY = {
    "csv": "CSV", "tsv": "TSV", "json": "JSON", "jsonl": "JSON Lines", "parquet": "Parquet",
}
#: Wire type of profiling properties whose type does not follow from a null value.
_PROPERTY_TYPES = {
    "density": "DOUBLE", "mean": "DOUBLE", "valueCount": "LONG", "nullCount": "LONG",
    "distinctCount": "LONG", "minLength": "LONG", "maxLength": "LONG", "sampleSize": "LONG",
    "sampled": "BOOLEAN", "distinctCountApproximate": "BOOLEAN", "mostFrequent": "ARRAY",
    "patterns": "ARRAY",
}
_SQL_DETAILS = ("databaseName", "dataSchemaName", "tableName", "tableType")


def mask_uri(source_type: str | None, uri: str | None) -> str | None:
    """A source URI fit to show: an SQL URL's password becomes ``***``."""
    if uri is None or source_type != SourceType.SQL.value:
        return uri
    try:
        return make_url(uri).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - an unparsable URL is shown as nothing rather than leaked
        return None


def json_safe(value: Any) -> Any:
    """``value`` with NaN and infinities as null: JSON has no spelling for them."""
    # Exact type checks: this runs over every statistic of every field of a page.
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is dict:
        return {k: json_safe(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [json_safe(v) for v in value]
    return value


def _value_type(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if name in _PROPERTY_TYPES:
        return _PROPERTY_TYPES[name]
    if isinstance(value, int):
        return "LONG"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, list):
        return "ARRAY"
    if isinstance(value, dict):
        return "OBJECT"
    return "STRING"


def field_out(
    row: Mapping[str, Any], tags: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """The AbstractField of a stored field; properties as ``[{name, value, type}]``, and the
    field's tag associations (TagAssociationViews) as ``tags``."""
    properties = row["properties"] or {}
    return {
        "name": row["name"],
        "displayName": row["display_name"],
        "description": row["description"],
        "comment": row["comment"],
        "dataType": row["data_type"],
        "nullable": bool(row["nullable"]),
        "position": row["position"],
        "properties": [
            {"name": k, "value": json_safe(v), "type": _value_type(k, v)}
            for k, v in properties.items()
        ],
        "tags": list(tags),
    }


@dataclass
class Shaping:
    """Everything a page of resources is shaped with, loaded once for the whole page.

    ``fields`` is None when fields were not asked for (they are then left out, not empty);
    ``associations`` holds the tag associations of the page's resources (joined with their tag
    and domain), by resource key;
    ``folders`` are (name, source key, specs) of the virtual folders the caller sees in the
    page's sources, ``datasets`` the compiled specs per source of the data sets they see;
    ``favorites`` the keys of the page's resources that are the *caller's* favorites, and
    ``ratings`` the (average rating, rating count) of those with reviews.
    """

    caller: Caller
    vis: Visibility
    custom: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    fields: Mapping[str, list[dict[str, Any]]] | None = None
    tags: bool = False
    minimal: bool = False
    associations: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)
    members: Mapping[str, list[str]] = field(default_factory=dict)
    folders: Sequence[tuple[str, str, Sequence[PathSpec]]] = ()
    datasets: Sequence[Mapping[str, Sequence[PathSpec]]] = ()
    favorites: frozenset[str] | set[str] = frozenset()
    ratings: Mapping[str, tuple[float, int]] = field(default_factory=dict)
    #: Each resource's JoinConditionTOs (``schemas.joins.by_resource``); detail form only.
    joins: Mapping[str, list[dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        roles = self.caller.roles
        self.steward = self.caller.at_least(AccessLevel.STEWARD)
        self.analyst = self.caller.at_least(AccessLevel.ANALYST)
        self.runs_jobs = self.caller.admin or any(r.job_execution_allowed for r in roles)
        self.reads_data = self.caller.admin or any(
            r.data_access_option != DataAccessOption.NONE.value for r in roles
        )
        self.domains = sorted({k for r in roles for k in r.granted("DOMAIN")})
        self.updateable = sorted(WRITABLE) if self.steward else []


def _last_run(stages: Sequence[Mapping[str, Any]]) -> str | None:
    done = [s for s in stages if s.get("runId")]
    return str(max(done, key=lambda s: s.get("endTime") or 0)["runId"]) if done else None


def _profile_time(stages: Sequence[Mapping[str, Any]]) -> int:
    """How long the last profiling took, in milliseconds (``processedTime``)."""
    for stage in stages:
        if stage.get("stageName") == "profile" and stage.get("endTime") and stage.get("startTime"):
            return int(stage["endTime"]) - int(stage["startTime"])
    return 0


def resource_out(row: Mapping[str, Any], ctx: Shaping) -> dict[str, Any]:
    """The DataResource of a stored resource row (joined with its source)."""
    key, source_key, path = row["key"], row["data_source_key"], row["path"]
    minimal = {
        "key": key, "resourcePath": path, "name": row["name"],
        "resourceType": row["resource_type"], "dataSourceName": row["source_name"],
    }
    if ctx.minimal:
        return _with_lists(minimal, row, ctx)
    stages = list(row["detailed_status"] or [])
    extra = dict(row["extra"] or {})
    folders = sorted(
        name for name, folder_source, specs in ctx.folders
        if folder_source == source_key and any(s.matches(path) for s in specs)
    )
    member = any(any(s.matches(path) for s in d.get(source_key, ())) for d in ctx.datasets)
    collection = row["resource_type"] == ResourceType.COLLECTION.value
    rating = ctx.ratings.get(key, (0.0, 0))
    out: dict[str, Any] = {
        **minimal,
        "type": "dataresource",
        "description": row["description"],
        "richDescription": row["rich_description"],
        "timeOfCreation": row["created_ms"],
        "timeOfLastChange": row["changed_ms"],
        "restricted": [], "viewAble": [], "updateable": ctx.updateable, "score": 0.0,
        "customProperties": list(ctx.custom.get(key, [])),
        # Required booleans.
        "canAssociateTag": ctx.analyst, "canDisassociateTag": ctx.steward,
        "canRunJob": ctx.runs_jobs and ctx.vis.sees_source(source_key),
        "canAddOrRemoveResourceFromDataset": ctx.steward,
        "canCreateHiveTableOrView": False, "permittedToRead": True,
        "dataPermitted": ctx.reads_data, "dataSetRoot": False, "dataSetMember": member,
        "collectionRoot": collection, "parquetBinaryAsString": False,
        "lastPartitionProfile": False, "favorite": key in ctx.favorites,
        "header": bool(row["header"]),
        # Required numbers.
        "partitionCount": row["partition_count"] or 0, "subscribersCount": 0,
        "processedTime": _profile_time(stages), "fieldCount": row["field_count"] or 0,
        "curationCount": 0, "headerRow": row["header_row"] or 0,
        "rowCount": row["row_count"] or 0, "dataSetSchemaVersion": 0, "averageRating": rating[0],
        "resourceSize": row["resource_size"] or 0, "usageCount": 0, "ratingCount": rating[1],
        # Optional numbers and strings.
        "timeOfResourceChange": row["time_of_resource_change"],
        "timeOfResourceCreation": row["time_of_resource_creation"],
        "timeOfResourceAccess": None,
        "timeOfLastProfile": row["time_of_last_profile"],
        "timeOfLastRefresh": row["time_of_last_refresh"],
        "landing": False, "dataSetId": None, "owner": row["owner"],
        "xmlRowTag": None, "xmlRootTag": None, "separator": row["separator"],
        "dataSourceType": row["source_type"],
        "dataSourceUri": mask_uri(row["source_type"], row["source_uri"]),
        "dataSourceKey": source_key, "errorMsg": row["error_msg"],
        "resourceState": row["resource_state"], "tableName": row["table_name"],
        "tableType": row["table_type"], "databaseName": row["database_name"],
        "dataSchemaName": row["data_schema_name"], "runId": _last_run(stages),
        "fileFormat": row["file_format"],
        "fileFormatDisplay": _FORMAT_DISPLAY.get(str(row["file_format"]).lower(),
                                                 row["file_format"]),
        "sensitivity": _sensitivity(ctx.associations.get(key, ())),
        "status": row["status"], "datasetVirtualFolderName": None,
        "logicalFolderContext": None, "dataSetRootResource": None,
        "browseContextDataset": None, "virtualFolderContextName": None,
        # Optional lists and objects.
        "allowedTagDomainKeys": ctx.domains, "dataSetVirtualFolders": folders,
        "joinResources": [], "partitionDefinition": [], "origins": [], "logicalFolders": [],
        "permToReadMap": {}, "reportedFields": [], "dataSetPathSpecs": {}, "experts": None,
        "joinConditions": list(ctx.joins.get(key, [])), "detailedStatus": json_safe(stages),
        # catalog_nb extras.
        "encoding": row["encoding"], "collectionKey": row["collection_key"],
        "memberPaths": [p for p in ctx.members.get(key, []) if ctx.vis.sees(source_key, p)]
        if collection else [],
        "sourceDetails": json_safe({k: v for k, v in extra.items() if k not in _SQL_DETAILS}),
    }
    return _with_lists(out, row, ctx)


def _sensitivity(associations: Sequence[Mapping[str, Any]]) -> str | None:
    """The highest sensitivity of the tags of ACCEPTED associations (None without any)."""
    found = [a["tag_sensitivity"] for a in associations
             if a["state"] == _ACCEPTED and a["tag_sensitivity"] in _SENSITIVITY_RANK]
    return max(found, key=_SENSITIVITY_RANK.__getitem__) if found else None


def _with_lists(out: dict[str, Any], row: Mapping[str, Any], ctx: Shaping) -> dict[str, Any]:
    if ctx.fields is None and not ctx.tags:
        return out
    views = [view_out(a, row["path"], row["source_name"])
             for a in ctx.associations.get(row["key"], ())]
    if ctx.fields is not None:
        by_field: dict[str, list[dict[str, Any]]] = {}
        for view in views:
            if view["field"] is not None:
                by_field.setdefault(view["field"], []).append(view)
        out["fields"] = [field_out(f, by_field.get(f["name"], ()))
                         for f in ctx.fields.get(row["key"], [])]
    if ctx.tags:
        out["tagAssociationViewList"] = views
    return out


def _all_properties() -> frozenset[str]:
    """Every property name of the full wire form, read off the builder so they cannot drift."""
    row: dict[str, Any] = {
        "key": "k", "data_source_key": "s", "path": "p", "name": "n", "resource_type": "t",
        "source_name": "s", "detailed_status": [], "extra": {}, "source_type": None,
        "source_uri": None,
    }

    class _Any(dict[str, Any]):
        def __missing__(self, key: str) -> None:
            return None

    caller = Caller(key="k", name="n", roles=())
    ctx = Shaping(caller=caller, vis=Visibility(everything=True), fields={}, tags=True)
    return frozenset(resource_out(_Any(row), ctx))


#: Every property name of the full wire form (with fields and tags), for the PUT checks.
WIRE_PROPERTIES = _all_properties()
