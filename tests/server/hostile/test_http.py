"""HTTP-level manners: every 405 says which methods the path does answer (``Allow``)."""

from __future__ import annotations

import re

import pytest

from catalog_nb.contract import API_PREFIX, ErrorCode
from tests.conftest import Server
from tests.server.helpers import assert_error

NOT_ALLOWED = ErrorCode.METHOD_NOT_ALLOWED.value


@pytest.fixture(scope="module")
def documented(live_server: Server) -> dict[str, set[str]]:
    """Each path of the OpenAPI document, with its parameters filled in, and its methods."""
    spec = live_server.anonymous().get("/openapi.json").json()
    paths: dict[str, set[str]] = {}
    for template, operations in spec["paths"].items():
        concrete = re.sub(r"\{[^}]+\}", "x", template).removeprefix(API_PREFIX)
        paths.setdefault(concrete, set()).update(m.upper() for m in operations)
    return paths


def test_every_405_names_the_methods_the_path_answers(
    live_server: Server, documented: dict[str, set[str]]
) -> None:
    assert len(documented) > 50
    anonymous = live_server.anonymous()
    for path, methods in documented.items():
        response = anonymous.request("PATCH", path)  # no route of the API answers PATCH
        assert_error(response, 405, NOT_ALLOWED)
        allowed = {m.strip() for m in response.headers.get("Allow", "").split(",") if m.strip()}
        # The path's own methods, and those of any other route its text also matches
        # (/user/role is a /user/{key} too) ...
        assert methods <= allowed, (path, methods, allowed)
        body = response.json()
        assert all(m in body["message"] for m in methods)
        # ... and each of them really is answered there (routing comes before authentication,
        # so an anonymous request gets a 401 or 400, never a 405).
        for method in allowed - methods:
            assert anonymous.request(method, path).status_code != 405, (method, path)


def test_a_405_outside_the_documented_paths_is_json_too(live_server: Server) -> None:
    response = live_server.anonymous().request("DELETE", "/version")
    assert_error(response, 405, NOT_ALLOWED, "GET")
    assert response.headers["Allow"] == "GET"
