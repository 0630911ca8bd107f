"""Invalid Unicode is refused at the edge (400 INVALID_TEXT) and never stored.

A lone UTF-16 surrogate (``"\\ud800"`` in JSON) decodes in Python but cannot be encoded back to
UTF-8: stored once, it used to make every later read of the row answer 500, for everyone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from catalog_nb.contract import ErrorCode
from tests.server.hostile.common import StoreState, refused
from tests.server.hostile.conftest import Target

TEXT = ErrorCode.INVALID_TEXT.value
JSON = {"Content-Type": "application/json"}
LONE = "\ud800"


def raw(body: Any) -> bytes:
    """``body`` as JSON bytes with every non-ASCII character escaped (surrogates included)."""
    return json.dumps(body, ensure_ascii=True).encode()


Case = Callable[[Target], tuple[str, str, Any]]

CASES: dict[str, Case] = {
    "user attribute (update)": lambda t: (
        "PUT", f"/user/{t.user_key}", {"attributes": {"firstName": LONE}}),
    "user attribute (create)": lambda t: (
        "POST", "/user", {"name": "sur-new", "attributes": {"firstName": LONE}}),
    "user description": lambda t: ("PUT", f"/user/{t.user_key}", {"description": f"a{LONE}b"}),
    "attribute name": lambda t: ("PUT", f"/user/{t.user_key}", {"attributes": {LONE: "x"}}),
    "low surrogate alone": lambda t: ("PUT", f"/user/{t.user_key}", {"description": "\udc00"}),
    "reversed pair": lambda t: ("PUT", f"/user/{t.user_key}", {"description": "\udc00\ud800"}),
    "resource description": lambda t: (
        "PUT", f"/dataresource/{t.resource['key']}", {"description": LONE}),
    "custom value": lambda t: (
        "PUT", f"/dataresource/{t.resource['key']}", {"customProperties": {t.prop: LONE}}),
    "field description": lambda t: (
        "PUT", f"/dataresource/{t.resource['key']}",
        {"fields": [{"name": "email", "description": LONE}]}),
    "overlap folder": lambda t: (
        "POST", "/overlap/table", [{"virtualFolder": LONE, "tableOne": "a.b", "tableTwo": "c.d"}]),
    "search phrase": lambda t: ("POST", "/search/new", {"searchPhrase": LONE}),
    "tag domain": lambda t: ("POST", "/tagdomain", {"name": f"d{LONE}"}),
    "role name": lambda t: ("POST", "/user/role", {"name": f"r{LONE}", "accessLevel": "Guest"}),
    "login name": lambda t: ("POST", "/login", {"username": LONE, "password": "whatever-1"}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_lone_surrogate_is_refused_and_not_stored(target: Target, case: str) -> None:
    method, path, body = CASES[case](target)
    before = StoreState.of(target.server)
    response = target.admin.request(method, path, data=raw(body), headers=JSON)
    refused(target.server, response, 400, TEXT, "surrogate", before=before, http=target.admin)
    # Every read that a stored surrogate used to break still answers.
    for read in ("/user", f"/user/{target.user_key}", "/user/_me", "/search/user?searchUsersBy=v",
                 f"/dataresource/{target.resource['key']}", "/dataresource/metadata"):
        assert target.admin.get(read).status_code == 200, read


def test_a_surrogate_pair_is_a_character_and_round_trips(
    target: Target, unique: Callable[[str], str]
) -> None:
    name = unique("emoji")
    body = raw({"name": name, "attributes": {"firstName": "Smile \U0001f600"}})
    assert b"\\ud83d\\ude00" in body  # sent as a JSON surrogate pair
    created = target.admin.post("/user", data=body, headers=JSON)
    assert created.status_code == 201, created.text
    assert created.json()["attributes"]["firstName"] == "Smile \U0001f600"
    assert target.admin.get(f"/user/{created.json()['key']}").status_code == 200


def test_an_escaped_backslash_before_u_is_plain_text(target: Target) -> None:
    # "\\ud800" in JSON is a backslash followed by the letters u, d, 8, 0, 0: valid text.
    response = target.admin.put(f"/user/{target.user_key}",
                                data=b'{"description": "C:\\\\ud800"}', headers=JSON)
    assert response.status_code == 204, response.text
    stored = target.admin.get(f"/user/{target.user_key}").json()["description"]
    assert stored == "C:\\ud800"


@pytest.mark.parametrize(
    "path",
    ["/user/name/%ED%A0%80",  # a surrogate encoded as UTF-8 bytes
     "/user/name/caf%E9",  # Latin-1, not UTF-8
     "/search/user?searchUsersBy=%ff%fe",
     "/dataresource/metadata?propertyFilter=name:%C0%AF"],  # an overlong "/"
)
def test_percent_escapes_that_are_not_utf8_are_refused(target: Target, path: str) -> None:
    before = StoreState.of(target.server)
    refused(target.server, target.admin.get(path), 400, TEXT, "UTF-8", before=before,
            http=target.admin)


def test_percent_escaped_utf8_is_read(target: Target) -> None:
    response = target.admin.get("/search/user?searchUsersBy=%C3%A9t%C3%A9")
    assert response.status_code == 200, response.text
