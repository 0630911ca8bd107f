"""Tag discovery through the real service: PROFILE jobs end with it, DISCOVER jobs run it alone.

Sources are created with ``POST /datasource`` over small files written here (sensitive columns
under non-obvious names, next to decoys) and over the demo lake; jobs run with ``POST /job``.
People's ACCEPTED / REJECTED associations and user tags are written through the store (the tag
endpoints are built separately); what discovery wrote is read back from the store.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from catalog_nb.demo.lake import build_lake, lake_sources
from catalog_nb.demo.truth import LakeTruth
from tests.conftest import Http, Server
from tests.server.discovery_helpers import (
    PEOPLE_TAGS,
    add_tag,
    associations,
    csv_text,
    names,
    people_file,
    set_association,
    set_tag,
    tag_key,
    write,
)
from tests.server.helpers import PASSWORD, assert_error, create_role, create_user
from tests.server.source_helpers import create_source, resources, run_job

KIND_TAGS = {"email": "EmailAddress", "phone": "PhoneNumber", "national_id": "NationalId",
             "payment_card": "PaymentCard", "ip_address": "IPAddress", "iban": "IBAN",
             "date_of_birth": "DateOfBirth", "postal_code": "PostalCode",
             "person_name": "PersonName"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("discovery")


@pytest.fixture(scope="module")
def disco(make_server: Callable[..., Server], root: Path) -> Server:
    return make_server(data_roots=[root], discovery_regex_timeout_ms=50)


@pytest.fixture(scope="module")
def boss(disco: Server) -> Http:
    return disco.session()


@pytest.fixture
def folder(root: Path) -> Path:
    made = root / uuid.uuid4().hex[:8]
    made.mkdir()
    return made


@pytest.fixture(scope="module")
def people(boss: Http, root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A source holding ``people_file`` as ``crm/extract.csv``, profiled once: (source, job)."""
    write(root / "people", {"crm/extract.csv": people_file()})
    source = create_source(boss, "people", "FILE", str(root / "people"))
    return source, run_job(boss, source["key"])


def test_profiling_suggests_each_builtin_on_its_column_and_not_on_decoys(
    disco: Server, people: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    source, job = people
    found = associations(disco, source["key"])
    assert {field: set(tags) for (_, field), tags in found.items()} == {
        field: {tag} for field, tag in PEOPLE_TAGS.items()}
    rows = {field: tags[PEOPLE_TAGS[field]] for (_, field), tags in found.items()}
    assert all(r["state"] == "SUGGESTED" and r["created_by"] == "discovery" for r in rows.values())
    assert all(r["weight"] == 1.0 for r in rows.values()), rows
    assert rows["plastic"]["rules"] == ["check:luhn", "regex:PaymentCard"]
    assert rows["acct"]["rules"] == ["check:mod97", "regex:IBAN"]
    assert rows["handle"]["rules"] == ["regex:EmailAddress"]
    assert rows["born_on"]["rules"] == ["check:date-of-birth"]
    assert rows["who"]["rules"] == ["check:person-name"]
    counts = job["counts"]
    assert counts["created"] == 1 and counts["suggestionsCreated"] == len(PEOPLE_TAGS)
    assert counts["resourcesExamined"] == 1 and counts["fieldsExamined"] == 17
    assert counts["discoveryErrors"] == 0 and job["errors"] == []
    assert f"{len(PEOPLE_TAGS)} suggestions created" in job["message"]
    stages = {s["stageName"]: s for s in
              resources(disco, source["key"])["crm/extract.csv"]["detailed_status"]}
    assert stages["discover"]["status"] == "SUCCEEDED" and stages["discover"]["runId"] == job["key"]
    assert stages["discover"]["endTime"] >= stages["profile"]["endTime"]


def test_a_second_run_keeps_rejections_and_acceptances(
    disco: Server, boss: Http, people: tuple[dict[str, Any], dict[str, Any]]
) -> None:
    source = people[0]
    path = "crm/extract.csv"
    resource = resources(disco, source["key"])[path]["key"]
    for field, tag, state in (("handle", "EmailAddress", "REJECTED"),
                              ("plastic", "PaymentCard", "ACCEPTED")):
        tag_found = boss.get("/tag/byname", params={"tagName": tag, "domainName": "Sensitive"})
        assert tag_found.status_code == 200, tag_found.text
        made = boss.post("/tagassociation", json={
            "resourceKey": resource, "tagKey": tag_found.json()["key"], "field": field,
            "state": state})
        assert made.status_code == 201 and made.json()["state"] == state, made.text
    job = run_job(boss, source["key"], "DISCOVER")
    counts = job["counts"]
    assert counts["rejectedKept"] == 1 and counts["acceptedKept"] == 1, counts
    assert counts["suggestionsUnchanged"] == len(PEOPLE_TAGS) - 2
    assert counts["suggestionsCreated"] == counts["suggestionsUpdated"] == 0
    assert counts["unchanged"] == 1 and counts["updated"] == 0
    found = associations(disco, source["key"])
    assert found[(path, "handle")]["EmailAddress"]["state"] == "REJECTED"
    card = found[(path, "plastic")]["PaymentCard"]
    assert card["state"] == "ACCEPTED" and card["changed_by"] == "admin"
    # Profiling again (the file touched) discovers again, with the same outcome.
    target = Path(source["uri"]) / path
    target.write_text(target.read_text() + "\n")
    again = run_job(boss, source["key"])
    assert again["counts"]["updated"] == 1 and again["counts"]["rejectedKept"] == 1
    found = associations(disco, source["key"])
    assert found[(path, "handle")]["EmailAddress"]["state"] == "REJECTED"
    assert found[(path, "plastic")]["PaymentCard"]["state"] == "ACCEPTED"


def test_weight_min_score_and_length_bounds(
    disco: Server, boss: Http, folder: Path, unique: Callable[[str], str]
) -> None:
    lots = [f"XY-{100 + i}" for i in range(6)] + [f"XY-{1000 + i}" for i in range(2)] + [
        f"XY-{100000 + i}" for i in range(2)]  # lengths 6, 7 and 9
    mails = [f"p{i}@example.org" for i in range(15)] + [f"note {i}" for i in range(5)]
    write(folder, {"lots.csv": csv_text({"lot": lots, "n": list(range(10))}),
                   "notes.csv": csv_text({"memo": mails})})
    name = unique("Lot")
    key = add_tag(disco, name, reg_ex=r"[A-Z]{2}-\d{3,}", min_score=0.9, regex_min_len=6,
                  regex_max_len=7)
    try:
        source = create_source(boss, unique("lots"), "FILE", str(folder))
        run_job(boss, source["key"])
        assert associations(disco, source["key"], "Tests") == {}
        # 15 of 20 sampled values are e-mail addresses: 0.75 stays under minScore 0.8.
        assert associations(disco, source["key"]) == {}
        set_tag(disco, key, min_score=0.8)  # 8 of 10 values within 6..7 characters
        job = run_job(boss, source["key"], "DISCOVER", "lots.csv")
        assert job["counts"]["resourcesExamined"] == 1 and job["counts"]["suggestionsCreated"] == 1
        lot = associations(disco, source["key"], "Tests")[("lots.csv", "lot")][name]
        assert lot["weight"] == 0.8 and lot["rules"] == [f"regex:{name}"]
        set_tag(disco, key, regex_max_len=None)
        job = run_job(boss, source["key"], "DISCOVER")
        assert job["counts"]["suggestionsUpdated"] == 1 and job["counts"]["updated"] == 1
        assert associations(disco, source["key"], "Tests")[("lots.csv", "lot")][name][
            "weight"] == 1.0
        set_tag(disco, key, regex_min_len=7)  # 4 of 10: the suggestion no longer holds
        job = run_job(boss, source["key"], "DISCOVER")
        assert job["counts"]["suggestionsWithdrawn"] == 1
        assert associations(disco, source["key"], "Tests") == {}
        set_tag(disco, tag_key(disco, "Sensitive.EmailAddress"), min_score=0.7)
        run_job(boss, source["key"], "DISCOVER")
        memo = associations(disco, source["key"])[("notes.csv", "memo")]["EmailAddress"]
        assert memo["weight"] == 0.75 and memo["state"] == "SUGGESTED"
    finally:
        set_tag(disco, key, enable=False)
        set_tag(disco, tag_key(disco, "Sensitive.EmailAddress"), min_score=0.8)


def test_learning_suggests_fields_like_an_accepted_one(
    disco: Server, boss: Http, folder: Path, unique: Callable[[str], str]
) -> None:
    rng = np.random.default_rng(11)
    # Lower-case names: the cold rule wants capitalised ones, so only learning finds these.
    staff = [n.lower() for n in names(rng, 120)]
    strangers = [n.lower().replace(" ", " van ") for n in names(np.random.default_rng(99), 60)]
    # (no value shared with staff)
    write(folder, {
        "hr/staff.csv": csv_text({"nm": staff, "grade": [i % 7 for i in range(120)]}),
        "hr/badge_export.csv": csv_text({"holder": staff[10:70]}),
        "ref/catalogue.csv": csv_text({"title": [f"Trail Tent {i}" for i in range(60)]}),
        "ext/partners.csv": csv_text({"nm": strangers}),
    })
    source = create_source(boss, unique("learn"), "FILE", str(folder))
    run_job(boss, source["key"])
    assert not any("PersonName" in t for t in associations(disco, source["key"]).values())
    set_association(disco, source["key"], "hr/staff.csv", "nm", "Sensitive.PersonName",
                    "ACCEPTED")
    job = run_job(boss, source["key"], "DISCOVER")
    learned = {k: t["PersonName"] for k, t in associations(disco, source["key"]).items()
               if "PersonName" in t}
    assert set(learned) == {("hr/staff.csv", "nm"), ("hr/badge_export.csv", "holder")}, learned
    badge = learned[("hr/badge_export.csv", "holder")]
    assert badge["state"] == "SUGGESTED" and badge["rules"] == ["learning:value-overlap"]
    assert 0.9 < badge["weight"] <= 1.0
    assert learned[("hr/staff.csv", "nm")]["state"] == "ACCEPTED"
    assert job["counts"]["suggestionsCreated"] == 1
    # A same-named field of other people (name alone: 0.5) stays under the 0.6 threshold.
    assert ("ext/partners.csv", "nm") not in learned


def test_a_catastrophic_pattern_does_not_hang_a_job_and_is_reported(
    make_server: Callable[..., Server], root: Path, unique: Callable[[str], str]
) -> None:
    server = make_server(data_roots=[root], discovery_regex_timeout_ms=20)
    http = server.session()
    evil = {f"c{n}": ["a" * (30 + i) + "b" for i in range(20)] for n in range(4)}
    folder = write(root / unique("evil"), {
        "evil.csv": csv_text({**evil, "mail": [f"e{i}@example.org" for i in range(20)]})})
    name = unique("Evil")
    add_tag(server, name, reg_ex=r"(a|aa)+$", min_score=0.5)
    # a pattern that does not compile (the tag endpoints refuse it; an old store may hold it)
    add_tag(server, "Broken", reg_ex="([a-z]", min_score=0.5)
    source = create_source(http, unique("evil"), "FILE", str(folder))
    started = time.monotonic()
    job = run_job(http, source["key"])
    assert time.monotonic() - started < 20
    broken, *timeouts = job["errors"]
    assert broken["path"] is None and "Tests.Broken" in broken["message"]
    assert "does not compile" in broken["message"]
    messages = [e["message"] for e in timeouts]
    assert len(messages) == 3 and all(name in m and "took longer than 20 ms" in m
                                       for m in messages), messages
    assert "skipped for the rest of this run" in messages[-1]
    assert job["counts"]["discoveryErrors"] == 4 and job["counts"]["errors"] == 0
    assert {e["path"] for e in timeouts} == {"evil.csv"}
    # the rest of the resource is discovered all the same
    assert set(associations(server, source["key"])[("evil.csv", "mail")]) == {"EmailAddress"}
    again = run_job(http, source["key"], "DISCOVER")
    assert again["counts"]["errors"] == 1 and again["counts"]["discoveryErrors"] == 4
    stage = {s["stageName"]: s for s in
             resources(server, source["key"])["evil.csv"]["detailed_status"]}["discover"]
    assert name in stage["errorMsg"]


def test_discover_jobs_need_what_profile_jobs_need(
    disco: Server, boss: Http, people: tuple[dict[str, Any], dict[str, Any]],
    unique: Callable[[str], str],
) -> None:
    key = people[0]["key"]
    body = {"jobType": "DISCOVER", "dataSourceKey": key}

    def member(level: str, **role: Any) -> Http:
        made = create_role(boss, unique(f"role-{level}"), level, **role)
        name = unique("user")
        create_user(boss, name, roles=[made["name"]])
        return disco.session(name, PASSWORD)

    stranger = member("Steward", jobExecutionAllowed=True)
    assert_error(stranger.post("/job", json=body), 404, "DATA_SOURCE_NOT_FOUND")
    viewer = member("Analyst", dataSourceKeys=[key])
    assert_error(viewer.post("/job", json=body), 403, "PERMISSION_DENIED", "jobExecutionAllowed")
    steward = member("Steward", dataSourceKeys=[key], jobExecutionAllowed=True)
    job = run_job(steward, key, "DISCOVER")
    assert job["requestedBy"] != "admin" and job["jobType"] == "DISCOVER"


def test_discover_job_scope(
    disco: Server, boss: Http, folder: Path, unique: Callable[[str], str]
) -> None:
    write(folder, {"a/one.csv": people_file(12, 1), "a/two.csv": people_file(12, 2),
                   "b/three.csv": people_file(12, 4)})
    source = create_source(boss, unique("scope"), "FILE", str(folder))
    never = run_job(boss, source["key"], "DISCOVER")  # nothing profiled yet: nothing to do
    assert never["counts"]["skipped"] == 0 and never["counts"]["resourcesExamined"] == 0
    run_job(boss, source["key"], "BROWSE")
    browsed = run_job(boss, source["key"], "DISCOVER")
    assert browsed["counts"]["skipped"] == 3 and "3 without profiled fields" in browsed["message"]
    run_job(boss, source["key"])
    scoped = run_job(boss, source["key"], "DISCOVER", "a")
    assert scoped["counts"]["resourcesExamined"] == 2 and scoped["total"] == 2
    assert scoped["counts"]["unchanged"] == 2 and "under 'a'" in scoped["message"]
    missing = run_job(boss, source["key"], "DISCOVER", "c", expect="FAILED")
    assert "There is no resource at 'c'" in missing["message"]


def test_the_demo_lake(make_server: Callable[..., Server], tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    truth: LakeTruth = build_lake(lake, scale=0.05)
    server = make_server(data_roots=[lake])
    http = server.session()
    found: dict[tuple[str, str], set[str]] = {}
    for payload in lake_sources(lake):
        source = create_source(http, payload["name"], payload["sourceType"], payload["uri"])
        job = run_job(http, source["key"])
        assert job["counts"]["discoveryErrors"] == 0, job
        found.update({k: set(t) for k, t in associations(server, source["key"]).items()})
    expected = {(path, column): {KIND_TAGS[kind]}
                for path, column, kind in truth.sensitive_columns() if kind in KIND_TAGS}
    assert found == expected
