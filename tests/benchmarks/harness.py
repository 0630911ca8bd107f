"""What the demo-lake benchmarks share: their command line (``--scale``, ``--seed``,
``--keep``) and a logged-in HTTP session on the embedded service they start."""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

from catalog_nb.contract import API_PREFIX
from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.demo.lake import lake_sources

#: The administrator password the benchmarks give their embedded service.
PASSWORD = "benchmark-password"


def lake_main(run: Callable[[float, int, Path], None], description: str, prefix: str,
              argv: list[str] | None = None) -> int:
    """Parse the options and call ``run(scale, seed, folder)`` with a folder for the lake: the
    one ``--keep`` names (kept afterwards), else a temporary one."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build in this folder and keep it")
    args = parser.parse_args(argv)
    return in_folder(args.keep, prefix, lambda folder: run(args.scale, args.seed, folder))


def in_folder(keep: Path | None, prefix: str, run: Callable[[Path], None]) -> int:
    """Call ``run(folder)`` with ``keep`` (made if needed, kept afterwards) or a temporary
    folder; returns 0 (the exit status of a benchmark that ran)."""
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
        run(keep.resolve())
        return 0
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        run(Path(folder))
    return 0


class Api:
    """A logged-in session on the embedded service."""

    def __init__(self, url: str) -> None:
        self.base = url + API_PREFIX
        self.http = requests.Session()
        self.post("/login", {"username": "admin", "password": PASSWORD})

    def post(self, path: str, body: dict[str, Any]) -> Any:
        response = self.http.post(self.base + path, json=body, timeout=60)
        if response.status_code not in (200, 201):
            raise RuntimeError(f"POST {path}: {response.status_code} {response.text}")
        return response.json()

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(self.base + path, params=params, timeout=120)
        if response.status_code != 200:
            raise RuntimeError(f"GET {path}: {response.status_code} {response.text}")
        return response.json()

    def every(self, path: str, **params: Any) -> list[dict[str, Any]]:
        """All items of a ``{list, totalCount}`` answer, page by page."""
        found: list[dict[str, Any]] = []
        while True:
            page = self.get(path, start=len(found), size=1000, **params)
            found.extend(page["list"])
            if not page["list"] or len(found) >= page["totalCount"]:
                return found

    def run_job(self, source_key: str, job_type: str) -> dict[str, Any]:
        job = self.post("/job", {"jobType": job_type, "dataSourceKey": source_key})
        while job["state"] not in ("SUCCEEDED", "FAILED"):
            time.sleep(0.1)
            job = self.http.get(f"{self.base}/job/{job['key']}", timeout=60).json()
        if job["state"] != "SUCCEEDED":
            raise RuntimeError(f"{job_type} job failed: {job['message']}")
        return dict(job)



@contextmanager
def profiled_demo(lake: Path, folder: Path) -> Iterator[tuple[EmbeddedServer, Api, list[str]]]:
    """An embedded service (store in ``folder/catalog``) with the lake's sources registered and
    profiled through real PROFILE jobs, whose messages, first errors and time are printed:
    ``(server, api, source keys)``. The service stops when the block ends."""
    server = EmbeddedServer(folder / "catalog", admin_password=PASSWORD,
                            data_roots=[lake]).start()
    try:
        api = Api(server.url)
        keys = []
        clock = time.monotonic()
        for payload in lake_sources(lake):
            keys.append(api.post("/datasource", payload)["key"])
            job = api.run_job(keys[-1], "PROFILE")
            print(f"  {payload['name']}: {job['message']}")
            for error in (job.get("errors") or [])[:10]:
                print(f"    error: {error}")
        print(f"Profiling + discovery: {time.monotonic() - clock:.1f} s")
        yield server, api, keys
    finally:
        server.stop()
