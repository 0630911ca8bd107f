"""Job progress in bytes: the total is known from the first RUNNING snapshot, done only grows
and ends at the total; the client's progress bar counts bytes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from catalog_nb.client import connect
from tests.conftest import ADMIN_PASSWORD, ADMIN_USER, Http, Server
from tests.server.source_helpers import create_source, start_job, wait_job

#: Big enough that profiling takes several progress intervals (0.5 s) on any machine we use.
ROWS = 1_200_000


def _lake(folder: Path) -> tuple[Path, int]:
    line = "{i},customer-{c},{a:.2f},2024-{m:02d}-{d:02d},some words about order {i}\n"
    path = folder / "orders.csv"
    with path.open("w") as out:
        out.write("id,customer,amount,day,note\n")
        for start in range(0, ROWS, 100_000):
            out.write("".join(line.format(i=i, c=i % 977, a=i * 0.37 % 900, m=1 + i % 12,
                                          d=1 + i % 28) for i in range(start, start + 100_000)))
    (folder / "small.csv").write_text("a,b\n1,2\n3,4\n")
    return path, path.stat().st_size + (folder / "small.csv").stat().st_size


def _watch(http: Http, key: str) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    while True:
        job = http.get(f"/job/{key}").json()
        seen.append(job)
        if job["state"] in ("SUCCEEDED", "FAILED"):
            return seen
        time.sleep(0.02)


def test_profile_job_progress_counts_bytes_of_a_known_total(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    _, total = _lake(tmp_path)
    server = make_server(data_roots=[tmp_path])
    admin = server.session()
    source = create_source(admin, "progress-files", "FILE", str(tmp_path))
    seen = _watch(admin, start_job(admin, source["key"])["key"])
    final = seen[-1]
    assert final["state"] == "SUCCEEDED", final
    assert (final["workUnit"], final["workTotal"], final["workDone"]) == ("bytes", total, total)
    assert final["progress"] == 1.0
    running = [j for j in seen if j["state"] == "RUNNING" and j["workTotal"] is not None]
    assert running, "no RUNNING snapshot with a total"
    assert all(j["workTotal"] == total and j["workUnit"] == "bytes" for j in running)
    done = [j["workDone"] for j in running] + [final["workDone"]]
    assert done == sorted(done)  # never goes back
    assert any(0 < d < total for d in done), done  # moved while the big file was read
    progress = [j["progress"] for j in running]
    assert progress == sorted(progress) and all(0.0 <= p <= 1.0 for p in progress)


def test_sql_and_browse_jobs_keep_counting_resources(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    (tmp_path / "a.csv").write_text("x\n1\n")
    server = make_server(data_roots=[tmp_path])
    admin = server.session()
    source = create_source(admin, "progress-browse", "FILE", str(tmp_path))
    job = wait_job(admin, start_job(admin, source["key"], "BROWSE")["key"])
    assert job["state"] == "SUCCEEDED"
    assert job["workUnit"] is None and job["workTotal"] is None
    assert (job["total"], job["done"], job["progress"]) == (1, 1, 1.0)


class _Bar:
    """Records what the client tells its tqdm bar (the bar itself draws nothing testable)."""

    made: list[_Bar] = []

    def __init__(self, total: int | None = None, unit: str = "it", **kwargs: Any) -> None:
        self.total, self.n, self.unit, self.kwargs = total, 0, unit, kwargs
        self.unit_scale, self.unit_divisor = False, 1000
        self.totals: list[int | None] = [total]
        _Bar.made.append(self)

    def reset(self, total: int | None = None) -> None:
        self.n, self.total = 0, total
        self.totals.append(total)

    def update(self, step: int) -> None:
        self.n += step

    def refresh(self) -> None:
        self.totals.append(self.total)

    def close(self) -> None:
        pass


def test_the_client_bar_counts_bytes(
    make_server: Callable[..., Server], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tqdm.auto

    _, total = _lake(tmp_path)
    server = make_server(data_roots=[tmp_path])
    create_source(server.session(), "progress-client", "FILE", str(tmp_path))
    _Bar.made = []
    monkeypatch.setattr(tqdm.auto, "tqdm", _Bar)
    cat = connect(server.url, ADMIN_USER, ADMIN_PASSWORD, progress=True)
    try:
        job = cat.profile("progress-client", poll_interval=0.05)
    finally:
        cat.close()
    assert job["state"] == "SUCCEEDED"
    (bar,) = _Bar.made
    assert (bar.unit, bar.unit_scale, bar.unit_divisor) == ("B", True, 1024)
    assert bar.n == total and bar.total == total
    assert bar.totals[-1] == total  # the bar knew the total once it counted bytes


def test_sql_profile_job_progress_counts_rows_of_the_estimate(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    import sqlite3

    rows = 250_000
    database = tmp_path / "shop.sqlite"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, amount REAL, note TEXT)")
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
            "INSERT INTO orders SELECT i, i * 0.5, 'order ' || (i % 97) FROM n", (rows,))
        conn.execute("CREATE TABLE tiny (a TEXT)")
        conn.execute("INSERT INTO tiny VALUES ('x')")
    server = make_server(data_roots=[tmp_path])
    admin = server.session()
    source = create_source(admin, "progress-sql", "SQL", f"sqlite:///{database}")
    seen = _watch(admin, start_job(admin, source["key"])["key"])
    final = seen[-1]
    assert final["state"] == "SUCCEEDED", final
    # SQLite's estimate is the largest rowid: exact here
    assert (final["workUnit"], final["workTotal"], final["workDone"]) == ("rows", rows + 1,
                                                                          rows + 1)
    done = [j["workDone"] for j in seen if j["state"] == "RUNNING" and j["workTotal"]]
    assert done == sorted(done) and all(d <= rows + 1 for d in done)
