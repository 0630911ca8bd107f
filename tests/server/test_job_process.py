"""Jobs run in child processes of their own (``job_isolation=process``, the default): the
service's process never runs profiling, a child that dies fails only its job, and stopping the
service puts a running job back in the queue."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import select

from catalog_nb.server.job_process import DIED_MESSAGE
from catalog_nb.server.jobs import REQUEUED_MESSAGE, JobRunner
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.schema import jobs
from tests.conftest import Http, Server
from tests.server.source_helpers import create_source, run_job, start_job, wait_job


def _runner(server: Server) -> JobRunner:
    runner: JobRunner = server.embedded.app.state.jobs
    return runner


def _many_csv(folder: Path, files: int = 60, rows: int = 40_000) -> Path:
    """Enough files that a job over them lasts seconds, stoppable between two of them."""
    folder.mkdir(parents=True, exist_ok=True)
    body = "".join(f"{i},c{i % 9973},{i * 0.37:.2f}\n" for i in range(rows))
    for n in range(files):
        (folder / f"part_{n:03d}.csv").write_text("id,code,amount\n" + body)
    return folder


def _wait_progress(http: Http, key: str, timeout: float = 120) -> None:
    """Until the job has profiled a few files (and has more to go)."""
    deadline = time.monotonic() + timeout
    while True:
        job = http.get(f"/job/{key}").json()
        if job["state"] == "RUNNING" and (job["done"] or 0) >= 3:
            return
        assert job["state"] in ("QUEUED", "RUNNING"), job
        assert time.monotonic() < deadline, "the job never got going"
        time.sleep(0.02)


def test_a_job_runs_in_a_child_process_that_stays_for_the_next(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    (tmp_path / "a.csv").write_text("id,name\n1,x\n2,y\n")
    server = make_server(data_roots=[tmp_path], job_workers=1)
    http = server.session()
    assert _runner(server).pids == []  # started on first use
    source = create_source(http, "small", "FILE", str(tmp_path))
    job = run_job(http, source["key"], "PROFILE")
    assert job["counts"]["created"] == 1
    pids = _runner(server).pids
    assert len(pids) == 1 and pids[0] != os.getpid()
    run_job(http, source["key"], "PROFILE")
    assert _runner(server).pids == pids


def _busy(make_server: Callable[..., Server], tmp_path: Path
          ) -> tuple[Server, Http, dict[str, Any], str, int]:
    """A server with one worker in the middle of a PROFILE job: the server, a session, the
    source, the job's key and the pid of the process running it."""
    folder = _many_csv(tmp_path / "many")
    server = make_server(data_roots=[folder], job_workers=1)
    http = server.session()
    source = create_source(http, "many", "FILE", str(folder))
    key = start_job(http, source["key"], "PROFILE")["key"]
    _wait_progress(http, key)
    (pid,) = _runner(server).pids
    return server, http, source, str(key), pid


def test_a_child_that_dies_fails_its_job_and_the_next_job_runs(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    server, http, source, key, pid = _busy(make_server, tmp_path)
    os.kill(pid, signal.SIGKILL)
    job = wait_job(http, key)
    assert job["state"] == "FAILED" and job["message"] == DIED_MESSAGE, job
    # The service still answers, and a new child runs the next job.
    again = run_job(http, source["key"], "PROFILE")
    assert again["counts"]["errors"] == 0, again
    assert _runner(server).pids and _runner(server).pids != [pid]


def test_stopping_the_service_puts_a_running_job_back_in_the_queue(
    make_server: Callable[..., Server], tmp_path: Path
) -> None:
    server, _, _, key, pid = _busy(make_server, tmp_path)
    store = server.store
    server.embedded.stop(timeout=60)
    with store.read() as conn:
        state, message = conn.execute(
            select(jobs.c.state, jobs.c.message).where(jobs.c.key == key)).one()
    store.dispose()  # the stopped service's pool: this read opened a connection again
    assert (state, message) == ("QUEUED", REQUEUED_MESSAGE)
    deadline = time.monotonic() + 10
    while _alive(pid):
        assert time.monotonic() < deadline, "the job process outlived the service"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A child that ended but was not reaped yet is a zombie: gone for this purpose.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_a_child_still_in_a_resource_when_the_stop_runs_out_requeues_its_job(
    store: Store, tmp_path: Path
) -> None:
    folder = tmp_path / "one"
    folder.mkdir()
    # Two resources of a second or more each: the stop lands in the first.
    body = "".join(f"{i},c{i % 9973},{i * 0.37:.2f}\n" for i in range(2_000_000))
    for name in ("big_1.csv", "big_2.csv"):
        (folder / name).write_text("id,code,amount\n" + body)
    settings = Settings(data_roots=[folder], admin_password=None, job_workers=1)
    with store.write() as conn:
        source = source_store.create_source(
            conn, {"name": "one", "source_type": "FILE", "uri": str(folder)})
        key = str(job_store.create(conn, "PROFILE", str(source["key"]), None, None)["key"])
    runner = JobRunner(store, settings).start()
    runner.submit(key)
    deadline = time.monotonic() + 60
    while True:
        with store.read() as conn:
            job = job_store.get(conn, key)
        if job["state"] == "RUNNING" and (job["work_done"] or 0) > 0:
            break
        assert job["state"] in ("QUEUED", "RUNNING") and time.monotonic() < deadline, job
        time.sleep(0.02)
    runner.stop(timeout=0.2)  # far shorter than the file takes
    with store.read() as conn:
        job = job_store.get(conn, key)
    assert (job["state"], job["message"]) == ("QUEUED", REQUEUED_MESSAGE), job
    assert runner.pids == []
