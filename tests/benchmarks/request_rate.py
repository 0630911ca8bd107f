"""Benchmark: requests per second and latency of reads, side by side with a FastAPI hello world
under the same server and worker count, in one run.

    python -m tests.benchmarks.request_rate [--workers 1] [--connections 32] [--seconds 10]
        [--db-url postgresql+psycopg://... | --postgres] [--rounds 2]

1. Load generator: wrk (``apt-get install -y wrk``, run by the benchmark when wrk is missing and
   it may; it says so and stops when it cannot). wrk is C and keeps its connections open, so it
   measures the server, not a Python client.
2. Builds a small data lake (three CSV files of 20 columns, one a collection of two), starts the
   catalog as a deployment runs it (``catalog-nb serve --workers N`` in a process of its own, on
   127.0.0.1; SQLite in a temporary folder, ``--db-url``, or a throw-away PostgreSQL cluster with
   ``--postgres``), profiles the lake through a real PROFILE job and logs in.
3. Starts a FastAPI hello world (``def`` and ``async def`` routes returning one small JSON
   object) under the same uvicorn, with the same worker count.
4. With ``--connections`` connections for ``--seconds`` each (after a warm-up), in turns so load
   on a shared machine falls on all of them, for ``--rounds`` rounds (the best round counts):
   ``GET /api/v2/dataresource/{key}`` and ``GET /api/v2/version`` with the session cookie, and
   the two hello world routes.
5. Prints req/s, p50 and p99 latency, the server's CPU time per request (user + system, of its
   processes; on a shared machine it moves less with the load than req/s does), the ratio to
   each hello world, the load average, and whether each target of issue 13 is met: reads
   >= 1,500 req/s with p99 < 20 ms on one worker, and >= 0.5 of the hello world (the
   ``async def`` one, the faster; the ``def`` one is shown).

Not a test: run it by hand, read the figures.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import requests
from fastapi import FastAPI

from catalog_nb.contract import API_PREFIX, SESSION_COOKIE
from catalog_nb.demo.embedded import free_port
from tests.benchmarks.postgres import postgres_database

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "benchmark-password"
TARGET_RATE = 1500.0
TARGET_P99_MS = 20.0
TARGET_HELLO_RATIO = 0.5

# -- the hello world ------------------------------------------------------------------------------

#: ``uvicorn tests.benchmarks.request_rate:hello``: the anchor, served like the catalog.
hello = FastAPI()


@hello.get("/def")
def hello_def() -> dict[str, str]:
    return {"hello": "world"}


@hello.get("/async")
async def hello_async() -> dict[str, str]:
    return {"hello": "world"}


# -- wrk ------------------------------------------------------------------------------------------


def wrk_binary() -> str:
    """The wrk command, installed with apt-get when missing (root only)."""
    found = shutil.which("wrk")
    if not found and shutil.which("apt-get") and os.geteuid() == 0:
        print("wrk is missing: apt-get install -y wrk", flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        for command in (["apt-get", "install", "-y", "-qq", "wrk"], ["apt-get", "update", "-qq"],
                        ["apt-get", "install", "-y", "-qq", "wrk"]):
            subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=False)
            found = shutil.which("wrk")
            if found:
                break
    if not found:
        raise SystemExit("This benchmark needs wrk (https://github.com/wg/wrk): install it with "
                         "your package manager (apt-get install wrk) and run it again.")
    return found


@dataclass
class Run:
    """One wrk run's figures."""

    rate: float
    p50_ms: float
    p99_ms: float
    errors: int
    load: float
    #: The server's CPU time per request (user + system), in microseconds.
    cpu_us: float = float("nan")


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _find(pattern: str, out: str) -> str:
    found = re.search(pattern, out)
    if found is None:
        raise SystemExit(f"wrk printed no {pattern!r}:\n{out}")
    return found.group(1)


def _ms(value: str) -> float:
    """wrk's latency text (``1.23ms``, ``850.00us``, ``1.02s``) in milliseconds."""
    number, unit = re.findall(r"([\d.]+)(us|ms|s|m)$", value.strip())[0]
    return float(number) * _UNITS[unit]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` and its live descendants (NaN once it is
    gone): the server and, with ``--workers N``, its worker processes."""
    try:
        server = psutil.Process(pid)
        processes = [server, *server.children(recursive=True)]
    except psutil.Error:
        return float("nan")
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.Error:
            continue  # a worker that ended meanwhile
        total += times.user + times.system
    return total


def wrk(binary: str, url: str, connections: int, seconds: float, cookie: str | None,
        server_pid: int | None = None) -> Run:
    """Run wrk against ``url`` and read its figures (``--latency`` prints the percentiles);
    with ``server_pid``, also the server's CPU time per request."""
    args = [binary, f"-t{min(2, connections)}", f"-c{connections}", f"-d{seconds:g}s",
            "--latency", "--timeout", "10s"]
    if cookie:
        args += ["-H", f"Cookie: {SESSION_COOKIE}={cookie}"]
    load = os.getloadavg()[0]
    cpu_before = cpu_seconds(server_pid) if server_pid else float("nan")
    out = subprocess.run([*args, url], check=True, text=True, capture_output=True).stdout
    cpu = cpu_seconds(server_pid) - cpu_before if server_pid else float("nan")
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    failed = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                       out)
    errors = (int(bad.group(1)) if bad else 0) + (
        sum(int(n) for n in failed.groups()) if failed else 0)
    requests_done = int(_find(r"(\d+) requests in", out))
    return Run(rate=float(_find(r"Requests/sec:\s+([\d.]+)", out)),
               p50_ms=_ms(_find(r"\s50%\s+(\S+)", out)),
               p99_ms=_ms(_find(r"\s99%\s+(\S+)", out)), errors=errors, load=load,
               cpu_us=cpu * 1e6 / max(requests_done, 1))


# -- the services ---------------------------------------------------------------------------------


def _wait(url: str, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            requests.get(url, timeout=2)
            return
        except requests.ConnectionError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"{what} did not start") from None
            time.sleep(0.2)


@contextmanager
def catalog(folder: Path, db_url: str | None, workers: int, lake: Path
            ) -> Iterator[tuple[str, int]]:
    """``catalog-nb serve --workers N`` in a process of its own; yields its API base URL and
    its process id."""
    port = free_port()
    env = dict(os.environ, CATALOG_DATA_DIR=str(folder / "store"),
               CATALOG_ADMIN_PASSWORD=PASSWORD, CATALOG_DATA_ROOTS=str(lake))
    if db_url:
        env["CATALOG_DB_URL"] = db_url
    api = f"http://127.0.0.1:{port}{API_PREFIX}"
    command = [sys.executable, "-m", "catalog_nb.cli", "serve", "--host", "127.0.0.1", "--port",
               str(port), "--workers", str(workers), "--log-level", "warning"]
    with _running(command, api + "/version", "the catalog service", env=env) as pid:
        yield api, pid


@contextmanager
def _running(command: list[str], ready: str, what: str, **options: Any) -> Iterator[int]:
    """``command`` in a process of its own for the block, once ``ready`` answers; yields its
    process id."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, **options)
    try:
        _wait(ready, process, what)
        yield process.pid
    finally:
        process.terminate()
        process.wait(60)


def serve_hello(port: int, workers: int) -> None:
    """Serve the hello world as ``catalog-nb serve`` serves the catalog: one uvicorn server, or
    ``workers`` processes on one listening socket with TCP_NODELAY (``server/serving.py``)."""
    import socket

    import uvicorn
    from uvicorn.supervisors import Multiprocess

    config = uvicorn.Config("tests.benchmarks.request_rate:hello", host="127.0.0.1", port=port,
                            workers=workers, log_level="warning")
    if workers == 1:
        uvicorn.Server(config).run()
        return
    listening = config.bind_socket()
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    Multiprocess(config, sockets=[listening]).run()


@contextmanager
def hello_world(workers: int) -> Iterator[tuple[str, int]]:
    """The hello world under uvicorn with ``workers`` workers; yields its root URL and its
    process id."""
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "tests.benchmarks.request_rate", "--hello-port", str(port),
               "--workers", str(workers)]
    with _running(command, root + "/def", "the hello world", cwd=REPO) as pid:
        yield root, pid


def write_lake(folder: Path) -> Path:
    """Three CSV files of 20 columns (two of them one collection), 2,000 rows each."""
    lake = folder / "lake"
    for path in ("customers.csv", "orders/2024-01.csv", "orders/2024-02.csv"):
        target = lake / path
        target.parent.mkdir(parents=True, exist_ok=True)
        header = ["id", "email", "city", "signup", *(f"metric_{i}" for i in range(16))]
        rows = [",".join(header)]
        for n in range(2000):
            rows.append(",".join([str(n), f"user{n}@example.org", ("Oslo", "Rome")[n % 2],
                                  f"2024-01-{n % 28 + 1:02d}",
                                  *(str((n * (i + 7)) % 1000) for i in range(16))]))
        target.write_text("\n".join(rows) + "\n")
    return lake


def prepare(api: str, lake: Path) -> tuple[str, str]:
    """Profile the lake through a real job and log in: (session token, a file resource's key)."""
    http = requests.Session()
    answer = http.post(api + "/login", json={"username": "admin", "password": PASSWORD},
                       timeout=30)
    answer.raise_for_status()
    source = http.post(api + "/datasource", json={
        "name": f"lake-{os.getpid()}", "sourceType": "FILE", "uri": str(lake)}, timeout=30)
    source.raise_for_status()
    job = http.post(api + "/job", json={"jobType": "PROFILE",
                                        "dataSourceKey": source.json()["key"]}, timeout=30).json()
    while job["state"] not in ("SUCCEEDED", "FAILED"):
        time.sleep(0.2)
        job = http.get(f"{api}/job/{job['key']}", timeout=30).json()
    if job["state"] != "SUCCEEDED":
        raise SystemExit(f"profiling the lake failed: {job['message']}")
    listed = http.get(api + "/dataresource/metadata", timeout=30).json()["list"]
    key = next(r["key"] for r in listed if r["resourcePath"] == "customers.csv")
    return str(http.cookies[SESSION_COOKIE]), str(key)


# -- main -----------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hello-port", type=int, help=argparse.SUPPRESS)  # the anchor's process
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--db-url", default=None, help="an empty store database (PostgreSQL)")
    where.add_argument("--postgres", action="store_true",
                       help="start a throw-away PostgreSQL cluster (scripts/pg-cluster)")
    args = parser.parse_args(argv)
    if args.hello_port:
        serve_hello(args.hello_port, args.workers)
        return 0
    binary = wrk_binary()
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="request-rate-")))
        db_url = args.db_url
        if args.postgres:
            # A folder of its own: pg-cluster hands it to the postgres user.
            db_url = stack.enter_context(postgres_database(Path(tempfile.mkdtemp(
                prefix="request-rate-pg-")), "request_rate"))
        lake = write_lake(folder)
        api, catalog_pid = stack.enter_context(catalog(folder, db_url, args.workers, lake))
        hello_root, hello_pid = stack.enter_context(hello_world(args.workers))
        token, key = prepare(api, lake)
        targets = {
            "GET /dataresource/{key}": (f"{api}/dataresource/{key}", token, catalog_pid),
            "GET /version": (f"{api}/version", token, catalog_pid),
            "hello world (def)": (f"{hello_root}/def", None, hello_pid),
            "hello world (async def)": (f"{hello_root}/async", None, hello_pid),
        }
        store = "PostgreSQL" if db_url else "SQLite"
        print(f"{args.workers} worker(s), {args.connections} connections, {args.seconds:g} s "
              f"each, {args.rounds} round(s), store {store}, wrk {binary}", flush=True)
        best: dict[str, Run] = {}
        for round_number in range(args.rounds):
            for name, (url, cookie, pid) in targets.items():
                wrk(binary, url, args.connections, 2.0, cookie)  # warm-up
                run = wrk(binary, url, args.connections, args.seconds, cookie, pid)
                print(f"  round {round_number + 1}: {name:<26} {run.rate:8.0f} req/s  "
                      f"p50 {run.p50_ms:6.1f} ms  p99 {run.p99_ms:6.1f} ms  "
                      f"cpu {run.cpu_us:5.0f} us/req  load {run.load:.2f}"
                      + (f"  ERRORS {run.errors}" if run.errors else ""), flush=True)
                if name not in best or run.rate > best[name].rate:
                    best[name] = run
    report(best, args.workers, store)
    return 0


def report(best: dict[str, Run], workers: int, store: str) -> None:
    """The best round of each, the ratios, and whether each target is met."""
    hello_def = best["hello world (def)"].rate
    hello_async = best["hello world (async def)"].rate
    print(f"\nbest round ({store}, {workers} worker(s); load average now "
          f"{os.getloadavg()[0]:.2f}):")
    print(f"  {'':<26} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'cpu us':>7} {'/hello def':>11} "
          f"{'/hello async':>13} {'load':>6}")
    for name, run in best.items():
        print(f"  {name:<26} {run.rate:8.0f} {run.p50_ms:8.1f} {run.p99_ms:8.1f} "
              f"{run.cpu_us:7.0f} {run.rate / hello_def:11.2f} {run.rate / hello_async:13.2f} "
              f"{run.load:6.2f}" + (f"  ERRORS {run.errors}" if run.errors else ""))
    print("targets:")
    for name in ("GET /dataresource/{key}", "GET /version"):
        run = best[name]
        if workers == 1:
            fast = run.rate >= TARGET_RATE and run.p99_ms < TARGET_P99_MS and not run.errors
            print(f"  {name}: >= {TARGET_RATE:,.0f} req/s and p99 < {TARGET_P99_MS:g} ms on one "
                  f"worker: {'met' if fast else 'NOT met'} ({run.rate:,.0f} req/s, "
                  f"p99 {run.p99_ms:.1f} ms)")
        ratio = run.rate / hello_async
        by_cpu = best["hello world (async def)"].cpu_us / run.cpu_us
        print(f"  {name}: >= {TARGET_HELLO_RATIO} of the hello world: "
              f"{'met' if ratio >= TARGET_HELLO_RATIO else 'NOT met'} ({ratio:.2f} of async def, "
              f"{run.rate / hello_def:.2f} of def; {by_cpu:.2f} of async def by server CPU "
              "per request)")


if __name__ == "__main__":
    raise SystemExit(main())
