"""Real ``catalog-nb serve --no-jobs`` replicas and ``catalog-nb worker`` processes for tests.

Each runs as users run it (a child process of the test, its output in a log file); stopping one
sends SIGTERM and waits, and kills it only when it does not stop.

Example::

    with Processes(tmp_path, env) as processes:
        replica = processes.replica(url)
        worker = processes.worker(url, "w1")
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from catalog_nb.contract import API_PREFIX, SESSION_COOKIE
from catalog_nb.demo.embedded import free_port
from tests.conftest import ADMIN_PASSWORD

#: Short heartbeats, so a dead worker's job is swept within seconds (the defaults: 5 s and 60 s).
FAST_JOBS = {"CATALOG_JOB_HEARTBEAT_SECONDS": "0.5", "CATALOG_JOB_STALE_SECONDS": "3"}


@dataclass
class Process:
    """A running ``catalog-nb`` command and its log."""

    popen: subprocess.Popen[str]
    log: Path
    name: str

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, words: str, timeout: float = 90) -> None:
        """Until the log holds ``words`` (fails if the process ends first)."""
        deadline = time.monotonic() + timeout
        while words not in self.text():
            assert self.popen.poll() is None, f"{self.name} ended:\n{self.text()[-3000:]}"
            assert time.monotonic() < deadline, f"{self.name}: no {words!r}:\n{self.text()[-3000:]}"
            time.sleep(0.1)

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM, then wait; its exit status (killed if it did not stop in time)."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(10)
            raise AssertionError(f"{self.name} did not stop on SIGTERM:\n{self.text()[-3000:]}"
                                 ) from None


class Calls:
    """Requests to a service whose API base is ``api``, one connection each."""

    api: str

    def call(self, method: str, path: str, token: str | None = None,
             **kwargs: Any) -> requests.Response:
        """One request on a connection of its own, with the session ``token`` if given."""
        cookies = {SESSION_COOKIE: token} if token else None
        return requests.request(method, self.api + path, cookies=cookies, timeout=60, **kwargs)

    def login(self, user: str = "admin", password: str = ADMIN_PASSWORD) -> str:
        response = self.call("POST", "/login", json={"username": user, "password": password})
        assert response.status_code == 200, response.text
        return str(response.cookies[SESSION_COOKIE])


@dataclass
class Api(Calls):
    """Any service's API (an embedded one, say)."""

    api: str


@dataclass
class Replica(Process, Calls):
    """A ``catalog-nb serve --no-jobs`` answering on ``api``."""

    api: str = ""


@dataclass
class Processes:
    """Starts commands in ``folder`` with ``env``; stops every one still running at the end."""

    folder: Path
    env: dict[str, str]
    started: list[Process] = field(default_factory=list)

    def _start(self, name: str, args: list[str]) -> tuple[subprocess.Popen[str], Path]:
        log = self.folder / f"{name}.log"
        env = {**os.environ, "CATALOG_ADMIN_PASSWORD": ADMIN_PASSWORD, **self.env}
        with log.open("w") as out:
            popen = subprocess.Popen([sys.executable, "-m", "catalog_nb.cli", *args],
                                     stdout=out, stderr=subprocess.STDOUT, env=env, text=True)
        return popen, log

    def replica(self, url: str, name: str = "replica") -> Replica:
        """Start ``serve --no-jobs`` on the store ``url`` (returns at once; see :meth:`ready`)."""
        port = free_port()
        popen, log = self._start(name, ["serve", "--no-jobs", "--port", str(port), "--db-url",
                                        url, "--log-level", "warning"])
        replica = Replica(popen, log, name, api=f"http://127.0.0.1:{port}{API_PREFIX}")
        self.started.append(replica)
        return replica

    def worker(self, url: str, name: str, jobs: int = 1) -> Process:
        """Start ``catalog-nb worker --name name`` on the store ``url`` (returns at once)."""
        popen, log = self._start(name, ["worker", "--db-url", url, "--name", name, "--jobs",
                                        str(jobs), "--poll-seconds", "0.2"])
        worker = Process(popen, log, name)
        self.started.append(worker)
        return worker

    @staticmethod
    def ready(replica: Replica, timeout: float = 90) -> None:
        """Until the replica answers (401 without a session)."""
        deadline = time.monotonic() + timeout
        while True:
            assert replica.popen.poll() is None, replica.text()[-3000:]
            try:
                if replica.call("GET", "/version").status_code == 401:
                    return
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, replica.text()[-3000:]
            time.sleep(0.1)

    def __enter__(self) -> Processes:
        return self

    def __exit__(self, *_exc: object) -> None:
        for process in self.started:
            if process.popen.poll() is None:
                process.popen.send_signal(signal.SIGTERM)
        for process in self.started:
            try:
                process.popen.wait(60)
            except subprocess.TimeoutExpired:
                process.popen.kill()
                process.popen.wait(10)


def wait_jobs_done(replica: Calls, token: str, count: int, timeout: float = 180
                   ) -> list[dict[str, Any]]:
    """Until the ``count`` newest jobs have all ended; those jobs."""
    deadline = time.monotonic() + timeout
    while True:
        response = replica.call("GET", "/job", token, params={"limit": count})
        assert response.status_code == 200, response.text
        jobs: list[dict[str, Any]] = response.json()
        if len(jobs) >= count and all(j["state"] in ("SUCCEEDED", "FAILED") for j in jobs):
            return jobs
        assert time.monotonic() < deadline, [(j["key"], j["state"]) for j in jobs]
        time.sleep(0.2)
