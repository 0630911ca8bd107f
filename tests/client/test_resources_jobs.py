"""Jobs against a mocked service: posting, polling with progress, failure, timeout, listing."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
import responses

from catalog_nb.client import (
    Catalog,
    CatalogConnectionError,
    CatalogError,
    CatalogTimeoutError,
    JobFailedError,
    JobTimeoutError,
    TruncatedResultWarning,
)
from catalog_nb.client.jobs import JOB_COLUMNS
from tests.client.mocks import API, json_of
from tests.client.resource_mocks import SOURCES, calls_to, query_of

FAST = 0.001  # poll interval of the tests, in seconds


def job_json(state: str = "QUEUED", **overrides: Any) -> dict[str, Any]:
    """A Job as the service answers it."""
    job: dict[str, Any] = {
        "key": "job-1",
        "jobType": "PROFILE",
        "dataSourceKey": "src-files",
        "dataSourceName": "demo_files",
        "resourcePath": None,
        "state": state,
        "progress": 0.0,
        "total": None,
        "done": 0,
        "counts": {"created": 0, "updated": 0, "unchanged": 0, "skipped": 0, "errors": 0},
        "errors": [],
        "message": None,
        "requestedBy": "admin",
        "timeOfCreation": 1704067200000,
        "startTime": None,
        "endTime": None,
        "workUnit": None,
        "workTotal": None,
        "workDone": None,
        "engine": "local",
        "worker": None,
    }
    job.update(overrides)
    return job


RUN = [
    job_json("RUNNING", total=3, done=0, startTime=1704067201000),
    job_json("RUNNING", total=3, done=1, progress=1 / 3, startTime=1704067201000),
    job_json("RUNNING", total=3, done=2, progress=2 / 3, startTime=1704067201000),
    job_json(
        "SUCCEEDED",
        total=3,
        done=3,
        progress=1.0,
        counts={"created": 3, "updated": 0, "unchanged": 0, "skipped": 0, "errors": 0},
        startTime=1704067201000,
        endTime=1704067205000,
    ),
]


@pytest.fixture
def jobs_mock(mock: responses.RequestsMock) -> Iterator[responses.RequestsMock]:
    mock.add(responses.GET, API + "/datasource", json=SOURCES)
    mock.add(responses.POST, API + "/job", json=job_json("QUEUED"), status=201)
    yield mock


def _script(mock: responses.RequestsMock, answers: list[dict[str, Any]]) -> None:
    """Answer ``GET /job/job-1`` with ``answers`` in turn, then the last one forever."""
    remaining = list(answers)

    def answer(_request: Any) -> tuple[int, dict[str, str], str]:
        job = remaining.pop(0) if len(remaining) > 1 else remaining[0]
        return 200, {}, json.dumps(job)

    mock.add_callback(
        responses.GET, API + "/job/job-1", callback=answer, content_type="application/json"
    )


class Bar:
    """Stands in for ``tqdm.auto.tqdm`` and records what the bar was told."""

    made: list[Bar] = []

    def __init__(self, total: int | None = None, **kwargs: Any) -> None:
        self.total, self.n, self.kwargs, self.closed = total, 0, kwargs, False
        self.seen: list[tuple[int | None, int]] = []
        Bar.made.append(self)

    def update(self, step: int) -> None:
        self.n += step
        self.seen.append((self.total, self.n))

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> list[Bar]:
    import tqdm.auto

    Bar.made = []
    monkeypatch.setattr(tqdm.auto, "tqdm", Bar)
    return Bar.made


def test_profile_polls_until_succeeded(jobs_mock: responses.RequestsMock, cat: Catalog) -> None:
    _script(jobs_mock, RUN)
    job = cat.profile("demo_files", poll_interval=FAST)
    assert isinstance(job, pd.Series) and list(job.index) == [c.name for c in JOB_COLUMNS]
    assert job["state"] == "SUCCEEDED" and job["resources_created"] == 3
    assert str(job["ended"]) == "2024-01-01 00:00:05+00:00"
    assert json_of(calls_to(jobs_mock, "POST", "/job")[0]) == {
        "jobType": "PROFILE",
        "dataSourceKey": "src-files",
    }
    assert len(calls_to(jobs_mock, "GET", "/job/job-1")) == 4


def test_progress_bar_follows_done_of_total(
    jobs_mock: responses.RequestsMock, cat: Catalog, bars: list[Bar]
) -> None:
    _script(jobs_mock, RUN)
    cat.profile("demo_files", "crm", poll_interval=FAST, progress=True)
    (bar,) = bars
    assert bar.closed and bar.n == 3 and bar.total == 3
    assert bar.seen == [(3, 1), (3, 2), (3, 3)]
    assert bar.kwargs["desc"] == "profile demo_files"
    assert json_of(calls_to(jobs_mock, "POST", "/job")[0])["resourcePath"] == "crm"


def test_no_bar_when_progress_is_off(
    jobs_mock: responses.RequestsMock, cat: Catalog, bars: list[Bar]
) -> None:
    _script(jobs_mock, RUN)
    cat.profile("demo_files", poll_interval=FAST)  # the catalog was made with progress=False
    assert bars == []


def test_failed_job_raises_with_its_message(
    jobs_mock: responses.RequestsMock, cat: Catalog, bars: list[Bar]
) -> None:
    failed = job_json("FAILED", message="Cannot connect to the database: connection refused")
    _script(jobs_mock, [RUN[0], failed])
    with pytest.raises(JobFailedError, match="connection refused") as exc:
        cat.profile("demo_files", poll_interval=FAST, progress=True)
    assert isinstance(exc.value, CatalogError)
    assert "profile job job-1 of data source demo_files failed" in str(exc.value)
    assert exc.value.job["state"] == "FAILED"
    assert bars[0].closed


def test_timeout_says_the_job_keeps_running(
    jobs_mock: responses.RequestsMock, cat: Catalog, bars: list[Bar]
) -> None:
    _script(jobs_mock, [RUN[1]])
    with pytest.raises(JobTimeoutError, match="keeps running on the service") as exc:
        cat.profile("demo_files", timeout=0.05, poll_interval=0.01, progress=True)
    # the service answered all along: not a connection (or connect/read timeout) error
    assert not isinstance(exc.value, CatalogConnectionError | CatalogTimeoutError)
    assert exc.value.job["key"] == "job-1" and "1 of 3 done" in exc.value.message
    assert bars[0].closed


def test_zero_timeout_does_not_wait(jobs_mock: responses.RequestsMock, cat: Catalog) -> None:
    _script(jobs_mock, [RUN[0]])
    with pytest.raises(JobTimeoutError):
        cat.browse("demo_files", timeout=0, poll_interval=FAST)
    assert calls_to(jobs_mock, "GET", "/job/job-1") == []


def test_no_wait_returns_the_queued_job(jobs_mock: responses.RequestsMock, cat: Catalog) -> None:
    job = cat.browse("src-files", wait=False, as_frame=False)
    assert job["state"] == "QUEUED" and isinstance(job, dict)
    assert json_of(calls_to(jobs_mock, "POST", "/job")[0])["jobType"] == "BROWSE"
    assert calls_to(jobs_mock, "GET", "/job/job-1") == []


def test_succeeded_with_unreadable_files_warns(
    jobs_mock: responses.RequestsMock, cat: Catalog
) -> None:
    done = job_json(
        "SUCCEEDED",
        counts={"created": 2, "updated": 0, "unchanged": 0, "skipped": 0, "errors": 1},
        errors=[{"path": "junk.csv", "message": "not a text file"}],
    )
    _script(jobs_mock, [done])
    with pytest.warns(UserWarning, match="1 resource\\(s\\) could not be read: junk.csv: not a"):
        job = cat.profile("demo_files", poll_interval=FAST)
    assert job["resources_failed"] == 1


def test_wait_for_job_by_key(mock: responses.RequestsMock, cat: Catalog) -> None:
    _script(mock, RUN)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cat.wait_for_job("job-1", poll_interval=FAST)["state"] == "SUCCEEDED"


def test_jobs_frame_and_query(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/datasource", json=SOURCES)
    mock.add(responses.GET, API + "/job", json=[RUN[-1], job_json("FAILED", key="job-0")])
    frame = cat.jobs(state="failed", source="demo_files", limit=5)
    (call,) = calls_to(mock, "GET", "/job")
    assert query_of(call) == "state=FAILED&dataSourceKey=src-files&limit=6"
    assert list(frame.columns) == [column.name for column in JOB_COLUMNS]
    assert frame["key"].tolist() == ["job-1", "job-0"]
    assert str(frame["progress"].dtype) == "Float64" and str(frame["total"].dtype) == "Int64"


def test_jobs_warns_when_there_are_more(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/job", json=[job_json(key=f"j{i}") for i in range(3)])
    with pytest.warns(TruncatedResultWarning, match="newest 2 of more than 2 matching jobs"):
        frame = cat.jobs(limit=2)
    assert frame["key"].tolist() == ["j0", "j1"]


def test_jobs_at_the_service_maximum(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/job", json=[job_json(key=f"j{i}") for i in range(1000)])
    more = "newest 1000 of possibly more than 1000 matching jobs"
    with pytest.warns(TruncatedResultWarning, match=more):
        assert len(cat.jobs(limit=1000)) == 1000
    assert query_of(calls_to(mock, "GET", "/job")[0]) == "limit=1000"
    with pytest.raises(ValueError, match="between 1 and 1000"):
        cat.jobs(limit=1001)


def test_empty_jobs_keep_columns(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/job", json=[])
    frame = cat.jobs()
    assert frame.empty and list(frame.columns) == [column.name for column in JOB_COLUMNS]
    assert str(frame["ended"].dtype) == "datetime64[ns, UTC]"


def test_job_by_key(mock: responses.RequestsMock, cat: Catalog) -> None:
    mock.add(responses.GET, API + "/job/job-1", json=RUN[-1])
    assert cat.job("job-1")["done"] == 3
    assert cat.job("job-1", as_frame=False) == RUN[-1]
