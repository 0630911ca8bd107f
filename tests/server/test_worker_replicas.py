"""Two ``catalog-nb serve --no-jobs`` replicas and two ``catalog-nb worker`` processes on one
PostgreSQL: every job runs exactly once, in one of the workers, one job of a source at a time,
and sessions, configuration and search are the same whichever replica answers.

Real processes on 127.0.0.1 (``tests/server/worker_helpers.py``), real files, a real PostgreSQL
(the suite's run on PostgreSQL; the SQLite run skips this module: replicas are a team setup).
"""

from __future__ import annotations

import signal
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from catalog_nb.server.store import Store
from catalog_nb.server.store.schema import data_resources, staged_fields
from tests.conftest import PG_URL, TEST_APPLICATION, new_pg_database
from tests.server.worker_helpers import FAST_JOBS, Processes, wait_jobs_done

pytestmark = [pytest.mark.skipif(not PG_URL, reason="replicas share a PostgreSQL store"),
              pytest.mark.slow(seconds=30)]

SOURCES = 5
FILES = 3
#: Per source, in the order they are queued: the first creates its resources.
JOB_TYPES = ("BROWSE", "PROFILE", "DISCOVER")


def _lake(root: Path) -> list[Path]:
    folders = []
    for s in range(SOURCES):
        folder = root / f"source_{s}"
        folder.mkdir(parents=True)
        for f in range(FILES):
            rows = "".join(f"{i},item-{s}-{f}-{i},{i * 1.5}\n" for i in range(30))
            (folder / f"table_{f}.csv").write_text(f"id,name_{f},amount\n{rows}")
        folders.append(folder)
    return folders


def test_two_replicas_and_two_workers_share_one_store(tmp_path: Path) -> None:
    folders = _lake(tmp_path / "lake")
    url, drop = new_pg_database("tests/server/test_worker_replicas.py")
    env = {**FAST_JOBS, "CATALOG_DATA_ROOTS": str(tmp_path / "lake")}
    try:
        with Processes(tmp_path, env) as processes:
            # The first replica creates the catalog; the second and the workers open it.
            a = processes.replica(url, "replica-a")
            processes.ready(a)
            b = processes.replica(url, "replica-b")
            processes.ready(b)
            replicas = (a, b)
            token_a, token_b = a.login(), b.login()

            keys = []
            for n, folder in enumerate(folders):
                made = replicas[n % 2].call("POST", "/datasource", (token_a, token_b)[n % 2],
                                            json={"name": f"lake-{n}", "sourceType": "FILE",
                                                  "uri": str(folder)})
                assert made.status_code == 201, made.text
                keys.append(made.json()["key"])
            submitted: list[str] = []

            def submit(job_type: str, n: int) -> dict[str, Any]:
                replica, token = (a, token_a) if (n + len(submitted)) % 2 else (b, token_b)
                job = replica.call("POST", "/job", token,
                                   json={"jobType": job_type, "dataSourceKey": keys[n]})
                assert job.status_code == 201, job.text
                submitted.append(job.json()["key"])
                return dict(job.json())

            # A replica runs no job: one queued before any worker runs stays QUEUED.
            first = submit(JOB_TYPES[0], 0)
            time.sleep(1.0)
            seen = a.call("GET", f"/job/{first['key']}", token_a).json()
            assert (seen["state"], seen["worker"]) == ("QUEUED", None), seen

            workers = [processes.worker(url, "worker-1"), processes.worker(url, "worker-2")]
            for worker in workers:
                worker.wait_for("running up to")
            for job_type in JOB_TYPES:
                for n in range(SOURCES):
                    if (job_type, n) != (JOB_TYPES[0], 0):
                        submit(job_type, n)
            jobs = wait_jobs_done(b, token_b, len(submitted))

            # Every job ran exactly once, in one of the two workers, and both took some.
            assert sorted(j["key"] for j in jobs) == sorted(submitted)
            assert [j for j in jobs if j["state"] != "SUCCEEDED"] == []
            ran_by = Counter(j["worker"] for j in jobs)
            assert set(ran_by) == {"worker-1", "worker-2"}, ran_by
            started = Counter()
            for worker in workers:
                for line in worker.text().splitlines():
                    if ") started on " in line:
                        started[line.split("job ", 1)[1].split(" ", 1)[0]] += 1
            assert started == Counter(submitted), started
            # One job of a source at a time, in the order they were queued.
            for key in keys:
                mine = sorted((j for j in jobs if j["dataSourceKey"] == key),
                              key=lambda j: j["startTime"])
                assert [j["jobType"] for j in mine] == list(JOB_TYPES)
                for before, after in pairwise(mine):
                    assert before["endTime"] <= after["startTime"], (before, after)
                # The counts add up: the browse made the files' resources, nothing made twice.
                assert sum(j["counts"]["created"] for j in mine) == FILES, mine

            # Sessions: made on A, honoured on B; ended on A, refused on B.
            session = a.login()
            assert b.call("GET", "/user/list/roles", session).status_code == 200
            assert a.call("GET", "/logout", session).ok
            assert b.call("GET", "/user/list/roles", session).status_code == 401

            # Configuration written through A is B's.
            put = a.call("PUT", "/config/search.pageMax", token_a, json={"value": 37})
            assert put.status_code == 200, put.text
            seen = b.call("GET", "/config/search.pageMax", token_b)
            assert seen.status_code == 200 and seen.json()["value"] == 37, seen.text

            # Search answers the same on both.
            answers = []
            for replica, token in ((a, token_a), (b, token_b)):
                found = replica.call("POST", "/search/new", token,
                                     json={"searchPhrase": "table_1"})
                assert found.status_code == 201, found.text
                answers.append([e["key"] for e in found.json()["entities"]])
            assert answers[0] == answers[1] and len(answers[0]) == SOURCES, answers

            for worker in workers:
                assert worker.stop() == 0, worker.text()[-3000:]
            for replica in replicas:  # one serve process dies of the SIGTERM it stops on
                assert replica.stop() in (0, -signal.SIGTERM), replica.text()[-3000:]
            for worker in workers:  # the runner's own failures (claims, heartbeats) are logged
                for failure in ("claiming a job failed", "job heartbeat failed",
                                "the worker failed on job"):
                    assert failure not in worker.text(), worker.text()[-5000:]

        with Store(url, application_name=TEST_APPLICATION) as store, store.read() as conn:
            paths = conn.execute(select(data_resources.c.data_source_key, data_resources.c.path)
                                 ).all()
            staged = conn.execute(select(func.count()).select_from(staged_fields)).scalar_one()
        assert len(paths) == len(set(paths)) == SOURCES * FILES  # no resource twice
        assert staged == 0
    finally:
        drop()
