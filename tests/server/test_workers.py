"""``catalog-nb worker``: claims race safely, a killed worker's job does not stay RUNNING and
leaves nothing half-written, SIGTERM puts its job back in the queue, and a store it cannot use is
refused with a sentence. On SQLite and PostgreSQL (the store under test)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from sqlalchemy import func, select

from catalog_nb.cli import main
from catalog_nb.server.jobs import REQUEUED_MESSAGE, STALE_MESSAGE
from catalog_nb.server.store import Store
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.store.schema import data_resources, resource_fields, staged_fields
from tests.conftest import PG_URL
from tests.server.source_helpers import create_source, run_job
from tests.server.worker_helpers import FAST_JOBS, Process, Processes

CLAIMERS = 6


def _source(store: Store, name: str, folder: Path) -> str:
    with store.write() as conn:
        made = source_store.create_source(conn, {"name": name, "source_type": "FILE",
                                                 "uri": str(folder)})
    return str(made["key"])


def _queue(store: Store, source: str, job_type: str = "PROFILE") -> str:
    with store.write() as conn:
        return str(job_store.create(conn, job_type, source, None, None)["key"])


def _race(store: Store) -> list[tuple[str, str] | None]:
    """``CLAIMERS`` threads claim at the same moment, each in its own transaction."""
    start = threading.Barrier(CLAIMERS)
    results: list[Any] = [None] * CLAIMERS

    def claim(n: int) -> None:
        start.wait()
        with store.write() as conn:
            results[n] = job_store.claim_next(conn, f"w{n}")

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(CLAIMERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_workers_racing_for_jobs_take_each_once_and_one_per_source(
    store: Store, tmp_path: Path
) -> None:
    for round_ in range(5):
        # One job: exactly one claimer gets it, and its name is recorded.
        one = _queue(store, _source(store, f"one-{round_}", tmp_path))
        got = [r for r in _race(store) if r is not None]
        assert [key for key, _ in got] == [one], got
        with store.read() as conn:
            job = job_store.get(conn, one)
        assert job["state"] == "RUNNING" and job["worker"] in {f"w{n}" for n in
                                                                range(CLAIMERS)}
        # Two jobs of one source: one runs, the other waits for it.
        same = _source(store, f"same-{round_}", tmp_path)
        first, _second = _queue(store, same), _queue(store, same)
        got = [r for r in _race(store) if r is not None]
        assert got == [(first, same)], got
        # Jobs of two other sources: both run, each in one claimer.
        others = [_queue(store, _source(store, f"other-{round_}-{n}", tmp_path))
                  for n in range(2)]
        got = [r for r in _race(store) if r is not None]
        assert sorted(key for key, _ in got) == sorted(others), got
        with store.write() as conn:  # end this round's jobs: the next round starts clean
            for key in (one, first, *others):
                job_store.finish(conn, key, job_store.JobState.SUCCEEDED, "done")
            assert job_store.claim_next(conn, "w") is not None  # the source's second job now
            job_store.finish(conn, _second, job_store.JobState.SUCCEEDED, "done")


#: Files of the long job, and the rows of each: a job over them lasts seconds, and stops or dies
#: between two files or in one.
FILES, ROWS = 40, 40_000


@pytest.fixture(scope="module")
def big_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Enough CSV files that a job over them stays RUNNING for seconds (a column name of its
    own each, so that they are resources of their own, not one collection)."""
    folder = tmp_path_factory.mktemp("big") / "many"
    folder.mkdir()
    body = "".join(f"{i},c{i % 9973},{i * 0.37:.2f}\n" for i in range(ROWS))
    for n in range(FILES):
        (folder / f"part_{n:03d}.csv").write_text(f"id,code_{n},amount\n" + body)
    return folder


def _catalog(store_url: str, folder: Path) -> tuple[Store, str]:
    """The store migrated (as ``serve`` leaves it) with a PROFILE job of ``folder`` queued."""
    store = Store(store_url)
    store.migrate()
    key = _queue(store, _source(store, "big", folder))
    return store, key


def _wait(store: Store, key: str, until: Callable[[dict[str, Any]], bool],
          timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        with store.read() as conn:
            job = job_store.get(conn, key)
        if until(job):
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.05)


def _running_in(store: Store, key: str, workers: list[Process]) -> Process:
    """The worker in the middle of job ``key`` (a file profiled, most to go). Job processes
    run at a lower priority: on a busy machine that can take a while."""
    job = _wait(store, key, lambda j: j["state"] == "RUNNING" and (j["done"] or 0) >= 1,
                timeout=240)
    assert job["state"] == "RUNNING", job
    (worker,) = [w for w in workers if w.name == job["worker"]]
    return worker


@pytest.mark.slow(seconds=25)
def test_a_worker_killed_mid_job_leaves_nothing_running_or_half_written(
    store_url: str, big_folder: Path, tmp_path: Path
) -> None:
    store, key = _catalog(store_url, big_folder)
    try:
        with Processes(tmp_path, {**FAST_JOBS, "CATALOG_DATA_ROOTS": str(big_folder)}
                       ) as processes:
            workers = [processes.worker(store_url, "w-1"), processes.worker(store_url, "w-2")]
            victim = _running_in(store, key, workers)
            job_processes = psutil.Process(victim.popen.pid).children(recursive=True)
            assert job_processes
            victim.popen.kill()
            victim.popen.wait(10)
            # Its job process dies with it: nothing goes on writing the job.
            _, alive = psutil.wait_procs(job_processes, timeout=10)
            assert not alive, alive
            # The other worker's sweep ends the job, with the message of a stale job.
            job = _wait(store, key, lambda j: j["state"] != "RUNNING", timeout=30)
            assert (job["state"], job["message"]) == ("FAILED", STALE_MESSAGE), job
            assert job["worker"] == victim.name
        with store.read() as conn:
            staged = conn.execute(select(func.count()).select_from(staged_fields)).scalar_one()
            profiled = conn.execute(
                select(data_resources.c.path, data_resources.c.row_count,
                       func.count(resource_fields.c.name))
                .outerjoin(resource_fields,
                           resource_fields.c.resource_key == data_resources.c.key)
                .group_by(data_resources.c.path, data_resources.c.row_count)).all()
        assert staged == 0
        # Each file is recorded whole or not profiled at all: never some of its fields.
        assert len(profiled) == FILES
        for path, rows, fields in profiled:
            assert (rows, fields) in ((None, 0), (ROWS, 3)), (path, rows, fields)
    finally:
        store.dispose()


@pytest.mark.slow(seconds=15)
def test_sigterm_puts_the_workers_job_back_in_the_queue(
    store_url: str, big_folder: Path, tmp_path: Path
) -> None:
    store, key = _catalog(store_url, big_folder)
    try:
        with Processes(tmp_path, {**FAST_JOBS, "CATALOG_DATA_ROOTS": str(big_folder)}
                       ) as processes:
            worker = processes.worker(store_url, "w-term")
            _running_in(store, key, [worker])
            assert worker.stop() == 0, worker.text()[-3000:]
        with store.read() as conn:
            job = job_store.get(conn, key)
        assert (job["state"], job["message"]) == ("QUEUED", REQUEUED_MESSAGE), job
        assert "SIGTERM received" in worker.text() and "w-term: stopped" in worker.text()
    finally:
        store.dispose()


def test_a_store_a_worker_cannot_use_is_refused_with_a_sentence(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "catalog.sqlite3"
    with pytest.raises(SystemExit, match=r"^error: There is no catalog store at .*nowhere"):
        main(["worker", "--db-url", f"sqlite:///{missing}"])
    assert not missing.parent.exists()  # nothing created
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    with pytest.raises(SystemExit, match="holds no catalog; start catalog-nb serve"):
        main(["worker", "--db-url", f"sqlite:///{empty}"])
    with pytest.raises(SystemExit, match="--jobs takes"):
        main(["worker", "--jobs", "0"])
    if PG_URL:
        from sqlalchemy.engine import make_url

        absent = make_url(PG_URL).set(database="no_such_catalog").render_as_string(
            hide_password=False)
        with pytest.raises(SystemExit, match=r"cannot be reached: .*no_such_catalog"):
            main(["worker", "--db-url", absent])
    # As users run it: an unreachable server is an exit status and a sentence, no traceback.
    done = subprocess.run(
        [sys.executable, "-m", "catalog_nb.cli", "worker", "--db-url",
         "postgresql+psycopg://catalog:secret-pw@127.0.0.1:9/catalog"],
        capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done
    assert done.stderr.startswith("error: The store at postgresql+psycopg://catalog:***@"), done
    assert "cannot be reached" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "secret-pw" not in done.stderr


def test_the_service_records_its_own_name_in_the_jobs_it_runs(
    make_server: Callable[..., Any], tmp_path: Path
) -> None:
    (tmp_path / "a.csv").write_text("id,name\n1,x\n")
    server = make_server(data_roots=[tmp_path], job_workers=1)
    http = server.session()
    job = run_job(http, create_source(http, "named", "FILE", str(tmp_path))["key"], "BROWSE")
    # Its job process runs it, in the name of the service's process (this test's).
    assert job["worker"] == f"{socket.gethostname()}:{os.getpid()}", job
