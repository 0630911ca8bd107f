"""Benchmark: profiling TPC-H through the catalog from an S3-compatible store vs. local disk,
with the local engine and with the Spark engine.

    python -m tests.benchmarks.object_store [--scale 1] [--data DIR] [--repeats N]
                                            [--engines local,spark] [--master local[2]]

TPC-H at ``--scale`` (default 0.1; the issue's figure is SF1) is generated with ``tpchgen-cli``
as CSV and as Parquet into ``--data`` (default ``~/.cache/catalog_nb/tpch``, shared with
:mod:`.profile_tpch`) and put into moto's S3 server (``python -m moto.server``, a process of its
own on a free port of 127.0.0.1). An embedded catalog service (jobs in processes, as deployed;
tag and relation discovery off, so only browsing and profiling are timed) then profiles each
format's eight tables with real PROFILE jobs: from the folder on local disk and from the bucket,
each with every engine of ``--engines`` (the Spark engine on ``--master``, ``local[2]`` by
default: its session is started by a first, untimed job and kept by the one job process, as a
served catalog keeps it). Each job is timed from its POST to its end, ``--repeats`` times on
fresh sources, the places and engines taking turns, and the best time kept.

Prints, per format and engine: MB, the seconds from local disk with the local engine (the
anchor), the seconds of this engine from disk and from the object store, each as a ratio to the
anchor, and the object store's MB/s, with the load average before and after. moto is a test
double written
in Python that reads a whole object to answer any range request, so the ratio is an upper bound
of what a real store on the same machine would cost.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import boto3
import requests
from boto3.s3.transfer import TransferConfig

from catalog_nb.demo.embedded import EmbeddedServer
from tests.benchmarks.harness import PASSWORD, Api
from tests.benchmarks.profile_tpch import TABLES, ensure_tpch

BUCKET = "tpch"
KEY_ID, SECRET = "benchmark", "benchmark-secret"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    """moto's S3 server in a process of its own (so it competes with the catalog for the CPU
    as a real local store would, not for this process's interpreter lock)."""
    port = _free_port()
    # This interpreter's moto (``moto_server`` on PATH may be another installation's).
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            requests.get(endpoint, timeout=10)  # the first answer waits for moto's imports
            return process, endpoint
        except requests.RequestException:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("moto's server did not start") from None
            time.sleep(0.2)


def upload(endpoint: str, folder: Path, prefix: str) -> None:
    """Every table of ``folder`` into the bucket under ``prefix`` (multipart for large ones)."""
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET)
    existing = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
    if BUCKET not in existing:
        client.create_bucket(Bucket=BUCKET)
    config = TransferConfig(multipart_threshold=64 * 2**20, multipart_chunksize=64 * 2**20)
    for path in sorted(folder.iterdir()):
        client.upload_file(str(path), BUCKET, f"{prefix}/{path.name}", Config=config)


def timed_profile(api: Api, name: str, uri: str, engine: str = "local"
                  ) -> tuple[float, dict[str, Any]]:
    """Seconds of a PROFILE job of a fresh source at ``uri`` on ``engine``, from its POST to its
    end."""
    key = api.post("/datasource", {"name": name, "sourceType": "FILE", "uri": uri,
                                   "engine": engine})["key"]
    clock = time.monotonic()
    job = api.run_job(key, "PROFILE")
    seconds = time.monotonic() - clock
    if job["state"] != "SUCCEEDED" or job["counts"]["errors"]:
        raise RuntimeError(f"{name}: {job['message']} {job['errors']}")
    if job["engine"] != engine:
        raise RuntimeError(f"{name}: profiled by {job['engine']}, not {engine}")
    return seconds, job


def run(data: Path, scale: str, repeats: int, engines: list[str], master: str) -> None:
    """Generate, upload, profile both ways, print the table."""
    folders = {fmt: ensure_tpch(data, scale, fmt) for fmt in ("csv", "parquet")}
    moto, endpoint = start_moto()
    try:
        for folder in folders.values():
            clock = time.monotonic()
            upload(endpoint, folder, folder.name)
            print(f"uploaded {folder.name} in {time.monotonic() - clock:.1f} s", flush=True)
        with tempfile.TemporaryDirectory(prefix="catalog-object-bench-") as work:
            # One job process: it starts Spark once and keeps the session for the next jobs.
            server = EmbeddedServer(
                Path(work) / "catalog", admin_password=PASSWORD, data_roots=[data],
                object_roots=[f"s3://{BUCKET}"], discovery_after_profile=False,
                relations_after_profile=False, job_workers=1, spark_master=master,
            ).start()
            try:
                api = Api(server.url)
                if "spark" in engines:
                    warm_up(api, data)
                measure(api, folders, endpoint, scale, repeats, engines)
            finally:
                server.stop()
    finally:
        moto.terminate()
        moto.wait(timeout=30)


def warm_up(api: Api, data: Path) -> None:
    """A first Spark job on a tiny file (under the data root): the job process starts its Spark
    session (timed on its own, untimed in the table)."""
    folder = data / "spark-warm-up"
    folder.mkdir(exist_ok=True)
    (folder / "warm.csv").write_text("id,name\n1,a\n2,b\n")
    seconds, _ = timed_profile(api, "spark-warm-up", str(folder), "spark")
    print(f"Spark session start-up and a first tiny job: {seconds:.1f} s", flush=True)


def _ratio(seconds: float, anchor: float | None) -> str:
    return f"{seconds / anchor:7.2f}" if anchor else f"{'-':>7}"


def measure(api: Api, folders: dict[str, Path], endpoint: str, scale: str,
            repeats: int, engines: list[str]) -> None:
    print(f"load average before: {_load()}  (cores: {os.cpu_count()})")
    print(f"{'TPC-H SF' + scale:16} {'engine':6} {'MB':>7} {'anchor s':>9} {'disk s':>7} "
          f"{'/anchor':>7} {'s3 s':>7} {'/anchor':>7} {'s3 MB/s':>8}")
    settings = urlencode({"endpoint": endpoint})
    for fmt, folder in folders.items():
        size = sum((folder / f"{t}.{fmt}").stat().st_size for t in TABLES) / 2**20
        places = {"disk": str(folder),
                  "s3": f"s3://{KEY_ID}:{SECRET}@{BUCKET}/{folder.name}?{settings}"}
        best = {(engine, place): float("inf") for engine in engines for place in places}
        for attempt in range(repeats):
            for engine, place in best:
                seconds, _ = timed_profile(api, f"{place}-{engine}-{fmt}-{attempt}",
                                           places[place], engine)
                best[engine, place] = min(best[engine, place], seconds)
        anchor = best.get(("local", "disk"))
        for engine in engines:
            disk, remote = best[engine, "disk"], best[engine, "s3"]
            print(f"{fmt:16} {engine:6} {size:7.1f} {anchor or float('nan'):9.2f} {disk:7.2f} "
                  f"{_ratio(disk, anchor)} {remote:7.2f} {_ratio(remote, anchor)} "
                  f"{size / remote:8.0f}", flush=True)
    print(f"load average after: {_load()}")


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scale", default="0.1", help="TPC-H scale factor (1: the issue's)")
    parser.add_argument("--data", type=Path, default=Path.home() / ".cache/catalog_nb/tpch")
    parser.add_argument("--repeats", type=int, default=2, help="jobs per side; best kept")
    parser.add_argument("--engines", default="local,spark",
                        help="comma-separated engines to time (local is the anchor's)")
    parser.add_argument("--master", default="local[2]", help="the Spark engine's master")
    args = parser.parse_args(argv)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if not engines or set(engines) - {"local", "spark"}:
        parser.error("--engines takes local and/or spark")
    args.data.mkdir(parents=True, exist_ok=True)
    run(args.data.resolve(), str(args.scale), max(1, args.repeats), engines, args.master)
    return 0


if __name__ == "__main__":
    sys.exit(main())
