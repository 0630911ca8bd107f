"""The demo lake: deterministic, parseable as declared, and true to its own ground truth.

One small lake (scale 0.1) is built per module; every check reads the written files and
databases back the way a consumer would, rather than trusting the generator's frames.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from sqlalchemy import inspect, text

from catalog_nb.demo.lake import (
    LakeTruth,
    build_lake,
    load_truth,
    split_attachments,
    sql_url,
    sqlite_engine_with_schemas,
)
from catalog_nb.demo.lake_values import iban_valid, luhn_valid
from catalog_nb.demo.truth import SENSITIVE_KINDS, ResourceTruth

SCALE = 0.1


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LakeTruth]:
    root = tmp_path_factory.mktemp("lake") / "acme"
    return root, build_lake(root, scale=SCALE)


def digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def norm(value: Any) -> str | None:
    """One spelling per value across CSV text, Parquet types and SQLite (42, 42.0, "42.0")."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, str) and "." in value:  # CSV "100.0" is Parquet's 100.0
        try:
            value = float(value)
        except ValueError:
            return value
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


def read(root: Path, truth: LakeTruth, path: str) -> pd.DataFrame:
    """A resource as its consumer would read it, values normalised by ``norm``."""
    resource = truth.resource(path)
    if resource.source_type == "SQL":
        schema, name = path.split(".")
        with sqlite3.connect(root / truth.sql.schemas[schema]) as conn:
            frame = pd.read_sql_query(f'SELECT * FROM "{name}"', conn)
        conn.close()
    else:
        frame = read_file(truth.files_path(root), resource)
    normalised = frame.map(norm).astype(object)
    return normalised.where(normalised.notna(), None)  # None, never NaN: NaN != NaN in sets


def read_file(folder: Path, resource: ResourceTruth) -> pd.DataFrame:
    if resource.file_format == "csv":
        members = [p.path for p in resource.partitions] or [resource.path]
        parts = [pd.read_csv(folder / member, sep=resource.separator,
                             encoding=resource.encoding, dtype=str, keep_default_na=False,
                             na_values=[""]) for member in members]
        assert all(list(p.columns) == list(parts[0].columns) for p in parts)
        for part, member in zip(parts, resource.partitions, strict=False):
            assert len(part) == member.row_count
        return pd.concat(parts, ignore_index=True)
    if resource.file_format == "parquet":
        return pq.read_table(folder / resource.path).to_pandas()
    if resource.file_format == "jsonl":
        lines = (folder / resource.path).read_text(encoding="utf-8").splitlines()
        return pd.json_normalize([json.loads(line) for line in lines])
    assert resource.file_format == "json"
    return pd.json_normalize(json.loads((folder / resource.path).read_text(encoding="utf-8")))


def test_same_seed_gives_same_bytes_and_another_seed_does_not(
        lake: tuple[Path, LakeTruth], tmp_path: Path) -> None:
    root, _ = lake
    again = tmp_path / "again"
    build_lake(again, scale=SCALE)
    assert digests(again) == digests(root)
    other = tmp_path / "other"
    build_lake(other, seed=8, scale=SCALE)
    differing = [name for name, digest in digests(other).items() if digests(root)[name] != digest]
    assert set(digests(other)) == set(digests(root))
    assert len(differing) >= len(digests(root)) - 1  # only the empty main database may match


def test_bytes_do_not_depend_on_the_process(lake: tuple[Path, LakeTruth], tmp_path: Path) -> None:
    code = ("import sys; from pathlib import Path; from catalog_nb.demo.lake import build_lake; "
            f"build_lake(Path(sys.argv[1]), scale={SCALE})")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "sub")], check=True, env=env,
                   timeout=120)
    assert digests(tmp_path / "sub") == digests(lake[0])


def test_rebuilding_replaces_the_lake_and_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "lake"
    build_lake(root, scale=SCALE)
    before = digests(root)
    (root / "files" / "stray.csv").write_text("a\n1\n")
    build_lake(root, scale=SCALE)
    assert digests(root) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lake"]  # no staging left behind
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.txt").write_text("do not delete")
    with pytest.raises(FileExistsError):
        build_lake(precious, scale=SCALE)
    assert (precious / "thesis.txt").read_text() == "do not delete"
    with pytest.raises(ValueError):
        build_lake(tmp_path / "nothing", scale=0)


def test_every_resource_parses_as_declared_with_the_truth_columns(
        lake: tuple[Path, LakeTruth]) -> None:
    root, truth = lake
    assert {r.path for r in truth.resources if r.source_type == "FILE"} == {
        "crm/customers.csv", "crm/customers_clean.csv", "hr/employees.csv", "sales/orders",
        "finance/payments.parquet", "finance/payments_2024.csv", "web/access_log.jsonl",
        "ref/stores.json"}
    for resource in truth.resources:
        frame = read(root, truth, resource.path)
        assert len(frame) == resource.row_count > 0, resource.path
        if resource.file_format in ("json", "jsonl"):  # json_normalize puts nested keys last
            assert sorted(frame.columns) == sorted(resource.column_names), resource.path
        else:
            assert list(frame.columns) == resource.column_names, resource.path
        for column in resource.columns:
            values = frame[column.name]
            assert values.isna().any() == column.nullable, (resource.path, column.name)
            assert values.dropna().nunique() == column.distinct, (resource.path, column.name)
    orders = truth.resource("sales/orders")
    assert orders.resource_type == "collection" and len(orders.partitions) == 18
    assert orders.partitions[0].path == "sales/orders/2023-07.csv"


def test_the_hr_export_needs_sniffing(lake: tuple[Path, LakeTruth]) -> None:
    root, truth = lake
    raw = (truth.files_path(root) / "hr/employees.csv").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    decoded = raw.decode("cp1252")
    assert any(ord(ch) > 127 for ch in decoded) and "\r\n" in decoded
    assert csv.Sniffer().sniff(decoded[:2000]).delimiter == ";"


def test_sensitive_values_are_real_and_decoys_are_not(lake: tuple[Path, LakeTruth]) -> None:
    root, truth = lake
    assert {kind for _, _, kind in truth.sensitive_columns()} == set(SENSITIVE_KINDS)
    for path, column, _ in truth.sensitive_columns("payment_card"):
        cards = read(root, truth, path)[column].dropna()
        assert len(cards) > 0 and all(luhn_valid(card) for card in cards)
    payments = read(root, truth, "finance/payments.parquet")
    assert not any(luhn_valid(ref) for ref in payments["txn_ref"])
    for path, column, _ in truth.sensitive_columns("iban"):
        accounts = read(root, truth, path)[column].dropna()
        assert len(accounts) > 0 and all(iban_valid(account) for account in accounts)
    for path, column, _ in truth.sensitive_columns("email"):
        assert read(root, truth, path)[column].dropna().str.contains("@").all()
    assert truth.column_kinds()[("web/access_log.jsonl", "client.app")] is None
    assert truth.column_kinds()[("crm/customers.csv", "contact")] == "email"


def test_sql_schemas_open_through_the_url_convention(lake: tuple[Path, LakeTruth]) -> None:
    root, truth = lake
    engine = sqlite_engine_with_schemas(sql_url(root))
    try:
        inspector = inspect(engine)
        assert {"main", "sales", "hr"} <= set(inspector.get_schema_names())
        sql_resources = {r.path: r for r in truth.resources if r.source_type == "SQL"}
        found = {f"{schema}.{name}" for schema in ("sales", "hr")
                 for name in inspector.get_table_names(schema=schema)
                 + inspector.get_view_names(schema=schema)}
        assert found == set(sql_resources)
        declared = set()
        for path, resource in sql_resources.items():
            schema, name = path.split(".")
            columns = [c["name"] for c in inspector.get_columns(name, schema=schema)]
            assert columns == resource.column_names
            if resource.resource_type == "table":
                pk = inspector.get_pk_constraint(name, schema=schema)["constrained_columns"]
                assert tuple(pk) == resource.primary_key
                for fk in inspector.get_foreign_keys(name, schema=schema):
                    declared.add((f"{schema}.{fk['referred_table']}",
                                  tuple(fk["referred_columns"]), path,
                                  tuple(fk["constrained_columns"])))
        assert declared == {(j.left, j.left_columns, j.right, j.right_columns)
                            for j in truth.joins if j.declared_fk}
        assert len(declared) == 5
        with engine.connect() as conn:
            for view in truth.views:
                schema, name = view.view.split(".")
                stored = inspector.get_view_definition(name, schema=schema)
                assert stored.strip() == view.sql
                count = conn.execute(text(f'SELECT COUNT(*) FROM "{schema}"."{name}"')).scalar()
                assert count == truth.resource(view.view).row_count
    finally:
        engine.dispose()


def test_foreign_keys_hold_and_view_sql_runs(lake: tuple[Path, LakeTruth]) -> None:
    root, truth = lake
    for schema, file in truth.sql.schemas.items():
        with sqlite3.connect(root / file) as conn:
            assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            for view in truth.views:
                if view.view.startswith(f"{schema}."):
                    select = view.sql.split(" AS\n", 1)[1]
                    rows = conn.execute(select).fetchall()
                    assert len(rows) == truth.resource(view.view).row_count
        conn.close()
    for view in truth.views:
        assert set(view.columns) == set(truth.resource(view.view).column_names)
        for inputs in view.columns.values():
            for qualified in inputs:
                table, column = qualified.rsplit(".", 1)
                assert table in view.tables and column in truth.resource(table).column_names


def test_derived_files_are_contained_in_their_sources(lake: tuple[Path, LakeTruth]) -> None:
    root, truth = lake
    assert {(d.derived, d.kind) for d in truth.derivations} >= {
        ("crm/customers_clean.csv", "subset"), ("finance/payments_2024.csv", "filtered")}
    for derivation in truth.derivations:
        derived = read(root, truth, derivation.derived)
        source = read(root, truth, derivation.source)
        mapped = derived[list(derivation.columns)].set_axis(
            list(derivation.columns.values()), axis=1)
        rows = set(mapped.itertuples(index=False, name=None))
        source_rows = set(source[list(derivation.columns.values())].itertuples(
            index=False, name=None))
        assert rows <= source_rows, derivation.derived
        assert len(derived) == len(rows)  # each carries a key, so no row was duplicated
        if derivation.kind == "copy":
            assert len(derived) == len(source)
        else:
            assert len(derived) < len(source)
    files = truth.files_path(root)
    for newer, older in (("crm/customers_clean.csv", "crm/customers.csv"),
                         ("finance/payments_2024.csv", "finance/payments.parquet")):
        assert (files / newer).stat().st_mtime > (files / older).stat().st_mtime
    paid = read(root, truth, "finance/payments_2024.csv")["paid_at"]
    assert paid.str.startswith("2024").all()


def test_joins_match_the_data(lake: tuple[Path, LakeTruth]) -> None:
    root, truth = lake
    frames: dict[str, pd.DataFrame] = {}
    for join in truth.joins:
        for path in (join.left, join.right):
            frames.setdefault(path, read(root, truth, path))
        (left_column,), (right_column,) = join.left_columns, join.right_columns
        left = frames[join.left][left_column].dropna()
        right = frames[join.right][right_column].dropna()
        shared = set(left) & set(right)
        assert shared, join
        assert round(len(shared) / left.nunique(), 4) == join.left_in_right
        assert round(len(shared) / right.nunique(), 4) == join.right_in_left
        expected = ("1:1" if left.is_unique and right.is_unique
                    else "1:N" if left.is_unique else "N:M")
        assert join.cardinality == expected, join
    domains = {join.domain for join in truth.joins}
    assert {"customer", "order_no", "employee", "store", "department_code"} <= domains


def test_truth_round_trips_through_json(lake: tuple[Path, LakeTruth]) -> None:
    root, truth = lake
    assert load_truth(root) == truth
    assert LakeTruth.from_json(truth.to_json()) == truth
    assert json.loads(json.dumps(truth.to_dict())) == json.loads(truth.to_json())
    assert truth.seed == 7 and truth.scale == SCALE
    with pytest.raises(KeyError):
        truth.resource("nope.csv")


def test_attach_parameters_are_parsed_and_checked(tmp_path: Path) -> None:
    url, attached = split_attachments(
        f"sqlite:///{tmp_path}/main.db?attach=sales:s.db&attach=hr:/abs/hr.db")
    assert url.query == {} and url.database == f"{tmp_path}/main.db"
    assert attached == {"sales": tmp_path / "s.db", "hr": Path("/abs/hr.db")}
    for bad in ("nocolon", "main:x.db", "1abc:x.db", "a b:x.db"):
        with pytest.raises(ValueError):
            split_attachments(f"sqlite:///{tmp_path}/m.db?attach={bad}")
    engine = sqlite_engine_with_schemas(f"sqlite:///{tmp_path}/m.db?attach=gone:gone.db")
    with pytest.raises(FileNotFoundError):
        engine.connect()
    engine.dispose()
    assert not (tmp_path / "gone.db").exists()
