"""Tag domains and tags against a mocked service: frames, hierarchy columns, lookups."""

from __future__ import annotations

import pandas as pd
import pytest
import responses

from catalog_nb.client import Catalog, NotFoundError
from catalog_nb.client.tags.frames import (
    TAG_COLUMNS,
    TAG_DOMAIN_COLUMNS,
    association_tag_name,
    tag_depth,
    tag_parent,
)
from catalog_nb.client.tags.refs import TagIndex, tag_body
from tests.client.mocks import API, error_body
from tests.client.tag_mocks import DOMAINS, TAGS, calls, query_of

TAG_NAMES = [column.name for column in TAG_COLUMNS]


def test_tag_domains_frame(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/tagdomain", json=DOMAINS)
    frame = cat.tag_domains()
    assert list(frame.columns) == [column.name for column in TAG_DOMAIN_COLUMNS]
    assert frame["name"].tolist() == ["Sensitive", "Finance", "HR"]
    assert str(frame["immutable"].dtype) == "boolean" and str(frame["tag_count"].dtype) == "Int64"
    assert str(frame["changed"].dtype) == "datetime64[ns, UTC]"
    assert frame["description"].isna().tolist() == [False, True, False]
    assert cat.tag_domains(as_frame=False) == DOMAINS


def test_empty_frames_keep_columns_and_dtypes(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/tagdomain", json=[])
    mock.add(responses.GET, API + "/tag", json=[])
    domains, tags = cat.tag_domains(), cat.tags()
    assert domains.empty and list(domains.columns) == [c.name for c in TAG_DOMAIN_COLUMNS]
    assert tags.empty and list(tags.columns) == TAG_NAMES
    assert str(tags["depth"].dtype) == "Int64" and str(tags["min_score"].dtype) == "Float64"
    assert str(tags["enable"].dtype) == "boolean" and str(tags["key"].dtype) == "string"


def test_tags_frame_has_the_hierarchy(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/tag", json=list(reversed(TAGS)))
    frame = cat.tags()
    assert list(frame.columns) == TAG_NAMES
    # tree order: by domain, then full name, every tag right after its parent
    assert frame["full_name"].tolist() == [
        "Finance.Name",
        "Finance.Revenue",
        "Finance.Revenue.Gross",
        "Finance.Revenue.Net",
        "HR.Name",
        "Sensitive.EmailAddress",
        "Sensitive.PhoneNumber",
    ]
    net = frame.set_index("full_name").loc["Finance.Revenue.Net"]
    assert (net["name"], net["domain"], net["domain_key"]) == ("Net", "Finance", "d-fin")
    assert (net["parent"], net["parent_key"], net["depth"]) == ("Finance.Revenue", "t-rev", 1)
    email = frame.set_index("full_name").loc["Sensitive.EmailAddress"]
    assert pd.isna(email["parent"]) and email["depth"] == 0
    assert email["tag_state"] == "REGEX" and email["min_score"] == 0.8
    assert (email["regex_min_len"], email["regex_max_len"]) == (5, 254)
    assert email["synonyms"] == ["email", "mail"] and email["association_count"] == 3
    assert email["immutable"] and email["sensitivity"] == "CONFIDENTIAL"


def test_tags_of_one_domain_by_name(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/tagdomain", json=DOMAINS)
    mock.add(responses.GET, API + "/tag", json=TAGS[2:6])
    frame = cat.tags("finance")
    assert query_of(calls(mock, "GET", "/tag")[0]) == "domainKey=d-fin"
    assert len(frame) == 4
    assert cat.tags("d-fin", as_frame=False) == TAGS[2:6]


def test_unknown_domain_names_the_known_ones(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/tagdomain", json=DOMAINS)
    with pytest.raises(NotFoundError, match="Finance, HR, Sensitive") as exc:
        cat.tags("Legal")
    assert exc.value.error_code == "TAG_DOMAIN_NOT_FOUND"


def test_get_tag_by_full_name(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/tag/byname", json=TAGS[3])
    assert cat.get_tag("Finance.Revenue.Net")["key"] == "t-net"
    (call,) = calls(mock, "GET", "/tag/byname")
    assert query_of(call) == "tagName=Finance.Revenue.Net"


def test_get_tag_by_name_in_a_domain(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/tagdomain", json=DOMAINS)
    mock.add(responses.GET, API + "/tag/byname", json=TAGS[6])
    assert cat.get_tag("Name", domain="hr")["key"] == "t-hname"
    assert query_of(calls(mock, "GET", "/tag/byname")[0]) == "tagName=Name&domainName=HR"


def test_get_tag_falls_back_to_the_key(mock: responses.RequestsMock, cat: Catalog) -> None:
    missing = error_body(404, "TAG_NOT_FOUND")
    mock.add(responses.GET, API + "/tag/byname", status=404, json=missing)
    mock.add(responses.GET, API + "/tag/t-net", json=TAGS[3])
    assert cat.get_tag("t-net")["fullName"] == "Finance.Revenue.Net"
    # a record with a key goes straight to GET /tag/{key}
    assert cat.get_tag(pd.Series({"key": "t-net", "full_name": "x"}))["key"] == "t-net"
    assert len(calls(mock, "GET", "/tag/byname")) == 1


def test_unknown_tag_raises_not_found(mock: responses.RequestsMock, cat: Catalog) -> None:
    missing = error_body(404, "TAG_NOT_FOUND")
    mock.add(responses.GET, API + "/tag/byname", status=404, json=missing)
    mock.add(responses.GET, API + "/tag/Nope.Tag", status=404, json=missing)
    with pytest.raises(NotFoundError, match=r"No tag is named or keyed 'Nope\.Tag'") as exc:
        cat.get_tag("Nope.Tag")
    assert exc.value.error_code == "TAG_NOT_FOUND"


def test_tag_children(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/tag/byname", json=TAGS[2])
    mock.add(responses.GET, API + "/tag/children/t-rev", json=[TAGS[3], TAGS[4]])
    frame = cat.tag_children("Finance.Revenue")
    assert frame["full_name"].tolist() == ["Finance.Revenue.Gross", "Finance.Revenue.Net"]
    assert frame["depth"].tolist() == [1, 1] and set(frame["parent"]) == {"Finance.Revenue"}
    assert cat.tag_children({"key": "t-rev"}, as_frame=False) == [TAGS[3], TAGS[4]]


def test_depth_and_parent_from_full_names() -> None:
    deep = {"fullName": "Acme.Eu.A.B.C", "domainName": "Acme.Eu"}  # a dotted domain name
    assert tag_depth(deep) == 2 and tag_parent(deep) == "Acme.Eu.A.B"
    assert tag_depth({"fullName": "Finance.Revenue"}) == 0
    assert tag_parent({"fullName": "Finance.Revenue"}) is None
    assert tag_depth({}) is None


def test_association_tag_name_fallbacks() -> None:
    assert association_tag_name({"tagFullName": "A.B.C", "tagName": "C"}) == "A.B.C"
    assert association_tag_name({"tagName": "C", "domainName": "A"}) == "A.C"
    assert association_tag_name({}) is None


def test_tag_index_lookups() -> None:
    index = TagIndex(TAGS)
    assert index.find("Finance.Revenue.Net")[0]["key"] == "t-net"  # type: ignore[index]
    assert index.find("finance.revenue.NET")[0]["key"] == "t-net"  # type: ignore[index]
    assert index.find("t-gross")[0]["key"] == "t-gross"  # type: ignore[index]
    assert index.find("EmailAddress")[0]["key"] == "t-email"  # type: ignore[index]
    assert index.find({"key": "t-phone"})[0]["key"] == "t-phone"  # type: ignore[index]
    assert index.find("Name") == (
        None,
        "ambiguous tag 'Name': give its full name (Finance.Name, HR.Name)",
    )
    assert index.find("Nope") == (None, "unknown tag 'Nope'")
    assert index.find({"key": "t-x", "fullName": None}) == (None, "unknown tag key 't-x'")


def test_tag_body_spells_the_wire() -> None:
    body = tag_body(
        {
            "tag_state": "regex",
            "reg_ex": "^x$",
            "sensitivity": "restricted",
            "synonyms": "mail",
            "learning_enabled": False,
            "description": None,
        }
    )
    assert body == {
        "tagState": "REGEX",
        "regEx": "^x$",
        "sensitivity": "RESTRICTED",
        "synonyms": ["mail"],
        "learningEnabled": False,
    }
    with pytest.raises(TypeError, match="unknown tag propert"):
        tag_body({"colour": "red"})
