"""Snapshots: ``cat.snapshot(path)`` against a real service, read back offline, compared.

One server per module with the demo lake's files and SQL database profiled into its store
(``tests.server.lake``); each test takes its own snapshots into its own temporary folder.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import catalog_nb
from catalog_nb.client import Catalog, connect
from catalog_nb.snapshot import FORMAT_VERSION, TABLES, Snapshot, SnapshotError, diff
from tests.server.lake import demo_files, profile_folder, profile_sql


@pytest.fixture(scope="module")
def cat(make_server: Callable[..., Any]) -> Iterator[Catalog]:
    server = make_server()
    profile_folder(server.store, "snap_files", demo_files())
    profile_sql(server.store, "snap_sql")
    catalog = connect(server.url, server.admin_user, server.admin_password, progress=False)
    catalog.tag(("snap_files", "crm/customers.csv"), "Sensitive.EmailAddress", field="contact")
    yield catalog
    catalog.close()


@pytest.fixture(scope="module")
def other(make_server: Callable[..., Any]) -> Iterator[Catalog]:
    server = make_server()
    catalog = connect(server.url, server.admin_user, server.admin_password, progress=False)
    yield catalog
    catalog.close()


def test_snapshot_round_trips_every_frame(cat: Catalog, tmp_path: Path) -> None:
    written = cat.snapshot(tmp_path / "q1")
    assert written == tmp_path / "q1"
    assert sorted(p.name for p in written.iterdir()) == sorted(
        ["manifest.json", *(f"{name}.parquet" for name in TABLES)]
    )
    snap = catalog_nb.open_snapshot(written)
    live = cat.catalog_frames()
    for name in TABLES:
        offline = snap.frame(name)
        assert len(offline) > 0, name
        pd.testing.assert_frame_equal(offline, live[name], check_exact=True)
    # lists stay lists, JSON values keep their type, times stay UTC
    fields = snap.fields()
    assert isinstance(fields["most_frequent"].iloc[0], list)
    assert str(snap.resources()["profiled"].dtype) == "datetime64[ns, UTC]"
    assert isinstance(snap.users()["roles"].iloc[0], list)
    assert snap.associations()["tag"].tolist() == live["associations"]["tag"].tolist()


def test_manifest_records_identity_time_counts_and_hashes(cat: Catalog, tmp_path: Path) -> None:
    before = pd.Timestamp.now(tz="UTC")
    snap = catalog_nb.open_snapshot(cat.snapshot(tmp_path / "s"))
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["format"] == "catalog-nb-snapshot"
    assert manifest["format_version"] == FORMAT_VERSION
    assert manifest["catalog"]["url"] == cat.url
    assert manifest["catalog"]["id_basis"] == "builtin-tag-domain"
    assert manifest["catalog"]["service"]["apiVersion"] == "v2"
    assert before <= snap.taken_at <= pd.Timestamp.now(tz="UTC")
    assert snap.row_counts["users"] == len(cat.users())
    assert snap.row_counts["fields"] == len(cat.fields())
    for entry in manifest["tables"].values():
        assert len(entry["sha256"]) == 64 and entry["columns"]
    # the same catalog answers the same id every time; another catalog another one
    again = catalog_nb.open_snapshot(cat.snapshot(tmp_path / "again"))
    assert again.catalog_id == snap.catalog_id and snap.catalog_id
    assert repr(snap).startswith("<Snapshot of " + cat.url)


def test_snapshot_refuses_an_existing_path_and_leaves_nothing(
    cat: Catalog, tmp_path: Path
) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(SnapshotError, match="already exists"):
        cat.snapshot(taken)
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]
    with pytest.raises(SnapshotError, match="does not exist"):
        cat.snapshot(tmp_path / "missing" / "snap")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert catalog_nb.open_snapshot(cat.snapshot(empty)).row_counts["users"] >= 1


def test_bad_snapshot_folders_are_refused_clearly(cat: Catalog, tmp_path: Path) -> None:
    good = cat.snapshot(tmp_path / "good")
    with pytest.raises(SnapshotError, match=r"no manifest\.json"):
        catalog_nb.open_snapshot(tmp_path)
    with pytest.raises(SnapshotError, match="not a folder"):
        catalog_nb.open_snapshot(tmp_path / "nowhere")

    missing = tmp_path / "missing"
    missing.mkdir()
    for file in good.iterdir():
        if file.name != "tags.parquet":
            (missing / file.name).write_bytes(file.read_bytes())
    with pytest.raises(SnapshotError, match=r"incomplete: missing tags\.parquet"):
        catalog_nb.open_snapshot(missing)

    newer = tmp_path / "newer"
    newer.mkdir()
    for file in good.iterdir():
        (newer / file.name).write_bytes(file.read_bytes())
    manifest = json.loads((newer / "manifest.json").read_text())
    manifest["format_version"] = FORMAT_VERSION + 1
    (newer / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SnapshotError, match=f"format version {FORMAT_VERSION + 1} by a newer"):
        catalog_nb.open_snapshot(newer)

    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for file in good.iterdir():
        (damaged / file.name).write_bytes(file.read_bytes())
    (damaged / "users.parquet").write_bytes(b"garbage")
    with pytest.raises(SnapshotError, match=r"damaged: users\.parquet changed"):
        catalog_nb.open_snapshot(damaged)

    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "manifest.json").write_text('{"format": "something-else"}')
    with pytest.raises(SnapshotError, match="not a catalog-nb snapshot"):
        catalog_nb.open_snapshot(foreign)


def test_diff_shows_added_removed_and_changed(cat: Catalog, tmp_path: Path) -> None:
    domain = f"Diff{pd.Timestamp.now().value}"
    cat.create_tag_domain(domain)
    cat.create_tag(f"{domain}.Gone")
    before = cat.snapshot(tmp_path / "before")
    user = cat.create_user(f"new-{pd.Timestamp.now().value}", email="n@example.org")
    cat.update_resource("snap_files", "ref/stores.json", description="Leads from fairs",
                        owner="sales")
    cat.delete_tag(f"{domain}.Gone")
    after = cat.snapshot(tmp_path / "after")

    d = diff(before, after)
    assert d.added["users"]["name"].tolist() == [user["name"]]
    assert d.removed["tags"]["full_name"].tolist() == [f"{domain}.Gone"]
    changed = d.changed["resources"].set_index("column")
    assert changed.loc["description", "object"] == "snap_files:ref/stores.json"
    assert pd.isna(changed.loc["description", "old"])
    assert changed.loc["description", "new"] == "Leads from fairs"
    assert changed.loc["owner", "new"] == "sales"
    assert "changed" not in set(d.changed["resources"]["column"])
    summary = d.summary.set_index("object_type")
    assert summary.loc["users", "added"] == 1 and summary.loc["tags", "removed"] == 1
    assert summary.loc["resources", "changed"] == 1 and summary.loc["fields", "changed"] == 0
    assert list(summary.index) == list(TABLES) and not d.empty
    assert "users: +1" in repr(d)
    # a snapshot compared with itself, by path, is empty
    same = catalog_nb.diff(tmp_path / "after", tmp_path / "after")
    assert same.empty and isinstance(same.old, Snapshot)


def test_diff_of_different_catalogs_is_refused_unless_forced(
    cat: Catalog, other: Catalog, tmp_path: Path
) -> None:
    mine = cat.snapshot(tmp_path / "mine")
    theirs = other.snapshot(tmp_path / "theirs")
    with pytest.raises(SnapshotError, match="different catalogs"):
        diff(mine, theirs)
    forced = diff(mine, theirs, force=True)
    assert forced.summary.set_index("object_type").loc["resources", "removed"] > 0


def test_missing_reports_extra_is_named(
    cat: Catalog, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match=r"pip install catalog-nb\[reports\]"):
        cat.snapshot(tmp_path / "x")
    with pytest.raises(ImportError, match=r"pip install catalog-nb\[reports\]"):
        catalog_nb.open_snapshot(tmp_path)
    assert not (tmp_path / "x").exists()


def test_a_snapshot_folder_gets_the_usual_permissions(cat: Catalog, tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        folder = cat.snapshot(tmp_path / "shared")
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o644 for f in folder.iterdir())
