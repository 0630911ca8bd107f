"""Wide profiles written without one long write transaction.

A profile of a few thousand fields is written as it always was: one transaction deletes and
inserts the resource's ``resource_fields``. A wider one (a JSON document with 300,000 keys) would
hold the store's write lock for many seconds that way (SQLite has one writer: every login waits
behind it), so its fields are first **staged**: written to ``staged_fields`` under a fresh staging
key in transactions of :data:`STAGE_BATCH` rows, outside any lock the readers care about. The
profile is then recorded by :func:`move` inside ``ingest.record_profile``'s transaction: two
set-based statements in the database, no row crossing to Python, so readers see the old fields or
the new ones, never a mix. People's field names, descriptions and comments are kept by updating
rows in place rather than deleting and inserting them. Staged rows are then removed in batches.

A failure before the move leaves the old fields as they were; the staged rows are removed by the
caller (:func:`discard`) or, when the process died, by :func:`sweep`, which the job runner calls at
start-up and with its stale-job sweep: rows staged by a job that is no longer RUNNING are orphans.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, and_, delete, exists, func, insert, literal, select
from sqlalchemy.dialects import postgresql, sqlite

from catalog_nb.contract import JobState
from catalog_nb.server.profiling.model import FieldProfile
from catalog_nb.server.store.common import new_key, now_ms
from catalog_nb.server.store.schema import jobs, resource_fields, staged_fields

if TYPE_CHECKING:
    from catalog_nb.server.store.engine import Store

#: Fields from which a profile is staged; below it one transaction is as short and does less.
WIDE_FIELDS = 5_000
#: Rows per staging (and clean-up) transaction: tens of milliseconds each.
STAGE_BATCH = 2_000

F, X = resource_fields, staged_fields


@dataclass(frozen=True)
class Staged:
    """The fields of one profile, staged under ``key``: ``count`` rows, positions 0..count-1."""

    key: str
    count: int


def is_wide(fields: Sequence[FieldProfile]) -> bool:
    """Whether a profile has enough fields to be staged rather than written at once."""
    return len(fields) >= WIDE_FIELDS


def _rows(key: str, job_key: str, fields: Sequence[FieldProfile], start: int,
          created: int) -> list[dict[str, Any]]:
    return [
        {"staging_key": key, "position": position, "job_key": job_key, "name": fp.name,
         "data_type": str(fp.data_type), "nullable": bool(fp.nullable),
         "properties": dict(fp.properties),
         "sketch": fp.sketch.to_dict() if fp.sketch is not None else None,
         "created_ms": created}
        for position, fp in enumerate(fields[start:start + STAGE_BATCH], start)
    ]


def stage(store: Store, fields: Sequence[FieldProfile], job_key: str,
          between: Callable[[], None] | None = None) -> Staged:
    """Write ``fields`` to the staging table in short transactions; ``between`` runs before
    each (a job's stop check). Whatever was staged is removed again if this raises."""
    staged = Staged(new_key(), len(fields))
    created = now_ms()
    try:
        for start in range(0, len(fields), STAGE_BATCH):
            if between is not None:
                between()
            rows = _rows(staged.key, job_key, fields, start, created)
            with store.write() as conn:
                conn.execute(insert(X), rows)
    except BaseException:
        discard(store, staged)
        raise
    return staged


def move(conn: Connection, resource_key: str, staged: Staged) -> None:
    """Make the staged fields the resource's fields, in the caller's transaction.

    Fields that stay keep their display name, description and comment (people wrote those);
    fields the profile no longer has are deleted, with what people wrote on them, as a profile
    written at once does. Raises if the staging is incomplete (a sweep took it): nothing of it is
    then written.
    """
    found = conn.execute(
        select(func.count()).select_from(X).where(X.c.staging_key == staged.key)
    ).scalar_one()
    if found != staged.count:
        raise RuntimeError(f"staged fields {staged.key} hold {found} rows of {staged.count}")
    conn.execute(delete(F).where(
        F.c.resource_key == resource_key,
        ~exists().where(X.c.staging_key == staged.key, X.c.name == F.c.name),
    ))
    new = select(literal(resource_key), X.c.name, X.c.position, X.c.data_type, X.c.nullable,
                 X.c.properties, X.c.sketch).where(X.c.staging_key == staged.key)
    columns = ["resource_key", "name", "position", "data_type", "nullable", "properties",
               "sketch"]
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    upsert = dialect.insert(F).from_select(columns, new)
    conn.execute(upsert.on_conflict_do_update(
        index_elements=[F.c.resource_key, F.c.name],
        set_={c: upsert.excluded[c] for c in columns[2:]},
    ))


def discard(store: Store, staged: Staged) -> None:
    """Remove a staging in short transactions (done with it, or giving up on it)."""
    _remove(store, staged.key, staged.count - 1)


def _remove(store: Store, key: str, last: int) -> None:
    for start in range(0, last + 1, STAGE_BATCH):
        with store.write() as conn:
            conn.execute(delete(X).where(
                and_(X.c.staging_key == key, X.c.position >= start,
                     X.c.position < start + STAGE_BATCH)))


def sweep(store: Store) -> int:
    """Remove the stagings of jobs that are no longer RUNNING (their process stopped between
    staging and moving); returns how many."""
    running = select(jobs.c.key).where(jobs.c.state == JobState.RUNNING.value)
    with store.read() as conn:
        orphans = conn.execute(
            select(X.c.staging_key, func.max(X.c.position))
            .where(X.c.job_key.not_in(running)).group_by(X.c.staging_key)
        ).all()
    for key, last in orphans:
        _remove(store, str(key), int(last))
    return len(orphans)
