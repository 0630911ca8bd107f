"""Browsing folders (files, collections, patterns, links) and profiling collections."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog_nb.server.profiling.files import browse, profile_collection, profile_file
from catalog_nb.server.profiling.model import ProfilingError


def _orders(folder: Path, months: int = 3, rows: int = 4) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for month in range(1, months + 1):
        frame = pd.DataFrame(
            {
                "order_id": [month * 100 + i for i in range(rows)],
                "amount": [float(i) for i in range(rows)],
                "status": ["new", "paid", "paid", "sent"][:rows],
            }
        )
        frame.to_csv(folder / f"2024-{month:02d}.csv", index=False)


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    root = tmp_path / "lake"
    _orders(root / "sales" / "orders")
    crm = root / "crm"
    crm.mkdir(parents=True)
    customers = pd.DataFrame({"id": [1, 2, 3], "email": ["a@x.io", "b@x.io", "c@y.io"]})
    customers.to_csv(crm / "customers.csv", index=False)
    customers.iloc[:2].to_csv(crm / "customers_clean.csv", index=False)  # derived, not partition
    (crm / "events.jsonl").write_text('{"id": 1, "who": {"name": "a"}}\n{"id": 2}\n')
    for day in ("01", "02"):
        part = root / "logs" / "year=2024" / f"day={day}"
        part.mkdir(parents=True)
        pq.write_table(pa.table({"ip": ["10.0.0.1", "10.0.0.2"], "ms": [3, 4]}), part / "p.parquet")
    (root / "docs").mkdir()
    (root / "docs" / "README.md").write_text("# not data")
    (root / ".hidden.csv").write_text("a\n1\n")
    (root / "_SUCCESS").write_text("")
    return root


def test_browse_finds_files_and_collections(lake: Path) -> None:
    found = {r.path: r for r in browse(lake)}
    assert sorted(found) == [
        "crm/customers.csv",
        "crm/customers_clean.csv",
        "crm/events.jsonl",
        "logs",
        "sales/orders",
    ]
    orders = found["sales/orders"]
    assert orders.resource_type == "resource_type_collection" and orders.name == "orders"
    assert orders.partition_count == 3 and orders.file_format == "csv"
    assert orders.members == [f"sales/orders/2024-{m:02d}.csv" for m in (1, 2, 3)]
    assert orders.field_count == 3 and orders.separator == "," and orders.header
    assert orders.resource_size == sum((lake / m).stat().st_size for m in orders.members)
    logs = found["logs"]
    assert logs.resource_type == "resource_type_collection" and logs.file_format == "parquet"
    assert logs.members == ["logs/year=2024/day=01/p.parquet", "logs/year=2024/day=02/p.parquet"]
    customers = found["crm/customers.csv"]
    assert customers.resource_type == "resource_type_file" and customers.row_count is None
    assert customers.field_count == 2 and customers.modified_ms is not None


def test_partitions_with_different_schemas_stay_files(tmp_path: Path) -> None:
    _orders(tmp_path / "orders", months=2)
    pd.DataFrame({"other": [1]}).to_csv(tmp_path / "orders" / "2024-03.csv", index=False)
    found = [r.path for r in browse(tmp_path)]
    assert found == ["orders/2024-01.csv", "orders/2024-02.csv", "orders/2024-03.csv"]


def test_files_in_a_subfolder_of_a_collection_stay_resources(tmp_path: Path) -> None:
    _orders(tmp_path / "orders", months=2)
    _orders(tmp_path / "orders" / "archive" / "2019", months=2)
    pd.DataFrame({"x": [1]}).to_csv(tmp_path / "orders" / "archive" / "notes.csv", index=False)
    found = {r.path: r.partition_count for r in browse(tmp_path)}
    assert found == {"orders": 2, "orders/archive/2019": 2, "orders/archive/notes.csv": 0}


def test_the_root_itself_can_be_a_collection(tmp_path: Path) -> None:
    _orders(tmp_path)
    (only,) = browse(tmp_path)
    assert only.path == "." and only.partition_count == 3


def test_include_and_exclude_patterns(lake: Path) -> None:
    included = [r.path for r in browse(lake, include_patterns=["*.csv"])]
    assert included == ["crm/customers.csv", "crm/customers_clean.csv", "sales/orders"]
    excluded = [r.path for r in browse(lake, exclude_patterns=["crm/*", "*.parquet"])]
    assert excluded == ["sales/orders"]


def test_symlinks_never_lead_out_of_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    pd.DataFrame({"secret": [1]}).to_csv(outside / "secret.csv", index=False)
    root = tmp_path / "root"
    root.mkdir()
    pd.DataFrame({"a": [1]}).to_csv(root / "inside.csv", index=False)
    (root / "link.csv").symlink_to(outside / "secret.csv")
    (root / "linked_dir").symlink_to(outside)
    (root / "alias.csv").symlink_to(root / "inside.csv")
    assert [r.path for r in browse(root)] == ["alias.csv", "inside.csv"]
    assert profile_file("linked_dir/secret.csv", root=root).state == "ERROR"


def test_browse_of_a_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(ProfilingError, match="does not exist"):
        browse(tmp_path / "nope")


def test_profile_collection_sums_rows_over_members(lake: Path) -> None:
    orders = next(r for r in browse(lake) if r.path == "sales/orders")
    profile = profile_collection(orders.path, root=lake, members=orders.members)
    assert profile.state == "OK", profile.error_msg
    assert profile.row_count == 12 and profile.partition_count == 3
    assert profile.resource_size == orders.resource_size
    order_id = profile.field("order_id").properties
    assert (order_id["min"], order_id["max"], order_id["distinctCount"]) == (100, 303, 12)
    assert order_id["sampled"] is False
    again = profile_collection(lake / "sales" / "orders")  # members found again, no root
    assert again.row_count == 12 and again.members[0].endswith("orders/2024-01.csv")


def test_statistics_over_a_sample_of_members(tmp_path: Path) -> None:
    _orders(tmp_path / "orders", months=12, rows=3)
    profile = profile_collection("orders", root=tmp_path, max_profiled_members=3)
    assert profile.state == "OK" and profile.row_count == 36
    props = profile.field("order_id").properties
    assert props["valueCount"] == 9 and props["sampled"] is True
    assert (props["min"], props["max"]) == (100, 1202)  # first and last members are profiled


def test_parquet_collection(lake: Path) -> None:
    profile = profile_collection("logs", root=lake)
    assert profile.state == "OK" and profile.row_count == 4 and profile.file_format == "parquet"
    assert profile.field("ip").properties["distinctCount"] == 2


def test_a_broken_member_is_reported_and_the_rest_profiled(tmp_path: Path) -> None:
    _orders(tmp_path / "orders")
    members = [f"orders/2024-0{m}.csv" for m in (1, 2, 3)]
    (tmp_path / members[1]).unlink()
    profile = profile_collection("orders", root=tmp_path, members=members)
    assert profile.state == "OK" and profile.row_count == 8
    (error,) = profile.extra["memberErrors"]
    assert error["path"] == members[1] and "no longer exists" in error["errorMsg"]


def test_collection_errors(tmp_path: Path) -> None:
    gone = profile_collection("nothing", root=tmp_path)
    assert gone.state == "ERROR" and "no longer exists" in (gone.error_msg or "")
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "a.csv").write_text("x\n1\n")
    not_one = profile_collection("mixed", root=tmp_path)
    assert not_one.state == "ERROR" and "no longer a collection" in (not_one.error_msg or "")
    (tmp_path / "dead").mkdir()
    dead = profile_collection("dead", root=tmp_path, members=["dead/a.csv", "dead/b.csv"])
    assert dead.state == "ERROR" and "No member" in (dead.error_msg or "")


def test_json_collection(tmp_path: Path) -> None:
    folder = tmp_path / "events"
    folder.mkdir()
    for day in (1, 2):
        rows = [{"id": day * 10 + i, "ctx": {"ip": f"10.0.0.{i}"}} for i in range(3)]
        (folder / f"day-{day}.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (resource,) = browse(tmp_path)
    assert resource.path == "events" and resource.file_format == "jsonl"
    profile = profile_collection("events", root=tmp_path, members=resource.members)
    assert profile.row_count == 6 and [f.name for f in profile.fields] == ["id", "ctx.ip"]
