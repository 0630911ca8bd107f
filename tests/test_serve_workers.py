"""``catalog-nb serve --workers 2``: real processes on 127.0.0.1, one store, one job runner.

The command runs as users run it (a child process of the test); which worker answered a request
is read from the service's own log, whose lines name the process that wrote them. Every request
goes on a new connection, so the kernel hands them to either worker.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests

from catalog_nb.contract import API_PREFIX, SESSION_COOKIE
from catalog_nb.demo.embedded import free_port
from tests.conftest import ADMIN_PASSWORD, PG_URL, new_pg_database
from tests.server.lake import write_files

WORKERS = 2


@dataclass
class Service:
    """A running ``catalog-nb serve --workers N``."""

    process: subprocess.Popen[str]
    api: str
    log: Path

    def get(self, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
        """One request on a connection of its own (``Connection: close``)."""
        headers = {"Connection": "close"}
        if token:
            headers["Cookie"] = f"{SESSION_COOKIE}={token}"
        return requests.get(self.api + path, headers=headers, timeout=30, **kwargs)

    def post(self, path: str, token: str | None = None, **kwargs: Any) -> requests.Response:
        headers = {"Connection": "close"}
        if token:
            headers["Cookie"] = f"{SESSION_COOKIE}={token}"
        return requests.post(self.api + path, headers=headers, timeout=60, **kwargs)

    def login(self, user: str, password: str) -> str:
        response = self.post("/login", json={"username": user, "password": password})
        assert response.status_code == 200, response.text
        return str(response.cookies[SESSION_COOKIE])

    def answered_by(self, path: str, status: int) -> set[int]:
        """The processes that logged an answer ``status`` to ``GET path``."""
        wanted = f'"GET {API_PREFIX}{path} HTTP/1.1" {status}'
        pids = set()
        for line in self.log.read_text(errors="replace").splitlines():
            if wanted in line and "] " in line:
                pids.add(int(line.split("[", 1)[1].split("]", 1)[0]))
        return pids


def _spread(service: Service, path: str, token: str | None, count: int = 48
            ) -> list[requests.Response]:
    """``count`` requests from 8 threads at once, each on a new connection."""
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(lambda _: service.get(path, token), range(count)))


@contextmanager
def serving(folder: Path) -> Iterator[Service]:
    """``catalog-nb serve --workers`` on a fresh store in ``folder``, every worker started;
    stopped (SIGTERM) when the block ends, if it still runs."""
    port = free_port()
    args = [sys.executable, "-m", "catalog_nb.cli", "serve", "--workers", str(WORKERS),
            "--port", str(port), "--data-dir", str(folder / "store"), "--log-level", "info"]
    drop = None
    if PG_URL:
        url, drop = new_pg_database("tests/test_serve_workers.py")
        args += ["--db-url", url]
    env = {**os.environ, "CATALOG_ADMIN_PASSWORD": ADMIN_PASSWORD,
           "CATALOG_DATA_ROOTS": str(folder), "CATALOG_JOB_HEARTBEAT_SECONDS": "1"}
    log = folder / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env,
                                   text=True)
    service = Service(process, f"http://127.0.0.1:{port}{API_PREFIX}", log)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, log.read_text()
            try:
                if service.get("/version").status_code == 401:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        # Both workers up (each logs its start-up), not only the first to answer.
        while log.read_text().count("Application startup complete") < WORKERS:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield service
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        finally:
            if process.poll() is None:
                process.kill()
            if drop is not None:
                drop()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The module's service, shared by the tests that leave it running."""
    with serving(tmp_path_factory.mktemp("serve-workers")) as started:
        yield started


def _workers(service: Service) -> set[int]:
    text = service.log.read_text()
    return {int(line.split("Started server process [", 1)[1].split("]", 1)[0])
            for line in text.splitlines() if "Started server process [" in line}


def test_every_worker_answers_and_honours_one_session(service: Service) -> None:
    token = service.login("admin", ADMIN_PASSWORD)
    workers = _workers(service)
    assert len(workers) == WORKERS
    for _ in range(10):
        answers = _spread(service, "/version", token)
        assert [a.status_code for a in answers] == [200] * len(answers)
        if service.answered_by("/version", 200) >= workers:
            break
    assert service.answered_by("/version", 200) == workers


def test_answers_on_a_kept_alive_connection_do_not_wait_for_delayed_acks(
    service: Service
) -> None:
    # Without TCP_NODELAY on the workers' sockets each answer on a kept-alive connection
    # waits ~40 ms for the client's delayed ACK (Nagle): 25 requests would take a second.
    token = service.login("admin", ADMIN_PASSWORD)
    with requests.Session() as http:
        http.cookies.set(SESSION_COOKIE, token)
        took = []
        for _ in range(25):
            started = time.perf_counter()
            assert http.get(service.api + "/version", timeout=30).status_code == 200
            took.append(time.perf_counter() - started)
    assert sorted(took)[len(took) // 2] < 0.030, took


def test_a_logout_through_one_worker_is_honoured_by_every_worker(service: Service) -> None:
    token = service.login("admin", ADMIN_PASSWORD)
    assert {a.status_code for a in _spread(service, "/user/list/roles", token)} == {200}
    assert service.get("/logout", token).status_code == 200
    answers = _spread(service, "/user/list/roles", token)
    assert {a.status_code for a in answers} == {401}
    assert service.answered_by("/user/list/roles", 401) == _workers(service)


def test_a_role_taken_away_is_gone_in_every_worker_at_once(service: Service) -> None:
    admin = service.login("admin", ADMIN_PASSWORD)
    name = f"ana-{uuid.uuid4().hex[:6]}"
    made = service.post("/user", admin, json={"name": name, "roles": ["Steward", "Analyst"],
                                               "password": "ana-password-1"})
    assert made.status_code == 201, made.text
    ana = service.login(name, "ana-password-1")

    def roles() -> set[frozenset[str]]:
        return {frozenset(r["name"] for r in a.json())
                for a in _spread(service, "/user/list/roles", ana)}

    assert roles() == {frozenset({"Steward", "Analyst"})}  # cached in every worker now
    removed = service.post("/user/remove/role", admin, json={made.json()["key"]: ["Steward"]})
    assert removed.status_code == 201, removed.text
    assert roles() == {frozenset({"Analyst"})}


def _job_processes(pid: int, workers: set[int]) -> list[psutil.Process]:
    """A process's job processes: forked by the fork server it started (one of its children that
    is not a uvicorn worker; see catalog_nb/server/job_process.py)."""
    return [job for child in psutil.Process(pid).children() if child.pid not in workers
            and "multiprocessing.forkserver" in " ".join(child.cmdline())
            for job in child.children()]


def test_jobs_queued_through_a_worker_run_in_the_one_runner(service: Service) -> None:
    folder = write_files(service.log.parent / "lake", {"people.csv": "id,name\n1,ana\n2,bo\n"})
    admin = service.login("admin", ADMIN_PASSWORD)
    source = service.post("/datasource", admin, json={
        "name": f"files-{uuid.uuid4().hex[:6]}", "sourceType": "FILE", "uri": str(folder)})
    assert source.status_code == 201, source.text
    job = service.post("/job", admin, json={"jobType": "PROFILE",
                                            "dataSourceKey": source.json()["key"]})
    assert job.status_code == 201, job.text
    deadline = time.monotonic() + 120
    while job.json()["state"] not in ("SUCCEEDED", "FAILED"):
        assert time.monotonic() < deadline, job.text
        time.sleep(0.2)
        job = service.get(f"/job/{job.json()['key']}", admin)
    assert job.json()["state"] == "SUCCEEDED", job.text
    # It ran in a job process of the supervisor's runner; no worker has a runner to start one.
    workers = _workers(service)
    assert _job_processes(service.process.pid, workers)
    for worker in workers:
        assert _job_processes(worker, workers) == []


def test_the_service_stops_whole_on_sigterm(tmp_path: Path) -> None:
    # A service of its own: with --dist worksteal, the shared one's other tests may run in this
    # process after this one (a loaded machine showed it: they met a stopped service).
    with serving(tmp_path) as service:
        running = psutil.Process(service.process.pid).children(recursive=True)
        assert len(running) >= WORKERS
        service.process.send_signal(signal.SIGTERM)
        assert service.process.wait(60) == 0, service.log.read_text()[-2000:]
        _, alive = psutil.wait_procs(running, timeout=30)
        assert not alive, alive
        assert "Stopping parent process" in service.log.read_text()


def test_workers_that_cannot_share_a_store_are_refused() -> None:
    from catalog_nb.cli import main

    with pytest.raises(SystemExit, match="in-memory store lives in one process"):
        main(["serve", "--workers", "2", "--db-url", "sqlite://", "--port", "0"])
    with pytest.raises(SystemExit, match="1 or more"):
        main(["serve", "--workers", "0"])


def test_one_process_stops_on_sigterm_leaving_no_semaphore(tmp_path: Path) -> None:
    """``serve`` with one process dies of the SIGTERM it stops on (uvicorn raises it again
    once shut down), so exit handlers never run: the job runner must let go of the semaphores
    it shares with its job processes itself, or Python's resource tracker warns of leaks."""
    port = free_port()
    env = {**os.environ, "CATALOG_ADMIN_PASSWORD": ADMIN_PASSWORD}
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "catalog_nb.cli", "serve", "--port", str(port),
             "--data-dir", str(tmp_path / "store"), "--log-level", "warning"],
            stdout=out, stderr=subprocess.STDOUT, env=env, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, log.read_text()
            try:
                requests.get(f"http://127.0.0.1:{port}{API_PREFIX}/version", timeout=5)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
        running = psutil.Process(process.pid).children(recursive=True)  # the resource tracker
        process.send_signal(signal.SIGTERM)
        process.wait(60)
        psutil.wait_procs(running, timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert "leaked semaphore" not in log.read_text(), log.read_text()
