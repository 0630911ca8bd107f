"""``properties=`` of ``GET /dataresource/metadata`` through real HTTP: a page asking for some
properties is the whole page cut down to them, property by property, and every kind of write
shows on the next narrow page.

The database builds a row's own properties (``inferredKeys`` among them, from ``extra``), and a
narrow page reads neither ``detailed_status`` nor ``extra`` unless a property built from them in
Python is asked for; these tests pin that each path gives the values of the whole resource.
"""

from __future__ import annotations

import uuid
from typing import Any

import orjson
import pytest

from catalog_nb.client.resources.frames import FRAME_WIRE_PROPERTIES
from catalog_nb.server.schemas.resources import (
    WIRE_PROPERTIES,
    Shaping,
    page_out,
    resource_out,
)
from catalog_nb.server.security import Caller
from catalog_nb.server.store import custom_properties as property_store
from catalog_nb.server.store import favorites as favorite_store
from catalog_nb.server.store import ingest
from catalog_nb.server.store import reviews as review_store
from catalog_nb.server.store.common import FEW_KEYS
from catalog_nb.server.visibility import Visibility
from tests.conftest import Http, Server
from tests.server.lake import add_source, one_field_profile
from tests.server.tag_helpers import associate, make_domain, make_tag

#: Sent with the views whatever ``properties`` say.
VIEW_LISTS = {"fields", "tagAssociationViewList"}
KEYS = {"primaryKey": ["id"], "uniqueColumns": [["id"], ["email"]],
        "compositeKeys": [["a", "b"]]}


@pytest.fixture(scope="module")
def lake(live_server: Server, admin: Http) -> dict[str, Any]:
    """One source whose resources carry every kind of per-row property: inferred keys (whole,
    partial, malformed, none), source details, a custom value, a favorite, a review, a virtual
    folder, an ACCEPTED sensitive tag."""
    tag = uuid.uuid4().hex[:8]
    name = f"proj-{tag}"
    source_key = add_source(live_server.store, name, f"/generated/{name}")
    extras = {
        "keys.csv": {"inferredKeys": KEYS, "sheet": "one"},
        "partial.csv": {"inferredKeys": {"primaryKey": ["k"]}},
        "odd.csv": {"inferredKeys": {"primaryKey": "id", "uniqueColumns": None,
                                     "compositeKeys": 0}},
        "listed.csv": {"inferredKeys": [["id"]]},
        "plain.csv": {},
        "sub/deep.csv": {"workbook": {"sheets": 2}},
    }
    with live_server.store.write() as conn:
        for path, extra in extras.items():
            ingest.record_profile(conn, source_key, one_field_profile(path, extra))
    listed = admin.get("/dataresource/metadata",
                       params={"propertyFilter": f"data_source:{name}", "pageSize": 100})
    keys = {r["resourcePath"]: r["key"] for r in listed.json()["list"]}
    team = f"team_{tag}"
    assert admin.post("/customproperty", json={"name": team, "type": "STRING"}).ok
    assert admin.put(f"/dataresource/{keys['keys.csv']}",
                     json={"customProperties": {team: "sales"}, "owner": "ana"}).ok
    assert admin.post(f"/favorites/{keys['plain.csv']}").ok
    assert admin.post("/reviews", json={"entityKey": keys["keys.csv"], "rating": 4}).ok
    assert admin.post("/virtualfolder", json={
        "name": f"sub-{tag}", "dataSourceKey": source_key,
        "pathSpecs": [{"sourcePath": "sub"}]}).ok
    domain = make_domain(admin, "proj")
    secret = make_tag(admin, domain["key"], "Secret", sensitivity="CONFIDENTIAL")
    associate(admin, keys["partial.csv"], secret["key"], state="ACCEPTED")
    return {"name": name, "keys": keys, "team": team,
            "params": {"propertyFilter": f"data_source:{name}", "pageSize": 100}}


def _page(admin: Http, params: dict[str, Any]) -> list[dict[str, Any]]:
    response = admin.get("/dataresource/metadata", params=params)
    assert response.status_code == 200, response.text
    listed: list[dict[str, Any]] = response.json()["list"]
    return listed


@pytest.mark.parametrize("views", ["", "viewFields,viewTags"])
def test_each_property_asked_alone_is_the_whole_resources_value(
    admin: Http, lake: dict[str, Any], views: str
) -> None:
    params = {**lake["params"], "views": views}
    whole = _page(admin, params)
    assert len(whole) == 6
    for name in sorted(WIRE_PROPERTIES - VIEW_LISTS - {"key"}):
        narrow = _page(admin, {**params, "properties": name})
        sent = {"key", name} | (VIEW_LISTS & set(whole[0]))
        assert narrow == [{k: r[k] for k in sent} for r in whole], name


def test_the_frames_properties_and_the_python_built_ones_together(
    admin: Http, lake: dict[str, Any]
) -> None:
    whole = _page(admin, lake["params"])
    asked = ["inferredKeys", "sourceDetails", "runId", "processedTime", "detailedStatus",
             "customProperties", "favorite", "averageRating", "ratingCount", "sensitivity",
             "dataSetVirtualFolders", "dataSourceUri", "memberPaths", "rowCount"]
    narrow = _page(admin, {**lake["params"], "properties": ",".join(asked)})
    assert narrow == [{k: r[k] for k in ["key", *asked]} for r in whole]


@pytest.mark.parametrize("properties", ["", ",".join(FRAME_WIRE_PROPERTIES)])
def test_a_page_built_a_property_at_a_time_is_the_page_built_row_by_row(
    admin: Http, lake: dict[str, Any], properties: str
) -> None:
    # Without views a page is built a property at a time (schemas.resources.page_out); with
    # them row by row (resource_out): the same resources either way.
    params = {**lake["params"], "properties": properties}
    by_rows = _page(admin, {**params, "views": "viewFields,viewTags"})
    by_properties = _page(admin, params)
    assert by_properties == [{k: v for k, v in r.items() if k not in VIEW_LISTS}
                             for r in by_rows]
    assert any(r.get("favorite", True) is True for r in by_properties)


def test_page_out_writes_the_bytes_resource_out_writes() -> None:
    # Values that are equal but written apart (True, 1, 1.0; 0.0 and -0.0), unhashable ones
    # (lists) and NaN (written null) each keep their own encoding.
    rows = [{"key": f"k{i}", "data_source_key": "s", "path": f"p{i}", "name": "n",
             "resource_type": "resource_type_file", "source_name": "s", "source_type": "FILE",
             "source_uri": f"/u{i % 2}", "detailed_status": [], "extra": {},
             "wire": orjson.dumps({"key": f"k{i}", "rowCount": i}).decode()}
            for i in range(8)]
    ratings = {"k0": (0.0, 0), "k1": (-0.0, 1), "k2": (1.0, True), "k3": (float("nan"), 1),
               "k4": (True, 2), "k5": (1, 2)}
    custom = {"k6": [{"name": "a", "value": [1, 2]}], "k7": ()}
    caller = Caller(key="u", name="u", roles=())
    for properties in (None, frozenset({"key", "averageRating", "ratingCount",
                                        "customProperties", "favorite", "dataSourceUri"})):
        ctx = Shaping(caller=caller, vis=Visibility(everything=True), ratings=ratings,
                      custom=custom, favorites={"k2"}, properties=properties)
        assert [bytes(orjson.dumps(f)) for f in page_out(rows, ctx)] == \
            [bytes(orjson.dumps(resource_out(r, ctx))) for r in rows]
    written = orjson.loads(orjson.dumps(page_out(rows, ctx)))
    assert [(r["averageRating"], r["ratingCount"]) for r in written[:6]] == [
        (0.0, 0), (-0.0, 1), (1.0, True), (None, 1), (True, 2), (1, 2)]
    assert b'"averageRating":-0.0' in orjson.dumps(page_out(rows, ctx)[1])


def test_inferred_keys_are_built_from_what_profiling_stored(
    admin: Http, lake: dict[str, Any]
) -> None:
    listed = {r["resourcePath"]: r for r in _page(admin, lake["params"])}
    empty = {"primaryKey": [], "uniqueColumns": [], "compositeKeys": []}
    assert listed["keys.csv"]["inferredKeys"] == KEYS
    assert listed["keys.csv"]["sourceDetails"] == {"sheet": "one"}
    assert listed["partial.csv"]["inferredKeys"] == {**empty, "primaryKey": ["k"]}
    # Members that are no lists, and an inferredKeys that is no object, read as no key.
    assert listed["odd.csv"]["inferredKeys"] == empty
    assert listed["listed.csv"]["inferredKeys"] == empty
    assert listed["plain.csv"]["inferredKeys"] == empty
    assert listed["sub/deep.csv"]["sourceDetails"] == {"workbook": {"sheets": 2}}
    for path, row in listed.items():
        assert admin.get(f"/dataresource/{row['key']}").json()["inferredKeys"] == \
            row["inferredKeys"], path


def test_a_narrow_page_shows_every_kind_of_write_at_once(
    admin: Http, lake: dict[str, Any]
) -> None:
    key = lake["keys"]["sub/deep.csv"]
    asked = "description,owner,customProperties,favorite,averageRating,ratingCount," \
            "sensitivity,dataSetVirtualFolders"
    params = {**lake["params"], "properties": asked}

    def row() -> dict[str, Any]:
        return next(r for r in _page(admin, params) if r["key"] == key)

    before = row()
    assert before["favorite"] is False and before["ratingCount"] == 0
    assert before["dataSetVirtualFolders"] and before["sensitivity"] is None
    assert admin.put(f"/dataresource/{key}", json={
        "description": "new words", "owner": "bo",
        "customProperties": {lake["team"]: "ops"}}).ok
    assert admin.post(f"/favorites/{key}").ok
    assert admin.post("/reviews", json={"entityKey": key, "rating": 2}).ok
    domain = make_domain(admin, "proj-w")
    tag = make_tag(admin, domain["key"], "Restricted", sensitivity="RESTRICTED")
    associate(admin, key, tag["key"], state="ACCEPTED")
    after = row()
    assert after["description"] == "new words" and after["owner"] == "bo"
    assert [(c["name"], c["value"]) for c in after["customProperties"]] == [
        (lake["team"], "ops")]
    assert after["favorite"] is True
    assert (after["averageRating"], after["ratingCount"]) == (2.0, 1)
    assert after["sensitivity"] == "RESTRICTED"


def test_a_page_of_keys_bound_as_one_value_reads_what_the_keys_one_by_one_read(
    live_server: Server, admin: Http, lake: dict[str, Any]
) -> None:
    # Padded with unknown keys past FEW_KEYS, so the reads take the one-bound-value way.
    keys = sorted(lake["keys"].values())
    many = keys + [f"missing-{i}" for i in range(FEW_KEYS + 1)]
    me = admin.get("/user/_me").json()["key"]
    with live_server.store.read() as conn:
        custom = property_store.values_of(conn, many)
        one_by_one = [property_store.values_of(conn, [k]) for k in keys]
        assert custom == {k: v for found in one_by_one for k, v in found.items()}
        marked = favorite_store.flags(conn, me, many)
        assert marked == {k for k in keys if favorite_store.flags(conn, me, [k])}
        rated = review_store.rating_stats(conn, many)
        each = [review_store.rating_stats(conn, [k]) for k in keys]
        assert rated == {k: v for found in each for k, v in found.items()}
        # Each was set on the lake: the comparisons are not of empty answers.
        assert custom and marked and rated
        assert favorite_store.flags(conn, me, []) == set()
