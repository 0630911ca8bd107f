"""A small catalog for the search tests, made the way the service makes one.

Two FILE sources of real, profiled files (``lake.profile_folder``); tags, a facetAble custom
property, owners, descriptions and a virtual folder written through the HTTP API; an Analyst
whose role is granted only the first source.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import Http, Server
from tests.server.helpers import PASSWORD, create_role, create_user
from tests.server.lake import profile_folder, resource_key, write_files
from tests.server.tag_helpers import associate, make_domain, make_tag, name

ONE: dict[str, str | bytes] = {
    "orders.csv": "order_id,amount,placed\n10,3.5,2024-01-02\n11,4.25,2024-01-03\n",
    "customers.csv": "customer_id,email\n1,a@x.org\n2,b@y.org\n",
    "logs/events.jsonl": '{"event": "click", "n": 1}\n{"event": "view", "n": 2}\n',
    "notes/readme.tsv": "title\tbody\nhello\tworld\n",
}
TWO: dict[str, str | bytes] = {
    "secret_orders.csv": "id,total\n1,9.5\n",
    "payroll.csv": "employee,salary\nann,100\n",
}


@dataclass
class Lake:
    """The search tests' catalog: sources, resource keys by path, tags, people."""

    one: str
    two: str
    one_key: str
    two_key: str
    keys: dict[str, str]
    domain: dict[str, Any]
    pii: dict[str, Any]
    finance: dict[str, Any]
    team: str
    folder: str
    analyst: Http
    steward: Http


def post(http: Http, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = http.post(path, json=body)
    assert response.status_code == 201, response.text
    found: dict[str, Any] = response.json()
    return found


def search(http: Http, phrase: str | None = None, **criteria: Any) -> dict[str, Any]:
    """POST /search/new; the SearchResult (asserting 201)."""
    body = {"searchPhrase": phrase, **criteria}
    return post(http, "/search/new", body)


def put(http: Http, key: str, body: dict[str, Any]) -> None:
    response = http.put(f"/dataresource/{key}", json=body)
    assert response.status_code == 200, response.text


def build_lake(server: Server, folder: Path) -> Lake:
    """Profile the two sources and annotate them through the API."""
    admin = server.session()
    one, two = name("alpha"), name("beta")
    one_key = profile_folder(server.store, one, write_files(folder / "one", ONE))
    two_key = profile_folder(server.store, two, write_files(folder / "two", TWO))
    keys = {p: resource_key(server.store, one_key, p) for p in ONE}
    keys.update({p: resource_key(server.store, two_key, p) for p in TWO})
    domain = make_domain(admin, "privacy")
    pii = make_tag(admin, domain["key"], "PII", sensitivity="CONFIDENTIAL",
                   synonyms=["personal"])
    finance = make_tag(admin, domain["key"], "Finance", sensitivity="INTERNAL")
    associate(admin, keys["customers.csv"], pii["key"], state="ACCEPTED")
    associate(admin, keys["payroll.csv"], pii["key"], state="ACCEPTED")
    associate(admin, keys["orders.csv"], finance["key"], state="SUGGESTED")
    team = name("team")
    post(admin, "/customproperty", {"name": team, "type": "STRING", "facetAble": True})
    put(admin, keys["customers.csv"], {"description": "Everyone who placed orders with us",
                                       "owner": "carol", "customProperties": {team: "sales"}})
    put(admin, keys["orders.csv"], {"owner": "dave", "customProperties": {team: "finance"}})
    put(admin, keys["payroll.csv"], {"owner": "erin", "customProperties": {team: "hr"}})
    folder_name = name("logs")
    post(admin, "/virtualfolder", {"name": folder_name, "dataSourceKey": one_key,
                                   "pathSpecs": [{"sourcePath": "logs"}]})
    role = create_role(admin, name("search-analyst"), "Analyst", dataSourceKeys=[one_key],
                       domainKeys=[domain["key"]])
    who = name("ana")
    create_user(admin, who, roles=[role["name"]])
    steward_role = create_role(admin, name("search-steward"), "Steward",
                               dataSourceKeys=[one_key, two_key], domainKeys=[domain["key"]])
    stew = name("stew")
    create_user(admin, stew, roles=[steward_role["name"]])
    return Lake(one, two, one_key, two_key, keys, domain, pii, finance, team, folder_name,
                server.session(who, PASSWORD), server.session(stew, PASSWORD))


def facet(result: dict[str, Any], facet_name: str) -> dict[str, Any]:
    """One facet's entry of a SearchResult's facetResults."""
    found: dict[str, Any] = next(f for f in result["facetResults"] if f["name"] == facet_name)
    return found


def paths(result: dict[str, Any]) -> list[str]:
    return [e["resourcePath"] for e in result["entities"]]
