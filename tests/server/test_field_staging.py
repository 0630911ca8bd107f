"""Wide profiles: fields staged in short transactions, then moved in as one change.

What a staged profile writes must be what a profile written at once writes (people's field names,
descriptions and comments kept, vanished fields gone); a failure before the move leaves the old
fields; stagings of stopped jobs are swept; the search document of a very wide resource is capped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import func, insert, select, update

from catalog_nb.contract import JobState
from catalog_nb.server.profiling.model import DataType, FieldProfile, ResourceProfile
from catalog_nb.server.search.facets import FIELD_TYPE_BITS
from catalog_nb.server.store import Store, ingest, staging
from catalog_nb.server.store import search as search_store
from catalog_nb.server.store.schema import (
    data_resources,
    jobs,
    resource_fields,
    search_documents,
    staged_fields,
)
from tests.conftest import TEST_APPLICATION
from tests.server.lake import add_source


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    with Store(store_url, application_name=TEST_APPLICATION) as opened:
        opened.migrate()
        yield opened


def _profile(names: list[str], data_type: DataType = DataType.LONG) -> ResourceProfile:
    fields = [FieldProfile(n, data_type, True, {"density": 1.0, "valueCount": i})
              for i, n in enumerate(names)]
    return ResourceProfile(path="wide.json", name="wide.json", row_count=1,
                           field_count=len(fields), fields=fields)


def _job(store: Store, source_key: str, key: str, state: JobState) -> str:
    with store.write() as conn:
        conn.execute(insert(jobs).values(
            key=key, job_type="PROFILE", data_source_key=source_key, state=state.value,
            progress=0.0, done=0, counts={}, errors=[], created_ms=1, changed_ms=1))
    return key


def _fields(store: Store, resource_key: str) -> list[dict[str, Any]]:
    F = resource_fields
    with store.read() as conn:
        rows = conn.execute(select(F).where(F.c.resource_key == resource_key)
                            .order_by(F.c.position)).mappings().all()
    return [dict(r) for r in rows]


def _staged_rows(store: Store) -> int:
    with store.read() as conn:
        return int(conn.execute(select(func.count()).select_from(staged_fields)).scalar_one())


def _write(store: Store, source_key: str, profile: ResourceProfile, job_key: str,
           staged_path: bool) -> str:
    staged = staging.stage(store, profile.fields, job_key) if staged_path else None
    try:
        with store.write() as conn:
            return ingest.record_profile(conn, source_key, profile, run_id=job_key,
                                         staged=staged).key
    finally:
        if staged is not None:
            staging.discard(store, staged)


def _annotate(store: Store, resource_key: str, name: str, **values: str) -> None:
    F = resource_fields
    with store.write() as conn:
        conn.execute(update(F).where(F.c.resource_key == resource_key, F.c.name == name)
                     .values(**values))


@pytest.mark.parametrize("staged_path", [False, True], ids=["at-once", "staged"])
def test_a_staged_profile_writes_what_one_written_at_once_writes(
    store: Store, monkeypatch: pytest.MonkeyPatch, staged_path: bool,
) -> None:
    monkeypatch.setattr(staging, "STAGE_BATCH", 7)  # several batches, one of them partial
    source = add_source(store, "wide", "/tmp/wide")
    job = _job(store, source, "job-1", JobState.RUNNING)
    first = [f"f{i}" for i in range(30)]
    key = _write(store, source, _profile(first), job, staged_path)
    _annotate(store, key, "f3", description="kept", display_name="Three", comment="note")
    _annotate(store, key, "f29", description="goes with its field")
    again = ["new", *first[:20]]
    _write(store, source, _profile(again, DataType.STRING), job, staged_path)
    rows = _fields(store, key)
    assert [r["name"] for r in rows] == again
    assert [r["position"] for r in rows] == list(range(len(again)))
    assert {r["data_type"] for r in rows} == {"STRING"}
    assert rows[0]["properties"] == {"density": 1.0, "valueCount": 0}
    three = next(r for r in rows if r["name"] == "f3")
    assert (three["description"], three["display_name"], three["comment"]) == (
        "kept", "Three", "note")
    assert all(r["description"] is None for r in rows if r["name"] != "f3")
    assert _staged_rows(store) == 0


def test_a_failed_move_leaves_the_old_fields(store: Store) -> None:
    source = add_source(store, "wide", "/tmp/wide")
    job = _job(store, source, "job-1", JobState.RUNNING)
    key = _write(store, source, _profile(["a", "b"]), job, staged_path=False)
    staged = staging.stage(store, _profile(["c", "d", "e"]).fields, job)
    with store.write() as conn:  # part of the staging vanished (a sweep, a crash)
        conn.execute(staged_fields.delete().where(staged_fields.c.position == 1))
    with pytest.raises(RuntimeError), store.write() as conn:
        ingest.record_profile(conn, source, _profile(["c", "d", "e"]), staged=staged)
    staging.discard(store, staged)
    assert [r["name"] for r in _fields(store, key)] == ["a", "b"]
    assert _staged_rows(store) == 0


def test_readers_see_the_old_fields_until_the_move(store: Store) -> None:
    source = add_source(store, "wide", "/tmp/wide")
    job = _job(store, source, "job-1", JobState.RUNNING)
    key = _write(store, source, _profile(["a", "b"]), job, staged_path=False)
    staged = staging.stage(store, _profile(["x", "y", "z"]).fields, job)
    assert [r["name"] for r in _fields(store, key)] == ["a", "b"]
    with store.write() as conn:
        ingest.record_profile(conn, source, _profile(["x", "y", "z"]), staged=staged)
    staging.discard(store, staged)
    assert [r["name"] for r in _fields(store, key)] == ["x", "y", "z"]


def test_the_sweep_removes_the_stagings_of_jobs_no_longer_running(
    store: Store, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(staging, "STAGE_BATCH", 3)
    source = add_source(store, "wide", "/tmp/wide")
    live = _job(store, source, "job-live", JobState.RUNNING)
    dead = _job(store, source, "job-dead", JobState.RUNNING)
    kept = staging.stage(store, _profile(["a", "b", "c", "d"]).fields, live)
    staging.stage(store, _profile([f"f{i}" for i in range(10)]).fields, dead)
    with store.write() as conn:  # the process running it stopped: the stale sweep failed it
        conn.execute(update(jobs).where(jobs.c.key == dead).values(state="FAILED"))
    assert staging.sweep(store) == 1
    with store.read() as conn:
        left = conn.execute(select(staged_fields.c.staging_key).distinct()).scalars().all()
    assert left == [kept.key]
    assert _staged_rows(store) == kept.count


def test_a_stopped_staging_removes_what_it_wrote(store: Store,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(staging, "STAGE_BATCH", 2)
    source = add_source(store, "wide", "/tmp/wide")
    job = _job(store, source, "job-1", JobState.RUNNING)
    calls = []

    def stop_on_third() -> None:
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        staging.stage(store, _profile([f"f{i}" for i in range(9)]).fields, job, stop_on_third)
    assert _staged_rows(store) == 0


def test_a_very_wide_resource_indexes_the_first_fields_and_every_annotated_one(
    store: Store, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(search_store, "MAX_INDEXED_FIELDS", 3)
    source = add_source(store, "wide", "/tmp/wide")
    profile = _profile([f"alpha{i}" for i in range(6)])
    profile.fields[5].data_type = DataType.BOOLEAN
    key = _write(store, source, profile, "no-job", staged_path=False)
    _annotate(store, key, "alpha4", description="zebra")
    with store.write() as conn:
        search_store.refresh(conn, [key])
    with store.read() as conn:
        text = conn.execute(select(search_documents.c.fields).where(
            search_documents.c.resource_key == key)).scalar_one()
        held = conn.execute(select(data_resources.c.facet_field_types).where(
            data_resources.c.key == key)).scalar_one()
        types = {name for name, bit in FIELD_TYPE_BITS.items() if held & bit}
    assert text.split() == ["alpha0", "alpha1", "alpha2", "alpha4", "zebra"]
    assert types == {"LONG", "BOOLEAN"}
