"""Writing what browsing and profiling found: the only way data resources come into existence.

Browsing upserts one row per resource with the cheap facts (path, type, format, size, times);
profiling completes it with rows, fields and statistics. What people wrote (description, rich
description, owner, custom property values, field descriptions) survives both. Resources that a
new browse no longer finds are kept, marked ``status = MISSING``, so their annotations are not
lost when a file is moved back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Text,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.dialects import postgresql

from catalog_nb.contract import ResourceType
from catalog_nb.server.profiling.model import ResourceProfile, ResourceState
from catalog_nb.server.profiling.sketch import SKETCH_VERSION, VALUE_HASHES_SINCE
from catalog_nb.server.search.facets import NO_SENSITIVITY
from catalog_nb.server.store import bulk_insert, search, staging
from catalog_nb.server.store.common import any_key, chunks, new_key, now_ms
from catalog_nb.server.store.schema import data_resources, resource_fields

#: ``status`` of a resource: what processing last did to it.
BROWSED, PROFILED, ERROR, MISSING = "BROWSED", "PROFILED", "ERROR", "MISSING"


@dataclass
class Outcome:
    """What one upsert did: the resource key and whether it was created."""

    key: str
    created: bool


def _base_values(profile: ResourceProfile) -> dict[str, Any]:
    extra = dict(profile.extra)
    values: dict[str, Any] = {
        "name": profile.name,
        "resource_type": profile.resource_type,
        "file_format": profile.file_format,
        "separator": profile.separator,
        "header": bool(profile.header),
        "header_row": int(profile.header_row or 0),
        "encoding": profile.encoding,
        "resource_size": profile.resource_size,
        "partition_count": int(profile.partition_count or 0),
        "time_of_resource_creation": profile.created_ms,
        "time_of_resource_change": profile.modified_ms,
        "database_name": extra.get("databaseName"),
        "data_schema_name": extra.get("dataSchemaName"),
        "table_name": extra.get("tableName"),
        "table_type": extra.get("tableType"),
        "extra": extra,
    }
    return values


def _stage(
    current: list[dict[str, Any]], stage: str, status: str, error: str | None, run_id: str | None,
    started: int, ended: int, sampled: int | None,
) -> list[dict[str, Any]]:
    kept = [d for d in current if d.get("stageName") != stage]
    kept.append(
        {
            "stageName": stage,
            "status": status,
            "errorMsg": error,
            "runId": run_id,
            "workflowId": None,
            "startTime": started,
            "endTime": ended,
            "numberSampledRows": sampled,
            "lastPartitionProfile": False,
        }
    )
    return sorted(kept, key=lambda d: str(d["stageName"]))


def find(conn: Connection, source_key: str, path: str) -> dict[str, Any] | None:
    """The stored row of the resource at ``path`` in a source, or None."""
    row = conn.execute(
        select(data_resources).where(
            data_resources.c.data_source_key == source_key, data_resources.c.path == path
        )
    ).mappings().first()
    return dict(row) if row else None


def _new_row(
    source_key: str, path: str, values: dict[str, Any], collection_key: str | None, now: int
) -> dict[str, Any]:
    """The ``data_resources`` row of a resource seen for the first time."""
    return {
        "key": new_key(),
        "data_source_key": source_key,
        "path": path,
        "collection_key": collection_key,
        "detailed_status": [],
        "created_ms": now,
        "changed_ms": now,
        # A new resource has no tag yet (search.refresh keeps this column).
        "facet_sensitivity": NO_SENSITIVITY,
        **values,
    }


def _upsert(
    conn: Connection, source_key: str, path: str, values: dict[str, Any],
    collection_key: str | None = None,
) -> Outcome:
    now = now_ms()
    current = find(conn, source_key, path)
    if current is None:
        row = _new_row(source_key, path, values, collection_key, now)
        conn.execute(insert(data_resources).values(**row))
        return Outcome(str(row["key"]), True)
    changes = {**values, "changed_ms": now}
    if collection_key is not None:
        changes["collection_key"] = collection_key
    query = update(data_resources).where(data_resources.c.key == current["key"])
    conn.execute(query.values(**changes))
    return Outcome(str(current["key"]), False)


def record_browsed(
    conn: Connection, source_key: str, profile: ResourceProfile, run_id: str | None = None,
    collection_key: str | None = None,
) -> Outcome:
    """Create or refresh a resource from a browse result; profiled facts stay as they were."""
    now = now_ms()
    current = find(conn, source_key, profile.path)
    values = _base_values(profile)
    values["time_of_last_refresh"] = now
    stages = list(current["detailed_status"]) if current else []
    values["detailed_status"] = _stage(stages, "browse", "SUCCEEDED", None, run_id, now, now, None)
    if current is None or current["status"] == MISSING:
        profiled = current is not None and current["time_of_last_profile"]
        values["status"] = PROFILED if profiled else BROWSED
        values["resource_state"] = ResourceState.OK.value
        values["error_msg"] = None
    if current is not None and current["time_of_last_profile"]:
        # A profiled resource keeps what profiling learned, and the size and times its statistics
        # describe, until it is profiled again: stale statistics must not look current, and
        # is_unchanged() compares a fresh browse against exactly these.
        for column in ("separator", "header", "header_row", "encoding", "extra", "resource_size",
                       "time_of_resource_creation", "time_of_resource_change"):
            values.pop(column, None)
    outcome = _upsert(conn, source_key, profile.path, values, collection_key)
    touched = [outcome.key]
    for member in profile.members:
        if member == profile.path:
            continue
        member_profile = ResourceProfile(
            path=member, name=member.rsplit("/", 1)[-1], resource_type=ResourceType.FILE.value,
            file_format=profile.file_format,
        )
        member_row = find(conn, source_key, member)
        member_values = _base_values(member_profile)
        for column in ("resource_size", "time_of_resource_creation", "time_of_resource_change"):
            member_values.pop(column)
        member_values["time_of_last_refresh"] = now
        if member_row is None:
            member_values.update(status=BROWSED, resource_state=ResourceState.OK.value)
        touched.append(_upsert(conn, source_key, member, member_values, outcome.key).key)
    search.refresh(conn, touched)
    return outcome


def is_unchanged(conn: Connection, source_key: str, profile: ResourceProfile) -> bool:
    """Whether a profiled resource's size and modification time are those of ``profile``.

    Profiling such a resource again would learn nothing, so jobs skip it. Resources without a
    size or time (SQL tables) always count as changed, and so do resources whose fields hold
    value sketches of an older format (they are profiled again to be re-sketched).
    """
    current = find(conn, source_key, profile.path)
    return bool(
        current
        and current["status"] == PROFILED
        and profile.resource_size is not None
        and profile.modified_ms is not None
        and current["resource_size"] == profile.resource_size
        and current["time_of_resource_change"] == profile.modified_ms
        and not _old_sketches(conn, str(current["key"]))
    )


def _old_sketches(conn: Connection, resource_key: str) -> bool:
    """Whether a field of the resource holds a sketch that must be made again: of version 1
    (other value hashes), or of an older version than :data:`SKETCH_VERSION` with column
    pairs (which only today's pair hashes meet; its values still compare)."""
    sketch = resource_fields.c.sketch
    version = sketch["version"].as_integer()
    stale = or_(version < VALUE_HASHES_SINCE,
                and_(version < SKETCH_VERSION, sketch["pairs"].as_string().is_not(None)))
    query = (select(resource_fields.c.name)
             .where(resource_fields.c.resource_key == resource_key, sketch.is_not(None), stale)
             .limit(1))
    return conn.execute(query).first() is not None


def record_profile(
    conn: Connection, source_key: str, profile: ResourceProfile, run_id: str | None = None,
    started_ms: int | None = None, staged: staging.Staged | None = None,
) -> Outcome:
    """Write a profile: system properties and fields (people's field descriptions survive).

    ``staged``: the profile's fields, already staged with :func:`staging.stage` (a wide
    profile); they are moved in instead of written here. The caller discards the staging.
    :func:`record_profiles` writes many profiles at once, the same rows.
    """
    now = now_ms()
    current = find(conn, source_key, profile.path)
    values = _profile_values(profile, current, run_id, started_ms, now)
    outcome = _upsert(conn, source_key, profile.path, values)
    if not _failed(profile) and staged is not None:
        staging.move(conn, outcome.key, staged)
    elif not _failed(profile):
        people = _people(conn, [] if outcome.created else [outcome.key])
        conn.execute(delete(resource_fields).where(resource_fields.c.resource_key == outcome.key))
        rows = _field_rows(outcome.key, profile, people.get(outcome.key, {}))
        if rows:
            conn.execute(insert(resource_fields), rows)
    search.refresh(conn, [outcome.key])
    return outcome


def record_profiles(
    conn: Connection, source_key: str, profiles: Sequence[ResourceProfile],
    run_id: str | None = None, started_ms: int | None = None,
) -> list[Outcome]:
    """Write many profiles of one source in the caller's transaction: the rows
    :func:`record_profile` writes for each (the same functions build them), with a few
    set-based statements per :data:`~catalog_nb.server.store.common.IN_CHUNK` resources
    instead of a dozen per resource, the large inserts by COPY on PostgreSQL
    (:mod:`~catalog_nb.server.store.bulk_insert`). The bulk fixture of the benchmarks writes
    100,000 resources this way in under a minute.

    Wide profiles (:func:`staging.is_wide`) belong to :func:`record_profile` with a staging;
    a path given twice is refused (ValueError): which of the two would win is not defined.
    """
    paths = [p.path for p in profiles]
    if len(set(paths)) != len(paths):
        raise ValueError("record_profiles: a path is given more than once")
    now = now_ms()
    stored = _stored(conn, source_key, paths)
    R = data_resources
    outcomes: list[Outcome] = []
    inserts: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    for profile in profiles:
        current = stored.get(profile.path)
        values = _profile_values(profile, current, run_id, started_ms, now)
        if current is None:
            row = _new_row(source_key, profile.path, values, None, now)
            inserts.append(row)
            outcomes.append(Outcome(str(row["key"]), True))
        else:
            updates.append({"_key": current["key"], **values, "changed_ms": now})
            outcomes.append(Outcome(str(current["key"]), False))
    for group in _same_columns(inserts):
        bulk_insert.insert_rows(conn, R, group)
    for group in _same_columns(updates):
        # Bound names must differ from the column names an UPDATE sets.
        columns = [c for c in group[0] if c != "_key"]
        statement = (update(R).where(R.c.key == bindparam("_key"))
                     .values({c: bindparam(f"_v_{c}") for c in columns}))
        conn.execute(statement, [{"_key": row["_key"], **{f"_v_{c}": row[c] for c in columns}}
                                 for row in group])
    profiled = [(o.key, p) for o, p in zip(outcomes, profiles, strict=True) if not _failed(p)]
    known = [o.key for o, p in zip(outcomes, profiles, strict=True)
             if not o.created and not _failed(p)]
    people = _people(conn, known)
    for chunk in chunks(known):
        conn.execute(delete(resource_fields)
                     .where(any_key(conn, resource_fields.c.resource_key, chunk)))
    field_rows = [row for key, profile in profiled
                  for row in _field_rows(key, profile, people.get(key, {}))]
    bulk_insert.insert_rows(conn, resource_fields, field_rows)
    search.refresh(conn, [o.key for o in outcomes])
    return outcomes


def _stored(conn: Connection, source_key: str, paths: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The stored rows of the source's resources at these paths, by path."""
    R = data_resources
    stored: dict[str, dict[str, Any]] = {}
    for chunk in chunks(paths):
        if conn.dialect.name == "postgresql":
            # One probe of the unique (source, path) index per path, whatever the planner's
            # statistics say. Given "source = ? AND path IN (...)" while a large job fills a
            # table never analysed, it read every resource of the source through the source's
            # index and compared each with every path of the list (a generic plan's IN list is
            # not hashed): half a second a statement at 100,000 resources.
            wanted = (func.unnest(bindparam(None, list(chunk), type_=postgresql.ARRAY(Text)))
                      .table_valued("path").render_derived(name="wanted"))
            # LIMIT keeps the subquery a lateral probe, never flattened into a join the planner
            # may hash (the unique constraint makes it exact).
            found = (select(R).where(R.c.data_source_key == source_key,
                                     R.c.path == wanted.c.path)
                     .limit(1).lateral("found"))
            query = select(found).select_from(wanted.join(found, true()))
        else:
            query = select(R).where(R.c.data_source_key == source_key, R.c.path.in_(chunk))
        stored.update((str(row["path"]), dict(row)) for row in conn.execute(query).mappings())
    return stored


def _failed(profile: ResourceProfile) -> bool:
    return profile.state == ResourceState.ERROR.value


def _profile_values(
    profile: ResourceProfile, current: dict[str, Any] | None, run_id: str | None,
    started_ms: int | None, now: int,
) -> dict[str, Any]:
    """The resource columns a profile writes, given the stored row (None: a new resource)."""
    failed = _failed(profile)
    values = _base_values(profile)
    if failed and current is not None:
        # A failed profile learned nothing: keep what browsing knew (type, format, size, SQL
        # details) instead of blanking it.
        values = {k: v for k, v in values.items() if v not in (None, {}, 0)}
        values.pop("resource_type", None)
    stages = list(current["detailed_status"]) if current else []
    sampled = max(
        (int(f.properties.get("sampleSize") or 0) for f in profile.fields), default=None
    )
    values.update(
        resource_state=profile.state,
        status=ERROR if failed else PROFILED,
        error_msg=profile.error_msg,
        detailed_status=_stage(
            stages, "profile", "FAILED" if failed else "SUCCEEDED", profile.error_msg, run_id,
            started_ms or now, now, sampled,
        ),
        time_of_last_refresh=now,
    )
    if not failed:
        values.update(
            row_count=profile.row_count,
            field_count=profile.field_count if profile.field_count is not None
            else len(profile.fields),
            time_of_last_profile=now,
            # What the index refresh derives from the fields written with it, written with the
            # row so that the refresh finds nothing to change (search.refresh keeps them).
            facet_field_types=search.field_type_bits(str(f.data_type) for f in profile.fields),
        )
    return values


def _same_columns(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """``rows`` grouped by their set of columns: one executemany each."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(sorted(row)), []).append(row)
    return list(groups.values())


def _people(conn: Connection, resource_keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """What people wrote on the stored fields of these resources: by resource, by field name."""
    Fd = resource_fields
    found: dict[str, dict[str, Any]] = {}
    for chunk in chunks(sorted(set(resource_keys))):
        query = select(Fd.c.resource_key, Fd.c.name, Fd.c.display_name, Fd.c.description,
                       Fd.c.comment).where(any_key(conn, Fd.c.resource_key, chunk))
        for row in conn.execute(query).mappings():
            found.setdefault(str(row["resource_key"]), {})[row["name"]] = dict(row)
    return found


def _field_rows(
    resource_key: str, profile: ResourceProfile, people: dict[str, Any]
) -> list[dict[str, Any]]:
    """The ``resource_fields`` rows of a profile; ``people``: what people wrote, by name."""
    rows = []
    for position, fp in enumerate(profile.fields):
        kept = people.get(fp.name, {})
        rows.append(
            {
                "resource_key": resource_key,
                "name": fp.name,
                "position": position,
                "display_name": kept.get("display_name"),
                "description": kept.get("description"),
                "comment": kept.get("comment"),
                "data_type": str(fp.data_type),
                "nullable": bool(fp.nullable),
                "properties": dict(fp.properties),
                "sketch": fp.sketch.to_dict() if fp.sketch is not None else None,
            }
        )
    return rows


def mark_missing(conn: Connection, source_key: str, seen: Iterable[str]) -> int:
    """Mark the source's resources that a full browse did not find; returns how many."""
    found = set(seen)
    stored = conn.execute(
        select(data_resources.c.key, data_resources.c.path, data_resources.c.status).where(
            data_resources.c.data_source_key == source_key
        )
    ).all()
    gone = [key for key, path, status in stored if path not in found and status != MISSING]
    if gone:
        conn.execute(
            update(data_resources)
            .where(data_resources.c.key.in_(gone))
            .values(status=MISSING, changed_ms=now_ms())
        )
        search.refresh(conn, gone)
    return len(gone)
