"""The job queue is fair across sources: a busy source's backlog never holds a worker, so a job
on another source starts (and here finishes) while the busy source's job still runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.conftest import Server
from tests.server.source_helpers import create_source, start_job, wait_job


def _big_csv(folder: Path, rows: int = 1_500_000) -> None:
    folder.mkdir()
    with (folder / "big.csv").open("w") as out:
        out.write("id,name,amount,day\n")
        for start in range(0, rows, 100_000):
            out.write("".join(f"{i},name-{i % 5003},{i * 0.13:.2f},2024-01-{1 + i % 28:02d}\n"
                              for i in range(start, start + 100_000)))


def test_a_job_on_another_source_does_not_wait_for_a_busy_source(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    _big_csv(tmp_path / "slow")
    (tmp_path / "quick").mkdir()
    (tmp_path / "quick" / "small.csv").write_text("a,b\n1,2\n")
    server = make_server(data_roots=[tmp_path], job_workers=2)
    admin = server.session()
    slow = create_source(admin, "queue-slow", "FILE", str(tmp_path / "slow"))
    quick = create_source(admin, "queue-quick", "FILE", str(tmp_path / "quick"))
    first = start_job(admin, slow["key"], "PROFILE")
    second = start_job(admin, slow["key"], "BROWSE")  # same source: must wait for the first
    other = start_job(admin, quick["key"], "PROFILE")  # queued last, on a free source
    done_other = wait_job(admin, other["key"])
    still = admin.get(f"/job/{first['key']}").json()
    assert done_other["state"] == "SUCCEEDED"
    # The other source did not wait for it. A worker takes a job off the queue before it
    # marks it RUNNING in the store: on a busy machine the quick job can end in between.
    assert still["state"] in ("QUEUED", "RUNNING"), still
    assert admin.get(f"/job/{second['key']}").json()["state"] == "QUEUED"
    done_first, done_second = wait_job(admin, first["key"]), wait_job(admin, second["key"])
    assert done_first["state"] == done_second["state"] == "SUCCEEDED"
    # one source's jobs one after another, in the order they came
    assert done_second["startTime"] >= done_first["endTime"]
    assert done_other["endTime"] < done_first["endTime"]
