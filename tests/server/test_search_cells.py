"""The facet cells (``store/facet_cells.py``) count exactly what counting resource by resource
counts, after every kind of write and for every kind of grant.

One catalog (the search tests' lake, written through the API) is changed step by step the ways
the service changes it; after each step, for the administrator and for roles granted a whole
source, a virtual folder, a data set, and a grant since revoked, every facet is counted both
ways for a set of selections, and the delta rows summed must equal the cells counted afresh
(:func:`facet_cells.rebuild`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from sqlalchemy import select, update

from catalog_nb.server import profiling
from catalog_nb.server.search import facets as F
from catalog_nb.server.search.query import parse_basic
from catalog_nb.server.store import facet_cells, ingest
from catalog_nb.server.store import roles as role_store
from catalog_nb.server.store import search as search_store
from catalog_nb.server.store.common import now_ms
from catalog_nb.server.store.facets import (
    FacetContext,
    facet_context,
    search_pass,
    selection_condition,
)
from catalog_nb.server.store.schema import (
    data_resources,
    search_cell_members,
    search_document_facets,
    stored_searches,
)
from catalog_nb.server.store.visible import visibility, visible_condition
from catalog_nb.server.visibility import Visibility
from tests.benchmarks.catalog_fixture import tag_catalog, write_catalog
from tests.conftest import Http, Server
from tests.server.helpers import create_role
from tests.server.search_helpers import Lake, build_lake, post, put
from tests.server.tag_helpers import associate, make_tag, name

R = data_resources


@dataclass
class World:
    server: Server
    lake: Lake
    admin: Http
    folder: Path
    roles: dict[str, str]
    paged: bool = False


@pytest.fixture(scope="module")
def world(make_server: Callable[..., Server], tmp_path_factory: pytest.TempPathFactory) -> World:
    server = make_server()
    folder = Path(tmp_path_factory.mktemp("search-cells"))
    lake = build_lake(server, folder)
    admin = server.session()
    logs = next(f for f in admin.get("/virtualfolder").json() if f["name"] == lake.folder)
    data_set = post(admin, "/dataset", {"name": name("ds"), "dataSetPathSpecs": {
        lake.two_key: [{"sourcePath": "payroll.csv"}]}})
    roles = {
        "whole": create_role(admin, name("whole"), dataSourceKeys=[lake.one_key])["key"],
        "folder": create_role(admin, name("folder"), virtualFolderKeys=[logs["key"]])["key"],
        "dataset": create_role(admin, name("dataset"), datasetKeys=[data_set["key"]])["key"],
        "revoked": create_role(admin, name("revoked"), dataSourceKeys=[lake.two_key])["key"],
        "mixed": create_role(admin, name("mixed"), dataSourceKeys=[lake.one_key],
                             datasetKeys=[data_set["key"]])["key"],
    }
    response = admin.put(f"/user/role/{roles['revoked']}", json={"dataSourceKeys": []})
    assert response.status_code == 200, response.text
    return World(server, lake, admin, folder, roles)


def _selections(lake: Lake) -> list[dict[str, list[str]]]:
    return [
        {},
        {"fileFormat": ["csv"]},
        {"fileFormat": ["csv", "jsonl"], "owner": ["carol", "dave"]},
        {"sensitivity": ["CONFIDENTIAL"], "fieldDataType": ["STRING"]},
        {"sizeRange": ["<1 MB"], "lastModified": ["last week", "older"],
         "resourceType": ["file"]},
        {"dataSource": [lake.one], "fieldDataType": ["DATE", "DOUBLE"]},
        {"tag": [lake.pii["fullName"]]},  # next to a custom facet: counted per resource
    ]


def _visibilities(world: World) -> Iterator[tuple[str, Visibility]]:
    yield "admin", Visibility(everything=True)
    with world.server.store.read() as conn:
        for label, key in world.roles.items():
            yield label, visibility(conn, [role_store.get(conn, key)])


def _both_ways(conn: Any, vis: Visibility, ctx: FacetContext,
               selections: dict[str, list[str]]) -> tuple[Any, Any]:
    chosen = {n: selection_condition(conn, ctx, ctx.facets[n], c) for n, c in selections.items()}
    by_cells = facet_cells.counts(conn, vis, ctx, selections, chosen)
    exact = search_pass(conn, ctx, [visible_condition(conn, vis)], chosen).facets
    if by_cells is None:
        return None, exact
    if vis.everything and not selections:  # the cells hold every resource
        assert by_cells.seen == sum(exact["dataSource"][1].values())
    return by_cells.counted, exact


#: The keyword that matches nothing, whatever the catalog holds.
NO_MATCH = "nothingatall"
#: Keywords of the lake and of the bulk catalogs some tests add (one matches nothing).
KEYWORDS = ("csv", "orders", "customers", "area01", "batch000", "file", NO_MATCH)


def _keyword_both_ways(conn: Any, vis: Visibility, ctx: FacetContext,
                       selections: dict[str, list[str]], keyword: str) -> tuple[bool, int]:
    """A keyword search counted and ordered from the document facet rows equals the one-pass
    statement's (the same order asked for by two sort specs, which takes that path); returns
    whether the document facet rows answered it, and how many resources matched."""
    node = parse_basic(keyword, partial=False)
    real, found = facet_cells.keyword_counts, []

    def spy(*args: Any, **kwargs: Any) -> Any:
        found.append(real(*args, **kwargs))
        return found[-1]

    with mock.patch.object(facet_cells, "keyword_counts", spy):
        by_rows = search_store.search(conn, vis, ctx, search_store.Plan(node, selections, []))
    answered = len(found) == 1 and found[0] is not None
    assert answered == facet_cells.answerable(ctx, selections), (keyword, selections)
    by_pass = search_store.search(conn, vis, ctx, search_store.Plan(
        node, selections, [("score", False), ("name", True)]))
    assert by_rows.matches == by_pass.matches, (keyword, selections)
    assert by_rows.facet_results == by_pass.facet_results, (keyword, selections)
    return answered, len(by_rows.matches)


def check(world: World, *, at: int | None = None) -> int:
    """Cells and resources agree everywhere; returns how many comparisons the cells answered."""
    store = world.server.store
    with store.write() as conn:
        summed = sorted(facet_cells.folded(conn), key=repr)
        members = sorted(conn.execute(select(search_cell_members)).all(), key=repr)
        documents = sorted(conn.execute(select(search_document_facets)).all(), key=repr)
        facet_cells.rebuild(conn)
        facet_cells.rebuild_documents(conn)
        assert sorted(facet_cells.folded(conn), key=repr) == summed
        assert sorted(conn.execute(select(search_cell_members)).all(), key=repr) == members
        assert sorted(conn.execute(select(search_document_facets)).all(),
                      key=repr) == documents
    answered = 0
    # The keywords that match nothing in the whole catalog (the administrator's search without
    # a selection comes first): each caller still compares them without a selection, but under
    # a selection NO_MATCH stands for them all: their comparisons there are the same empty
    # search. Until a test adds a bulk catalog, its two keywords are such keywords.
    unmatched: set[str] = set()
    for label, vis in _visibilities(world):
        with store.read() as conn:
            ctx = facet_context(conn, vis)
            if at is not None:
                ctx.now = at
            for selections in _selections(world.lake):
                counted, exact = _both_ways(conn, vis, ctx, selections)
                if counted is None:
                    assert not facet_cells.answerable(ctx, selections), (label, selections)
                    continue
                answered += 1
                assert counted == exact, (label, selections)
                for keyword in KEYWORDS:
                    if selections and keyword in unmatched and keyword != NO_MATCH:
                        continue
                    by_rows, matched = _keyword_both_ways(conn, vis, ctx, selections, keyword)
                    answered += by_rows
                    if vis.everything and not selections and not matched:
                        unmatched.add(keyword)
            # Only the tag facet derived: a single selected tag is answered by the cells.
            tag_only = FacetContext({n: f for n, f in ctx.facets.items()
                                     if not n.startswith(F.CUSTOM_PREFIX)}, ctx.folders, ctx.now)
            for selections in ({"tag": [world.lake.pii["fullName"]]},
                               {"tag": [world.lake.finance["fullName"]], "fileFormat": ["csv"]}):
                counted, exact = _both_ways(conn, vis, tag_only, selections)
                assert counted is not None and counted == exact, (label, selections)
                answered += 1
    return answered


def test_cells_count_the_lake_as_written(world: World) -> None:
    assert check(world) >= 6 * 8


def test_cells_follow_tag_association_writes(world: World) -> None:
    lake = world.lake
    made = associate(world.admin, lake.keys["customers.csv"], lake.finance["key"],
                     state="SUGGESTED")
    check(world)
    path = f"/tagassociation/tagassociation/{made['key']}"
    accepted = world.admin.put(path, json={"state": "ACCEPTED"})
    assert accepted.status_code == 200, accepted.text
    check(world)
    assert world.admin.delete(path).status_code == 204
    check(world)


def test_cells_follow_tag_renames_and_moves(world: World) -> None:
    lake = world.lake
    renamed = world.admin.put(f"/tag/{lake.finance['key']}", json={"name": name("Money")})
    assert renamed.status_code == 200, renamed.text
    lake.finance = renamed.json()
    check(world)
    parent = make_tag(world.admin, lake.domain["key"], name("Parent"))
    moved = world.admin.put(f"/tag/{lake.pii['key']}", json={"parentKey": parent["key"]})
    assert moved.status_code == 200, moved.text
    lake.pii = moved.json()
    check(world)
    sensitive = world.admin.put(f"/tag/{lake.finance['key']}",
                                json={"sensitivity": "RESTRICTED"})
    assert sensitive.status_code == 200, sensitive.text
    check(world)


def test_cells_follow_annotations_and_custom_values(world: World) -> None:
    lake = world.lake
    put(world.admin, lake.keys["orders.csv"], {"owner": "zoe",
                                               "customProperties": {lake.team: "ops"}})
    put(world.admin, lake.keys["payroll.csv"], {"customProperties": {lake.team: None}})
    put(world.admin, lake.keys["logs/events.jsonl"], {"owner": "carol",
                                                      "customProperties": {lake.team: "sales"}})
    check(world)


def test_keyword_counts_read_back_any_owner(world: World) -> None:
    """A keyword search reads each match's coordinates back from one JSON text per match
    (``facet_cells._tail``): quotes, backslashes and characters beyond ASCII come back as
    they were written."""
    lake = world.lake
    put(world.admin, lake.keys["orders.csv"], {"owner": 'o\'"brien \\ \u00fc \U0001f600 [1, 2]'})
    put(world.admin, lake.keys["customers.csv"], {"owner": "null"})
    check(world)


def test_cells_follow_profiles_and_missing_resources(world: World) -> None:
    lake, store = world.lake, world.server.store
    root = world.folder / "one"
    (root / "orders.csv").write_text(
        "order_id,amount,placed,note\n" + "".join(
            f"{i},{i}.5,2024-01-{1 + i % 28:02d},n{i}\n" for i in range(3000)))
    with store.write() as conn:
        ingest.record_profile(conn, lake.one_key, profiling.profile_file("orders.csv",
                                                                          root=root))
    check(world)
    (root / "notes" / "readme.tsv").unlink()
    seen = [r.path for r in profiling.browse(root)]
    with store.write() as conn:
        assert ingest.mark_missing(conn, lake.one_key, seen) == 1
    check(world)


def test_cells_follow_bulk_ingest(world: World) -> None:
    # 40 resources give every area, format, size range and pair of tags the 120 before gave
    # (one write batch, one IN chunk either way); each later check counts them all.
    source = write_catalog(world.server.store, 40, 3, source=name("bulk"), analyze=False)
    tag_catalog(world.server.store, source, tags=3)
    check(world)


def test_cells_count_boundary_days_per_resource(world: World) -> None:
    """Resources changed on a day that a range boundary cuts are counted one by one."""
    store, now = world.server.store, now_ms()
    week = 7 * F.DAY_MS
    keys = [world.lake.keys["customers.csv"], world.lake.keys["payroll.csv"],
            world.lake.keys["logs/events.jsonl"]]
    times = [now - week + 1000, now - week - 1000, now - F.DAY_MS + 5]
    with store.write() as conn:
        for key, changed in zip(keys, times, strict=True):
            conn.execute(update(R).where(R.c.key == key).values(time_of_resource_change=changed))
        search_store.refresh(conn, keys)
    assert check(world, at=now) > 0


def test_compaction_keeps_the_counts(world: World) -> None:
    with world.server.store.write() as conn:
        before = sorted(facet_cells.folded(conn), key=repr)
        facet_cells.compact(conn)
        after = sorted(facet_cells.folded(conn), key=repr)
        rows = conn.execute(select(facet_cells.C.c.cell_id)).all()
    assert after == before and len(rows) == len(after)
    check(world)


# ------------------------------------------------- facet-only results: first page, then the rest

SIZE_SELECTION = [{"facetName": "sizeRange", "facetCategories": ["<1 MB"]}]


def _enough(world: World) -> None:
    """Enough small resources for several pages (the tests may run in any order)."""
    if not world.paged:
        write_catalog(world.server.store, 150, 2, source=name("paged"), analyze=False)
        world.paged = True


def _walk(http: Http, key: str, size: int, total: int) -> list[str]:
    keys: list[str] = []
    for start in range(0, total, size):
        page = post(http, "/search/page", {"key": key,
                                            "pagingCriteria": {"start": start, "size": size}})
        assert page["totalResultCount"] == total
        keys.extend(page["matchedKeys"])
    return keys


def test_a_facet_only_result_pages_never_shift(world: World) -> None:
    _enough(world)
    first = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION,
                                                   "pagingCriteria": {"start": 0, "size": 3}})
    total = first["matchedEntityCount"]
    assert total > 20 and len(first["matchedKeys"]) == 3
    # At once, while the rest may still be being ordered: the page waits for it.
    again = post(world.admin, "/search/page", {"key": first["key"],
                                               "pagingCriteria": {"start": 0, "size": 3}})
    assert again["matchedKeys"] == first["matchedKeys"] and again["totalResultCount"] == total
    walked = _walk(world.admin, first["key"], 17, total)
    assert len(walked) == len(set(walked)) == total and walked[:3] == first["matchedKeys"]
    write_catalog(world.server.store, 40, 2, source=name("later"), analyze=False)
    assert _walk(world.admin, first["key"], 17, total) == walked
    # The same search run again counts the new resources and orders them in.
    later = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION})
    grown = later["matchedEntityCount"]
    assert grown > total and len(set(_walk(world.admin, later["key"], 50, grown))) == grown


def test_a_later_page_of_a_facet_only_search_matches_the_full_order(world: World) -> None:
    _enough(world)
    first = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION,
                                                   "pagingCriteria": {"start": 5, "size": 4}})
    total = first["matchedEntityCount"]
    walked = _walk(world.admin, first["key"], 50, total)
    assert first["matchedKeys"] == walked[5:9]
    assert first["start"] == 5 and first["nextCursor"]


def test_a_lost_ordering_is_done_by_the_page(world: World,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that answered and died before ordering the rest: the page orders it."""
    _enough(world)
    from catalog_nb.server.services import searching

    def lost(_store: Any, held: Any, *_args: Any) -> None:
        held.close()

    reference = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION})
    expected = _walk(world.admin, reference["key"], 100, reference["matchedEntityCount"])
    monkeypatch.setattr(searching, "_order_rest", lost)
    monkeypatch.setattr(searching, "ORDERING_WAIT", 0.2)
    first = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION,
                                                   "pagingCriteria": {"start": 0, "size": 2}})
    assert first["matchedKeys"] == expected[:2]
    assert _walk(world.admin, first["key"], 100, first["matchedEntityCount"]) == expected


def _state(world: World, key: str) -> str:
    with world.server.store.read() as conn:
        return str(conn.execute(select(stored_searches.c.state)
                                .where(stored_searches.c.key == key)).scalar_one())


def test_an_ordering_superseded_in_its_session_is_left_to_its_pages(world: World) -> None:
    """A facet-only search whose ordering still waits when its session searches again is not
    ordered by the process (the newer one is); its first page orders it, in the same order."""
    _enough(world)
    reference = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION})
    expected = _walk(world.admin, reference["key"], 100, reference["matchedEntityCount"])
    orderings = world.server.embedded.app.state.orderings
    busy, release = threading.Event(), threading.Event()

    def hold() -> None:  # the ordering thread busy with another session's ordering
        busy.set()
        release.wait(30)

    orderings.submit("another session", "k", run=hold, skip=hold)
    try:
        assert busy.wait(30)
        first = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION,
                                                       "pagingCriteria": {"start": 0, "size": 2}})
        newer = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION,
                                                       "pagingCriteria": {"start": 0, "size": 2}})
        assert _state(world, first["key"]) == search_store.DEFERRED
        assert _state(world, newer["key"]) == search_store.ORDERING
    finally:
        release.set()
    deadline = time.monotonic() + 30
    while _state(world, newer["key"]) != search_store.READY and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _state(world, newer["key"]) == search_store.READY
    assert orderings.pending() == 0
    assert _state(world, first["key"]) == search_store.DEFERRED  # skipped, not ordered
    assert _walk(world.admin, first["key"], 100, first["matchedEntityCount"]) == expected
    assert _state(world, first["key"]) == search_store.READY
    assert _walk(world.admin, newer["key"], 100, newer["matchedEntityCount"]) == expected


def test_a_running_ordering_is_stopped_when_its_session_searches_again(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ordering of a facet-only search, still running when its session searches again, is
    interrupted in the database at once (not left to compete with the new search); the older
    search's pages still order it, and the newer one is ordered as usual."""
    _enough(world)
    from catalog_nb.server.services import searching

    reference = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION})
    expected = _walk(world.admin, reference["key"], 100, reference["matchedEntityCount"])
    ordering = search_store.order_all
    running, ended = threading.Event(), threading.Event()
    outcomes: list[str] = []

    def slow(conn: Any, *args: Any) -> list[list[Any]]:
        """The first ordering runs a statement of a minute before ordering."""
        if not running.is_set():
            running.set()
            long = ("SELECT pg_sleep(60)" if conn.dialect.name == "postgresql" else
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                    "WHERE x < 2000000000) SELECT count(*) FROM c")
            try:
                conn.exec_driver_sql(long).all()
                outcomes.append("ran to its end")
            except Exception as exc:
                outcomes.append(type(getattr(exc, "orig", exc)).__name__)
                raise
            finally:
                ended.set()
        return ordering(conn, *args)

    monkeypatch.setattr(searching.search_store, "order_all", slow)
    first = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION,
                                                   "pagingCriteria": {"start": 0, "size": 2}})
    assert running.wait(30)
    if world.server.store.dialect == "postgresql":
        # The statement under way, as the server sees it (a cancel before it would be lost).
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with world.server.store.read() as conn:
                if conn.exec_driver_sql(
                        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' "
                        "AND query = 'SELECT pg_sleep(60)'").scalar_one():
                    break
            time.sleep(0.05)
    began = time.monotonic()
    newer = post(world.admin, "/search/runFacet", {"facetSelections": SIZE_SELECTION,
                                                   "pagingCriteria": {"start": 0, "size": 2}})
    assert ended.wait(30) and time.monotonic() - began < 30
    assert outcomes == ["OperationalError" if world.server.store.dialect == "sqlite"
                        else "QueryCanceled"]
    assert _state(world, first["key"]) == search_store.DEFERRED
    assert _walk(world.admin, newer["key"], 100, newer["matchedEntityCount"]) == expected
    assert _walk(world.admin, first["key"], 100, first["matchedEntityCount"]) == expected


def test_concurrent_writers_leave_exact_cells(world: World) -> None:
    """Writers racing on the same resources and cells (PostgreSQL runs them at once): no
    deadlock, no count lost."""
    lake = world.lake
    sessions = [world.server.session() for _ in range(4)]
    targets = [lake.keys["customers.csv"], lake.keys["orders.csv"]]

    def write(at: int) -> None:
        http = sessions[at % len(sessions)]
        key = targets[at % 2]
        put(http, key, {"owner": f"owner{at % 3}",
                        "customProperties": {lake.team: f"team{at % 4}"}})
        made = associate(http, key, lake.finance["key"], state="ACCEPTED")
        if at % 3 == 0:  # another writer may have deleted the same association first
            gone = http.delete(f"/tagassociation/tagassociation/{made['key']}")
            assert gone.status_code in (204, 404), gone.text

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(write, range(24)))
    check(world)
