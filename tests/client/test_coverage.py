"""Tag coverage and the tag graph through the client, against a real server that profiled the
demo lake: the shares must agree with what ``associations()`` lists."""

from __future__ import annotations

import networkx as nx
import pandas as pd
import pytest

from catalog_nb.client import Catalog, NotFoundError
from catalog_nb.client.relations.frames import COVERAGE_COLUMNS
from tests.client.shared_lake import FILES, SQL, SharedLake

#: (resource, field) pairs the module tags ACCEPTED, plus one resource-level tag (field None).
TAGGED = [
    ("crm/customers.csv", "contact"),
    ("crm/customers.csv", "customer_id"),
    ("hr/employees.csv", "c_addr"),
    ("sales.customers", "email"),
    ("sales.orders", None),
]


@pytest.fixture(scope="module")
def tagged(shared_lake: SharedLake) -> tuple[SharedLake, str]:
    lake = shared_lake
    tag = str(lake.cat.tags().sort_values("full_name")["full_name"].iloc[0])
    for name, field in TAGGED:
        lake.cat.tag(lake.key(name), tag, field=field, state="ACCEPTED")
    return lake, tag


@pytest.fixture
def cat(tagged: tuple[SharedLake, str]) -> Catalog:
    return tagged[0].cat


def _accepted(cat: Catalog, states: list[str]) -> pd.DataFrame:
    frames = [cat.associations(state=s) for s in states]
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("states", [["ACCEPTED"], ["ACCEPTED", "SUGGESTED"]])
def test_coverage_agrees_with_associations(cat: Catalog, states: list[str]) -> None:
    coverage = cat.tag_coverage(states=states)
    assert list(coverage.columns) == [c.name for c in COVERAGE_COLUMNS]
    views = _accepted(cat, states)
    records = [r for r in cat.resources(fields=True, as_frame=False) if not r.get("collectionKey")]
    names = {r["key"]: [f["name"] for f in r.get("fields") or []] for r in records}
    on_fields = views[views["field"].notna()]
    on_fields = on_fields[[f in names.get(k, []) for k, f in
                           zip(on_fields["resource_key"], on_fields["field"], strict=True)]]
    per_resource = on_fields.groupby("resource_key")["field"].nunique()
    rows = coverage[coverage["level"] == "resource"].set_index("key")
    assert set(rows.index) == set(names)  # every resource but the members of a collection
    for key, row in rows.iterrows():
        assert row["tagged_fields"] == per_resource.get(key, 0), row["name"]
        assert row["fields"] == len(names[key])
        assert row["tagged_resources"] == int(key in set(views["resource_key"]))
    sources = coverage[coverage["level"] == "source"].set_index("name")
    for source in (FILES, SQL):
        mine = rows[rows["source"] == source]
        assert sources.loc[source, "tagged_fields"] == mine["tagged_fields"].sum()
        assert sources.loc[source, "share"] == pytest.approx(
            mine["tagged_fields"].sum() / mine["fields"].sum())
    tags = coverage[coverage["level"] == "tag"].set_index("name")
    pairs = on_fields.groupby("tag").apply(
        lambda g: len(set(zip(g["resource_key"], g["field"], strict=True))))
    for tag, count in pairs.items():
        assert tags.loc[tag, "tagged_fields"] == count
    assert set(coverage.loc[coverage["level"] == "domain", "name"]) == set(views["domain"])


def test_accepted_tags_are_counted(tagged: tuple[SharedLake, str]) -> None:
    lake, tag = tagged
    coverage = lake.cat.tag_coverage(states="ACCEPTED")
    row = coverage[(coverage["level"] == "tag") & (coverage["name"] == tag)].iloc[0]
    assert row["tagged_fields"] >= 4 and row["tagged_resources"] >= 4  # 4 resources, 4 fields
    orders = coverage[(coverage["level"] == "resource") & (coverage["key"] == lake.key(
        "sales.orders"))].iloc[0]
    assert orders["tagged_resources"] == 1  # a resource-level tag


def test_coverage_of_a_source_and_of_keys(tagged: tuple[SharedLake, str]) -> None:
    lake, _ = tagged
    files = lake.cat.tag_coverage(FILES)
    assert set(files.loc[files["level"] == "source", "name"]) == {FILES}
    # the partitioned folder counts once, not once more per member file
    files_in_truth = sum(1 for r in lake.truth.resources if r.source_type == "FILE")
    assert files.loc[files["level"] == "source", "resources"].tolist() == [files_in_truth]
    keys = [lake.key("crm/customers.csv"), lake.key("sales.customers")]
    two = lake.cat.tag_coverage(keys)
    assert set(two.loc[two["level"] == "resource", "key"]) == set(keys)
    frame_scope = lake.cat.tag_coverage(lake.cat.resources(SQL, type="view"))
    assert set(frame_scope.loc[frame_scope["level"] == "resource", "name"]) == {
        v.view for v in lake.truth.views}


def test_tag_graph_is_bipartite_and_weighted(tagged: tuple[SharedLake, str]) -> None:
    lake, tag = tagged
    graph = lake.cat.tag_graph()
    assert nx.is_bipartite(graph)
    assert graph.nodes[tag]["kind"] == "tag" and graph.nodes[tag]["bipartite"] == 0
    csv_key = lake.key("crm/customers.csv")
    assert graph.nodes[csv_key]["kind"] == "resource"
    edge = graph.edges[tag, csv_key]
    assert {"contact", "customer_id"} <= set(edge["fields"])
    assert edge["weight"] == len(edge["fields"]) + int(edge["resource_level"])
    assert graph.edges[tag, lake.key("sales.orders")]["resource_level"] is True


def test_bad_scope_and_states(cat: Catalog) -> None:
    with pytest.raises(NotFoundError):
        cat.tag_coverage("no_such_source")
    with pytest.raises(ValueError):
        cat.tag_coverage(states="MAYBE")
    with pytest.raises(ValueError):
        cat.tag_graph(pd.DataFrame({"name": ["x"]}))
    empty = cat.tag_coverage([])
    assert empty.empty and list(empty.columns) == [c.name for c in COVERAGE_COLUMNS]
