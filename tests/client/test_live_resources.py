"""The resource families of the client against a real service profiling the real demo lake.

The lake is the session's shared one (``tests.client.shared_lake``): a demo lake built at scale
0.05, its two sources registered and profiled through the client, so every frame below reads
what the service's own processing wrote. What these tests write is their own (uniquely named
properties, folders and data sets; jobs that find the lake unchanged; ``hr/employees.csv``); the
source whose profiling fails lives on a server of its own.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

from catalog_nb.client import (
    BadRequestError,
    Catalog,
    JobFailedError,
    JobTimeoutError,
    NotFoundError,
    TruncatedResultWarning,
    connect,
)
from catalog_nb.client.jobs import JOB_COLUMNS
from catalog_nb.client.resources.frames import FIELD_COLUMNS, RESOURCE_COLUMNS
from catalog_nb.client.resources.view import Resource
from tests.client.shared_lake import SharedLake

#: The lake's resources: 8 files/collections, 18 partition files, 11 tables and views.
FILE_RESOURCES = 8
PARTITIONS = 18
SQL_RESOURCES = 11


@pytest.fixture
def lake(shared_lake: SharedLake) -> SharedLake:
    return shared_lake


@pytest.fixture
def cat(lake: SharedLake) -> Catalog:
    return lake.cat


# -- sources and jobs ----------------------------------------------------------------------------


def test_profile_jobs_succeeded_with_counts(lake: SharedLake) -> None:
    files, sql = lake.profiles["demo_files"], lake.profiles["demo_sql"]
    assert files["state"] == sql["state"] == "SUCCEEDED"
    assert files["total"] == files["done"] == FILE_RESOURCES + PARTITIONS
    assert files["resources_created"] == FILE_RESOURCES and files["resources_failed"] == 0
    assert sql["resources_created"] == SQL_RESOURCES
    assert isinstance(files["ended"], pd.Timestamp) and files["ended"] >= files["started"]


def test_sources_frame_reports_counts_and_last_job(cat: Catalog) -> None:
    frame = cat.sources().set_index("name")
    assert frame.loc["demo_files", "source_type"] == "FILE"
    assert frame.loc["demo_files", "resource_count"] == FILE_RESOURCES + PARTITIONS
    assert frame.loc["demo_sql", "resource_count"] == SQL_RESOURCES
    assert set(frame["last_job_state"]) == {"SUCCEEDED"}
    assert cat.source("DEMO_SQL")["sourceType"] == "SQL"


def test_reprofiling_skips_unchanged_resources(cat: Catalog) -> None:
    job = cat.profile("demo_files", "crm", poll_interval=0.05, timeout=120)
    assert job["state"] == "SUCCEEDED" and job["resource_path"] == "crm"
    assert job["resources_unchanged"] >= 2 and job["resources_created"] == 0


def test_jobs_list_and_one_job(cat: Catalog, lake: SharedLake) -> None:
    frame = cat.jobs(source="demo_sql")
    assert list(frame.columns) == [column.name for column in JOB_COLUMNS]
    assert lake.profiles["demo_sql"]["key"] in frame["key"].tolist()
    assert set(frame["source"]) == {"demo_sql"}
    one = cat.job(lake.profiles["demo_sql"]["key"])
    assert one["state"] == "SUCCEEDED" and one["done"] == SQL_RESOURCES
    assert cat.jobs(state="succeeded", limit=1000)["state"].eq("SUCCEEDED").all()


def test_browse_then_wait_by_key(cat: Catalog) -> None:
    queued = cat.browse("demo_sql", wait=False, as_frame=False)
    assert queued["jobType"] == "BROWSE"
    done = cat.wait_for_job(queued["key"], poll_interval=0.05, timeout=120)
    assert done["state"] == "SUCCEEDED"


def test_timeout_leaves_the_job_running(cat: Catalog) -> None:
    with pytest.raises(JobTimeoutError, match="keeps running on the service") as exc:
        cat.browse("demo_files", timeout=0)
    final = cat.wait_for_job(exc.value.job["key"], poll_interval=0.05, timeout=120)
    assert final["state"] == "SUCCEEDED"


def test_unreachable_database_fails_the_job_clearly(
    make_server: Callable[..., Any], unique: Callable[[str], str]
) -> None:
    # a server of its own: a FAILED source would change the shared lake's sources frame
    server = make_server()
    cat = connect(server.url, server.admin_user, server.admin_password, progress=False)
    name = unique("nodb")
    cat.create_source(name, "postgresql+psycopg://nobody:secret@127.0.0.1:1/none", "SQL")
    with pytest.raises(JobFailedError) as exc:
        cat.profile(name, poll_interval=0.05, timeout=120)
    assert exc.value.job["state"] == "FAILED" and exc.value.message
    assert "secret" not in str(exc.value)
    assert cat.sources().set_index("name").loc[name, "last_job_state"] == "FAILED"
    cat.close()


# -- resources -------------------------------------------------------------------------------------


def test_resources_page_through_the_whole_lake(cat: Catalog) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frame = cat.resources(["demo_files", "demo_sql"], page_size=7)
    assert len(frame) == FILE_RESOURCES + PARTITIONS + SQL_RESOURCES
    assert frame["key"].is_unique
    assert list(frame.columns)[: len(RESOURCE_COLUMNS)] == [c.name for c in RESOURCE_COLUMNS]
    ordered = list(zip(frame["source"], frame["path"], strict=True))
    assert ordered == sorted(ordered)  # data source name, then path
    assert str(frame["profiled"].dtype) == "datetime64[ns, UTC]"
    assert frame["rows"].dtype == "Int64"


def test_resources_match_the_lake_truth(cat: Catalog, lake: SharedLake) -> None:
    frame = cat.resources("demo_files", status="PROFILED").set_index("path")
    for truth in lake.truth.resources:
        if truth.source_type != "FILE":
            continue
        row = frame.loc[truth.path]
        assert row["rows"] == truth.row_count, truth.path
        assert row["field_count"] == len(truth.columns), truth.path
        assert row["format"] == truth.file_format
        assert row["type"] == ("collection" if truth.partitions else "file")
    assert frame.loc["sales/orders", "partition_count"] == PARTITIONS


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (
            {"type": "view"},
            {
                "hr.department_headcount",
                "hr.staff_directory",
                "sales.customer_contacts",
                "sales.customer_revenue",
                "sales.top_customers",
            },
        ),
        ({"source": "demo_files", "format": "parquet"}, {"finance/payments.parquet"}),
        ({"path": "crm"}, {"crm/customers.csv", "crm/customers_clean.csv"}),
        ({"type": ["collection", "view"], "path": "sales"}, {"sales/orders"}),
        ({"path": "sales.orders"}, {"sales.orders"}),
        ({"name": ["customers.csv", "stores.json"]}, {"crm/customers.csv", "ref/stores.json"}),
    ],
)
def test_filters_select_what_they_say(
    cat: Catalog, filters: dict[str, Any], expected: set[str]
) -> None:
    assert set(cat.resources(**filters)["path"]) == expected


def test_source_key_and_date_filters(cat: Catalog) -> None:
    key = cat.source("demo_sql")["key"]
    assert len(cat.resources(key)) == SQL_RESOURCES
    files = cat.resources("demo_files", type="file", status="PROFILED")
    cut = files["modified"].min() + pd.Timedelta(days=1)
    newer = cat.resources("demo_files", type="file", status="PROFILED", modified_after=cut)
    assert 0 < len(newer) < len(files) and (newer["modified"] >= cut).all()
    older = cat.resources("demo_files", type="file", status="PROFILED", modified_before=cut)
    assert len(older) + len(newer) == len(files)


def test_limit_warns_and_empty_keeps_columns(cat: Catalog) -> None:
    with pytest.warns(TruncatedResultWarning, match="first 3 of"):
        assert len(cat.resources(limit=3, page_size=2)) == 3
    empty = cat.resources(name="no-such-file.csv", fields=True)
    assert empty.empty and "fields" in empty.columns and empty["rows"].dtype == "Int64"


def test_unknown_filter_values_are_refused(cat: Catalog) -> None:
    with pytest.raises(NotFoundError):
        cat.resources("no-such-source")
    with pytest.raises(ValueError, match="unknown resource type"):
        cat.resources(type="folder")


def test_one_resource_by_path_and_by_key(cat: Catalog, lake: SharedLake) -> None:
    res = cat.resource("demo_files", "crm/customers.csv")
    assert isinstance(res, Resource) and res.rows == 150 and res.format == "csv"
    truth = lake.truth.resource("crm/customers.csv")
    assert res.fields["name"].tolist() == truth.column_names
    assert cat.resource(res.key).path == "crm/customers.csv"
    source_key = cat.source("demo_files")["key"]
    assert cat.resource(source_key, "crm/customers.csv").key == res.key
    assert "customers.csv" in repr(res) and "<table" in res._repr_html_()
    with pytest.raises(NotFoundError) as exc:
        cat.resource("demo_files", "crm/nope.csv")
    assert exc.value.error_code == "RESOURCE_NOT_FOUND"


def test_fields_of_one_resource_carry_statistics(cat: Catalog, lake: SharedLake) -> None:
    frame = cat.fields("demo_sql", "hr.employees").set_index("name")
    assert list(frame.reset_index().columns) == [c.name for c in FIELD_COLUMNS]
    truth = lake.truth.resource("hr.employees")
    assert list(frame.index) == truth.column_names
    assert ((frame["density"] >= 0) & (frame["density"] <= 1)).all()
    assert (
        frame.loc["employee_id", "distinct_count"] == frame.loc["employee_id", "value_count"] == 30
    )
    assert frame.loc["salary", "mean"] > 0 and frame.loc["salary", "data_type"] == "LONG"
    assert frame.loc["email", "max_length"] >= frame.loc["email", "min_length"] > 0
    assert frame.loc["email", "patterns"] and frame.loc["email", "most_frequent"]


def test_fields_long_form_over_many_resources(cat: Catalog) -> None:
    tables = cat.resources("demo_sql", type="table")
    frame = cat.fields(source="demo_sql", type="table", page_size=2)
    assert len(frame) == int(tables["field_count"].sum())
    assert set(frame["resource_key"]) == set(tables["key"])
    assert set(frame["resource_type"]) == {"table"}


# -- annotations, custom properties, folders, data sets -------------------------------------------


def test_update_resource_and_custom_properties(cat: Catalog, unique: Callable[[str], str]) -> None:
    level, days = unique("level"), unique("days")
    cat.create_custom_property(level, "STRING", facet_able=True, display_name="Level")
    cat.create_custom_property(days, "INTEGER")
    assert {level, days} <= set(cat.custom_properties()["name"])
    res = cat.update_resource(
        "demo_files",
        "hr/employees.csv",
        description="HR export",
        owner="hr-team",
        custom={level: "high", days: 30},
        field_descriptions={"c_addr": "work e-mail"},
    )
    assert res.custom == {level: "high", days: 30} and res["owner"] == "hr-team"
    assert res.fields.set_index("name").loc["c_addr", "description"] == "work e-mail"
    frame = cat.resources(owner="hr-team")
    assert frame["path"].tolist() == ["hr/employees.csv"]
    assert frame.loc[0, f"cp_{level}"] == "high" and frame.loc[0, f"cp_{days}"] == 30
    assert str(frame[f"cp_{days}"].dtype) == "Int64"
    with pytest.raises(BadRequestError) as exc:
        cat.update_resource(res, custom={days: "thirty"})
    assert exc.value.error_code == "INVALID_PROPERTY_VALUE"
    with pytest.raises(BadRequestError):
        cat.update_resource(res.key, field_descriptions={"no_such_field": "x"})
    cat.update_custom_property(level, description="How sensitive")
    assert cat.custom_property(level)["description"] == "How sensitive"


def test_virtual_folders_filter_resources(cat: Catalog, unique: Callable[[str], str]) -> None:
    name = unique("money")
    folder = cat.create_virtual_folder(name, "demo_files", source_path="finance")
    assert folder["resourceCount"] == 2
    assert set(cat.resources(virtual_folder=name)["path"]) == {
        "finance/payments.parquet",
        "finance/payments_2024.csv",
    }
    cat.update_virtual_folder(name, include="*.csv")
    assert cat.resources(virtual_folder=folder["key"])["path"].tolist() == [
        "finance/payments_2024.csv"
    ]
    assert name in cat.virtual_folders()["name"].tolist()
    cat.delete_virtual_folder(name)
    with pytest.raises(NotFoundError):
        cat.virtual_folder(name)


def test_datasets_crud(cat: Catalog, unique: Callable[[str], str]) -> None:
    name = unique("customers")
    created = cat.create_dataset(name, {"demo_files": ["crm"], "demo_sql": "sales.customers"})
    assert created["resourceCount"] == 3
    row = cat.datasets().set_index("name").loc[name]
    assert row["sources"] == ["demo_files", "demo_sql"] and row["resource_count"] == 3
    cat.update_dataset(name, specs={"demo_sql": ["sales.customers"]})
    assert cat.dataset(name)["resourceCount"] == 1
    cat.delete_dataset(name)
    assert name not in cat.datasets()["name"].tolist()
