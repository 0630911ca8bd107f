"""The plan of a bulk tagging: what each input row would do, computed without writing.

:func:`compute_plan` reads what it needs (every tag once, the data sources once, the named
resources with their fields and associations in batched ``GET /dataresource/metadata`` calls)
and returns one plan record per input row:

=================  ===========================================================================
action             meaning
=================  ===========================================================================
``create``         no association of this tag with this resource / field yet
``change state``   it exists in another state (``current_state``), ``new_state`` is asked
``unchanged``      it exists in the asked state
``error``          the row cannot be applied; ``reason`` says why: unknown data source,
                   resource, field or tag, an ambiguous tag name, an invalid state, a row that
                   names no resource or no tag, a duplicate row in the input
=================  ===========================================================================

Columns of the plan frame: :data:`PLAN_COLUMNS`; of the report after applying it:
:data:`REPORT_COLUMNS` (the plan's, then result, status, error_code, message).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.errors import NotFoundError
from catalog_nb.client.frames import Column
from catalog_nb.client.paging import progress_bar, read_pages
from catalog_nb.client.tags.associations import STATES
from catalog_nb.client.tags.refs import TagIndex

__all__ = [
    "CHANGE",
    "CREATE",
    "ERROR",
    "PLAN_COLUMNS",
    "REPORT_COLUMNS",
    "UNCHANGED",
    "compute_plan",
    "input_rows",
]

CREATE, CHANGE, UNCHANGED, ERROR = "create", "change state", "unchanged", "error"

#: Columns of the plan frames of :meth:`Catalog.apply_associations` and
#: :meth:`Catalog.review_suggestions` (indexed like the input).
PLAN_COLUMNS: tuple[Column, ...] = (
    Column("source", "string"),
    Column("path", "string"),
    Column("resource_key", "string"),
    Column("field", "string"),
    Column("tag", "string"),
    Column("tag_key", "string"),
    Column("action", "string"),
    Column("reason", "string"),
    Column("current_state", "string"),
    Column("new_state", "string"),
    Column("weight", "float"),
    Column("association_key", "string"),
)

#: Columns of the reports (``dry_run=False``): ``result`` is applied, failed, unchanged or
#: error; ``status``, ``error_code`` and ``message`` are the service's answer to a failed row.
REPORT_COLUMNS: tuple[Column, ...] = (
    *PLAN_COLUMNS,
    Column("result", "string"),
    Column("status", "int"),
    Column("error_code", "string"),
    Column("message", "string"),
)

#: Longest ``;``-joined value list sent in one metadata filter (keeps URLs short).
_FILTER_CHARS = 3000
_FILTER_ITEMS = 200


def _clean(value: Any) -> str | None:
    """A cell as text; missing values and empty strings are ``None``."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    text = str(value)
    return text if text.strip() else None


def input_rows(frame: pd.DataFrame | Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The input rows of :meth:`Catalog.apply_associations`, normalized.

    Recognized columns: ``resource_key``, ``source`` + ``path`` (or ``resource_path``),
    ``field``, ``tag`` or ``tag_key``, ``state``; others are ignored, so a frame of
    :meth:`Catalog.associations` can be edited and fed back.
    """
    data = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(list(frame))
    columns = set(data.columns)
    path_column = "path" if "path" in columns else "resource_path"
    if "resource_key" not in columns and not {"source", path_column} <= columns:
        raise ValueError(
            "the frame names no resource: give a resource_key column, or source and path "
            f"columns (it has {', '.join(map(str, data.columns)) or 'none'})"
        )
    if not {"tag", "tag_key"} & columns:
        raise ValueError("the frame names no tag: give a tag (full name) or tag_key column")
    rows = []
    for index, record in zip(data.index, data.to_dict("records"), strict=True):
        rows.append(
            {
                "index": index,
                "resource_key": _clean(record.get("resource_key")),
                "source": _clean(record.get("source")),
                "path": _clean(record.get(path_column)),
                "field": _clean(record.get("field")),
                "tag": _clean(record.get("tag")),
                "tag_key": _clean(record.get("tag_key")),
                "state": _clean(record.get("state")),
            }
        )
    return rows


def _chunks(values: list[str]) -> Iterator[list[str]]:
    chunk: list[str] = []
    size = 0
    for value in values:
        if chunk and (size + len(value) > _FILTER_CHARS or len(chunk) >= _FILTER_ITEMS):
            yield chunk
            chunk, size = [], 0
        chunk.append(value)
        size += len(value) + 1
    if chunk:
        yield chunk


class _Resources:
    """The named resources with their fields and associations, read in batches."""

    def __init__(self, api: CatalogApi, progress: bool) -> None:
        self.api = api
        self.progress = progress
        self.by_key: dict[str, dict[str, Any]] = {}
        self.by_location: dict[tuple[str, str], dict[str, Any]] = {}

    def _keep(self, record: Mapping[str, Any]) -> None:
        record = dict(record)
        self.by_key[str(record.get("key"))] = record
        where = (str(record.get("dataSourceName")), str(record.get("resourcePath")))
        self.by_location[where] = record

    def _query(self, filters: list[str]) -> None:
        def fetch(start: int, size: int, _cursor: str | None) -> Any:
            return self.api.resource_metadata(
                filters, views=["viewFields", "viewTags"], page_size=size, start=start
            )

        records, _ = read_pages(
            fetch,
            page_size=contract.METADATA_PAGE_MAX,
            limit=None,
            progress=False,
            description="resources",
        )
        for record in records:
            self._keep(record)

    def _one(self, kind: str, what: Any) -> None:
        try:
            if kind == "key":
                self._keep(self.api.get_resource(what))
            else:
                self._keep(self.api.get_resource_by_path(*what))
        except NotFoundError:
            pass  # the plan reports it as an unknown resource

    def load(self, keys: set[str], locations: set[tuple[str, str]]) -> None:
        """Read the resources of ``keys`` and ``(source name, path)`` pairs."""
        jobs: list[Any] = []
        plain = sorted(k for k in keys if ";" not in k)
        jobs += [("q", [f"id:{';'.join(chunk)}"]) for chunk in _chunks(plain)]
        jobs += [("key", key) for key in sorted(keys) if ";" in key]
        by_source: dict[str, list[str]] = {}
        for source, path in sorted(locations):
            if ";" in path or ";" in source:
                jobs.append(("path", (source, path)))
            else:
                by_source.setdefault(source, []).append(path)
        for source, paths in by_source.items():
            for chunk in _chunks(paths):
                jobs.append(("q", [f"data_source:{source}", f"path:{';'.join(chunk)}"]))
        bar: Any = None
        if self.progress and len(jobs) > 1:
            bar = progress_bar(len(jobs), "reading resources", unit=" requests")
        try:
            for kind, what in jobs:
                if kind == "q":
                    self._query(what)
                else:
                    self._one(kind, what)
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()


def _source_names(api: CatalogApi, rows: list[dict[str, Any]]) -> dict[str, str | None]:
    """Each ``source`` of the rows (name in any case, or key) -> the source's name."""
    wanted = {row["source"] for row in rows if row["resource_key"] is None and row["source"]}
    if not wanted:
        return {}
    sources = api.list_sources()
    names: dict[str, str | None] = {}
    for ref in wanted:
        match = [s for s in sources if str(s.get("name")).casefold() == ref.casefold()]
        match = match or [s for s in sources if s.get("key") == ref]
        names[ref] = str(match[0]["name"]) if match else None
    return names


def _new_plan(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "index": row["index"],
        "source": row["source"],
        "path": row["path"],
        "resource_key": row["resource_key"],
        "field": row["field"],
        "tag": row["tag"],
        "tag_key": row["tag_key"],
        "action": None,
        "reason": None,
        "current_state": None,
        "new_state": None,
        "weight": None,
        "association_key": None,
    }


def compute_plan(
    api: CatalogApi, rows: list[dict[str, Any]], *, progress: bool = False
) -> list[dict[str, Any]]:
    """One plan record per row of :func:`input_rows` (see the module docstring); no writes.

    Each row passes the rules in turn (:func:`_resource_rule`, :func:`_field_rule`,
    :func:`_tag_rule`, :func:`_state_rule`, then :func:`_duplicate_rule`); a row that breaks
    any is an error whose reason lists every rule it broke, the others are compared with the
    resource's current associations.
    """
    tags = TagIndex(api.list_tags()) if rows else TagIndex([])
    names = _source_names(api, rows)
    keys = {row["resource_key"] for row in rows if row["resource_key"]}
    locations = {
        (str(names.get(row["source"])), row["path"])
        for row in rows
        if not row["resource_key"] and row["source"] and row["path"] and names.get(row["source"])
    }
    resources = _Resources(api, progress)
    resources.load(keys, locations)
    seen: dict[tuple[str, str, str], Any] = {}
    return [_plan_row(row, names, resources, tags, seen) for row in rows]


def _plan_row(
    row: dict[str, Any],
    names: Mapping[str, str | None],
    resources: _Resources,
    tags: TagIndex,
    seen: dict[tuple[str, str, str], Any],
) -> dict[str, Any]:
    plan = _new_plan(row)
    resource, reasons = _resource_rule(row, names, resources)
    if resource is not None:
        plan["source"] = resource.get("dataSourceName")
        plan["path"] = resource.get("resourcePath")
        plan["resource_key"] = resource.get("key")
        reasons += _field_rule(row, resource)
    tag, tag_reasons = _tag_rule(row, tags)
    reasons += tag_reasons
    if tag is not None:
        plan["tag"], plan["tag_key"] = tag.get("fullName"), tag.get("key")
    plan["new_state"], state_reasons = _state_rule(row)
    reasons += state_reasons
    if reasons:
        plan["action"], plan["reason"] = ERROR, "; ".join(reasons)
        return plan
    assert resource is not None and tag is not None
    duplicate = _duplicate_rule(row, resource, tag, seen)
    if duplicate:
        plan["action"], plan["reason"] = ERROR, "; ".join(duplicate)
    else:
        _compare(plan, resource, row["field"], str(tag["key"]), plan["new_state"])
    return plan


def _resource_rule(
    row: Mapping[str, Any], names: Mapping[str, str | None], resources: _Resources
) -> tuple[dict[str, Any] | None, list[str]]:
    """The row names a resource that exists: by ``resource_key``, or by source and path."""
    if row["resource_key"]:
        resource = resources.by_key.get(row["resource_key"])
        missing = [f"unknown resource key {row['resource_key']!r}"]
        return resource, [] if resource is not None else missing
    if not (row["source"] and row["path"]):
        return None, ["no resource: give resource_key, or source and path"]
    name = names.get(row["source"])
    if name is None:
        return None, [f"unknown data source {row['source']!r}"]
    resource = resources.by_location.get((name, row["path"]))
    missing = [f"unknown resource {row['path']!r} in data source {name!r}"]
    return resource, [] if resource is not None else missing


def _field_rule(row: Mapping[str, Any], resource: Mapping[str, Any]) -> list[str]:
    """A named field is one of the resource's profiled fields."""
    fields = {str(f.get("name")) for f in resource.get("fields") or []}
    if row["field"] is None or row["field"] in fields:
        return []
    never = "" if fields else " (it has no profiled fields)"
    return [f"unknown field {row['field']!r} of {resource.get('resourcePath')!r}{never}"]


def _tag_rule(row: Mapping[str, Any], tags: TagIndex) -> tuple[dict[str, Any] | None, list[str]]:
    """The row names one tag: by ``tag_key``, or by full name."""
    if row["tag_key"]:
        tag, why = tags.find({"key": row["tag_key"], "fullName": None})
    elif row["tag"]:
        tag, why = tags.find(row["tag"])
    else:
        tag, why = None, "no tag: give tag (full name) or tag_key"
    return tag, [] if tag is not None else [str(why)]


def _state_rule(row: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The state (ACCEPTED when missing) is one an association can be in."""
    state = (row["state"] or contract.TagAssociationState.ACCEPTED.value).strip().upper()
    if state in STATES:
        return state, []
    return state, [f"invalid state {row['state']!r}; expected one of {', '.join(STATES)}"]


def _duplicate_rule(
    row: Mapping[str, Any],
    resource: Mapping[str, Any],
    tag: Mapping[str, Any],
    seen: dict[tuple[str, str, str], Any],
) -> list[str]:
    """No earlier valid row names the same resource, field and tag."""
    identity = (str(resource["key"]), row["field"] or "", str(tag["key"]))
    if identity in seen:
        return [f"duplicate row in input (same resource, field and tag as row {seen[identity]!r})"]
    seen[identity] = row["index"]
    return []


def _compare(
    plan: dict[str, Any], resource: Mapping[str, Any], field: str | None, tag_key: str, state: str
) -> None:
    """Set the action of a valid row from the resource's current associations."""
    for view in resource.get("tagAssociationViewList") or []:
        if view.get("tagKey") == tag_key and (view.get("field") or None) == field:
            plan["current_state"] = view.get("state")
            plan["weight"] = view.get("weight")
            plan["association_key"] = view.get("key")
            plan["action"] = UNCHANGED if view.get("state") == state else CHANGE
            return
    plan["action"] = CREATE
