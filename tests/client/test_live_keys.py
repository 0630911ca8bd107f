"""Inferred keys and join conditions in the resource view, through the client, against a real
server that profiled the demo lake with real PROFILE jobs (``shared_lake``)."""

from __future__ import annotations

from catalog_nb.client.resources.view import InferredKeys
from tests.client.shared_lake import FILES, SQL, SharedLake


def test_a_table_and_its_file_export_carry_their_inferred_primary_key(
        shared_lake: SharedLake) -> None:
    cat = shared_lake.cat
    orders = cat.resource(SQL, "sales.orders")
    assert orders.inferred_keys.primary_key == ("order_id",)
    assert {"order_id", "order_no"} <= set(orders.inferred_keys.unique_columns)
    assert orders["inferredKeys"]["primaryKey"] == ["order_id"]
    export = cat.resource(FILES, "crm/customers.csv")
    assert export.inferred_keys.primary_key == ("customer_id",)
    # the declared key of a table stays where the source says it
    assert orders["sourceDetails"]["primaryKey"] and "inferredKeys" not in orders["sourceDetails"]
    assert "inferred key: order_id" in repr(orders)
    assert "inferred key" in orders._repr_html_()


def test_a_composite_key_where_no_column_is_unique(shared_lake: SharedLake) -> None:
    items = shared_lake.cat.resource(SQL, "sales.order_items")
    keys = items.inferred_keys
    assert keys.primary_key == () and keys.unique_columns == ()
    assert keys.composite_keys == (("order_id", "line_no"),)
    assert keys.describe() == "composite (order_id, line_no)"


def test_every_resource_carries_all_three_members(shared_lake: SharedLake) -> None:
    listed = shared_lake.cat.resources(as_frame=False)
    assert listed
    for record in listed:
        keys = record["inferredKeys"]
        assert set(keys) == {"primaryKey", "uniqueColumns", "compositeKeys"}, record
        assert set(keys["primaryKey"]) <= set(keys["uniqueColumns"])
    # no key known (never profiled, or no column unique): an empty, false value
    assert not InferredKeys.from_json(None) and InferredKeys.from_json({}).describe() is None


def test_the_resources_frame_has_the_primary_key(shared_lake: SharedLake) -> None:
    frame = shared_lake.cat.resources(SQL).set_index("path")
    assert frame.loc["sales.orders", "primary_key"] == ["order_id"]
    assert frame.loc["sales.order_items", "primary_key"] == []


def test_the_resource_view_lists_its_joins_best_first(shared_lake: SharedLake) -> None:
    cat = shared_lake.cat
    orders = cat.resource(SQL, "sales.orders")
    joins = orders.joins
    assert len(joins) == len(orders["joinConditions"]) > 1
    assert joins["score"].is_monotonic_decreasing
    assert [c["score"] for c in orders["joinConditions"]] == sorted(
        (c["score"] for c in orders["joinConditions"]), reverse=True)
    everywhere = cat.join_conditions([orders.key])
    assert set(joins["key"]) == set(everywhere["key"])
