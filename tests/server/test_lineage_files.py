"""INFERRED lineage between files: the demo lake's derivations against its ground truth, and
small hand-made files for the rules (direction by time, subsets and renamed copies, flags that
prove nothing, collections and their members, idempotence, vanished resources).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import delete, func, select, update

from catalog_nb.server.discovery import file_lineage, view_lineage
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store.schema import data_resources, lineage_edges
from tests.server.lake import profile_folder, profile_many, write_files
from tests.server.lineage_helpers import edges_by_path, field_map, lake_store, paths

SETTINGS = Settings()
DAY = 86_400
T0 = 1_700_000_000


def _csv(header: list[str], rows: list[list[object]]) -> str:
    return "\n".join([",".join(header), *(",".join(str(v) for v in r) for r in rows)]) + "\n"


def _people(indices: range | list[int]) -> list[list[object]]:
    return [[1000 + i, f"user{i}@example.org", f"Person {i}", "abc"[i % 3],
             f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}"] for i in indices]


HEADER = ["id", "email", "name", "status", "joined"]


def _write(folder: Path, files: dict[str, tuple[str, int]]) -> Path:
    """Write files and give each its modification time (seconds)."""
    write_files(folder, {name: content for name, (content, _) in files.items()})
    for name, (_, moment) in files.items():
        os.utime(folder / name, (moment, moment))
    return folder


def test_subsets_and_renamed_copies_point_to_the_older_file(store: Store,
                                                            tmp_path: Path) -> None:
    copy_rows = [[r[0], r[1], r[2], r[3], r[4], f"{(i * 7919) % 1000 / 7:.3f}"]
                 for i, r in enumerate(_people(range(60)))]
    folder = _write(tmp_path / "files", {
        "src.csv": (_csv(HEADER, _people(range(60))), T0),
        "subset.csv": (_csv(["id", "mail", "status"],
                            [[r[0], r[1], r[3]] for r in _people(range(0, 60, 2))]), T0 + DAY),
        # Every row, renamed columns, one computed column that comes from nowhere. A column of
        # few values (status) only counts under its own name: three letters prove nothing.
        "copy.csv": (_csv(["key", "address", "label", "status", "since", "score"], copy_rows),
                     T0 + DAY),
    })
    profile_folder(store, "files", folder)
    report = file_lineage.infer(store, SETTINGS)

    edges = edges_by_path(store, "INFERRED")
    assert set(edges) == {("src.csv", "subset.csv"), ("src.csv", "copy.csv")}
    subset = edges[("src.csv", "subset.csv")]
    assert field_map(subset) == {"id": ["id"], "mail": ["email"], "status": ["status"]}
    assert subset["score"] == 1.0
    evidence = subset["evidence"]
    assert evidence["matchedFields"] == 3 and evidence["derivedFields"] == 3
    assert evidence["meanContainment"] == 1.0 and evidence["rowRatio"] == 0.5
    assert evidence["direction"] == "time"
    # Some of the source's columns, half its rows: a projection (no longer a copy).
    assert evidence["kind"] == "PROJECTION"

    copy = edges[("src.csv", "copy.csv")]
    assert copy["evidence"]["kind"] == "DERIVED"  # a computed column of its own
    assert field_map(copy) == {"key": ["id"], "address": ["email"], "label": ["name"],
                               "status": ["status"], "since": ["joined"]}
    assert copy["evidence"]["unmatchedFields"] == ["score"]
    assert copy["score"] == pytest.approx(5 / 6, abs=1e-3)
    assert report.counts == {"inferredEdges": 2}


def test_direction_comes_from_time_and_rows(store: Store, tmp_path: Path) -> None:
    folder = _write(tmp_path / "files", {
        "big.csv": (_csv(HEADER, _people(range(60))), T0 + DAY),
        # Older, but a subset of the newer file's rows: the newer one is not derived from it.
        "early.csv": (_csv(HEADER, _people(range(30))), T0),
        # Same content, same time as big.csv: no order, no edge either way.
        "twin.csv": (_csv(HEADER, _people(range(60))), T0 + DAY),
    })
    profile_folder(store, "files", folder)
    file_lineage.infer(store, SETTINGS)
    assert edges_by_path(store, "INFERRED") == {}


def test_flags_and_single_columns_prove_nothing(store: Store, tmp_path: Path) -> None:
    folder = _write(tmp_path / "files", {
        "src.csv": (_csv([*HEADER, "active"], [[*r, "true" if i % 2 else "false"]
                                               for i, r in enumerate(_people(range(60)))]), T0),
        # Only low-cardinality columns, renamed: contained in src.csv's, but by chance.
        "codes.csv": (_csv(["code", "on"], [["abc"[i % 3], "true" if i % 2 else "false"]
                                            for i in range(10)]), T0 + DAY),
        # One identifier column: a key list, not a derived copy.
        "ids.csv": (_csv(["id"], [[1000 + i] for i in range(20)]), T0 + DAY),
    })
    profile_folder(store, "files", folder)
    profile_many(store, "unsketched", 3)  # profiles without value sketches: nothing to compare
    file_lineage.infer(store, SETTINGS)
    assert edges_by_path(store, "INFERRED") == {}


def test_collections_derive_but_their_members_never_appear(store: Store,
                                                           tmp_path: Path) -> None:
    folder = _write(tmp_path / "files", {
        "src.csv": (_csv(HEADER, _people(range(60))), T0),
        "parts/part-1.csv": (_csv(HEADER, _people(range(0, 20))), T0 + DAY),
        "parts/part-2.csv": (_csv(HEADER, _people(range(20, 45))), T0 + DAY),
    })
    profile_folder(store, "files", folder)
    file_lineage.infer(store, SETTINGS)
    edges = edges_by_path(store, "INFERRED")
    assert set(edges) == {("src.csv", "parts")}
    assert edges[("src.csv", "parts")]["evidence"]["downstreamRows"] == 45


def test_type_compatibility() -> None:
    assert file_lineage.compatible("LONG", "DOUBLE")
    assert file_lineage.compatible("DATE", "TIMESTAMP")
    assert file_lineage.compatible("STRING", "LONG")
    assert not file_lineage.compatible("LONG", "DATE")
    assert not file_lineage.compatible("BOOLEAN", "LONG")
    assert not file_lineage.compatible("STRING", "STRUCT")


def test_demo_derivations_match_the_truth(store: Store) -> None:
    lake = lake_store(store)
    view_lineage.refresh(lake.store, SETTINGS)
    report = file_lineage.infer(lake.store, SETTINGS)
    edges = edges_by_path(lake.store, "INFERRED")

    expected = {(d.source, d.derived): d for d in lake.truth.derivations}
    assert set(edges) == set(expected)
    for pair, truth in expected.items():
        assert field_map(edges[pair]) == {k: [v] for k, v in truth.columns.items()}, pair
        assert edges[pair]["score"] >= 0.75
    # A cleaned subset of an export comes from the export, not also from the export's table.
    assert ("sales.customers", "crm/customers_clean.csv") not in edges
    assert edges[("sales.customers", "crm/customers.csv")]["evidence"]["direction"] == (
        "databaseExport")
    assert report.counts == {"inferredEdges": 5}


def test_inference_is_idempotent_and_forgets_what_is_gone(store: Store) -> None:
    lake = lake_store(store)
    file_lineage.infer(lake.store, SETTINGS)
    first = {k: (e["score"], e["field_lineage"], e["evidence"])
             for k, e in edges_by_path(lake.store, "INFERRED").items()}
    file_lineage.infer(lake.store, SETTINGS)
    second = {k: (e["score"], e["field_lineage"], e["evidence"])
              for k, e in edges_by_path(lake.store, "INFERRED").items()}
    assert first == second and len(first) == 5
    with lake.store.read() as conn:
        assert conn.execute(select(func.count()).select_from(lineage_edges)).scalar_one() == 5

    keys = {p: k for k, p in paths(lake.store).items()}
    # A file gone from its folder (MISSING) is no longer anyone's source after rediscovery.
    with lake.store.write() as conn:
        conn.execute(update(data_resources).where(
            data_resources.c.key == keys["finance/payments.parquet"]).values(status="MISSING"))
    file_lineage.infer(lake.store, SETTINGS)
    edges = edges_by_path(lake.store, "INFERRED")
    assert not [e for e in edges if "finance/payments.parquet" in e]
    assert len(edges) == 4

    # A resource deleted from the catalog takes its edges with it at once.
    with lake.store.write() as conn:
        conn.execute(delete(data_resources).where(
            data_resources.c.key == keys["crm/customers.csv"]))
    assert not [e for e in edges_by_path(lake.store, "INFERRED") if "crm/customers.csv" in e]
