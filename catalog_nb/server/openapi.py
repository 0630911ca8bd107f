"""The service's OpenAPI document, saying what the service really answers.

FastAPI documents each route's success answer; the error answers are added here, once, from what
each operation depends on rather than route by route:

========  ===========================================================================
status    documented on
========  ===========================================================================
400       every operation (bad parameters or payload; the edge's NUL and UTF-8 checks)
401       every operation that needs a session (and ``POST /login``: wrong credentials)
403       every operation that needs a session: the caller's level or roles may not allow it
404       every operation with a path or query parameter (an unknown key or name), or whose
          body names other objects
406       every operation that can answer the Arrow layout (``Accept`` naming it only)
409       every write, except the actions in :data:`NO_CONFLICT`
413       every operation with a request body (the edge's size limit)
429       ``POST /login`` (throttled after repeated failures, with ``Retry-After``)
503       every operation (the store was busy; nothing changed; ``Retry-After``)
========  ===========================================================================

Each error answer carries the :data:`ERROR_SCHEMA` body, and each JSON request body and success
answer the example of its model (``schemas/examples.py``). A route whose set is special says so
with FastAPI's ``responses=``, which wins over the derived description of the same status.
FastAPI's 422 is never answered (validation failures are 400) and is removed.

A route that reads its JSON body itself (``Body()`` of ``Any``, so that its errors stay its own:
``READ_ONLY_PROPERTY`` by name, a bad item of a list answered in its place) documents it with
:func:`json_body` and a model below, which describes the body without parsing it.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import BaseModel, Field, RootModel

from catalog_nb.contract import API_PREFIX, ARROW_STREAM, MAX_NAME_LENGTH, ErrorCode
from catalog_nb.server.deps import current_caller
from catalog_nb.server.schemas import examples as example_bodies
from catalog_nb.server.schemas.common import Payload, Wire, name_schema
from catalog_nb.server.schemas.examples import examples

__all__ = ["ERROR_SCHEMA", "FieldChange", "ResourceChange", "RoleRemovals", "build_openapi",
           "error_statuses", "json_body"]

#: The JSON error body of every 4xx and 5xx answer (``edge.error_response``,
#: ``errors.ServiceError.body``); some errors add properties of their own.
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Every error answer of the service.",
    "required": ["message", "errorCode", "status"],
    "properties": {
        "message": {"type": "string", "description": "A sentence a user can act on."},
        "errorCode": {"type": "string", "description": "A stable identifier of the error.",
                      "examples": [ErrorCode.INVALID_PAYLOAD.value]},
        "status": {"type": "integer", "minimum": 400, "maximum": 599,
                   "description": "The HTTP status, repeated."},
        "details": {
            "type": "array",
            "description": "Validation failures, one per bad property or parameter.",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "message": {"type": "string"},
                               "type": {"type": ["string", "null"]}},
            },
        },
        "fields": {"type": "array", "items": {"type": "string"},
                   "description": "The properties the error is about."},
        "field": {"type": "string", "description": "The property the error is about."},
        "retryAfter": {"type": "integer", "minimum": 0,
                       "description": "Seconds to wait before sending the request again."},
    },
    "additionalProperties": True,
    "example": {"message": "Invalid request: name: String should have at most 255 characters.",
                "errorCode": ErrorCode.INVALID_PAYLOAD.value, "status": 400},
}

_RETRY_AFTER = {
    "Retry-After": {"description": "Seconds to wait before sending the request again.",
                    "required": True, "schema": {"type": "string", "pattern": "^[0-9]+$"}},
}

#: Why each status is answered, as each response's description.
DESCRIPTIONS: dict[int, str] = {
    400: "Bad parameters or payload.",
    401: "No session, or it expired.",
    403: "The caller's access level or roles do not allow this.",
    404: "No object with this key or name (or the caller may not see it).",
    406: "The Accept header names only a media type this answer cannot have.",
    409: "A rule of the catalog refuses the change (a duplicate name, the last role...).",
    413: "The request body is larger than the service accepts.",
    429: "Too many failed logins; try again after Retry-After seconds.",
    503: "The store was busy; nothing changed; try again after Retry-After seconds.",
}

#: Writes that change no rule-bound object, so never conflict: (method, path) below the prefix.
NO_CONFLICT: frozenset[tuple[str, str]] = frozenset({
    ("POST", "/login"), ("POST", "/logout"),
    ("POST", "/search/new"), ("POST", "/search/page"), ("POST", "/search/runFacet"),
    ("POST", "/overlap/table"), ("POST", "/overlap/table/list"), ("POST", "/overlap/table/csv"),
})

_WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


# ------------------------------------------------------- bodies the routes read themselves

#: The texts ``schemas.resource_query.parse_update`` takes (its ``_TEXT_MAX``).
_TEXT = 100_000


class FieldChange(Payload):
    """An entry of ``fields`` in ``PUT /dataresource...``: a field of the resource, by name, and
    what people write about it; its profile is the catalog's own (``READ_ONLY_PROPERTY``)."""

    name: str
    display_name: str | None = Field(default=None, max_length=_TEXT)
    description: str | None = Field(default=None, max_length=_TEXT)
    comment: str | None = Field(default=None, max_length=_TEXT)


class CustomValue(Payload):
    """An entry of ``customProperties`` as a list: a custom property's name and its value for
    this resource (of the property's type; null clears it)."""

    name: str
    value: Any = None


class ResourceChange(Payload):
    """Body of ``PUT /dataresource/{key}`` and ``PUT /dataresource/source/{sourceName}``: the
    people-owned properties of a data resource; absent ones stay unchanged, a null text clears
    it. The other properties of the read form are refused by name (``READ_ONLY_PROPERTY``),
    unknown ones with ``INVALID_PAYLOAD`` (``schemas.resource_query.parse_update``)."""

    model_config = examples(example_bodies.RESOURCE_CHANGE)

    description: str | None = Field(default=None, max_length=_TEXT)
    rich_description: str | None = Field(default=None, max_length=_TEXT)
    owner: str | None = Field(default=None, max_length=MAX_NAME_LENGTH)
    custom_properties: dict[str, Any] | list[CustomValue] = Field(
        default_factory=dict, description="Values by custom property name: {name: value} or "
        "[{name, value}]; a name the catalog does not define is refused.")
    fields: list[FieldChange] = Field(default_factory=list)


_RoleName = Annotated[str, name_schema()]
_RoleNames = _RoleName | Annotated[list[_RoleName], Field(min_length=1)]


class RoleRemovals(RootModel[Annotated[dict[str, _RoleNames], Field(min_length=1)]]):
    """Body of ``POST /user/remove/role``: the role names to take from each user, by user key
    (a name alone stands for a list of one); all or nothing (``services.users.remove_roles``)."""

    model_config = examples(example_bodies.ROLE_REMOVALS)


#: The models of the bodies :func:`json_body` documents, by component name.
_BODIES: dict[str, type[BaseModel]] = {}


def json_body(model: type[BaseModel], *, max_items: int | None = None,
              description: str | None = None) -> dict[str, Any]:
    """The ``openapi_extra`` of a route that reads its JSON body itself: the body is ``model``
    (a list of at most ``max_items`` of them when given), a component with its examples::

        @router.put("/dataresource/{key}", openapi_extra=json_body(ResourceChange))
    """
    _BODIES[model.__name__] = model
    schema: dict[str, Any] = {"$ref": f"#/components/schemas/{model.__name__}"}
    if max_items is not None:
        schema = {"type": "array", "maxItems": max_items, "items": schema}
    body: dict[str, Any] = {"required": True,
                            "content": {"application/json": {"schema": schema}}}
    if description:
        body["description"] = description
    return {"requestBody": body}


def _add_bodies(schemas: dict[str, Any]) -> None:
    """The components of :func:`json_body`'s models (and of the models they hold) that FastAPI
    did not write; their examples keep their nulls (no FastAPI pass over them)."""
    for name, model in _BODIES.items():
        if name in schemas:
            continue
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        for held, definition in schema.pop("$defs", {}).items():
            schemas.setdefault(held, definition)
        schemas[name] = schema


def _needs_session(route: APIRoute) -> bool:
    pending = list(route.dependant.dependencies)
    while pending:
        dependency = pending.pop()
        if dependency.call is current_caller:
            return True
        pending.extend(dependency.dependencies)
    return False


def error_statuses(route: APIRoute, method: str, path: str) -> set[int]:
    """The error statuses ``method`` on ``route`` (served at ``path``, below the API prefix) can
    answer, derived from what it depends on."""
    statuses = {400, 503}
    session = _needs_session(route)
    if session:
        statuses |= {401, 403}
    has_body = route.body_field is not None or path.endswith("/csv")
    if route.dependant.path_params or route.dependant.query_params or has_body:
        statuses.add(404)
    if method in _WRITES and (method, path) not in NO_CONFLICT and session:
        statuses.add(409)
    if has_body:
        statuses.add(413)
    if (method, path) == ("POST", "/login"):
        statuses = (statuses - {404}) | {401, 429}
    return statuses


def _error_response(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": DESCRIPTIONS[status],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    if status in (429, 503):
        response["headers"] = dict(_RETRY_AFTER)
    return response


def _routes(app: FastAPI) -> dict[tuple[str, str], tuple[str, APIRoute]]:
    """Every documented route by its full path and method (FastAPI includes routers lazily:
    ``app.routes`` holds the included routers, their routes are reached through contexts)."""
    found = {}
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, APIRoute) and route.include_in_schema and context.path_format:
            for method in context.methods or ():
                found[(context.path_format, method.upper())] = (context.path_format, route)
    return found


def _model_examples() -> dict[str, list[Any]]:
    """The examples of every request and response model, by class name (the name of its
    component): FastAPI writes the document without null values, so the examples' nulls are
    put back from here."""
    found: dict[str, list[Any]] = {}
    pending: list[type[BaseModel]] = [Payload, Wire]
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        extra = model.model_config.get("json_schema_extra")
        if callable(extra):
            # A model that writes its schema extras itself (schemas/answers.py): what it adds.
            written: dict[str, Any] = {}
            extra(written)  # type: ignore[call-arg]
            extra = written
        listed = extra.get("examples") if isinstance(extra, dict) else None
        if isinstance(listed, list):
            found[model.__name__] = copy.deepcopy(listed)
    return found


def _example_of(schema: dict[str, Any], components: dict[str, Any]) -> list[Any]:
    """The example of a body of ``schema`` (``[]`` when none): its model's first example, as
    the item of a list where the body is a list of them."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        given = components.get(ref.rsplit("/", 1)[-1], {}).get("examples") or []
        return given[:1]
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        item = _example_of(schema["items"], components)
        return [item] if item else []
    return []


def add_examples(operation: dict[str, Any], components: dict[str, Any],
                 answer: Any = None) -> None:
    """Give ``operation``'s JSON request body and success answers the examples of their models
    (``answer``, when given, for a success answer without one)."""
    media = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if media is not None and "example" not in media:
        for found in _example_of(media.get("schema", {}), components):
            media["example"] = found
    for status, response in operation.get("responses", {}).items():
        media = response.get("content", {}).get("application/json")
        if not status.startswith("2") or media is None or "example" in media:
            continue
        found_any = _example_of(media.get("schema", {}), components)
        if found_any:
            media["example"] = found_any[0]
        elif answer is not None:
            media["example"] = answer


def build_openapi(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document of ``app``, with every operation's error answers."""
    schema = get_openapi(title=app.title, version=app.version, routes=app.routes,
                         description=app.description)
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"] = ERROR_SCHEMA
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    _add_bodies(schemas)
    for name, given in _model_examples().items():
        if name in schemas and "examples" in schemas[name]:
            schemas[name]["examples"] = given
    routes = _routes(app)
    for path, operations in schema.get("paths", {}).items():
        for method, operation in operations.items():
            found = routes.get((path, method.upper()))
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            if found is None:
                continue
            statuses = error_statuses(found[1], method.upper(), path.removeprefix(API_PREFIX))
            if any(ARROW_STREAM in r.get("content", {}) for r in responses.values()):
                statuses.add(406)
            for status in sorted(statuses):
                derived = _error_response(status)
                given = responses.get(str(status))
                responses[str(status)] = {**derived, **given} if given else derived
            below = path.removeprefix(API_PREFIX)
            add_examples(operation, schemas, example_bodies.OPERATIONS.get((method.upper(), below)))
    return schema

