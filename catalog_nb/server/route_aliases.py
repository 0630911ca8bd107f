"""The real product's paths as aliases of the spec's (docs/compatibility.md).

Scripts written for the product call ``/role`` where the spec writes ``/user/role``. An alias
is the same endpoint function registered under a second path, so there is one implementation;
aliases are kept out of the OpenAPI document (``include_in_schema=False``): the document
describes the spec's interface, and a generated client gets one operation per action.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.routing import APIRoute


def alias_prefix(router: APIRouter, prefix: str, alias: str) -> None:
    """Register every route of ``router`` under ``prefix`` again under ``alias`` instead, in
    the same order (so ``/role/byname`` is still tried before ``/role/{roleKey}``)."""
    for route in list(router.routes):
        if isinstance(route, APIRoute) and (
            route.path == prefix or route.path.startswith(prefix + "/")
        ):
            alias_route(router, route, alias + route.path[len(prefix):])


def alias_route(router: APIRouter, route: APIRoute, path: str) -> None:
    """Register ``route``'s endpoint under ``path`` too, with the same answer and methods."""
    router.add_api_route(
        path, route.endpoint, methods=sorted(route.methods or ()),
        status_code=route.status_code, response_model=route.response_model,
        response_class=route.response_class,
        response_model_by_alias=route.response_model_by_alias,
        responses=route.responses, summary=route.summary, description=route.description,
        name=f"{route.name}_alias", include_in_schema=False,
    )
