"""Tag domain and tag writes against a mocked service: bodies, name resolution, list forms."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest
import responses

from catalog_nb.client import Catalog, ConflictError, NotFoundError
from catalog_nb.client.tags.frames import TAG_DOMAIN_COLUMNS
from tests.client.mocks import API, error_body, json_of
from tests.client.tag_mocks import DOMAINS, TAGS, calls, tag_json


def _echo_tags(request: Any) -> tuple[int, dict[str, str], str]:
    """``POST /tag/list``: answer each body as a Tag with a key and a full name."""
    names = {d["key"]: d["name"] for d in DOMAINS}
    known = {t["key"]: t["fullName"] for t in TAGS + TAGS_CREATED}
    answers = []
    for position, body in enumerate(json.loads(request.body)):
        parent = body.get("parentKey")
        prefix = known[parent] if parent else names[body["domainKey"]]
        key = f"new-{body['name'].lower()}-{position}"
        full = f"{prefix}.{body['name']}"
        answers.append(tag_json(key, full, parent))
    TAGS_CREATED.extend(answers)
    return 201, {}, json.dumps(answers)


TAGS_CREATED: list[dict[str, Any]] = []


@pytest.fixture
def world(mock: responses.RequestsMock) -> responses.RequestsMock:
    mock.add(responses.GET, API + "/tagdomain", json=DOMAINS)
    mock.add(responses.GET, API + "/tag", json=TAGS)
    return mock


# -- domains -----------------------------------------------------------------------------------


def test_create_tag_domain(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.POST, API + "/tagdomain", status=201, json=DOMAINS[1])
    assert cat.create_tag_domain("Finance")["key"] == "d-fin"
    cat.create_tag_domain("Finance", "Money")
    bodies = [json_of(c) for c in calls(mock, "POST", "/tagdomain")]
    assert bodies == [{"name": "Finance"}, {"name": "Finance", "description": "Money"}]


def test_duplicate_domain_is_a_conflict(mock: responses.RequestsMock, cat: Catalog) -> None:
    body = error_body(409, "DUPLICATE_NAME", "A tag domain named 'Finance' exists.")
    mock.add(responses.POST, API + "/tagdomain", status=409, json=body)
    with pytest.raises(ConflictError) as exc:
        cat.create_tag_domain("Finance")
    assert exc.value.error_code == "DUPLICATE_NAME"


def test_create_tag_domains_list_form(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.POST, API + "/tagdomain/list", status=201, json=DOMAINS[1:])
    frame = cat.create_tag_domains(["Finance", {"name": "HR", "description": "People"}])
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == [c.name for c in TAG_DOMAIN_COLUMNS]
    assert frame["name"].tolist() == ["Finance", "HR"]
    table = pd.DataFrame({"name": ["A", "B"], "description": ["first", pd.NA]})
    cat.create_tag_domains(table, as_frame=False)
    bodies = [json_of(c) for c in calls(mock, "POST", "/tagdomain/list")]
    assert bodies == [
        [{"name": "Finance"}, {"name": "HR", "description": "People"}],
        [{"name": "A", "description": "first"}, {"name": "B"}],
    ]


def test_update_and_delete_domain_by_name(world: responses.RequestsMock, cat: Catalog) -> None:
    world.add(responses.PUT, API + "/tagdomain/d-hr", json={**DOMAINS[2], "name": "People"})
    world.add(responses.DELETE, API + "/tagdomain/d-hr", status=204)
    assert cat.update_tag_domain("hr", name="People")["name"] == "People"
    assert json_of(calls(world, "PUT", "/tagdomain/d-hr")[0]) == {"name": "People"}
    cat.delete_tag_domain("HR")
    assert len(calls(world, "DELETE", "/tagdomain/d-hr")) == 1


def test_deleting_a_domain_with_tags_is_a_conflict(
    world: responses.RequestsMock, cat: Catalog
) -> None:
    body = error_body(409, "DOMAIN_NOT_EMPTY", "The domain still holds 4 tags.")
    world.add(responses.DELETE, API + "/tagdomain/d-fin", status=409, json=body)
    with pytest.raises(ConflictError, match="still holds"):
        cat.delete_tag_domain("Finance")


# -- tags --------------------------------------------------------------------------------------


def test_create_tag_by_full_name(world: responses.RequestsMock, cat: Catalog) -> None:
    world.add(responses.POST, API + "/tag", status=201, json=TAGS[2])
    world.add(responses.GET, API + "/tag/byname", json=TAGS[2])
    cat.create_tag("Finance.Costs", sensitivity="internal", description="Spend")
    cat.create_tag("finance.Revenue.Tax", tag_state="REGEX", reg_ex=r"^\d+$", min_score=0.9)
    first, second = (json_of(c) for c in calls(world, "POST", "/tag"))
    assert first == {
        "name": "Costs",
        "domainKey": "d-fin",
        "sensitivity": "INTERNAL",
        "description": "Spend",
    }
    assert second == {
        "name": "Tax",
        "domainKey": "d-fin",
        "parentKey": "t-rev",
        "tagState": "REGEX",
        "regEx": r"^\d+$",
        "minScore": 0.9,
    }
    assert "tagName=Finance.Revenue" in str(calls(world, "GET", "/tag/byname")[0].request.url)


def test_create_tag_with_domain_and_parent(world: responses.RequestsMock, cat: Catalog) -> None:
    world.add(responses.POST, API + "/tag", status=201, json=TAGS[3])
    world.add(responses.GET, API + "/tag/t-rev", json=TAGS[2])
    cat.create_tag("Salary", "HR")
    cat.create_tag("Net", parent={"key": "t-rev"}, enable=False)
    bodies = [json_of(c) for c in calls(world, "POST", "/tag")]
    assert bodies == [
        {"name": "Salary", "domainKey": "d-hr"},
        {"enable": False, "name": "Net", "domainKey": "d-fin", "parentKey": "t-rev"},
    ]


def test_create_tag_needs_a_domain(world: responses.RequestsMock, cat: Catalog) -> None:
    with pytest.raises(NotFoundError, match="does not start with a tag domain's name"):
        cat.create_tag("Legal.Contract")
    with pytest.raises(TypeError, match="unknown tag propert"):
        cat.create_tag("Finance.Costs", colour="red")
    assert calls(world, "POST", "/tag") == []


def test_create_tags_parents_first(world: responses.RequestsMock, cat: Catalog) -> None:
    TAGS_CREATED.clear()
    world.add_callback(
        responses.POST, API + "/tag/list", callback=_echo_tags, content_type="application/json"
    )
    rows = pd.DataFrame(
        {
            "full_name": ["HR.Salary.Bonus", "HR.Salary", pd.NA, "Finance.Revenue.Tax"],
            "domain": [pd.NA, pd.NA, "HR", pd.NA],
            "name": [pd.NA, pd.NA, "Leave", pd.NA],
            "sensitivity": ["restricted", "restricted", pd.NA, pd.NA],
        }
    )
    frame = cat.create_tags(rows)
    first, second = (json_of(c) for c in calls(world, "POST", "/tag/list"))
    assert first == [
        {"sensitivity": "RESTRICTED", "domainKey": "d-hr", "name": "Salary"},
        {"domainKey": "d-hr", "name": "Leave"},
    ]
    assert second == [
        {"sensitivity": "RESTRICTED", "domainKey": "d-hr", "name": "Bonus",
         "parentKey": "new-salary-0"},
        {"domainKey": "d-fin", "name": "Tax", "parentKey": "t-rev"},
    ]
    assert isinstance(frame, pd.DataFrame)
    assert frame["full_name"].tolist() == [
        "Finance.Revenue.Tax",
        "HR.Leave",
        "HR.Salary",
        "HR.Salary.Bonus",
    ]


def test_create_tags_reports_a_missing_parent(world: responses.RequestsMock, cat: Catalog) -> None:
    with pytest.raises(NotFoundError, match=r"unknown tag 'HR\.Nope'"):
        cat.create_tags([{"full_name": "HR.Nope.Child"}])
    with pytest.raises(ValueError, match="needs full_name, or name and domain"):
        cat.create_tags([{"name": "Orphan"}])


def test_update_tag_moves_and_changes(world: responses.RequestsMock, cat: Catalog) -> None:
    world.add(responses.GET, API + "/tag/byname", json=TAGS[3])
    world.add(responses.PUT, API + "/tag/t-net", json=TAGS[3])
    cat.update_tag("Finance.Revenue.Net", parent={"key": "t-gross"}, min_score=0.5)
    cat.update_tag({"key": "t-net"}, parent="")
    cat.update_tag({"key": "t-net"}, domain="HR", name="Net2")
    bodies = [json_of(c) for c in calls(world, "PUT", "/tag/t-net")]
    assert bodies == [
        {"minScore": 0.5, "parentKey": "t-gross"},
        {"parentKey": None},
        {"name": "Net2", "domainKey": "d-hr"},
    ]


def test_update_tag_reports_cycles(world: responses.RequestsMock, cat: Catalog) -> None:
    body = error_body(400, "TAG_CYCLE", "A tag cannot move under its own descendant.")
    world.add(responses.PUT, API + "/tag/t-rev", status=400, json=body)
    with pytest.raises(Exception, match="own descendant") as exc:
        cat.update_tag({"key": "t-rev"}, parent={"key": "t-net"})
    assert getattr(exc.value, "error_code", None) == "TAG_CYCLE"


def test_delete_tag(world: responses.RequestsMock, cat: Catalog) -> None:
    world.add(responses.DELETE, API + "/tag/t-net", status=204)
    cat.delete_tag({"key": "t-net"})
    assert len(calls(world, "DELETE", "/tag/t-net")) == 1
