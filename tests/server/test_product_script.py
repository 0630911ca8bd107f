"""A script written against the real product runs unchanged (issue 17, docs/compatibility.md).

``analyst_script`` is what an analyst writes from the Lumada / Waterline Data Catalog API docs
and the spec's examples, with plain ``requests`` and the product's paths (``/role``,
``PUT /dataresource?resourcePath=&virtualFolderName=``, ``GET /logout`` read with ``.json()``,
resource paths with a leading ``/``): log in, read a user, change a field and put the whole
user back, tag a field and the resource itself, describe the resource, search, compare two
tables, read the joins, log out. It calls nothing of catalog_nb and checks nothing of the
answers but their status; the fixture prepares the lake (two sources profiled by ``POST /job``)
and the test checks what the script saw against the spec's types: a value, not null, wherever
the spec types a property without "or null".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
import requests

from tests.conftest import Http, Server
from tests.server.helpers import create_user
from tests.server.source_helpers import profiled_demo_catalog

# The spec's types of the objects the script reads ("or null" where the spec says so).
S, N, A, B, OBJ = "string", "number", "array", "boolean", "object"
TAG_ASSOCIATION_VIEW = {
    "key": S, "tagKey": S, "tagName": S, "domainKey": S, "domainName": S, "resourceKey": S,
    "field": S, "state": S, "semantic": S, "weight": N, "rules": A, "timeOfCreation": N,
    "timeOfLastChange": N,
}
TAG = {
    "key": S, "type": S, "timeOfCreation": N, "timeOfLastChange": N, "restricted": A,
    "viewAble": A, "updateable": A, "score": N, "customProperties": A,
    "name": S, "fullName": S, "domainKey": S, "parentKey": f"{S} or null", "children": A,
    "tagState": S, "enable": B, "learningEnabled": B, "immutable": B, "minScore": N,
    "regEx": f"{S} or null", "regexMinLen": N, "regexMaxLen": N,
    "regexFilterClass": f"{S} or null", "synonyms": A, "sensitivity": S, "allSensitivities": A,
    "externalId": S, "externalSourceName": S,
}
TABLE_COMPARISON = {
    "virtualFolder": S, "tableOne": S, "tableTwo": S, "commonFields": A,
    "tableOneUniqueFields": A, "tableTwoUniqueFields": A, "overlapPercent": N,
}
JOIN_CONDITION = {
    **{name: S for name in (
        "leftResourceName", "leftFileFormat", "leftOwner", "leftSourceId", "leftSourceName",
        "leftResourceId", "leftPath", "rightOwner", "rightPath", "rightFileFormat",
        "rightSourceId", "rightSourceName", "rightResourceName", "rightResourceId", "joinOp",
        "joinStatState", "joinOrder", "joinCardinality")},
    **{name: N for name in (
        "leftTimeOfLastChange", "leftTimeOfResourceChange", "leftSize", "rightTimeOfLastChange",
        "rightTimeOfResourceChange", "rightSize")},
    **{name: A for name in ("leftOrigin", "rightOrigin", "leftCols", "rightCols", "leftTags",
                            "rightTags", "tags")},
    "stats": OBJ,
}


def analyst_script(base_url: str, username: str, password: str, colleague: str,
                   files_source: str) -> dict[str, Any]:
    """The script, as written against the product: it returns what it read."""
    api = base_url + "/api/v2"
    session = requests.Session()
    session.headers.update({"Content-Type": "application/json"})
    seen: dict[str, Any] = {}

    response = session.post(api + "/login", json={"username": username, "password": password})
    response.raise_for_status()
    seen["login"] = response.json()

    # Read a colleague's profile, change a field, put the whole profile back.
    user = session.get(api + "/user/name/" + colleague).json()
    user["attributes"]["email"] = "jane.doe@acme.example"
    user["description"] = "Data steward for the CRM files"
    session.put(api + "/user/" + user["key"], json=user).raise_for_status()
    seen["user"] = session.get(api + "/user/" + user["key"]).json()
    seen["roles"] = session.get(api + "/role").json()
    seen["analyst"] = session.get(api + "/role/byname", params={"name": "Analyst"}).json()

    # A tag for e-mail addresses.
    response = session.post(api + "/tagdomain", json={"name": "Customer",
                                                      "description": "Customer data"})
    response.raise_for_status()
    domain = response.json()
    response = session.post(api + "/tag", json={
        "name": "Email", "description": "An e-mail address", "domainKey": domain["key"],
        "tagState": "VALUE", "enable": True})
    response.raise_for_status()
    tag = response.json()

    # Tag the e-mail field ("contact") of the customer file, and the file itself.
    path = "/crm/customers.csv"
    response = session.get(api + "/dataresource/source/" + files_source,
                           params={"resourcePath": path})
    response.raise_for_status()
    resource = response.json()
    email = next(f["name"] for f in resource["fields"] if f["name"] == "contact")
    for field in (email, ""):
        response = session.post(api + "/tagassociation", json={
            "resourceKey": resource["key"], "tagKey": tag["key"], "field": field,
            "state": "ACCEPTED", "semantic": "OTHER", "description": "tagged by script"})
        response.raise_for_status()
    seen["byfield"] = session.get(api + "/tagassociation/byfield", params={
        "sourceName": files_source, "resourcePath": path, "fieldName": email}).json()
    seen["byresource"] = session.get(api + "/tagassociation/byresource", params={
        "sourceName": files_source, "resourcePath": path}).json()

    # Describe the file through its folder (the source's root folder has the source's name).
    response = session.put(api + "/dataresource", params={
        "resourcePath": path, "virtualFolderName": files_source},
        json={"description": "Customer master list"})
    response.raise_for_status()
    seen["described"] = response.json()

    # Search for it.
    response = session.post(api + "/search/new", json={
        "searchType": "BASIC", "searchPhrase": "customer master",
        "pagingCriteria": {"start": 0, "size": 20}, "facetSelections": [], "entityScope": [],
        "sortBySpecs": [], "applyFacets": True, "partialSearch": False,
        "preformedQuery": False})
    response.raise_for_status()
    seen["search"] = response.json()

    # Compare two tables, and read how orders join to the rest.
    response = session.get(api + "/overlap/table", params={"table1": "sales.orders",
                                                           "table2": "sales.customers"})
    response.raise_for_status()
    seen["overlap"] = response.json()
    response = session.get(api + "/dataresource/source/demo_sql",
                           params={"resourcePath": "sales.orders"})
    response.raise_for_status()
    seen["orders"] = response.json()
    response = session.get(api + "/dataresource/source/" + files_source,
                           params={"resourcePath": path})
    response.raise_for_status()
    seen["customers"] = response.json()

    response = session.get(api + "/logout")
    response.raise_for_status()
    seen["logout"] = response.json()
    seen["after_logout"] = session.get(api + "/user/_me").status_code
    return seen


@pytest.fixture(scope="module")
def lake(make_server: Callable[..., Server]) -> Server:
    """A catalog of the demo lake, both sources registered and profiled by PROFILE jobs."""
    return profiled_demo_catalog(make_server)


@pytest.fixture(scope="module")
def seen(lake: Server) -> dict[str, Any]:
    admin: Http = lake.session()
    create_user(admin, "jdoe", attributes={"firstName": "Jane", "lastName": "Doe",
                                           "email": "jane@old.example"})
    return analyst_script(lake.url, lake.admin_user, lake.admin_password, "jdoe", "demo_files")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return B
    if isinstance(value, int | float):
        return N
    for kind, name in ((str, S), (list, A), (dict, OBJ)):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def mismatches(obj: Mapping[str, Any], spec: Mapping[str, str], where: str) -> list[str]:
    """The properties of ``obj`` that are missing or not of the spec's type."""
    found = []
    for name, wanted in spec.items():
        if name not in obj:
            found.append(f"{where}.{name} missing")
            continue
        kind = _kind(obj[name])
        if kind != wanted and not (kind == "null" and wanted.endswith(" or null")) and not (
                wanted.startswith(kind + " ")):
            found.append(f"{where}.{name} is {kind} ({obj[name]!r}), the spec says {wanted}")
    return found


def test_the_script_runs_and_logs_out(seen: dict[str, Any]) -> None:
    assert seen["login"]["loginResult"] == "SUCCESS"
    assert set(seen["logout"]) == {"redirectUrl", "message"} and seen["logout"]["message"]
    assert seen["after_logout"] == 401


def test_the_user_put_back_keeps_what_was_not_changed(seen: dict[str, Any]) -> None:
    user = seen["user"]
    assert user["description"] == "Data steward for the CRM files"
    assert user["attributes"] == {"firstName": "Jane", "lastName": "Doe",
                                  "email": "jane.doe@acme.example"}
    assert "Analyst" in {r["name"] for r in seen["roles"]}
    assert seen["analyst"]["name"] == "Analyst"


def test_the_tagged_field_and_file_read_as_the_spec_types_them(seen: dict[str, Any]) -> None:
    # discovery's suggestions (the built-in Sensitive tags) are there too: the script's own
    # associations are those of its tag
    (on_field,) = [a for a in seen["byfield"] if a["tagFullName"] == "Customer.Email"]
    assert on_field["weight"] == 1.0 and isinstance(on_field["weight"], float)
    assert on_field["field"] == "contact" and on_field["semantic"] == "OTHER"
    ours = [a for a in seen["byresource"] if a["tagFullName"] == "Customer.Email"]
    assert sorted(a["field"] for a in ours) == ["", "contact"]
    assert [a["weight"] for a in ours] == [1.0, 1.0]
    problems = [p for i, view in enumerate(seen["byresource"])
                for p in mismatches(view, TAG_ASSOCIATION_VIEW, f"association[{i}]")]
    assert problems == []


def test_the_described_file_is_found_by_search(seen: dict[str, Any]) -> None:
    described = seen["described"]
    assert described["description"] == "Customer master list"
    assert described["resourcePath"] == "crm/customers.csv"  # the leading "/" forgiven
    keys = [e.get("key") for e in seen["search"]["entities"]]
    assert described["key"] in keys


def test_the_overlap_reads_as_the_spec_types_it(seen: dict[str, Any]) -> None:
    overlap = seen["overlap"]
    assert overlap["virtualFolder"] == "" and overlap["commonFields"]
    assert mismatches(overlap, TABLE_COMPARISON, "overlap") == []


def test_the_join_conditions_read_as_the_spec_types_them(seen: dict[str, Any]) -> None:
    assert seen["orders"]["joinConditions"], "the PROFILE jobs found no join of sales.orders"
    conditions = seen["orders"]["joinConditions"] + seen["customers"]["joinConditions"]
    problems = [p for i, c in enumerate(conditions)
                for p in mismatches(c, JOIN_CONDITION, f"joinConditions[{i}]")]
    tags = [(f"joinConditions[{i}].{side}[{j}]", t) for i, c in enumerate(conditions)
            for side in ("leftTags", "rightTags", "tags") for j, t in enumerate(c[side])]
    # the script's tag of the customer file is on each of its conditions, a whole Tag
    assert "Customer.Email" in {t["fullName"] for _, t in tags}
    problems += [p for where, t in tags for p in mismatches(t, TAG, where)]
    assert problems == []
