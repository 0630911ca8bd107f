"""Helpers of the data source and job tests: sources and jobs made via HTTP, resources read back.

The data resource endpoints have their own tests; these helpers read ``data_resources`` and
``resource_fields`` from the store to prove what a job wrote.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from catalog_nb.demo.lake import lake_sources
from catalog_nb.server.store.schema import data_resources, resource_fields
from tests.conftest import Http, Server
from tests.server.lake import demo_lake

FINISHED = ("SUCCEEDED", "FAILED")


def create_source(http: Http, name: str, source_type: str, uri: str, **fields: Any
                  ) -> dict[str, Any]:
    body = {"name": name, "sourceType": source_type, "uri": uri, **fields}
    response = http.post("/datasource", json=body)
    assert response.status_code == 201, response.text
    source: dict[str, Any] = response.json()
    return source


def start_job(http: Http, source_key: str, job_type: str = "PROFILE",
              path: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"jobType": job_type, "dataSourceKey": source_key}
    if path is not None:
        body["resourcePath"] = path
    response = http.post("/job", json=body)
    assert response.status_code == 201, response.text
    job: dict[str, Any] = response.json()
    assert job["state"] in ("QUEUED", "RUNNING", *FINISHED)
    return job


#: The longest pause between two polls of a job.
JOB_POLL_MAX = 0.25


def wait_job(http: Http, key: str, timeout: float = 120.0) -> dict[str, Any]:
    """The job once it has finished (fails the test after ``timeout`` seconds).

    Polled ever less often, as the client library polls: a fixed 50 ms made each waiting test
    send a request every 50 ms for as long as its job ran, and on a loaded machine (where jobs
    run longer) those requests took the CPU the job needed.
    """
    deadline = time.monotonic() + timeout
    pause = 0.02
    while True:
        response = http.get(f"/job/{key}")
        assert response.status_code == 200, response.text
        job: dict[str, Any] = response.json()
        if job["state"] in FINISHED:
            return job
        assert time.monotonic() < deadline, f"job still {job['state']} after {timeout} s: {job}"
        time.sleep(pause)
        pause = min(pause * 1.5, JOB_POLL_MAX)


def run_job(http: Http, source_key: str, job_type: str = "PROFILE", path: str | None = None,
            *, expect: str = "SUCCEEDED") -> dict[str, Any]:
    """Start a job, wait for it, and check how it ended."""
    job = wait_job(http, start_job(http, source_key, job_type, path)["key"])
    assert job["state"] == expect, job
    return job


def resources(server: Server, source_key: str) -> dict[str, dict[str, Any]]:
    """The stored resources of a source, by path."""
    with server.store.read() as conn:
        rows = conn.execute(
            select(data_resources).where(data_resources.c.data_source_key == source_key)
        ).mappings().all()
    return {str(r["path"]): dict(r) for r in rows}


def fields(server: Server, resource_key: str) -> dict[str, dict[str, Any]]:
    """The stored fields of a resource, by name."""
    with server.store.read() as conn:
        rows = conn.execute(
            select(resource_fields)
            .where(resource_fields.c.resource_key == resource_key)
            .order_by(resource_fields.c.position)
        ).mappings().all()
    return {str(r["name"]): dict(r) for r in rows}


def profiled_demo_catalog(make_server: Callable[..., Server]) -> Server:
    """A server of its own on the demo lake, both sources registered through ``POST
    /datasource`` and profiled by PROFILE jobs (tags suggested, joins and lineage discovered)."""
    server = make_server(data_roots=[demo_lake()])
    admin = server.session()
    for payload in lake_sources(demo_lake()):
        response = admin.post("/datasource", json=payload)
        assert response.status_code == 201, response.text
        run_job(admin, response.json()["key"])
    return server
