"""Tags, associations and the bulk workflows of the client against a real service.

One server per module, whose data roots hold a demo lake built at scale 0.05; the module
registers and profiles its two sources through the client, so associations land on resources
and fields the service's own processing wrote. Each test works in domains and tags of its own.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pytest

from catalog_nb.client import (
    BadRequestError,
    Catalog,
    ConflictError,
    NotFoundError,
    TruncatedResultWarning,
    connect,
)
from catalog_nb.client.tags.bulk_plan import PLAN_COLUMNS, REPORT_COLUMNS
from catalog_nb.client.tags.frames import ASSOCIATION_COLUMNS, TAG_COLUMNS
from catalog_nb.demo.lake import build_lake, lake_sources
from tests.client.mocks import LIVE_PASSWORD

FILES, SQL = "demo_files", "demo_sql"
CUSTOMERS = "crm/customers.csv"


@dataclass
class Lake:
    cat: Catalog
    url: str
    discovered: bool  # whether profiling left discovery's suggestions


@pytest.fixture(scope="module")
def lake(
    make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Lake]:
    root = tmp_path_factory.mktemp("tag-lake")
    build_lake(root / "acme", scale=0.05)
    server = make_server(data_roots=[root])
    cat = connect(server.url, server.admin_user, server.admin_password, progress=False)
    for source in lake_sources(root / "acme"):
        cat.create_source(source["name"], source["uri"], source["sourceType"])
        cat.profile(source["name"], timeout=300, poll_interval=0.25)
    discovered = cat.api.list_associations(state="SUGGESTED", page_size=1)["totalCount"] > 0
    yield Lake(cat, server.url, discovered)
    cat.close()


@pytest.fixture
def cat(lake: Lake) -> Catalog:
    return lake.cat


@pytest.fixture
def domain(cat: Catalog) -> str:
    """A fresh tag domain with ``Pii``, ``Pii.Contact`` and ``Money`` tags."""
    name = f"Dom{uuid.uuid4().hex[:8]}"
    cat.create_tag_domain(name, "made by a test")
    cat.create_tags(
        [
            {"full_name": f"{name}.Pii", "sensitivity": "CONFIDENTIAL"},
            {"full_name": f"{name}.Pii.Contact", "sensitivity": "RESTRICTED"},
            {"domain": name, "name": "Money"},
        ]
    )
    return name


def test_builtin_tags_are_readable(cat: Catalog) -> None:
    domains = cat.tag_domains().set_index("name")
    assert bool(domains.loc["Sensitive", "immutable"])
    assert domains.loc["Sensitive", "tag_count"] >= 9
    tags = cat.tags("sensitive")
    assert list(tags.columns) == [column.name for column in TAG_COLUMNS]
    email = tags.set_index("full_name").loc["Sensitive.EmailAddress"]
    assert email["tag_state"] == "REGEX" and email["depth"] == 0 and pd.isna(email["parent"])
    assert cat.get_tag("Sensitive.EmailAddress")["key"] == email["key"]
    assert cat.get_tag("EmailAddress", domain="Sensitive")["key"] == email["key"]


def test_domains_and_tag_hierarchy(cat: Catalog, domain: str) -> None:
    frame = cat.tags(domain).set_index("full_name")
    assert list(frame.index) == [f"{domain}.Money", f"{domain}.Pii", f"{domain}.Pii.Contact"]
    contact = frame.loc[f"{domain}.Pii.Contact"]
    assert (contact["parent"], contact["depth"], contact["domain"]) == (f"{domain}.Pii", 1, domain)
    assert contact["parent_key"] == frame.loc[f"{domain}.Pii", "key"]
    assert contact["sensitivity"] == "RESTRICTED"
    children = cat.tag_children(f"{domain}.Pii")
    assert children["full_name"].tolist() == [f"{domain}.Pii.Contact"]

    with pytest.raises(ConflictError) as duplicate:
        cat.create_tag(f"{domain}.pii")
    assert duplicate.value.error_code == "DUPLICATE_NAME"
    with pytest.raises(BadRequestError) as cycle:
        cat.update_tag(f"{domain}.Pii", parent=f"{domain}.Pii.Contact")
    assert cycle.value.error_code == "TAG_CYCLE"
    with pytest.raises(BadRequestError) as regex:
        cat.create_tag(f"{domain}.Bad", tag_state="REGEX", reg_ex="([a-z")
    assert regex.value.error_code == "INVALID_REGEX"

    moved = cat.update_tag(f"{domain}.Pii.Contact", parent=f"{domain}.Money", description="m")
    assert moved["fullName"] == f"{domain}.Money.Contact" and moved["description"] == "m"
    assert cat.update_tag(moved, parent="")["fullName"] == f"{domain}.Contact"
    renamed = cat.update_tag_domain(domain, description="renamed later")
    assert renamed["description"] == "renamed later"

    with pytest.raises(ConflictError) as not_empty:
        cat.delete_tag_domain(domain)
    assert not_empty.value.error_code == "DOMAIN_NOT_EMPTY"
    for tag in (f"{domain}.Contact", f"{domain}.Pii", f"{domain}.Money"):
        cat.delete_tag(tag)
    cat.delete_tag_domain(domain)
    assert domain not in cat.tag_domains()["name"].tolist()


def test_tag_and_untag_a_field_and_a_resource(cat: Catalog, domain: str) -> None:
    view = cat.tag((FILES, CUSTOMERS), f"{domain}.Pii.Contact", field="contact")
    assert (view["field"], view["state"], view["tagFullName"]) == (
        "contact",
        "ACCEPTED",
        f"{domain}.Pii.Contact",
    )
    res = cat.resource(FILES, CUSTOMERS)
    cat.tag(res, f"{domain}.Money", state="suggested")
    frame = cat.associations(FILES, CUSTOMERS)
    assert list(frame.columns) == [column.name for column in ASSOCIATION_COLUMNS]
    mine = frame[frame["domain"] == domain].set_index("tag")
    assert mine.loc[f"{domain}.Pii.Contact", "field"] == "contact"
    assert pd.isna(mine.loc[f"{domain}.Money", "field"])
    assert mine.loc[f"{domain}.Money", "state"] == "SUGGESTED"
    by_field = cat.associations(FILES, CUSTOMERS, field="contact", tag=f"{domain}.Pii.Contact")
    assert by_field["key"].tolist() == [view["key"]]
    # accepting the suggestion shows in the resources frame's tags column
    cat.tag(res, f"{domain}.Money")
    tags = cat.resources(FILES, path=CUSTOMERS, tags=True, custom=False)["tags"].iloc[0]
    assert f"{domain}.Money" in tags

    with pytest.raises(BadRequestError) as unknown:
        cat.tag(res, f"{domain}.Money", field="no_such_field")
    assert unknown.value.error_code == "UNKNOWN_FIELD"
    cat.untag((FILES, CUSTOMERS), f"{domain}.Pii.Contact", field="contact")
    cat.untag(res["key"], f"{domain}.Money")
    with pytest.raises(NotFoundError):
        cat.untag(res["key"], f"{domain}.Money")
    assert cat.associations(tag=f"{domain}.Money").empty


def test_apply_associations_dry_run_then_real(cat: Catalog, domain: str) -> None:
    pii, contact, money = f"{domain}.Pii", f"{domain}.Pii.Contact", f"{domain}.Money"
    orders_key = cat.resource(SQL, "sales.orders").key
    frame = pd.DataFrame(
        [
            (FILES, CUSTOMERS, pd.NA, "contact", contact, "ACCEPTED"),
            (FILES, CUSTOMERS, pd.NA, "reach_no", contact, pd.NA),
            (FILES, CUSTOMERS, pd.NA, pd.NA, pii, "SUGGESTED"),
            ("demo_sql", "sales.customers", pd.NA, "email", contact, pd.NA),
            (pd.NA, pd.NA, orders_key, pd.NA, money, "REJECTED"),
            (FILES, CUSTOMERS, pd.NA, "no_such_field", pii, pd.NA),
            (FILES, "crm/nope.csv", pd.NA, pd.NA, pii, pd.NA),
            (FILES, CUSTOMERS, pd.NA, pd.NA, f"{domain}.Nope", pd.NA),
            (FILES, CUSTOMERS, pd.NA, pd.NA, money, "MAYBE"),
            (FILES, CUSTOMERS, pd.NA, "contact", contact, "ACCEPTED"),
        ],
        columns=["source", "path", "resource_key", "field", "tag", "state"],
    )
    plan = cat.apply_associations(frame)
    assert list(plan.columns) == [column.name for column in PLAN_COLUMNS]
    assert plan["action"].tolist() == ["create"] * 5 + ["error"] * 5
    reasons = plan["reason"].tolist()[5:]
    assert reasons[0].startswith("unknown field 'no_such_field'")
    assert reasons[1].startswith("unknown resource 'crm/nope.csv'")
    assert reasons[2] == f"unknown tag '{domain}.Nope'"
    assert reasons[3].startswith("invalid state 'MAYBE'")
    assert reasons[4] == "duplicate row in input (same resource, field and tag as row 0)"
    assert cat.associations(tag=pii).empty and cat.associations(tag=contact).empty

    report = cat.apply_associations(frame, dry_run=False, batch_size=2, progress=True)
    assert list(report.columns) == [column.name for column in REPORT_COLUMNS]
    assert report["result"].tolist() == ["applied"] * 5 + ["error"] * 5
    written = cat.associations(tag=contact).set_index("field")
    assert written.loc["contact", "state"] == "ACCEPTED"
    assert written.loc["email", "source"] == SQL
    assert cat.associations(tag=money)["state"].tolist() == ["REJECTED"]

    # the same frame again changes nothing; a changed state is a change
    again = cat.apply_associations(frame.iloc[:5], dry_run=False)
    assert again["result"].tolist() == ["unchanged"] * 5
    frame.loc[2, "state"] = "ACCEPTED"
    frame.loc[0, "state"] = "REJECTED"
    changed = cat.apply_associations(frame.iloc[:3], dry_run=False)
    assert changed["action"].tolist() == ["change state", "unchanged", "change state"]
    assert changed["result"].tolist() == ["applied", "unchanged", "applied"]
    assert set(cat.associations(tag=pii)["state"]) == {"ACCEPTED"}
    assert cat.associations(FILES, CUSTOMERS, "contact", tag=contact)["state"].tolist() == [
        "REJECTED"
    ]


def test_failing_rows_never_stop_the_rest(
    cat: Catalog, lake: Lake, domain: str, unique: Callable[[str], str]
) -> None:
    domain_key = str(cat.tag_domains().set_index("name").loc[domain, "key"])
    role = cat.create_role(
        unique("analysts"), "Analyst", domain_keys=[domain_key], metadata_access_option="ALL"
    )
    user = cat.create_user(unique("analyst"), roles=[role["name"]], password=LIVE_PASSWORD)
    frame = pd.DataFrame(
        {
            "source": [FILES] * 3,
            "path": [CUSTOMERS] * 3,
            "field": ["label", "born", "pc"],
            "tag": [f"{domain}.Pii", f"{domain}.Pii", "Sensitive.IBAN"],
            "state": ["SUGGESTED", "ACCEPTED", "SUGGESTED"],
        }
    )
    with connect(lake.url, user["name"], LIVE_PASSWORD, progress=False) as analyst:
        report = analyst.apply_associations(frame, dry_run=False)
    assert report["result"].tolist() == ["applied", "failed", "failed"]
    assert report["status"].tolist()[1:] == [403, 403]
    assert set(report["error_code"].dropna()) == {"PERMISSION_DENIED"}
    suggested = cat.associations(FILES, CUSTOMERS, "label", tag=f"{domain}.Pii")
    assert suggested["state"].tolist() == ["SUGGESTED"]
    assert suggested["created_by"].tolist() == [user["name"]]


def test_review_suggestions_made_by_people(cat: Catalog, domain: str) -> None:
    pii = f"{domain}.Pii"
    fields = ["label", "contact", "reach_no", "ident"]
    frame = pd.DataFrame({"source": FILES, "path": CUSTOMERS, "field": fields, "tag": pii})
    frame["state"] = "SUGGESTED"
    assert set(cat.apply_associations(frame, dry_run=False)["result"]) == {"applied"}

    plan = cat.review_suggestions(tags=[pii])
    assert sorted(plan["field"]) == sorted(fields)
    assert set(plan["action"]) == {"change state"} and set(plan["new_state"]) == {"ACCEPTED"}
    assert set(cat.associations(tag=pii)["state"]) == {"SUGGESTED"}  # a plan writes nothing

    with pytest.warns(TruncatedResultWarning, match="first 1 of 4"):
        rejected = cat.review_suggestions(tags=pii, accept=False, dry_run=False, limit=1)
    assert rejected["result"].tolist() == ["applied"]
    accepted = cat.review_suggestions(tags=pii, source=FILES, dry_run=False, batch_size=2)
    assert accepted["result"].tolist() == ["applied"] * 3
    states = cat.associations(tag=pii)["state"].value_counts().to_dict()
    assert states == {"ACCEPTED": 3, "REJECTED": 1}
    assert cat.review_suggestions(tags=pii).empty


def test_review_discovery_suggestions(cat: Catalog, lake: Lake) -> None:
    assert lake.discovered, "profiling left no suggestions: discovery did not run"
    email = "Sensitive.EmailAddress"
    suggested = cat.associations(FILES, CUSTOMERS, "contact", tag=email)
    assert suggested["state"].tolist() == ["SUGGESTED"]
    assert suggested["weight"].iloc[0] >= 0.9 and suggested["rules"].iloc[0]
    plan = cat.review_suggestions(min_weight=0.9, tags=email, source=FILES)
    assert (plan["weight"] >= 0.9).all() and "contact" in plan["field"].tolist()
    report = cat.review_suggestions(min_weight=0.9, tags=email, source=FILES, dry_run=False)
    assert set(report["result"]) == {"applied"}
    accepted = cat.associations(FILES, CUSTOMERS, "contact", tag=email)
    assert accepted["state"].tolist() == ["ACCEPTED"]
    # the highest sensitivity of the accepted tags (the other tests accepted RESTRICTED ones)
    assert cat.resource(FILES, CUSTOMERS)["sensitivity"] in {"CONFIDENTIAL", "RESTRICTED"}
    assert cat.resource(SQL, "sales.products")["sensitivity"] is None
