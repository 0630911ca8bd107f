"""Jobs per minute with 1 and with 2 ``catalog-nb worker`` processes beside a ``serve --no-jobs``
replica, next to the anchor: the same jobs run by the service's own in-process runner.

Each run starts on a fresh store with ``--sources`` small data sources (one CSV file of a few
rows each: a job's cost is the job machinery, browse, profile, discovery, not reading data),
queues one PROFILE job per source through ``POST /job``, and times from the first submission
until every job has ended. The anchor is measured in the same run, on the same machine, the same
way: an embedded service running its jobs in-process (``CATALOG_JOB_WORKERS`` job processes,
2 by default). Each worker runs ``--jobs`` jobs at once (the same default), so one worker runs as
many at once as the anchor. Prints jobs per minute, the ratio to the anchor and the load average,
on SQLite and on a throw-away PostgreSQL (``scripts/pg-cluster``; ``--backend`` picks one).

    .venv/bin/python -m tests.benchmarks.job_throughput [--sources 200] [--backend sqlite]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from catalog_nb.contract import API_PREFIX
from catalog_nb.demo.embedded import EmbeddedServer
from tests.benchmarks.postgres import pg_cluster
from tests.conftest import ADMIN_PASSWORD
from tests.server.worker_helpers import Api, Calls, Processes, wait_jobs_done

#: The jobs' wait for their end: 200 jobs take a minute or two on an idle 2-core machine.
TIMEOUT = 1800.0


def _lake(root: Path, count: int) -> list[Path]:
    folders = []
    for n in range(count):
        folder = root / f"source_{n:03d}"
        folder.mkdir(parents=True)
        rows = "".join(f"{i},item-{n}-{i},{i * 0.5}\n" for i in range(20))
        (folder / f"table_{n:03d}.csv").write_text(f"id,name_{n},amount\n{rows}")
        folders.append(folder)
    return folders


def _run_jobs(api: Calls, folders: list[Path]) -> float:
    """Make one source per folder, queue one PROFILE job each; seconds until all ended."""
    token = api.login()
    keys = []
    for n, folder in enumerate(folders):
        made = api.call("POST", "/datasource", token, json={
            "name": f"bench-{n:03d}", "sourceType": "FILE", "uri": str(folder)})
        if made.status_code != 201:
            raise RuntimeError(made.text)
        keys.append(made.json()["key"])
    started = time.perf_counter()
    for key in keys:
        job = api.call("POST", "/job", token, json={"jobType": "PROFILE", "dataSourceKey": key})
        if job.status_code != 201:
            raise RuntimeError(job.text)
    jobs = wait_jobs_done(api, token, len(keys), timeout=TIMEOUT)
    took = time.perf_counter() - started
    failed = [j for j in jobs if j["state"] != "SUCCEEDED"]
    if failed:
        raise RuntimeError(f"{len(failed)} jobs failed, the first: {failed[0]['message']}")
    return took


def anchor(url: str, folders: list[Path], folder: Path) -> float:
    """The service's in-process runner."""
    with EmbeddedServer(folder / "anchor", admin_password=ADMIN_PASSWORD, db_url=url,
                        data_roots=[folders[0].parent]) as server:
        return _run_jobs(Api(server.url + API_PREFIX), folders)


def workers(url: str, folders: list[Path], folder: Path, count: int) -> float:
    """A ``serve --no-jobs`` replica and ``count`` workers."""
    logs = folder / f"workers-{count}"
    logs.mkdir()
    env = {"CATALOG_DATA_ROOTS": str(folders[0].parent)}
    with Processes(logs, env) as processes:
        replica = processes.replica(url)
        processes.ready(replica)
        started = [processes.worker(url, f"bench-{n}") for n in range(count)]
        for worker in started:
            worker.wait_for("running up to")
        return _run_jobs(replica, folders)


@contextmanager
def _stores(backend: str, folder: Path) -> Iterator[Callable[[str], str]]:
    """A function giving a fresh store's URL for each name."""
    if backend == "sqlite":
        yield lambda name: f"sqlite:///{folder / name}.sqlite3"
        return
    # A folder of its own under the temporary root: pg-cluster hands it to the postgres user,
    # who cannot enter the benchmark's private temporary folder.
    cluster = Path(tempfile.mkdtemp(prefix="catalog-throughput-pg-"))
    with pg_cluster(cluster) as admin:
        engine = create_engine(admin, isolation_level="AUTOCOMMIT")

        def fresh(name: str) -> str:
            with engine.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
            return make_url(admin).set(database=name).render_as_string(hide_password=False)

        try:
            yield fresh
        finally:
            engine.dispose()
    shutil.rmtree(cluster, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=int, default=200)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), action="append",
                        help="(repeatable) default: both")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="catalog-throughput-") as temporary:
        folder = Path(temporary)
        folders = _lake(folder / "lake", args.sources)
        for backend in args.backend or ("sqlite", "postgresql"):
            with _stores(backend, folder / backend) as fresh:
                (folder / backend).mkdir(exist_ok=True)
                load = os.getloadavg()[0]
                base = anchor(fresh("anchor"), folders, folder / backend)
                runs = {count: workers(fresh(f"workers_{count}"), folders, folder / backend,
                                       count) for count in (1, 2)}
                after = os.getloadavg()[0]
            per_minute = 60 * args.sources
            print(f"{backend}: {args.sources} PROFILE jobs, one small source each "
                  f"(load average {load:.2f} -> {after:.2f})")
            print(f"  anchor, the service's in-process runner: {base:6.1f} s  "
                  f"{per_minute / base:6.0f} jobs/min")
            for count, took in runs.items():
                print(f"  {count} worker{'s' if count > 1 else ' '} beside serve --no-jobs:   "
                      f"{took:6.1f} s  {per_minute / took:6.0f} jobs/min  "
                      f"x{base / took:.2f} the anchor")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
