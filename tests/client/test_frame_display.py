"""How the client's frames and jobs read in a notebook (issue 18): keys last, tags as text,
sizes and counts formatted, missing values blank, text whole; the data and dtypes untouched.

The frames are the real ones, read from the session's profiled demo lake; the HTML reprs are
parsed and their cells compared with the frames' values.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from bs4 import BeautifulSoup

from catalog_nb.client import Catalog
from catalog_nb.client.frame_display import CatalogFrame, JobSeries, human_size
from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.resources.frames import RESOURCE_COLUMNS
from catalog_nb.client.tags.frames import ASSOCIATION_COLUMNS
from tests.client.shared_lake import SharedLake


@pytest.fixture
def cat(shared_lake: SharedLake) -> Catalog:
    return shared_lake.cat


def table_of(html: str) -> tuple[list[str], list[dict[str, str]], BeautifulSoup]:
    """The header names and the rows (by header name) of an HTML repr."""
    soup = BeautifulSoup(html, "html.parser")
    headers = [th.get_text() for th in soup.select("thead th")][1:]
    rows = []
    for tr in soup.select("tbody tr"):
        cells = [td.get_text() for td in tr.find_all("td")]
        if len(cells) == len(headers):
            rows.append(dict(zip(headers, cells, strict=True)))
    return headers, rows, soup


def test_resources_show_keys_last_and_sizes_and_counts_formatted(cat: Catalog) -> None:
    frame = cat.resources()
    assert isinstance(frame, CatalogFrame)
    # the data is as declared: key first, numbers numeric
    assert list(frame.columns) == [c.name for c in RESOURCE_COLUMNS]
    assert str(frame["rows"].dtype) == "Int64" and str(frame["size"].dtype) == "Int64"
    assert frame["size"].sum() > 0

    headers, rows, soup = table_of(frame._repr_html_())
    assert headers[-1] == "key" and headers.index("name") < headers.index("key")
    shown = {(row["source"], row["path"]): row for row in rows}
    assert len(shown) == len(frame) or len(frame) > pd.get_option("display.max_rows")
    for record in frame.head(len(rows)).to_dict("records"):
        row = shown[(record["source"], record["path"])]
        assert row["key"] == record["key"]
        if pd.isna(record["size"]):
            assert row["size"] == "—"
        else:
            assert row["size"] == human_size(record["size"])
        if pd.isna(record["rows"]):
            assert row["rows"] == "—"
        else:
            assert row["rows"] == f"{record['rows']:,}"
    big = frame.loc[frame["rows"].fillna(0).idxmax()]
    assert big["rows"] >= 1000 and "," in shown[(big["source"], big["path"])]["rows"]
    text = soup.get_text()
    assert "<NA>" not in text and "NaT" not in text and "None" not in text
    assert [th.get("class") for th in soup.select("thead th")][headers.index("rows") + 1] == ["num"]


def test_text_repr_shows_keys_last_and_readable_cells(cat: Catalog) -> None:
    frame = cat.resources(source="demo_sql")[["key", "name", "rows", "modified"]]
    assert isinstance(frame, CatalogFrame)
    header = repr(frame).splitlines()[0].split()
    assert header == ["name", "rows", "modified", "key"]
    assert "<NA>" not in repr(frame) and "NaT" not in repr(frame)
    assert frame["key"].iloc[0] in repr(frame)


def test_search_results_show_tags_as_text_and_keep_the_lists(cat: Catalog) -> None:
    frame = cat.search("customers").frame
    tagged = frame[frame["tags"].map(len) > 0]
    assert not tagged.empty, "discovery suggests tags on the demo's customers"
    first = tagged.iloc[0]
    assert isinstance(first["tags"], list)  # the data stays a list
    _, rows, _ = table_of(tagged._repr_html_())
    by_key = {row["key"]: row for row in rows}
    assert by_key[first["key"]]["tags"] == ", ".join(first["tags"])
    assert "[" not in by_key[first["key"]]["tags"]


def test_a_long_frame_shows_head_tail_and_its_size(cat: Catalog) -> None:
    fields = cat.fields(source="demo_sql")
    assert len(fields) > 20
    with pd.option_context("display.max_rows", 10, "display.min_rows", 6):
        _, rows, soup = table_of(fields._repr_html_())
        text = repr(fields)
    assert len(rows) == 6
    assert f"… {len(fields) - 6:,} more rows …" in soup.get_text()
    assert f"{len(fields):,} rows" in soup.select_one("p.shape").get_text()
    assert f"[{len(fields):,} rows x {len(fields.columns)} columns]" in text


def test_tags_and_missing_values_read_as_text() -> None:
    views = [
        {"key": "a1", "resourceKey": "r1", "tagFullName": "PII.Email", "tagKey": "t1",
         "state": "SUGGESTED", "weight": 0.9, "rules": ["name", "values"], "field": "email"},
        {"key": "a2", "resourceKey": "r1", "tagFullName": "PII.Phone", "tagKey": "t2",
         "state": "ACCEPTED", "rules": []},
    ]
    frame = to_frame(views, ASSOCIATION_COLUMNS)
    assert frame["rules"].iloc[0] == ["name", "values"]
    headers, rows, _ = table_of(frame._repr_html_())
    assert headers[-3:] == ["key", "resource_key", "tag_key"]
    assert rows[0]["rules"] == "name, values" and rows[0]["weight"] == "0.9"
    assert rows[1]["field"] == "—" and rows[1]["weight"] == "—" and rows[1]["created"] == "—"


def test_long_text_is_never_cut_in_html() -> None:
    detail = "A sentence that explains the finding; " * 8
    frame = to_frame([{"key": "k", "detail": detail}],
                     [Column("key", "string"), Column("detail", "string")])
    with pd.option_context("display.max_colwidth", 60):
        _, rows, _ = table_of(frame._repr_html_())
    assert rows[0]["detail"] == detail


def test_profile_returns_a_job_whose_reprs_show_the_message_whole(
    cat: Catalog, shared_lake: SharedLake
) -> None:
    job = cat.profile("demo_files", "crm", poll_interval=0.05, timeout=120)
    assert isinstance(job, JobSeries) and isinstance(job, pd.Series)
    assert job["state"] == "SUCCEEDED" and job.name == job["key"]
    message: Any = job["message"]
    assert isinstance(message, str) and message
    with pd.option_context("display.max_colwidth", 20):
        text, page = repr(job), job._repr_html_()
    lines = text.splitlines()
    assert lines[0] == "PROFILE job of demo_files (crm): SUCCEEDED (100%)"
    assert lines[1] == message
    assert lines[-1].split() == ["source_key", job["source_key"]]
    soup = BeautifulSoup(page, "html.parser")
    assert soup.find("b").get_text() == lines[0]
    assert message in soup.get_text()
    fields = {tr.th.get_text(): tr.td.get_text() for tr in soup.select("tr")}
    assert fields["resources_unchanged"] == f"{job['resources_unchanged']:,}"
    assert fields["started"] == f"{job['started']:%Y-%m-%d %H:%M}"
    # a slice of it is a plain Series again
    assert type(job[["state", "message"]]) is pd.Series
    assert isinstance(shared_lake.profiles["demo_files"], JobSeries)


def test_failed_job_message_shows_whole() -> None:
    long = "Could not read sales/broken.csv: line 3 has 7 fields where the header has 5. " * 3
    job = JobSeries({"key": "j1", "job_type": "BROWSE", "source": "s", "state": "FAILED",
                     "message": long, "progress": pd.NA})
    assert job.headline() == "BROWSE job of s: FAILED"
    assert repr(job).splitlines()[1] == long
    assert long in BeautifulSoup(job._repr_html_(), "html.parser").get_text()


def test_derived_frames_keep_the_display_and_odd_shapes_still_show() -> None:
    frame = to_frame([{"key": "k1", "name": "orders", "size": 2048, "rows": 25337}],
                     [Column("key", "string"), Column("name", "string"),
                      Column("size", "int"), Column("rows", "int")])
    for derived in (frame.head(1), frame.query("rows > 0"), frame.sort_values("name"),
                    frame[["name", "size"]], pd.concat([frame, frame])):
        assert isinstance(derived, CatalogFrame)
    _, rows, _ = table_of(frame._repr_html_())
    assert rows[0]["size"] == "2.0 kB" and rows[0]["rows"] == "25,337"
    twice = pd.concat([frame, frame], axis=1)  # repeated column names
    headers, rows, _ = table_of(twice._repr_html_())
    assert headers == ["name", "size", "rows", "name", "size", "rows", "key", "key"]
    assert repr(twice).splitlines()[0].split() == headers
    pivot = frame.pivot_table(index="name", values="rows", aggfunc="sum")
    assert "25,337" in pivot._repr_html_() and "25,337" in repr(pivot)
