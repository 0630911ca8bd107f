"""Jobs: browse, profile or discover on a data source in the background, and follow them.

``POST /job`` needs an Administrator, or a role that both has ``jobExecutionAllowed`` and sees the
source (the same for every job type). A data source the caller may not see answers 404, whatever
else is wrong. An unknown ``resourcePath`` is not checked here (that needs a browse): the job
FAILS with "There is no resource at ...". DISCOVER jobs suggest tags on the profiled resources at
or under ``resourcePath`` (see ``job_discovery``).

A job as read can be sent back to run it again (``services.read_back``): its state, progress,
counts and times are the new job's own and ignored, but a ``dataSourceName`` that is not
``dataSourceKey``'s is refused by name rather than run on the other source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query, Request

from catalog_nb.contract import (
    JOB_LIST_DEFAULT,
    JOB_LIST_MAX,
    AccessLevel,
    AuditAction,
    AuditObjectType,
    ErrorCode,
    JobEngine,
    JobState,
    JobType,
)
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.errors import BadRequest, Forbidden, NotFound
from catalog_nb.server.schemas.jobs import JobCreate, JobOut, job_out
from catalog_nb.server.security import Caller
from catalog_nb.server.services.read_back import refuse_on_create
from catalog_nb.server.services.sources import checked_engine
from catalog_nb.server.store import jobs as job_store
from catalog_nb.server.store import sources as source_store
from catalog_nb.server.visibility import sees_every_source, sees_source

if TYPE_CHECKING:  # the runner's module loads the profiling libraries; requests never need them
    from catalog_nb.server.jobs import JobRunner

router = APIRouter(tags=["jobs"])


def may_run_jobs(caller: Caller, source_key: str) -> bool:
    """Administrators, and roles that may run jobs and see the source."""
    return caller.at_least(AccessLevel.ADMINISTRATOR) or any(
        role.job_execution_allowed and sees_source([role], source_key) for role in caller.roles
    )


def _source_not_found(key: str) -> NotFound:
    return NotFound(f"There is no data source with key '{key}'.", ErrorCode.DATA_SOURCE_NOT_FOUND)


@router.post("/job", status_code=201, response_model=JobOut, response_model_by_alias=True)
def create_job(body: JobCreate, request: Request, caller: CallerDep, store: StoreDep) -> JobOut:
    """Queue a BROWSE, PROFILE or DISCOVER job of a data source; it runs in the background."""
    source_key = body.data_source_key
    with audited(store, caller, AuditAction.RUN_JOB, AuditObjectType.JOB,
                 name=f"{body.job_type.value} {source_key}") as w:
        source = source_store.find_source(w.conn, source_key)
        if source is None or not sees_source(caller.roles, source_key):
            raise _source_not_found(source_key)
        w.target(None, f"{body.job_type.value} {source['name']}")
        if not may_run_jobs(caller, source_key):
            raise Forbidden(
                f"Running jobs on data source '{source['name']}' needs an Administrator or a "
                "role with jobExecutionAllowed that includes the source.",
                ErrorCode.PERMISSION_DENIED,
            )
        refuse_on_create(body, {"dataSourceName": source["name"]})
        path = body.resource_path.strip() if body.resource_path is not None else None
        if body.job_type is JobType.BROWSE and path:
            raise BadRequest(
                "resourcePath limits PROFILE and DISCOVER jobs only; a BROWSE job always reads "
                "the whole data source.", ErrorCode.INVALID_PAYLOAD,
            )
        requested = body.engine
        if (body.read_back and requested is JobEngine.LOCAL
                and body.job_type is not JobType.PROFILE):
            # A BROWSE or DISCOVER job as read answers engine local (where it ran): sent back
            # to run again, that is the job's own value, not a request for an engine.
            requested = None
        if requested is not None and body.job_type is not JobType.PROFILE:
            raise BadRequest(
                f"engine chooses what profiles a PROFILE job; a {body.job_type.value} job "
                "always runs in the service's own processes.", ErrorCode.INVALID_PAYLOAD,
            )
        # A source's default engine (catalog_nb extra) applies to its PROFILE jobs only.
        engine = JobEngine.LOCAL.value
        if body.job_type is JobType.PROFILE:
            engine = (checked_engine(str(source["source_type"]), requested)
                      or str(source.get("engine") or JobEngine.LOCAL))
        job = job_store.create(w.conn, body.job_type.value, source_key, path or None,
                               caller.name, engine)
        w.target(job["key"], f"{body.job_type.value} {source['name']}")
        w.message = f"resourcePath {path}" if path else None
    runner: JobRunner | None = request.app.state.jobs
    if runner is not None:
        runner.submit(job["key"])
    # Else the runner of another process of this service takes it from the store.
    return job_out(job)


@router.get("/job", response_model=list[JobOut], response_model_by_alias=True)
def list_jobs(
    caller: CallerDep,
    store: StoreDep,
    state: JobState | None = None,
    data_source_key: Annotated[str | None, Query(alias="dataSourceKey")] = None,
    limit: Annotated[int, Query(ge=1, le=JOB_LIST_MAX)] = JOB_LIST_DEFAULT,
) -> list[JobOut]:
    """Jobs of the sources the caller may see, newest first."""
    keys: set[str] | None = None
    if not sees_every_source(caller.roles):
        keys = {k for r in caller.roles for k in r.granted("DATA_SOURCE")}
    with store.read() as conn:
        if data_source_key is not None:
            if (keys is not None and data_source_key not in keys) or (
                source_store.find_source(conn, data_source_key) is None
            ):
                raise _source_not_found(data_source_key)
            keys = {data_source_key}
        rows = job_store.list_jobs(conn, source_keys=keys,
                                   state=state.value if state else None, limit=limit)
    return [job_out(r) for r in rows]


@router.get("/job/{key}", response_model=JobOut, response_model_by_alias=True)
def get_job(key: str, caller: CallerDep, store: StoreDep) -> JobOut:
    """One job (404 when the caller may not see its data source)."""
    with store.read() as conn:
        row = job_store.get(conn, key)
    if not sees_source(caller.roles, str(row["data_source_key"])):
        raise NotFound(f"There is no job with key '{key}'.", ErrorCode.JOB_NOT_FOUND)
    return job_out(row)
