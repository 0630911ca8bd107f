"""Parsing what callers send about data resources: metadata query parameters and PUT bodies.

Both are checked by hand rather than by pydantic, because their errors must carry the codes of
the wire contract (``INVALID_FILTER``, ``INVALID_PARAMETER``, ``READ_ONLY_PROPERTY`` naming the
property) and a system-owned property must be told apart from a misspelt one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from catalog_nb.contract import (
    ARROW_PAGE_MAX,
    ARROW_STREAM,
    MAX_FILTER_VALUES,
    MAX_NAME_LENGTH,
    MAX_PROPERTY_FILTERS,
    METADATA_PAGE_MAX,
    ErrorCode,
    ResourceType,
)
from catalog_nb.server.errors import BadRequest, NotAcceptable
from catalog_nb.server.schemas.paging import Cursor, decode_cursor, encode_cursor, fingerprint
from catalog_nb.server.schemas.resources import (
    FIELD_PROPERTIES,
    FIELD_WRITABLE,
    WIRE_PROPERTIES,
    WRITABLE,
)

#: Filter properties with a closed set of values: anything else is a typo, refused (400).
_CLOSED = {
    "resource_type": [t.value for t in ResourceType],
    "resource_state": ["OK", "ERROR"],
    "status": ["BROWSED", "PROFILED", "ERROR", "MISSING"],
}
FILTER_PROPERTIES = ("id", "resource_type", "data_source", "file_format", "owner",
                     "resource_state", "status", "name", "path")
VIEWS = ("resource_path", "viewFields", "viewTags")
_TEXT_MAX = 100_000


def parse_filters(raw: Iterable[str]) -> list[tuple[str, list[str]]]:
    """``propertyFilter`` values as (property, values); 400 INVALID_FILTER naming the problem.

    At most ``MAX_PROPERTY_FILTERS`` filters naming ``MAX_FILTER_VALUES`` values in all: each
    filter is a clause of one SQL statement, and SQLite refuses a statement nested too deep.
    """
    raw = list(raw)
    if len(raw) > MAX_PROPERTY_FILTERS:
        raise BadRequest(
            f"The query has {len(raw)} propertyFilter parameters; at most "
            f"{MAX_PROPERTY_FILTERS} are taken (list several values of one property as "
            "<property>:<value>;<value>).",
            ErrorCode.INVALID_FILTER,
        )
    parsed: list[tuple[str, list[str]]] = []
    total = 0
    for item in raw:
        prop, sep, rest = item.partition(":")
        prop = prop.strip().lower()
        if not sep or not prop:
            raise BadRequest(
                f"propertyFilter {item!r} must read <property>:<value>[;<value>...], e.g. "
                "resource_type:resource_type_file.",
                ErrorCode.INVALID_FILTER,
            )
        if prop not in FILTER_PROPERTIES:
            raise BadRequest(
                f"propertyFilter names an unknown property {prop!r}; known properties: "
                f"{', '.join(FILTER_PROPERTIES)}.",
                ErrorCode.INVALID_FILTER,
            )
        values = [v.strip() for v in rest.split(";")]
        total += len(values)
        if total > MAX_FILTER_VALUES:
            raise BadRequest(
                f"The propertyFilter parameters name more than {MAX_FILTER_VALUES} values in "
                "all; narrow the query or split it.",
                ErrorCode.INVALID_FILTER,
            )
        if not all(values):
            raise BadRequest(
                f"propertyFilter {item!r} has an empty value; separate values with ';'.",
                ErrorCode.INVALID_FILTER,
            )
        if prop == "resource_type":
            # The spec's only example is the HDFS alias; both names mean a file.
            values = [ResourceType.FILE.value if v == ResourceType.HDFS_FILE.value else v
                      for v in values]
        allowed = _CLOSED.get(prop)
        wrong = [v for v in values if allowed is not None and v not in allowed]
        if wrong:
            raise BadRequest(
                f"propertyFilter {prop} does not take {', '.join(map(repr, wrong))}; its values "
                f"are {', '.join(allowed or [])}.",
                ErrorCode.INVALID_FILTER,
            )
        parsed.append((prop, list(dict.fromkeys(values))))
    return parsed


def split_list(raw: Iterable[str]) -> list[str]:
    """Values of a parameter given repeated and/or comma-separated, blanks dropped."""
    return [v.strip() for item in raw for v in item.split(",") if v.strip()]


def parse_views(raw: Iterable[str]) -> set[str]:
    """``views``; an unknown view is 400 INVALID_PARAMETER."""
    views = split_list(raw)
    unknown = [v for v in views if v not in VIEWS]
    if unknown:
        raise BadRequest(
            f"views does not know {', '.join(map(repr, unknown))}; use {', '.join(VIEWS)}.",
            ErrorCode.INVALID_PARAMETER,
        )
    return set(views)


def parse_properties(raw: Iterable[str]) -> frozenset[str] | None:
    """``properties`` (repeated and/or comma-separated): the DataResource properties to send
    (``key`` always comes too); None when not given. An unknown name is 400 INVALID_PARAMETER."""
    names = split_list(raw)
    if not names:
        return None
    known = WIRE_PROPERTIES - {"fields", "tagAssociationViewList"}
    unknown = sorted(set(names) - known)
    if unknown:
        raise BadRequest(
            f"properties names {', '.join(map(repr, unknown))}, which a data resource does not "
            f"have; use names of its properties such as key, name, resourcePath, rowCount "
            "(fields and tags come with views=viewFields,viewTags).",
            ErrorCode.INVALID_PARAMETER, field="properties",
        )
    return frozenset(names) | {"key"}


def _accepted(accept: str) -> dict[str, float]:
    """The quality of each media range of an ``Accept`` header (RFC 9110 12.5.1), lower case;
    a malformed quality counts as 0."""
    ranges: dict[str, float] = {}
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    quality = 0.0
        if media:
            ranges[media.lower()] = max(quality, ranges.get(media.lower(), 0.0))
    return ranges


def answers_arrow(accept: str | None, views: bool) -> bool:
    """Whether a metadata page goes out in the Arrow layout: the request accepts
    ``application/vnd.apache.arrow.stream`` at least as much as JSON (a named type wins over a
    wildcard of the same quality). Views are sent as JSON only: with views, a request that
    accepts the Arrow layout and not JSON is 406 NOT_ACCEPTABLE.

    >>> answers_arrow("application/vnd.apache.arrow.stream, application/json;q=0.5", False)
    True
    """
    if not accept or ARROW_STREAM not in accept.lower():
        return False
    ranges = _accepted(accept)
    arrow = ranges.get(ARROW_STREAM, 0.0)
    json = max(ranges.get(m, 0.0) for m in ("application/json", "application/*", "*/*"))
    if arrow <= 0.0 or arrow < json:
        return False
    if views:
        if json > 0.0:
            return False
        raise NotAcceptable(
            "Views (viewFields, viewTags, resource_path) are sent as JSON only; accept "
            "application/json, or leave views out for the Arrow layout.",
            ErrorCode.NOT_ACCEPTABLE)
    return True


def check_paging(start: int, size: int, modified_from: int | None, modified_to: int | None,
                 *, arrow: bool = False) -> None:
    """400 INVALID_PARAMETER for a page size outside 1..1000 (1..10,000 in the Arrow layout),
    a negative start, crossed dates."""
    largest = ARROW_PAGE_MAX if arrow else METADATA_PAGE_MAX
    if not 1 <= size <= largest:
        raise BadRequest(
            f"pageSize must be between 1 and {largest}, not {size}; page through "
            "larger results with the nextCursor of each page.",
            ErrorCode.INVALID_PARAMETER,
        )
    if start < 0:
        raise BadRequest(f"start must be 0 or more, not {start}.", ErrorCode.INVALID_PARAMETER)
    if modified_from is not None and modified_to is not None and modified_from > modified_to:
        raise BadRequest(
            "resourceModifiedDateFromL is after resourceModifiedDateToL; nothing can match.",
            ErrorCode.INVALID_PARAMETER,
        )


#: The kind of the metadata query's cursors (schemas/paging.py).
METADATA_CURSOR = "metadata"


def metadata_fingerprint(
    filters: list[tuple[str, list[str]]], folder_keys: list[str], modified_from: int | None,
    modified_to: int | None,
) -> str:
    """What a metadata cursor is bound to: the parsed filters, folders and dates (not the page
    size or the views, which may change from page to page)."""
    return fingerprint(METADATA_CURSOR, filters, folder_keys, modified_from, modified_to)


def resume_metadata(cursor: str | None, start: int, query: str) -> Cursor | None:
    """The decoded ``cursor`` of a metadata request (None without one); 400 INVALID_CURSOR for
    one that is not a cursor of this query, INVALID_PARAMETER when ``start`` comes too."""
    if cursor is None:
        return None
    if start:
        raise BadRequest(
            "Pass either start or cursor, not both: a cursor already says where the page "
            "starts.", ErrorCode.INVALID_PARAMETER, field="start",
        )
    return decode_cursor(cursor, METADATA_CURSOR, query, 3)


def metadata_page(
    listed: Sequence[Any], total: int, start: int, size: int, query: str,
    after: tuple[str, str, str] | None, *, counted: bool,
) -> dict[str, Any]:
    """The body of a metadata page; ``after`` is the sort key of its last row when another page
    follows (None on the last page, whose ``nextCursor`` is null).

    ``counted``: ``total`` was counted for this page. With a cursor it was not: it is what
    matched when the paging began (counting again on every page would cost a scan of the
    catalog each time), raised to what has been sent when rows were inserted since.
    """
    sent = start + len(listed)
    if not counted:
        total = max(total, sent + (1 if after is not None else 0))
    next_cursor = None
    if after is not None:
        next_cursor = encode_cursor(Cursor(METADATA_CURSOR, query, sent, total, after))
    return {"list": listed, "totalCount": total, "start": start, "pageSize": size,
            "nextCursor": next_cursor}


# ---------------------------------------------------------------------------------- updates


@dataclass
class ResourceChanges:
    """A parsed PUT body: resource columns, custom values by name, field columns by name."""

    values: dict[str, Any] = field(default_factory=dict)
    custom: dict[str, Any] = field(default_factory=dict)
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)

    def summary(self) -> str:
        """What changed, for the audit trail."""
        parts = list(self.values)
        parts += [f"customProperties.{n}" for n in self.custom]
        parts += [f"fields.{n}" for n in self.fields]
        return ", ".join(parts) or "nothing"


_COLUMNS = {"description": "description", "richDescription": "rich_description",
            "displayName": "display_name", "comment": "comment", "owner": "owner"}


def _read_only(names: list[str], detail: str = "") -> BadRequest:
    return BadRequest(
        f"These properties are written only by the catalog's own processing and cannot be "
        f"changed: {', '.join(names)}{detail}.",
        ErrorCode.READ_ONLY_PROPERTY,
        properties=names,
    )


def _text(where: str, value: Any, limit: int = _TEXT_MAX) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{where} must be a string or null.", ErrorCode.INVALID_PAYLOAD)
    if len(value) > limit:
        raise BadRequest(f"{where} must be at most {limit} characters.", ErrorCode.INVALID_PAYLOAD)
    return value


def _owner(value: Any) -> str | None:
    text = _text("owner", value, MAX_NAME_LENGTH)
    if text is not None and any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in text):
        raise BadRequest("owner must not contain control characters.", ErrorCode.INVALID_PAYLOAD)
    return (text or "").strip() or None


def parse_update(body: Any) -> ResourceChanges:
    """Check a PUT body against the wire contract (see docs/resources-api.md)."""
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object of the properties to change.",
                         ErrorCode.INVALID_PAYLOAD)
    system = sorted(k for k in body if k in WIRE_PROPERTIES and k not in WRITABLE)
    if system:
        raise _read_only(system)
    unknown = sorted(k for k in body if k not in WRITABLE)
    if unknown:
        raise BadRequest(
            f"Unknown properties: {', '.join(unknown)}; a data resource takes "
            f"{', '.join(sorted(WRITABLE))}.",
            ErrorCode.INVALID_PAYLOAD,
        )
    changes = ResourceChanges()
    for wire in ("description", "richDescription"):
        if wire in body:
            changes.values[_COLUMNS[wire]] = _text(wire, body[wire])
    if "owner" in body:
        changes.values["owner"] = _owner(body["owner"])
    if "customProperties" in body:
        changes.custom = _custom(body["customProperties"])
    if "fields" in body:
        changes.fields = _fields(body["fields"])
    return changes


_DEFINITION = ("displayName", "description", "type", "facetAble")


def _custom(raw: Any) -> dict[str, Any]:
    """``{name: value}`` or ``[{name, value}]`` as {name: value}; duplicates refused."""
    if isinstance(raw, dict):
        pairs = list(raw.items())
    elif isinstance(raw, list):
        pairs = []
        for entry in raw:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise BadRequest('customProperties entries must read {"name": ..., "value": ...}.',
                                 ErrorCode.INVALID_PAYLOAD)
            defined = sorted(f"customProperties[].{k}" for k in entry if k in _DEFINITION)
            if defined:
                raise _read_only(defined, " (they belong to the definition: /customproperty)")
            extra = sorted(k for k in entry if k not in ("name", "value"))
            if extra:
                raise BadRequest(f"customProperties entries take name and value, not "
                                 f"{', '.join(extra)}.", ErrorCode.INVALID_PAYLOAD)
            pairs.append((entry["name"], entry.get("value")))
    else:
        raise BadRequest("customProperties must be an object {name: value} or a list of "
                         "{name, value}.", ErrorCode.INVALID_PAYLOAD)
    found: dict[str, Any] = {}
    seen: set[str] = set()
    for name, value in pairs:
        if not name.strip() or name.casefold() in seen:
            raise BadRequest(f"customProperties names {name!r} twice or not at all.",
                             ErrorCode.INVALID_PAYLOAD)
        seen.add(name.casefold())
        found[name] = value
    return found


def _fields(raw: Any) -> dict[str, dict[str, Any]]:
    """``[{name, description?, displayName?, comment?}]`` as {name: column changes}."""
    if not isinstance(raw, list):
        raise BadRequest("fields must be a list of {name, description, displayName, comment}.",
                         ErrorCode.INVALID_PAYLOAD)
    found: dict[str, dict[str, Any]] = {}
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise BadRequest("Every entry of fields must be an object with the field's name.",
                             ErrorCode.INVALID_PAYLOAD)
        name = entry["name"]
        system = sorted(f"fields[].{k}" for k in entry
                        if k in FIELD_PROPERTIES and k not in FIELD_WRITABLE)
        if system:
            raise _read_only(system, f" (field {name!r})")
        unknown = sorted(k for k in entry if k not in FIELD_WRITABLE)
        if unknown:
            raise BadRequest(f"fields entries take {', '.join(sorted(FIELD_WRITABLE))}, not "
                             f"{', '.join(unknown)}.", ErrorCode.INVALID_PAYLOAD)
        if name in found:
            raise BadRequest(f"fields names {name!r} twice.", ErrorCode.INVALID_PAYLOAD)
        found[name] = {_COLUMNS[k]: _text(f"fields[{name}].{k}", v)
                       for k, v in entry.items() if k != "name"}
    return found
