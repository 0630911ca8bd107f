"""The audit trail through the client against a real server: paging, filters, truncation."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

from catalog_nb.client import Catalog, TruncatedResultWarning, connect, errors
from catalog_nb.client.audit_trail import AUDIT_COLUMNS
from catalog_nb.contract import ErrorCode
from tests.client.mocks import LIVE_PASSWORD

LOGINS = 5


@pytest.fixture
def busy_user(
    live_cat: Catalog, make_user: Callable[..., dict[str, Any]], live_server: Any
) -> dict[str, Any]:
    """A user who logged in (and out) LOGINS times; ``middle`` lies between login 2 and 3."""
    user = make_user()
    for number in range(LOGINS):
        if number == 2:
            time.sleep(0.02)
            user["middle"] = pd.Timestamp.now(tz="UTC")
            time.sleep(0.02)
        with connect(live_server.url, user["name"], LIVE_PASSWORD):
            pass
    return user


def test_paging_through_one_users_logins(live_cat: Catalog, busy_user: dict[str, Any]) -> None:
    events = live_cat.audit_events(user=busy_user["name"], action="LOGIN", page_size=2)
    assert list(events.columns) == [column.name for column in AUDIT_COLUMNS]
    assert str(events["time"].dtype) == "datetime64[ns, UTC]"
    assert str(events["user_name"].dtype) == "string"
    assert len(events) == LOGINS
    assert events["key"].is_unique
    assert set(events["action"]) == {"LOGIN"} and set(events["outcome"]) == {"SUCCESS"}
    assert set(events["object_key"]) == {busy_user["key"]}  # a login's object is the user
    assert events["time"].is_monotonic_decreasing  # newest first
    assert events["client_address"].notna().all()


def test_limit_truncates_loudly_and_keeps_the_newest(
    live_cat: Catalog, busy_user: dict[str, Any]
) -> None:
    everything = live_cat.audit_events(user=busy_user["name"], action="login")
    with pytest.warns(TruncatedResultWarning, match=f"newest 3 of {LOGINS}"):
        newest = live_cat.audit_events(user=busy_user["name"], action="login", limit=3)
    assert newest["key"].tolist() == everything["key"].tolist()[:3]


def test_since_and_until(live_cat: Catalog, busy_user: dict[str, Any]) -> None:
    middle = busy_user["middle"]
    after = live_cat.audit_events(user=busy_user["name"], action="LOGIN", since=middle)
    before = live_cat.audit_events(
        user=busy_user["name"], action="LOGIN", until=middle.to_pydatetime()
    )
    assert (len(after), len(before)) == (LOGINS - 2, 2)
    assert (after["time"] >= middle).all() and (before["time"] <= middle).all()
    iso = middle.isoformat()
    assert len(live_cat.audit_events(user=busy_user["name"], action="LOGIN", since=iso)) == 3


def test_failed_logins_and_deleting_an_event(
    live_cat: Catalog, busy_user: dict[str, Any], live_server: Any
) -> None:
    with pytest.raises(errors.AuthenticationError):
        connect(live_server.url, busy_user["name"], "wrong-password-0")
    failures = live_cat.audit_events(user=busy_user["name"], outcome="FAILURE")
    assert len(failures) == 1
    event = failures.iloc[0]
    assert event["action"] == "LOGIN" and event["object_type"] == "SESSION"

    live_cat.delete_audit_event(event["key"])
    assert live_cat.audit_events(user=busy_user["name"], outcome="FAILURE").empty
    with pytest.raises(errors.NotFoundError) as info:
        live_cat.api.get_audit_event(event["key"])
    assert info.value.error_code == ErrorCode.AUDIT_EVENT_NOT_FOUND


def test_events_about_an_object(
    live_cat: Catalog, make_user: Callable[..., dict[str, Any]]
) -> None:
    user = make_user()
    events = live_cat.audit_events(object_type="USER", object_key=user["key"])
    created = events.loc[events["action"] == "CREATE"]
    assert len(created) == 1
    assert created.iloc[0]["object_name"] == user["name"]
    assert created.iloc[0]["user_name"] == live_cat.username


def test_unfiltered_list_pages_and_warns(live_cat: Catalog, busy_user: dict[str, Any]) -> None:
    with pytest.warns(TruncatedResultWarning):
        events = live_cat.audit_events(limit=7, page_size=3)
    assert len(events) == 7 and events["key"].is_unique
    assert events["time"].is_monotonic_decreasing
    with pytest.warns(TruncatedResultWarning):
        raw = live_cat.audit_events(limit=7, page_size=3, as_frame=False)
    assert {"key", "time", "userName", "action"} <= set(raw[0])
