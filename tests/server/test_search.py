"""Search over a small profiled catalog: ranking, prefixes, ADVANCED queries, sorting, facets,
stored results and their pages (docs/search-api.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete, select

from catalog_nb.server import profiling
from catalog_nb.server.store import ingest
from catalog_nb.server.store import search as search_store
from catalog_nb.server.store.schema import data_resources, stored_searches
from tests.conftest import Http, Server
from tests.server.helpers import session_token, token_hash
from tests.server.search_helpers import Lake, build_lake, facet, paths, post, put, search


@pytest.fixture(scope="module")
def srv(make_server: Any) -> Server:
    server: Server = make_server()
    return server


@pytest.fixture(scope="module")
def lake(srv: Server, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    return build_lake(srv, Path(tmp_path_factory.mktemp("search-lake")))


@pytest.fixture(scope="module")
def admin(srv: Server, lake: Lake) -> Http:
    return srv.session()


def test_name_match_outranks_description_match(admin: Http, lake: Lake) -> None:
    result = search(admin, "orders")
    found = paths(result)
    assert set(found) == {"orders.csv", "secret_orders.csv", "customers.csv"}
    assert found[-1] == "customers.csv"  # matched by its description only
    scores = [e["score"] for e in result["entities"]]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    assert result["matchedEntityCount"] == result["totalResultCount"] == 3


def test_words_are_stemmed_case_folded_and_all_required(admin: Http, lake: Lake) -> None:
    assert set(paths(search(admin, "ORDER"))) == {"orders.csv", "secret_orders.csv",
                                                  "customers.csv"}
    assert paths(search(admin, "secret orders")) == ["secret_orders.csv"]
    # field names, tag names and synonyms, custom values are searched too
    assert paths(search(admin, "salary")) == ["payroll.csv"]
    assert set(paths(search(admin, "personal"))) == {"customers.csv", "payroll.csv"}
    assert paths(search(admin, "sales")) == ["customers.csv"]


def test_partial_search_matches_prefixes(admin: Http, lake: Lake) -> None:
    assert search(admin, "ord")["matchedEntityCount"] == 0
    assert set(paths(search(admin, "ord", partialSearch=True))) == {
        "orders.csv", "secret_orders.csv", "customers.csv"}
    assert paths(search(admin, "payr", partialSearch=True)) == ["payroll.csv"]


def test_advanced_fields_and_boolean_operators(admin: Http, lake: Lake) -> None:
    def adv(query: str) -> set[str]:
        return set(paths(search(admin, query, searchType="ADVANCED")))

    assert adv("name:orders") == {"orders.csv", "secret_orders.csv"}
    assert adv(f"name:orders AND NOT source:{lake.two}") == {"orders.csv"}
    assert adv("tag:pii OR name:events") == {"customers.csv", "payroll.csv",
                                             "logs/events.jsonl"}
    assert adv("format:jsonl") == {"logs/events.jsonl"}
    assert adv("(format:tsv OR format:jsonl) NOT path:logs") == {"notes/readme.tsv"}
    assert adv('description:"placed orders"') == {"customers.csv"}
    assert adv("field:salary owner:erin") == {"payroll.csv"}
    assert adv("name:ord*") == {"orders.csv", "secret_orders.csv"}
    assert adv("type:file NOT name:orders") == {"customers.csv", "payroll.csv",
                                                "logs/events.jsonl", "notes/readme.tsv"}


def test_empty_phrase_matches_everything_by_name(admin: Http, lake: Lake) -> None:
    for phrase in (None, "", "   ", '"', "*"):
        result = search(admin, phrase)
        assert result["matchedEntityCount"] == 6
        names = [e["name"] for e in result["entities"]]
        assert names == sorted(names)


def test_sort_specs(admin: Http, lake: Lake) -> None:
    result = search(admin, "", sortBySpecs=[{"propertyName": "resourceSize",
                                            "ascending": False}])
    sizes = [e["resourceSize"] for e in result["entities"]]
    assert sizes == sorted(sizes, reverse=True)
    result = search(admin, "", sortBySpecs=[{"propertyName": "resourcePath",
                                            "ascending": True}])
    assert paths(result) == sorted(paths(result))
    result = search(admin, "", sortBySpecs=[{"propertyName": "dataSourceName",
                                            "ascending": False},
                                           {"propertyName": "name", "ascending": True}])
    assert [e["dataSourceName"] for e in result["entities"]][:2] == [lake.two, lake.two]
    assert paths(result)[:2] == ["payroll.csv", "secret_orders.csv"]


def _expected(admin: Http, lake: Lake) -> dict[str, Counter[str]]:
    """Every facet's counts over the whole catalog, computed from the metadata API."""
    params: dict[str, Any] = {"views": ["viewFields", "viewTags"], "pageSize": 100}
    listed = admin.get("/dataresource/metadata", params=params).json()["list"]
    counts: dict[str, Counter[str]] = {k: Counter() for k in (
        "dataSource", "resourceType", "fileFormat", "tag", "owner", "sensitivity",
        "virtualFolder", "fieldDataType", "sizeRange", "lastModified", f"cp.{lake.team}")}
    for r in listed:
        counts["dataSource"][r["dataSourceName"]] += 1
        counts["resourceType"][r["resourceType"].removeprefix("resource_type_")] += 1
        counts["fileFormat"][r["fileFormat"]] += 1
        if r["owner"]:
            counts["owner"][r["owner"]] += 1
        counts["sensitivity"][r["sensitivity"] or "NONE"] += 1
        for t in {v["tagFullName"] for v in r["tagAssociationViewList"]
                  if v["state"] in ("ACCEPTED", "SUGGESTED")}:
            counts["tag"][t] += 1
        for kind in {f["dataType"] for f in r["fields"]}:
            counts["fieldDataType"][kind] += 1
        counts["sizeRange"]["<1 MB"] += 1
        counts["lastModified"]["last day"] += 1
        for cp in r["customProperties"]:
            counts[f"cp.{lake.team}"][cp["value"]] += 1
        if r["resourcePath"].startswith("logs/"):
            counts["virtualFolder"][lake.folder] += 1
    return counts


def test_every_facet_counts_what_the_catalog_holds(admin: Http, lake: Lake) -> None:
    result = search(admin, None)
    expected = _expected(admin, lake)
    assert [f["name"] for f in result["facetResults"]] == list(expected)
    for name, counts in expected.items():
        got = facet(result, name)
        assert got["categoryCounts"] == dict(counts), name
        assert got["totalCount"] == 6 and got["selectedCategories"] == []
    assert facet(result, "sensitivity")["categoryCounts"] == {"CONFIDENTIAL": 2, "NONE": 4}


def test_counts_stay_honest_across_selections(admin: Http, lake: Lake) -> None:
    csv = search(admin, None, facetSelections=[{"facetName": "fileFormat",
                                                "facetCategories": ["csv"]}])
    assert csv["matchedEntityCount"] == 4
    assert facet(csv, "dataSource")["categoryCounts"] == {lake.one: 2, lake.two: 2}
    # the selected facet keeps its own categories visible
    assert facet(csv, "fileFormat")["categoryCounts"] == {"csv": 4, "tsv": 1, "jsonl": 1}
    assert facet(csv, "fileFormat")["selectedCategories"] == ["csv"]
    both = search(admin, None, facetSelections=[
        {"facetName": "fileFormat", "facetCategories": ["csv"]},
        {"facetName": "dataSource", "facetCategories": [lake.two]},
    ])
    assert set(paths(both)) == {"payroll.csv", "secret_orders.csv"}
    assert facet(both, "fileFormat")["categoryCounts"] == {"csv": 2}
    assert facet(both, "fileFormat")["totalCount"] == 2
    assert facet(both, "dataSource")["categoryCounts"] == {lake.one: 2, lake.two: 2}
    # categories within a facet are ORed; with a phrase the counts cover its matches only
    ored = search(admin, "orders", facetSelections=[
        {"facetName": "owner", "facetCategories": ["carol", "dave"]}])
    assert set(paths(ored)) == {"orders.csv", "customers.csv"}
    assert facet(ored, "owner")["categoryCounts"] == {"carol": 1, "dave": 1}
    assert facet(ored, "dataSource")["categoryCounts"] == {lake.one: 2}


def test_derived_facets_filter(admin: Http, lake: Lake) -> None:
    def only(name: str, *cats: str) -> set[str]:
        return set(paths(search(admin, None, facetSelections=[
            {"facetName": name, "facetCategories": list(cats)}])))

    assert only("tag", lake.pii["fullName"]) == {"customers.csv", "payroll.csv"}
    assert only("sensitivity", "NONE") == {"orders.csv", "secret_orders.csv",
                                           "logs/events.jsonl", "notes/readme.tsv"}
    assert only(f"cp.{lake.team}", "hr", "sales") == {"payroll.csv", "customers.csv"}
    assert only("virtualFolder", lake.folder) == {"logs/events.jsonl"}
    assert only("fieldDataType", "DATE") == {"orders.csv"}
    assert only("sizeRange", "<1 MB") == only("lastModified", "last day")
    assert only("resourceType", "table") == set()


def test_index_follows_annotations_and_tag_changes(admin: Http, lake: Lake) -> None:
    put(admin, lake.keys["notes/readme.tsv"], {"description": "quarterly zeppelin figures"})
    assert paths(search(admin, "zeppelin")) == ["notes/readme.tsv"]
    put(admin, lake.keys["notes/readme.tsv"], {"description": None})
    assert search(admin, "zeppelin")["matchedEntityCount"] == 0
    tag = post(admin, "/tag", {"domainKey": lake.domain["key"], "name": "Gizmo"})
    post(admin, "/tagassociation", {"resourceKey": lake.keys["notes/readme.tsv"],
                                    "tagKey": tag["key"], "state": "ACCEPTED"})
    assert paths(search(admin, "gizmo")) == ["notes/readme.tsv"]
    response = admin.put(f"/tag/{tag['key']}", json={"name": "Widget"})
    assert response.status_code == 200, response.text
    assert search(admin, "gizmo")["matchedEntityCount"] == 0
    renamed = search(admin, "widget")
    assert paths(renamed) == ["notes/readme.tsv"]
    assert f"{lake.domain['name']}.Widget" in facet(renamed, "tag")["categoryCounts"]
    assert admin.delete(f"/tag/{tag['key']}").status_code in (200, 204)
    assert search(admin, "widget")["matchedEntityCount"] == 0


def test_run_facet_filters_by_facets_only(admin: Http, lake: Lake) -> None:
    result = post(admin, "/search/runFacet", {"facetSelections": [
        {"facetName": "dataSource", "facetCategories": [lake.two]}]})
    assert set(paths(result)) <= {"payroll.csv", "secret_orders.csv"}
    assert result["matchedEntityCount"] == len(result["entities"]) >= 1
    page = post(admin, "/search/page", {"pagingCriteria": {"start": 0, "size": 1}})
    assert page["key"] == result["key"] and len(page["entities"]) == 1


def test_facet_catalogue(admin: Http, lake: Lake) -> None:
    response = admin.get("/search/facets")
    assert response.status_code == 200, response.text
    listed = {f["facetName"]: f for f in response.json()["DATA_RESOURCE"]}
    assert lake.one in listed["dataSource"]["facetCategories"]
    assert listed["resourceType"]["facetCategories"] == ["file"]
    assert set(listed["fileFormat"]["facetCategories"]) == {"csv", "tsv", "jsonl"}
    assert listed[f"cp.{lake.team}"]["displayName"] == lake.team
    assert set(listed[f"cp.{lake.team}"]["facetCategories"]) == {"sales", "finance", "hr"}
    assert listed["virtualFolder"]["facetCategories"] == [lake.folder]
    assert lake.pii["fullName"] in listed["tag"]["facetCategories"]


def test_stored_search_pages_consistently(srv: Server, admin: Http, lake: Lake,
                                          tmp_path: Path) -> None:
    first = search(admin, None, pagingCriteria={"start": 0, "size": 2})
    everything = search(admin, None, pagingCriteria={"start": 0, "size": 100})
    order = [e["key"] for e in everything["entities"]]
    assert first["matchedKeys"] == order[:2] and first["size"] == 2
    # the latest search of the session is paged without a key; a key names an earlier one
    latest = post(admin, "/search/page", {"pagingCriteria": {"start": 2, "size": 2}})
    assert latest["key"] == everything["key"] and latest["matchedKeys"] == order[2:4]
    # re-profiling a resource between pages changes nothing in the stored order
    folder = tmp_path / "again"
    folder.mkdir()
    (folder / "orders.csv").write_text("order_id,amount,zz\n1,2,3\n")
    with srv.store.write() as conn:
        ingest.record_profile(conn, lake.one_key, profiling.profile_file("orders.csv",
                                                                         root=folder))
    pages = [first["matchedKeys"]]
    for start in (2, 4, 6):
        page = post(admin, "/search/page", {"key": first["key"],
                                            "pagingCriteria": {"start": start, "size": 2}})
        assert page["key"] == first["key"] and page["matchedEntityCount"] == 6
        assert page["facetResults"] == first["facetResults"]
        pages.append(page["matchedKeys"])
    assert [k for p in pages for k in p] == order
    assert pages[-1] == []  # past the end: an empty page
    # a resource removed meanwhile is left out of its page and counted
    doomed = order[1]
    with srv.store.write() as conn:
        conn.execute(delete(data_resources).where(data_resources.c.key == doomed))
    page = post(admin, "/search/page", {"key": first["key"],
                                        "pagingCriteria": {"start": 0, "size": 2}})
    assert page["matchedKeys"] == [order[0]] and page["removedSinceSearch"] == 1


def test_a_session_keeps_its_newest_results(srv: Server, lake: Lake) -> None:
    """Each search stores its result; a session keeps the ``KEEP_PER_SESSION`` newest, the
    older ones are dropped as the next is stored (and their pages answer 404)."""
    http = srv.session()
    phrases = (["csv", "orders", None] * 10)[:search_store.KEEP_PER_SESSION + 2]
    keys = [search(http, phrase, pagingCriteria={"start": 0, "size": 1})["key"]
            for phrase in phrases]
    X = stored_searches
    with srv.store.read() as conn:
        stored = set(conn.execute(select(X.c.key).where(
            X.c.token_hash == token_hash(session_token(http)))).scalars())
    assert stored == set(keys[2:])
    for dropped in keys[:2]:
        response = http.post("/search/page", json={"key": dropped,
                                                   "pagingCriteria": {"start": 0, "size": 1}})
        assert response.status_code == 404, response.text
    page = post(http, "/search/page", {"key": keys[2], "pagingCriteria": {"start": 0, "size": 1}})
    assert page["key"] == keys[2]
