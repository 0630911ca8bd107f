"""Background jobs (browse, profile) and their persisted state.

A job row is written QUEUED by ``POST /job`` (or the CLI), claimed atomically by one worker
(``claim``: QUEUED -> RUNNING, so two processes sharing a store never run the same job; a
``catalog-nb worker`` claims the next runnable job with ``claim_next``), updated with progress in
small transactions while it runs, and finished SUCCEEDED or FAILED. A running
job's worker touches ``changed_ms`` every few seconds (``heartbeat``); a RUNNING job whose
heartbeat stopped was left by a process that died, and ``fail_stale`` ends it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from sqlalchemy import Connection, exists, func, insert, select, update

from catalog_nb.contract import ErrorCode, JobEngine, JobState
from catalog_nb.server.errors import NotFound
from catalog_nb.server.store.common import new_key, now_ms
from catalog_nb.server.store.schema import data_sources, jobs

#: The counts every job reports, all starting at 0.
COUNT_NAMES = ("created", "updated", "unchanged", "skipped", "errors")


def empty_counts() -> dict[str, int]:
    return dict.fromkeys(COUNT_NAMES, 0)


def _query() -> Any:
    return select(jobs, data_sources.c.name.label("data_source_name")).join(
        data_sources, data_sources.c.key == jobs.c.data_source_key
    )


def create(
    conn: Connection, job_type: str, source_key: str, resource_path: str | None,
    requested_by: str | None, engine: str = JobEngine.LOCAL.value,
) -> dict[str, Any]:
    """Persist a new QUEUED job (``engine``: what computes a PROFILE job) and return it."""
    now = now_ms()
    key = new_key()
    conn.execute(
        insert(jobs).values(
            key=key, job_type=job_type, data_source_key=source_key, resource_path=resource_path,
            state=JobState.QUEUED.value, progress=0.0, total=None, done=0,
            counts=empty_counts(), errors=[], message=None, requested_by=requested_by,
            engine=engine, worker=None, started_ms=None, finished_ms=None, created_ms=now,
            changed_ms=now,
        )
    )
    return get(conn, key)


def find(conn: Connection, key: str) -> dict[str, Any] | None:
    """The job with this key (with ``data_source_name``), or None."""
    row = conn.execute(_query().where(jobs.c.key == key)).mappings().first()
    return dict(row) if row else None


def get(conn: Connection, key: str) -> dict[str, Any]:
    """The job with this key; 404 when there is none."""
    row = find(conn, key)
    if row is None:
        raise NotFound(f"There is no job with key '{key}'.", ErrorCode.JOB_NOT_FOUND)
    return row


def list_jobs(
    conn: Connection,
    *,
    source_keys: Collection[str] | None = None,
    state: str | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """Jobs newest first; ``source_keys`` (None: all sources) and ``state`` filter them."""
    query = _query().order_by(jobs.c.created_ms.desc(), jobs.c.key.desc()).limit(limit)
    if source_keys is not None:
        if not source_keys:
            return []
        query = query.where(jobs.c.data_source_key.in_(list(source_keys)))
    if state is not None:
        query = query.where(jobs.c.state == state)
    return [dict(r) for r in conn.execute(query).mappings()]


def latest_by_source(conn: Connection, source_keys: Collection[str]) -> dict[str, dict[str, Any]]:
    """The newest job of each of these sources (sources without a job are absent)."""
    if not source_keys:
        return {}
    rank = (
        func.row_number()
        .over(
            partition_by=jobs.c.data_source_key,
            order_by=(jobs.c.created_ms.desc(), jobs.c.key.desc()),
        )
        .label("rank")
    )
    inner = (
        select(jobs.c.key, rank).where(jobs.c.data_source_key.in_(list(source_keys))).subquery()
    )
    newest = select(inner.c.key).where(inner.c.rank == 1)
    rows = conn.execute(_query().where(jobs.c.key.in_(newest))).mappings()
    return {str(r["data_source_key"]): dict(r) for r in rows}


def claim(conn: Connection, key: str, worker: str | None = None) -> bool:
    """QUEUED -> RUNNING, atomically, recording ``worker`` (who runs it); False when the job is
    not (or no longer) QUEUED."""
    now = now_ms()
    result = conn.execute(
        update(jobs)
        .where(jobs.c.key == key, jobs.c.state == JobState.QUEUED.value)
        .values(
            state=JobState.RUNNING.value, started_ms=now, finished_ms=None, progress=0.0,
            total=None, done=0, work_unit=None, work_total=None, work_done=None,
            counts=empty_counts(), errors=[], message=None, changed_ms=now, worker=worker,
        )
    )
    return result.rowcount == 1


def _source_running(source_key: Any) -> Any:
    """Whether a job of this source is RUNNING (a correlated EXISTS)."""
    other = jobs.alias("running")
    return exists().where(other.c.data_source_key == source_key,
                          other.c.state == JobState.RUNNING.value)


def claim_next(conn: Connection, worker: str) -> tuple[str, str] | None:
    """Claim for ``worker``, in the caller's write transaction, the oldest QUEUED job whose data
    source has no RUNNING job; its key and its source's key, or None when no job can run now.

    On PostgreSQL several workers claim at once: the job's row and its source's row are locked
    ``FOR NO KEY UPDATE ... SKIP LOCKED``, so a worker passes over a job (and a source) another
    is claiming instead of waiting for it, and two workers never take one job. The source's
    lock serialises claims of one source; since a statement's snapshot is taken before a lock
    is granted, the source is looked at again once locked (a fresh statement, READ COMMITTED):
    a job of it claimed and committed meanwhile makes this claim give up (None; the worker
    looks again shortly). The source's row is locked without KEY, so ``POST /job`` (whose
    foreign key takes KEY SHARE on it) never waits for a claim. On SQLite the write transaction
    (BEGIN IMMEDIATE) holds the one write lock: nobody claims between the look and the update.
    """
    query = (
        select(jobs.c.key, jobs.c.data_source_key)
        .where(jobs.c.state == JobState.QUEUED.value, ~_source_running(jobs.c.data_source_key))
        .order_by(jobs.c.created_ms, jobs.c.key)
        .limit(1)
    )
    postgres = conn.dialect.name == "postgresql"
    if postgres:
        query = query.join(data_sources, data_sources.c.key == jobs.c.data_source_key)
        query = query.with_for_update(of=[jobs, data_sources], skip_locked=True, key_share=True)
    row = conn.execute(query).first()
    if row is None:
        return None
    key, source = str(row[0]), str(row[1])
    if postgres and conn.execute(select(_source_running(source))).scalar_one():
        return None
    return (key, source) if claim(conn, key, worker) else None


def update_job(conn: Connection, key: str, **values: Any) -> None:
    """Set columns of a job (progress, total, done, counts, errors, message...)."""
    conn.execute(update(jobs).where(jobs.c.key == key).values(**values, changed_ms=now_ms()))


def finish(conn: Connection, key: str, state: JobState, message: str, **values: Any) -> None:
    """End a job SUCCEEDED or FAILED with a message."""
    now = now_ms()
    conn.execute(
        update(jobs)
        .where(jobs.c.key == key)
        .values(state=state.value, message=message, finished_ms=now, changed_ms=now, **values)
    )


def requeue(conn: Connection, key: str, message: str) -> None:
    """Put a RUNNING job back in the queue (its worker was asked to stop)."""
    conn.execute(
        update(jobs)
        .where(jobs.c.key == key, jobs.c.state == JobState.RUNNING.value)
        .values(state=JobState.QUEUED.value, message=message, changed_ms=now_ms())
    )


def heartbeat(conn: Connection, keys: Iterable[str]) -> None:
    """Prove that the worker of these RUNNING jobs is alive."""
    wanted = list(keys)
    if wanted:
        conn.execute(
            update(jobs)
            .where(jobs.c.key.in_(wanted), jobs.c.state == JobState.RUNNING.value)
            .values(changed_ms=now_ms())
        )


def fail_stale(conn: Connection, silent_since_ms: int, message: str,
               keep: Collection[str] = ()) -> list[str]:
    """End RUNNING jobs whose heartbeat stopped before ``silent_since_ms``; returns their keys."""
    query = select(jobs.c.key).where(
        jobs.c.state == JobState.RUNNING.value, jobs.c.changed_ms < silent_since_ms
    )
    stale = [str(k) for k in conn.execute(query).scalars() if k not in keep]
    if stale:
        now = now_ms()
        conn.execute(
            update(jobs)
            .where(jobs.c.key.in_(stale), jobs.c.state == JobState.RUNNING.value)
            .values(state=JobState.FAILED.value, message=message, finished_ms=now, changed_ms=now)
        )
    return stale


def queued(conn: Connection, before_ms: int | None = None) -> list[str]:
    """Keys of QUEUED jobs, oldest first (only those last changed before ``before_ms``)."""
    query = select(jobs.c.key).where(jobs.c.state == JobState.QUEUED.value)
    if before_ms is not None:
        query = query.where(jobs.c.changed_ms < before_ms)
    return [str(k) for k in conn.execute(query.order_by(jobs.c.created_ms, jobs.c.key)).scalars()]
