"""Request and response models of jobs (``/job``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from catalog_nb.contract import JobEngine, JobType
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Payload, Wire
from catalog_nb.server.schemas.examples import examples
from catalog_nb.server.store.jobs import COUNT_NAMES


class JobCreate(Payload):
    """Body of ``POST /job``; may be a job as read, to run it again (``services.read_back``:
    its ``dataSourceName`` must be ``dataSourceKey``'s, its state, progress and times are the
    new job's own)."""

    model_config = examples(ex.JOB_CREATE)

    read_only = frozenset(
        {"key", "state", "progress", "total", "done", "workUnit", "workTotal", "workDone",
         "counts", "errors", "message", "worker",
         "requestedBy", "timeOfCreation", "startTime", "endTime", "dataSourceName"}
    )
    read_form = True

    job_type: JobType
    data_source_key: str = Field(min_length=1, max_length=200)
    resource_path: str | None = Field(default=None, max_length=4096)
    #: catalog_nb extra: what computes a PROFILE job; absent, the data source's default engine
    #: (``local`` unless the source says otherwise). Only PROFILE jobs take one.
    engine: JobEngine | None = None


class JobError(Wire):
    path: str | None
    message: str


class JobOut(Wire):
    model_config = examples(ex.JOB)

    key: str
    job_type: str
    data_source_key: str
    data_source_name: str
    resource_path: str | None
    state: str
    progress: float
    total: int | None
    done: int
    #: catalog_nb extra: what ``progress`` measures (``bytes`` read of the files to profile,
    #: else ``resources``), and how much of it there is and is done. Known once the source is
    #: browsed, so a progress bar has its total from the start.
    work_unit: str | None
    work_total: int | None
    work_done: int | None
    counts: dict[str, int]
    #: catalog_nb extras: what computed the job (``local`` or ``spark``) and the name of the
    #: worker process that ran it (None while QUEUED, and for jobs older than workers).
    engine: str
    worker: str | None
    errors: list[JobError]
    message: str | None
    requested_by: str | None
    time_of_creation: int
    start_time: int | None
    end_time: int | None


def job_out(row: dict[str, Any]) -> JobOut:
    """The wire form of a stored job."""
    stored = row.get("counts") or {}
    # The five resource counts always; the counts of a job's discovery step as well.
    counts = {name: int(stored.get(name, 0)) for name in COUNT_NAMES}
    counts.update({name: int(value) for name, value in stored.items() if name not in counts})
    return JobOut(
        key=row["key"],
        job_type=row["job_type"],
        data_source_key=row["data_source_key"],
        data_source_name=row["data_source_name"],
        resource_path=row["resource_path"],
        state=row["state"],
        progress=float(row["progress"] or 0.0),
        total=row["total"],
        done=int(row["done"] or 0),
        work_unit=row.get("work_unit"),
        work_total=row.get("work_total"),
        work_done=row.get("work_done"),
        counts=counts,
        engine=row.get("engine") or JobEngine.LOCAL.value,
        worker=row.get("worker"),
        errors=[JobError(path=e.get("path"), message=str(e.get("message")))
                for e in row.get("errors") or []],
        message=row["message"],
        requested_by=row["requested_by"],
        time_of_creation=row["created_ms"],
        start_time=row["started_ms"],
        end_time=row["finished_ms"],
    )
