"""Applying bulk plans against a mocked service: batches, per-row reports, suggestions review."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

import pandas as pd
import pytest
import responses

from catalog_nb.client import Catalog, TruncatedResultWarning
from catalog_nb.client.tags.bulk_plan import REPORT_COLUMNS
from tests.client.mocks import API, error_body, json_of
from tests.client.tag_mocks import ORDERS, TagWorld, calls, query_of, view

REPORT_NAMES = [column.name for column in REPORT_COLUMNS]


class Bar:
    """Stands in for ``tqdm.auto.tqdm`` and records what the bar was told."""

    def __init__(self, made: list[Bar], total: int | None = None, **kwargs: Any) -> None:
        self.total, self.n, self.kwargs, self.closed = total, 0, kwargs, False
        self.seen: list[tuple[int | None, int]] = []
        made.append(self)

    def update(self, step: int) -> None:
        self.n += step
        self.seen.append((self.total, self.n))

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> list[Bar]:
    import tqdm.auto

    made: list[Bar] = []
    monkeypatch.setattr(tqdm.auto, "tqdm", lambda **kwargs: Bar(made, **kwargs))
    return made


def _rows(*rows: tuple[Any, ...]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["source", "path", "field", "tag", "state"])


MIXED = _rows(
    ("demo_files", "crm/customers.csv", "contact", "Sensitive.EmailAddress", "ACCEPTED"),
    ("demo_files", "crm/customers.csv", None, "Finance.Revenue", None),
    ("demo_files", "sales/orders.parquet", "amount", "Finance.Revenue.Gross", "REJECTED"),
    ("demo_files", "sales/orders.parquet", "order_id", "Sensitive.PhoneNumber", None),
    ("demo_files", "sales/orders.parquet", "amount", "Finance.Revenue.Net", None),
    ("demo_files", "crm/customers.csv", "nope", "Finance.Revenue", None),
    ("demo_sql", "sales.orders", "amount", "Finance.Revenue", None),
)


def _deny_phone(item: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    if item["tagKey"] == "t-phone":
        return False, error_body(403, "PERMISSION_DENIED", "Not a domain of your roles.")
    return TagWorld._accept(item)


def test_apply_reports_every_row(mock: responses.RequestsMock, cat: Catalog) -> None:
    world = TagWorld(mock)
    world.result = _deny_phone
    put = API + "/tagassociation/tagassociation/a-4"
    mock.add(responses.PUT, put, json=view("a-4", ORDERS, "t-gross", "amount", "REJECTED"))
    report = cat.apply_associations(MIXED, dry_run=False)
    assert list(report.columns) == REPORT_NAMES
    assert report["action"].tolist() == [
        "change state",
        "unchanged",
        "change state",
        "create",
        "change state",
        "error",
        "create",
    ]
    assert report["result"].tolist() == [
        "applied",
        "unchanged",
        "applied",
        "failed",
        "applied",
        "error",
        "applied",
    ]
    failed = report.loc[3]
    assert (failed["status"], failed["error_code"], failed["message"]) == (
        403,
        "PERMISSION_DENIED",
        "Not a domain of your roles.",
    )
    assert report.loc[5, "message"] == report.loc[5, "reason"]
    assert report.loc[6, "association_key"] == "new-t-rev"
    assert str(report["status"].dtype) == "Int64"
    # creations and promotions in one list request; the change of an ACCEPTED one by PUT
    (items,) = world.posted
    assert items == [
        {"resourceKey": "r00001", "tagKey": "t-email", "field": "contact", "state": "ACCEPTED"},
        {"resourceKey": "r00002", "tagKey": "t-phone", "field": "order_id", "state": "ACCEPTED"},
        {"resourceKey": "r00002", "tagKey": "t-net", "field": "amount", "state": "ACCEPTED"},
        {"resourceKey": "r00004", "tagKey": "t-rev", "field": "amount", "state": "ACCEPTED"},
    ]
    (put_call,) = calls(mock, "PUT", "/tagassociation/tagassociation/a-4")
    assert json_of(put_call) == {"state": "REJECTED"}


def test_batches_of_batch_size(mock: responses.RequestsMock, cat: Catalog) -> None:
    world = TagWorld(mock)
    frame = pd.DataFrame(
        {
            "resource_key": ["r00001", "r00001", "r00002", "r00002", "r00004"],
            "field": ["customer_id", "contact", "order_id", "amount", "amount"],
            "tag_key": ["t-phone", "t-rev", "t-phone", "t-email", "t-email"],
        }
    )
    report = cat.apply_associations(frame, dry_run=False, batch_size=2)
    assert [len(items) for items in world.posted] == [2, 2, 1]
    assert report["result"].tolist() == ["applied"] * 5
    with pytest.raises(ValueError, match="batch_size must be between 1 and 1000"):
        cat.apply_associations(frame, dry_run=False, batch_size=1001)


def test_a_failing_batch_never_stops_the_rest(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock)
    answers = iter([500, 201])

    def post(request: Any) -> tuple[int, dict[str, str], str]:
        status = next(answers)
        items = json.loads(request.body)
        if status == 500:
            return 500, {}, json.dumps(error_body(500, "INTERNAL_ERROR", "It broke."))
        body = [
            {"index": i, "ok": True, "association": {"key": f"k{i}"}}
            for i in range(len(items))
        ]
        return 201, {}, json.dumps(body[:-1])  # the last item gets no answer

    mock.remove(responses.POST, API + "/tagassociation/list")  # the world's answer
    mock.add_callback(
        responses.POST, API + "/tagassociation/list", callback=post, content_type="application/json"
    )
    frame = pd.DataFrame(
        {
            "resource_key": ["r00001", "r00001", "r00002", "r00002"],
            "field": ["customer_id", "contact", "order_id", "amount"],
            "tag_key": ["t-phone", "t-rev", "t-phone", "t-email"],
        }
    )
    report = cat.apply_associations(frame, dry_run=False, batch_size=2)
    assert report["result"].tolist() == ["failed", "failed", "applied", "failed"]
    assert report.loc[0, "status"] == 500 and report.loc[0, "error_code"] == "INTERNAL_ERROR"
    assert report.loc[0, "message"] == "the whole batch failed: It broke."
    assert report.loc[2, "association_key"] == "k0"
    assert report.loc[3, "message"] == "the service answered no result for this row"


def test_dry_run_writes_nothing_and_progress_is_optional(
    mock: responses.RequestsMock, cat: Catalog, bars: list[Bar]
) -> None:
    world = TagWorld(mock)
    mock.add(responses.PUT, API + "/tagassociation/tagassociation/a-4", json={})
    cat.apply_associations(MIXED)
    cat.apply_associations(MIXED, dry_run=False)  # the catalog was made with progress=False
    cat.apply_associations(MIXED, dry_run=False, progress=False)
    assert bars == [] and len(world.posted) == 2
    cat.apply_associations(MIXED, dry_run=False, progress=True, batch_size=3)
    (bar,) = [b for b in bars if b.kwargs.get("desc") == "applying associations"]
    assert bar.total == 5 and bar.n == 5 and bar.closed
    assert bar.seen == [(5, 3), (5, 4), (5, 5)]  # two batches, then the PUT


# -- review_suggestions ------------------------------------------------------------------------

SUGGESTIONS = [
    view("s-1", ORDERS, "t-email", "order_id", "SUGGESTED", weight=0.99, rules=["regex:x"]),
    view("s-2", ORDERS, "t-phone", "order_id", "SUGGESTED", weight=0.6),
    view("s-3", ORDERS, "t-email", "amount", "SUGGESTED", weight=None),
    view("s-4", ORDERS, "t-rev", None, "ACCEPTED", weight=0.99),
]


def test_review_plan_selects_pending_suggestions(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    world = TagWorld(mock, associations=SUGGESTIONS)
    plan = cat.review_suggestions()
    assert plan["association_key"].tolist() == ["s-1", "s-2", "s-3"]
    assert set(plan["action"]) == {"change state"} and set(plan["new_state"]) == {"ACCEPTED"}
    assert set(plan["current_state"]) == {"SUGGESTED"}
    assert plan.loc[0, "tag"] == "Sensitive.EmailAddress" and plan.loc[0, "weight"] == 0.99
    assert query_of(calls(mock, "GET", "/tagassociation")[0]) == (
        "state=SUGGESTED&start=0&pageSize=500"
    )
    high = cat.review_suggestions(min_weight=0.9, accept=False, source="demo_files")
    assert high["association_key"].tolist() == ["s-1"]
    assert high.loc[0, "new_state"] == "REJECTED"
    assert query_of(calls(mock, "GET", "/tagassociation")[1]) == (
        "state=SUGGESTED&dataSourceKey=src-files&minWeight=0.9&start=0&pageSize=500"
    )
    assert world.posted == []


def test_review_by_tags_reads_one_tag_at_a_time(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    TagWorld(mock, associations=SUGGESTIONS)
    plan = cat.review_suggestions(tags=["Sensitive.PhoneNumber", "EmailAddress"])
    assert plan["association_key"].tolist() == ["s-2", "s-1", "s-3"]
    tag_keys = [parse_qs(query_of(c))["tagKey"] for c in calls(mock, "GET", "/tagassociation")]
    assert tag_keys == [["t-phone"], ["t-email"]]
    with pytest.raises(ValueError, match="unknown tag 'Nope'"):
        cat.review_suggestions(tags="Nope")


def test_review_applies_and_reports(mock: responses.RequestsMock, cat: Catalog) -> None:
    world = TagWorld(mock, associations=SUGGESTIONS)
    report = cat.review_suggestions(min_weight=0.5, accept=False, dry_run=False)
    assert list(report.columns) == REPORT_NAMES
    assert report["result"].tolist() == ["applied", "applied"]
    rejected = {"resourceKey": "r00002", "field": "order_id", "state": "REJECTED"}
    assert world.posted == [[{**rejected, "tagKey": "t-email"}, {**rejected, "tagKey": "t-phone"}]]


def test_review_limit_warns_and_empty_keeps_columns(
    mock: responses.RequestsMock, cat: Catalog
) -> None:
    TagWorld(mock, associations=SUGGESTIONS)
    with pytest.warns(TruncatedResultWarning, match="first 1 of 3"):
        plan = cat.review_suggestions(limit=1)
    assert len(plan) == 1
    none = cat.review_suggestions(min_weight=1.0, dry_run=False)
    assert none.empty and list(none.columns) == REPORT_NAMES


def test_raw_forms_are_records(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock, associations=SUGGESTIONS)
    plan = cat.apply_associations(MIXED.iloc[:2], as_frame=False)
    assert [(p["index"], p["action"]) for p in plan] == [(0, "change state"), (1, "unchanged")]
    review = cat.review_suggestions(min_weight=0.9, dry_run=False, as_frame=False)
    assert [(r["tag_key"], r["current_state"], r["result"]) for r in review] == [
        ("t-email", "SUGGESTED", "applied")
    ]


def test_an_item_the_service_left_unchanged(mock: responses.RequestsMock, cat: Catalog) -> None:
    TagWorld(mock)

    def post(request: Any) -> tuple[int, dict[str, str], str]:
        answer = [{"index": 0, "ok": True, "outcome": "unchanged", "association": {"key": "x"}}]
        return 201, {}, json.dumps(answer)

    mock.remove(responses.POST, API + "/tagassociation/list")
    mock.add_callback(
        responses.POST, API + "/tagassociation/list", callback=post, content_type="application/json"
    )
    frame = pd.DataFrame({"resource_key": ["r00001"], "field": ["contact"], "tag_key": ["t-rev"]})
    report = cat.apply_associations(frame, dry_run=False)
    assert report["action"].tolist() == ["create"] and report["result"].tolist() == ["unchanged"]
