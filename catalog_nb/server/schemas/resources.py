"""The wire form of a data resource (the spec's DataResource) and of its fields (AbstractField).

Built as plain dicts rather than pydantic models: a metadata page holds up to 1,000 resources
with their fields, and validating each again on the way out would cost more than the query.
What does not depend on the row (the caller's permissions, the properties catalog_nb never
fills) is worked out once per page in :class:`Shaping`; a row then costs one dict display, and
a metadata page (:func:`page_out`) less than that, a property at a time. NaN
and infinities in statistics are left to the encoder (``server/responses.py``), which writes
them as null.
Every property of the spec is present; the required booleans and numbers are never null (0 or
false when they do not apply). catalog_nb adds ``encoding``, ``collectionKey``, ``memberPaths``,
``sourceDetails`` and ``inferredKeys``. The value sketch of a field is never read, so it cannot
leave.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import repeat
from math import copysign
from typing import Any

import orjson
from sqlalchemy.engine import make_url

from catalog_nb.contract import (
    AccessLevel,
    DataAccessOption,
    ResourceType,
    Sensitivity,
    SourceType,
    TagAssociationState,
)
from catalog_nb.server.responses import dumps
from catalog_nb.server.schemas.associations import view_out
from catalog_nb.server.security import Caller
from catalog_nb.server.store.resources import WIRE_COLUMNS
from catalog_nb.server.visibility import PathSpec, Visibility

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

#: Wire type of profiling properties whose type does not follow from a null value.
_PROPERTY_TYPES = {
    "density": "DOUBLE", "mean": "DOUBLE", "valueCount": "LONG", "nullCount": "LONG",
    "distinctCount": "LONG", "minLength": "LONG", "maxLength": "LONG", "sampleSize": "LONG",
    "sampled": "BOOLEAN", "distinctCountApproximate": "BOOLEAN", "mostFrequent": "ARRAY",
    "patterns": "ARRAY",
}
_SQL_DETAILS = ("databaseName", "dataSchemaName", "tableName", "tableType")
#: What the resource's ``extra`` holds that is sent as properties of their own, not as
#: ``sourceDetails``.
_NOT_DETAILS = (*_SQL_DETAILS, "inferredKeys")


@lru_cache(maxsize=4096)
def mask_uri(source_type: str | None, uri: str | None) -> str | None:
    """A source URI fit to show: an SQL URL's password becomes ``***`` (a page holds few
    sources, so each is parsed once)."""
    if uri is None or source_type != SourceType.SQL.value:
        return uri
    try:
        return make_url(uri).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - an unparsable URL is shown as nothing rather than leaked
        return None


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
            {"name": k, "value": v, "type": _value_type(k, v)} for k, v in properties.items()
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
    #: More properties of some resources, by key: a search ``score``, a ``favoriteTime``.
    extra: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: The properties asked for (``properties=`` of the metadata query; None: all). The rows
    #: then carry only those in their ``wire`` (``store.resources.MetadataQuery.properties``).
    properties: frozenset[str] | None = None

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
        self._runs_jobs_in: dict[str, bool] = {}
        #: The properties that are the same on every resource of the page, and their JSON.
        self.same = _constants(self)
        self.constants = dumps(self.same)[1:-1]
        wanted = self.properties
        self.own = [(n, b) for n, b in OWN if wanted is None or n in wanted]

    def runs_jobs_in(self, source_key: str) -> bool:
        """``canRunJob`` of the resources of a source (looked up once per source)."""
        found = self._runs_jobs_in.get(source_key)
        if found is None:
            found = self._runs_jobs_in[source_key] = (
                self.runs_jobs and self.vis.sees_source(source_key))
        return found


def _stage_facts(stages: Sequence[Mapping[str, Any]]) -> tuple[str | None, int]:
    """``runId`` (of the latest stage that has one) and ``processedTime`` (how long the last
    profiling took, in milliseconds) of a resource's stages, in one pass."""
    run_id: str | None = None
    run_end: Any = None
    processed: int | None = None
    for stage in stages:
        if stage.get("runId"):
            end = stage.get("endTime") or 0
            if run_id is None or end > run_end:
                run_id, run_end = str(stage["runId"]), end
        if processed is None and stage.get("stageName") == "profile" and stage.get("endTime") \
                and stage.get("startTime"):
            processed = int(stage["endTime"]) - int(stage["startTime"])
    return run_id, processed or 0


def _constants(ctx: Shaping) -> dict[str, Any]:
    """The properties that are the same on every resource of the caller's page (those asked
    for), worked out (and serialised: ``Shaping.constants``) once per page."""
    steward, analyst = ctx.steward, ctx.analyst
    same = {
        "type": "dataresource", "restricted": [], "viewAble": [], "updateable": ctx.updateable,
        # Required booleans.
        "canAssociateTag": analyst, "canDisassociateTag": steward,
        "canAddOrRemoveResourceFromDataset": steward, "canCreateHiveTableOrView": False,
        "permittedToRead": True, "dataPermitted": ctx.reads_data, "dataSetRoot": False,
        "parquetBinaryAsString": False, "lastPartitionProfile": False,
        # Required numbers.
        "subscribersCount": 0, "curationCount": 0, "dataSetSchemaVersion": 0, "usageCount": 0,
        # Optional numbers, strings, lists and objects catalog_nb does not fill.
        "timeOfResourceAccess": None, "landing": False, "dataSetId": None, "xmlRowTag": None,
        "xmlRootTag": None, "datasetVirtualFolderName": None, "logicalFolderContext": None,
        "dataSetRootResource": None, "browseContextDataset": None,
        "virtualFolderContextName": None, "allowedTagDomainKeys": ctx.domains,
        "joinResources": [], "partitionDefinition": [], "origins": [], "logicalFolders": [],
        "permToReadMap": {}, "reportedFields": [], "dataSetPathSpecs": {}, "experts": None,
    }
    if ctx.properties is not None:
        same = {k: v for k, v in same.items() if k in ctx.properties}
    return same


def resource_out(row: Mapping[str, Any], ctx: Shaping) -> orjson.Fragment:
    """The DataResource JSON of a resource row read by the store (with its ``wire`` JSON).

    Three parts are joined as text: the row's own properties, built by the database
    (``store.resources.WIRE_COLUMNS``); the page's constants (:func:`_constants`, once per
    page); and the properties of :data:`OWN`, encoded per row (only those asked for). The
    result is an :class:`orjson.Fragment` that the answer's encoder copies as it is.
    """
    if ctx.minimal:
        minimal = {
            "key": row["key"], "resourcePath": row["path"], "name": row["name"],
            "resourceType": row["resource_type"], "dataSourceName": row["source_name"],
        }
        return orjson.Fragment(dumps(_with_lists(minimal, row, ctx)))
    own = {name: build(row, ctx) for name, build in ctx.own}
    if ctx.fields is not None or ctx.tags:
        _with_lists(own, row, ctx)  # asked for by views, sent whatever ``properties`` say
    key = row["key"]
    if ctx.extra and key in ctx.extra:
        more = ctx.extra[key]
        own.update(more if ctx.properties is None
                   else {k: v for k, v in more.items() if k in ctx.properties})
    # The members of the database's object, the page's constants, then this row's own.
    return _object(_wire_members(row), ctx.constants, dumps(own)[1:-1])


def _wire_members(row: Mapping[str, Any]) -> bytes:
    """The members of the row's ``wire`` JSON object (built by the database), braces off."""
    return bytes(row["wire"].encode().strip()[1:-1].strip())


def _object(*members: bytes) -> orjson.Fragment:
    """One JSON object of encoded ``"name":value`` members (empty ones left out)."""
    return orjson.Fragment(b"{" + b",".join(filter(None, members)) + b"}")


def page_out(rows: Sequence[Mapping[str, Any]], ctx: Shaping) -> list[orjson.Fragment]:
    """:func:`resource_out` of every row of a page: the same bytes, built a property at a time.

    A metadata page is 1,000 rows of a handful of per-row properties that mostly repeat
    (``favorite: false``, no ratings, no folders): each property is worked out for the whole
    page and each distinct value encoded once (:func:`_encoded`), then every row is one join of
    pre-encoded members: 2.5 ms for a page of the client's frame properties where a dict built
    and encoded per row took 3.9 ms. Pages with fields, tags, extras or the minimal view go row
    by row.
    """
    if ctx.minimal or ctx.fields is not None or ctx.tags or ctx.extra:
        return [resource_out(row, ctx) for row in rows]
    wires = [_wire_members(row) for row in rows]
    members = [_encoded(name, [build(row, ctx) for row in rows]) for name, build in ctx.own]
    return [_object(*parts) for parts in zip(wires, repeat(ctx.constants), *members,
                                              strict=False)]


def _encoded(name: str, values: Sequence[Any]) -> list[bytes]:
    """``"name":value`` of each of ``values``, as :func:`dumps` writes them in a dict, each
    distinct value encoded once (a column with a list or a dict in it: each value)."""
    head = dumps(name) + b":"
    # Keyed by type too: True, 1 and 1.0 are equal and hash alike but are written apart.
    keys = list(zip(map(type, values), values, strict=True))
    try:
        distinct = set(keys)
    except TypeError:  # unhashable values (lists, dicts)
        return [head + dumps(value) for value in values]
    if (float, 0.0) in distinct and any(
            type(v) is float and not v and copysign(1.0, v) < 0 for v in values):
        # -0.0 equals 0.0 as a key but is written "-0.0".
        return [head + dumps(value) for value in values]
    memo = {key: head + dumps(key[1]) for key in distinct}
    return [memo[key] for key in keys]


_COLLECTION = ResourceType.COLLECTION.value
_NO_RATING = (0.0, 0)


#: Where a page row keeps its stage facts once worked out (``processedTime`` and ``runId`` both
#: come from one pass over the stages).
_STAGE_FACTS = "_stage_facts"


def _stages_of(row: Mapping[str, Any]) -> tuple[str | None, int]:
    facts = row.get(_STAGE_FACTS)
    if facts is None:
        facts = _stage_facts(row["detailed_status"] or [])
        row[_STAGE_FACTS] = facts  # type: ignore[index]  # the page's own dict (rows_of)
    return facts


def _processed_time(row: Mapping[str, Any], ctx: Shaping) -> int:
    return _stages_of(row)[1]


def _run_id(row: Mapping[str, Any], ctx: Shaping) -> str | None:
    return _stages_of(row)[0]


def _data_set_member(row: Mapping[str, Any], ctx: Shaping) -> bool:
    if not ctx.datasets:
        return False
    source_key, path = row["data_source_key"], row["path"]
    return any(any(s.matches(path) for s in d.get(source_key, ())) for d in ctx.datasets)


def _virtual_folders(row: Mapping[str, Any], ctx: Shaping) -> Sequence[str]:
    if not ctx.folders:
        return ()
    source_key, path = row["data_source_key"], row["path"]
    return sorted(name for name, folder_source, specs in ctx.folders
                  if folder_source == source_key and any(s.matches(path) for s in specs))


def _member_paths(row: Mapping[str, Any], ctx: Shaping) -> Sequence[str]:
    if row["resource_type"] != _COLLECTION:
        return ()
    source_key = row["data_source_key"]
    return [p for p in ctx.members.get(row["key"], ()) if ctx.vis.sees(source_key, p)]


def _source_details(row: Mapping[str, Any], ctx: Shaping) -> dict[str, Any]:
    extra = row["extra"]
    return {k: v for k, v in extra.items() if k not in _NOT_DETAILS} if extra else {}


#: The properties built per row in Python, in the order they are sent, each from the row and
#: the page's :class:`Shaping`. A page asking for some ``properties`` builds only those
#: (``Shaping.own``); what the database builds is in ``store.resources.WIRE_COLUMNS``.
OWN: tuple[tuple[str, Any], ...] = (
    ("score", lambda row, ctx: 0.0),
    ("customProperties", lambda row, ctx: ctx.custom.get(row["key"], ())),
    ("canRunJob", lambda row, ctx: ctx.runs_jobs_in(row["data_source_key"])),
    ("dataSetMember", _data_set_member),
    ("favorite", lambda row, ctx: row["key"] in ctx.favorites),
    ("processedTime", _processed_time),
    ("averageRating", lambda row, ctx: ctx.ratings.get(row["key"], _NO_RATING)[0]),
    ("ratingCount", lambda row, ctx: ctx.ratings.get(row["key"], _NO_RATING)[1]),
    ("dataSourceUri", lambda row, ctx: mask_uri(row["source_type"], row["source_uri"])),
    ("runId", _run_id),
    ("sensitivity", lambda row, ctx: _sensitivity(ctx.associations.get(row["key"], ()))),
    ("dataSetVirtualFolders", _virtual_folders),
    ("joinConditions", lambda row, ctx: ctx.joins.get(row["key"], ())),
    ("detailedStatus", lambda row, ctx: row["detailed_status"] or []),
    ("memberPaths", _member_paths),
    ("sourceDetails", _source_details),
)


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
            if view["field"]:  # "" is a resource-level association
                by_field.setdefault(view["field"], []).append(view)
        out["fields"] = [field_out(f, by_field.get(f["name"], ()))
                         for f in ctx.fields.get(row["key"], [])]
    if ctx.tags:
        out["tagAssociationViewList"] = views
    return out


def _all_properties() -> frozenset[str]:
    """Every property name of the full wire form, read off the builder so they cannot drift:
    a resource built from a row whose database part names every wire column."""
    row: dict[str, Any] = {
        "key": "k", "data_source_key": "s", "path": "p", "name": "n", "resource_type": "t",
        "source_name": "s", "detailed_status": [], "extra": {}, "source_type": None,
        "source_uri": None, "wire": orjson.dumps(dict.fromkeys(WIRE_COLUMNS)).decode(),
    }
    caller = Caller(key="k", name="n", roles=())
    ctx = Shaping(caller=caller, vis=Visibility(everything=True), fields={}, tags=True)
    return frozenset(orjson.loads(orjson.dumps(resource_out(row, ctx))))


#: Every property name of the full wire form (with fields and tags), for the PUT checks.
WIRE_PROPERTIES = _all_properties()
