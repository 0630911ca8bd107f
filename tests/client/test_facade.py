"""The Catalog facade against a mocked service: paging, warnings, name/key resolution, writes."""

from __future__ import annotations

import json
import warnings
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import responses

from catalog_nb.client import Catalog, TruncatedResultWarning, errors
from catalog_nb.client.audit_trail import AUDIT_COLUMNS
from tests.client.mocks import API, error_body, json_of, url_of

EVENTS = [
    {
        "key": f"e{i}",
        "time": 1704067200000 + i,
        "userName": "admin",
        "userKey": "u0",
        "action": "LOGIN",
        "objectType": "SESSION",
        "outcome": "SUCCESS",
    }
    for i in range(250, 0, -1)
]
USER = {
    "key": "u1",
    "name": "ada",
    "roles": ["Analysts"],
    "attributes": {"firstName": "Ada", "email": "ada@example.org"},
    "assignedByMap": {"Analysts": "admin"},
    "accessLevels": ["Analyst"],
    "admin": False,
    "passwordSet": True,
    "prefiltersEnabled": False,
    "timeOfCreation": 1704067200000,
}
ROLES = [
    {"key": "r1", "name": "Analysts", "accessLevel": "Analyst"},
    {"key": "r2", "name": "Stewards", "accessLevel": "Steward"},
]


def _paged(request: Any) -> tuple[int, dict[str, str], str]:
    query = parse_qs(urlsplit(str(request.url)).query)
    start, size = int(query["from"][0]), int(query["size"][0])
    page = {"list": EVENTS[start : start + size], "totalCount": len(EVENTS), "from": start}
    return 200, {}, json.dumps(page)


def _bodies(mock: responses.RequestsMock, method: str, path: str) -> list[Any]:
    return [
        json_of(call)
        for call in mock.calls
        if call.request.method == method and url_of(call).split("?")[0] == API + path
    ]


# -- audit trail -------------------------------------------------------------------------------


def test_audit_events_page_through_everything(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add_callback(
        responses.GET, API + "/auditevent/list", callback=_paged, content_type="application/json"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = cat.audit_events(page_size=100)
    assert len(frame) == 250
    assert frame["key"].tolist() == [event["key"] for event in EVENTS]
    assert list(frame.columns) == [column.name for column in AUDIT_COLUMNS]
    assert str(frame["time"].dtype) == "datetime64[ns, UTC]"
    starts = [parse_qs(urlsplit(url_of(c)).query)["from"][0] for c in mock.calls[1:]]
    assert starts == ["0", "100", "200"]


def test_audit_events_limit_warns_loudly(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add_callback(
        responses.GET, API + "/auditevent/list", callback=_paged, content_type="application/json"
    )
    with pytest.warns(TruncatedResultWarning, match="newest 120 of 250"):
        frame = cat.audit_events(limit=120, page_size=50)
    assert frame["key"].tolist() == [event["key"] for event in EVENTS[:120]]


def test_truncation_warnings_point_at_the_analysts_line(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    """However deep in the client the warning is raised (a paging loop, a helper of a helper),
    it names the line that called the catalog, where the analyst can act on it."""
    mock.add_callback(
        responses.GET, API + "/auditevent/list", callback=_paged, content_type="application/json"
    )
    found = [{"key": f"k{i}", "name": f"ann{i}", "attributes": {}} for i in range(3)]
    mock.add(responses.GET, API + "/search/user", json=found)
    with pytest.warns(TruncatedResultWarning) as caught:
        cat.audit_events(limit=120, page_size=50)
        cat.find_users("ann", limit=2)
    assert [w.filename for w in caught] == [__file__, __file__]


def test_audit_events_limit_not_reached_is_silent(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    mock.add_callback(
        responses.GET, API + "/auditevent/list", callback=_paged, content_type="application/json"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(cat.audit_events(limit=1000)) == 250


def test_audit_filters_use_search(mock: responses.RequestsMock, cat: Catalog) -> None:
    page = {"list": EVENTS[:2], "totalCount": 2, "from": 0, "size": 1000}
    mock.add(responses.POST, API + "/auditevent/search", json=page)
    frame = cat.audit_events(
        user="admin", action="login", outcome="success", since="2024-01-01", until=1704153600000
    )
    assert len(frame) == 2
    assert _bodies(mock, "POST", "/auditevent/search") == [
        {
            "userName": "admin",
            "action": "LOGIN",
            "outcome": "SUCCESS",
            "fromTime": 1704067200000,
            "toTime": 1704153600000,
            "from": 0,
            "size": 1000,
        }
    ]


def test_audit_paging_drops_duplicates_when_new_events_shift_pages(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    first = {"list": EVENTS[0:2], "totalCount": 3}
    # a new event arrived before the second page: it pushed e249 down into that page
    shifted = {"list": [EVENTS[1], EVENTS[2]], "totalCount": 4}
    for page in (first, shifted):
        mock.add(responses.GET, API + "/auditevent/list", json=page)
    frame = cat.audit_events(page_size=2)
    assert frame["key"].tolist() == ["e250", "e249", "e248"]
    assert len(mock.calls) == 3  # login + two pages


def test_audit_events_empty_is_typed(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/auditevent/list", json={"list": [], "totalCount": 0})
    frame = cat.audit_events()
    assert frame.empty and list(frame.columns) == [column.name for column in AUDIT_COLUMNS]
    assert str(frame["time"].dtype) == "datetime64[ns, UTC]"


def test_audit_progress_bar_for_long_reads(
    mock: responses.RequestsMock, cat: Catalog, capsys: pytest.CaptureFixture[str]
) -> None:
    mock.add_callback(
        responses.GET, API + "/auditevent/list", callback=_paged, content_type="application/json"
    )
    cat.audit_events(page_size=100, progress=True)
    assert "audit events" in capsys.readouterr().err
    cat.audit_events(page_size=100)  # the catalog was made with progress=False
    assert capsys.readouterr().err == ""


def test_audit_limit_must_be_positive(cat: Catalog) -> None:
    with pytest.raises(ValueError, match="limit"):
        cat.audit_events(limit=0)


# -- users and roles ---------------------------------------------------------------------------


def test_find_users_warns_when_more_matched(mock: responses.RequestsMock, cat: Catalog) -> None:
    found = [{"key": f"k{i}", "name": f"ann{i}", "attributes": {}} for i in range(3)]
    mock.add(responses.GET, API + "/search/user", json=found)
    with pytest.warns(TruncatedResultWarning, match="first 2 of more than 2 matching users"):
        frame = cat.find_users("ann", limit=2)
    assert frame["name"].tolist() == ["ann0", "ann1"]
    assert "limit=3" in url_of(mock.calls[-1])


def test_user_roles_long_form(mock: responses.RequestsMock, cat: Catalog) -> None:
    two_roles = {**USER, "key": "u2", "name": "bob", "roles": ["Analysts", "Stewards"]}
    mock.add(responses.GET, API + "/user/role", json=ROLES)
    mock.add(responses.GET, API + "/user", json=[USER, two_roles])
    frame = cat.user_roles()
    assert frame.to_dict("records") == [
        {
            "user_key": "u1",
            "user_name": "ada",
            "role_key": "r1",
            "role_name": "Analysts",
            "access_level": "Analyst",
            "assigned_by": "admin",
        },
        {
            "user_key": "u2",
            "user_name": "bob",
            "role_key": "r1",
            "role_name": "Analysts",
            "access_level": "Analyst",
            "assigned_by": "admin",
        },
        {
            "user_key": "u2",
            "user_name": "bob",
            "role_key": "r2",
            "role_name": "Stewards",
            "access_level": "Steward",
            "assigned_by": None,
        },
    ]


def test_users_frame_from_json(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/user", json=[USER])
    row = cat.users().iloc[0]
    assert row["first_name"] == "Ada" and row["email"] == "ada@example.org"
    assert row["roles"] == ["Analysts"] and bool(row["password_set"]) is True
    assert cat.users(as_frame=False) == [USER]


def test_who_can_see(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/user/permit/source", json={"zed": False, "ada": True})
    mock.add(responses.GET, API + "/user/permit/resource", json={"ada": True})
    frame = cat.who_can_see("finance")
    assert frame.to_dict("list") == {"user_name": ["ada", "zed"], "can_see": [True, False]}
    assert str(frame["can_see"].dtype) == "boolean"
    cat.who_can_see("finance", "ledger/2024.csv")
    assert "dataSourceName=finance&resourcePath=ledger%2F2024.csv" in url_of(mock.calls[-1])


def test_user_is_found_by_key_when_not_by_name(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(
        responses.GET, API + "/user/name/u1", status=404, json=error_body(404, "USER_NOT_FOUND")
    )
    mock.add(responses.GET, API + "/user/u1", json=USER)
    assert cat.user("u1")["name"] == "ada"


def test_unknown_user_is_not_found(mock: responses.RequestsMock, cat: Catalog) -> None:
    missing = error_body(404, "USER_NOT_FOUND")
    mock.add(responses.GET, API + "/user/name/ghost", status=404, json=missing)
    mock.add(responses.GET, API + "/user/ghost", status=404, json=missing)
    with pytest.raises(errors.NotFoundError, match="named or keyed 'ghost'") as info:
        cat.delete_user("ghost")
    assert info.value.error_code == "USER_NOT_FOUND"


def test_update_user_merges_attributes(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/user/name/ada", json=USER)
    mock.add(responses.PUT, API + "/user/u1", status=204)
    mock.add(responses.GET, API + "/user/u1", json=USER)
    cat.update_user("ada", last_name="Lovelace", roles="Stewards", prefilters_enabled=True)
    assert _bodies(mock, "PUT", "/user/u1") == [
        {
            "roles": ["Stewards"],
            "prefiltersEnabled": True,
            "attributes": {"firstName": "Ada", "email": "ada@example.org", "lastName": "Lovelace"},
        }
    ]
    with pytest.raises(TypeError, match="colour"):
        cat.update_user("ada", colour="blue")


def test_create_user_body(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.POST, API + "/user", status=201, json=USER)
    created = cat.create_user(
        "ada", roles=[{"key": "r1", "name": "Analysts"}], password="pw-123456", email="a@x.org"
    )
    assert created == USER
    assert _bodies(mock, "POST", "/user") == [
        {
            "name": "ada",
            "roles": ["Analysts"],
            "password": "pw-123456",
            "attributes": {"email": "a@x.org"},
        }
    ]


def test_replace_role_assigns_before_removing(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/user/name/ada", json=USER)
    mock.add(responses.GET, API + "/user/u1", json=USER)
    mock.add(responses.GET, API + "/user/role/byname", json=ROLES[1])
    both = {**USER, "roles": ["Analysts", "Stewards"]}
    after = {**USER, "roles": ["Stewards"]}
    mock.add(responses.POST, API + "/user/assign/role", status=201, json=both)
    mock.add(responses.POST, API + "/user/remove/role", status=201, json=[after])
    assert cat.replace_role("ada", "Analysts", "Stewards")["roles"] == ["Stewards"]
    writes = [c for c in mock.calls if c.request.method == "POST"][1:]  # skip login
    assert [url_of(w) for w in writes] == [API + "/user/assign/role", API + "/user/remove/role"]
    assert json_of(writes[0]) == {"userName": "ada", "roleName": "Stewards"}
    assert json_of(writes[1]) == {"u1": ["Analysts"]}


def test_create_role_normalizes_enumerations(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.POST, API + "/user/role", status=201, json=ROLES[0])
    cat.create_role(
        "Analysts", "analyst", metadata_access_option="restricted", data_source_keys=("d1",)
    )
    assert _bodies(mock, "POST", "/user/role") == [
        {
            "name": "Analysts",
            "accessLevel": "Analyst",
            "defaultRole": False,
            "metadataAccessOption": "RESTRICTED",
            "dataSourceKeys": ["d1"],
        }
    ]
    with pytest.raises(TypeError, match="colour"):
        cat.create_role("x", "Guest", colour="blue")


def test_me_is_a_one_row_frame(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/user/_me", json=USER)
    me = cat.me()
    assert len(me) == 1 and me.iloc[0]["name"] == "ada"
    assert cat.me(as_frame=False) == USER


def test_update_user_takes_a_single_role_dict(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/user/u1", json=USER)
    mock.add(responses.PUT, API + "/user/u1", status=204)
    cat.update_user(USER, roles=ROLES[1])
    assert _bodies(mock, "PUT", "/user/u1") == [{"roles": ["Stewards"]}]
