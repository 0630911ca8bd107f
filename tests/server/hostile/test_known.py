"""Hostile inputs the service already survived, kept here so they stay survived: path escapes,
oversized and deeply nested bodies, SQL injection strings, CSV and JSON bombs, and a
catastrophic regular expression in a tag."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from catalog_nb.contract import MAX_BODY_BYTES, ErrorCode
from tests.server.helpers import assert_error
from tests.server.hostile.common import StoreState, refused, still_answering
from tests.server.hostile.conftest import Target
from tests.server.source_helpers import run_job

JSON = {"Content-Type": "application/json"}
OUTSIDE = ErrorCode.SOURCE_OUTSIDE_ROOTS.value


@pytest.mark.parametrize("uri", ["{root}/../..", "/etc", "{root}/sub/../../..", "/"])
def test_file_sources_outside_the_roots_are_refused(target: Target, uri: str) -> None:
    before = StoreState.of(target.server)
    body = {"name": "escape", "sourceType": "FILE", "uri": uri.format(root=target.root)}
    refused(target.server, target.admin.post("/datasource", json=body), 400, OUTSIDE,
            before=before, http=target.admin)


def test_a_symlink_out_of_the_root_is_refused(target: Target) -> None:
    link = target.root / "link-out"
    if not link.exists():
        link.symlink_to("/etc")
    before = StoreState.of(target.server)
    body = {"name": "escape", "sourceType": "FILE", "uri": str(link)}
    refused(target.server, target.admin.post("/datasource", json=body), 400, OUTSIDE,
            before=before, http=target.admin)


def _chunks(size: int) -> Iterator[bytes]:
    piece = b"x" * 65536
    for _ in range(size // len(piece)):
        yield piece


@pytest.mark.parametrize("chunked", [False, True], ids=["with length", "chunked"])
def test_a_12_mb_body_is_413(target: Target, chunked: bool) -> None:
    size = 12 * 1024 * 1024
    before = StoreState.of(target.server)
    data = _chunks(size) if chunked else b"x" * size
    response = target.admin.post("/user", data=data, headers=JSON)
    refused(target.server, response, 413, ErrorCode.PAYLOAD_TOO_LARGE.value,
            str(MAX_BODY_BYTES), before=before, http=target.admin)


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000,
     b'{"name": "deep", "attributes": ' + b'{"a": ' * 50_000 + b"1" + b"}" * 50_001,
     b'{"name": "deep", "attributes": {"a": ' + b"[" * 500 + b"]" * 500 + b"}}"],
    ids=["100k arrays", "50k objects", "500 arrays in a value"],
)
def test_deeply_nested_json_is_a_400(target: Target, body: bytes) -> None:
    before = StoreState.of(target.server)
    response = target.admin.post("/user", data=body, headers=JSON)
    refused(target.server, response, 400, None, before=before, http=target.admin)


INJECTIONS = ["x'; DROP TABLE users; --", "\" OR 1=1 --", "admin'--", "1) OR (1=1",
              "%' UNION SELECT token_hash FROM sessions --", "*/ SELECT 1 /*"]


@pytest.mark.parametrize("evil", INJECTIONS)
def test_sql_injection_strings_are_plain_text(
    target: Target, evil: str, unique: Callable[[str], str]
) -> None:
    http = target.admin
    name = f"{unique('inj')} {evil}"
    created = http.post("/user", json={"name": name, "description": evil})
    assert created.status_code == 201, created.text
    assert http.get(f"/user/{created.json()['key']}").json()["description"] == evil
    found = http.get("/search/user", params={"searchUsersBy": evil}).json()
    assert [u["name"] for u in found] == [name]
    listed = http.get("/dataresource/metadata", params={"propertyFilter": f"name:{evil}"})
    assert listed.status_code == 200 and listed.json()["totalCount"] == 0
    searched = http.post("/search/new", json={"searchPhrase": evil})
    assert searched.status_code == 201, searched.text
    login = target.server.anonymous().post("/login", json={"username": evil, "password": evil})
    assert_error(login, 401, ErrorCode.LOGIN_FAILED.value)
    still_answering(target.server, http)


def test_a_csv_bomb_is_refused_by_rows_and_by_line_size(target: Target) -> None:
    rows = "virtualFolder,tableOne,tableTwo\n" + ",a.b,c.d\n" * 200_000
    long_line = "," + "a" * 1_500_000 + ",c.d\n"
    binary = bytes(range(256)) * 100
    for content, mentions in ((rows, "rows"), (long_line, "field"), (binary, "UTF-8")):
        before = StoreState.of(target.server)
        response = target.admin.post("/overlap/table/csv",
                                     files={"fileStream": ("bomb.csv", content)})
        refused(target.server, response, 400, ErrorCode.INVALID_CSV.value, mentions,
                before=before, http=target.admin)


def test_a_json_bomb_of_overlap_items_is_refused(target: Target) -> None:
    items = [{"tableOne": "a.b", "tableTwo": "c.d"}] * 60_000
    before = StoreState.of(target.server)
    response = target.admin.post("/overlap/table", json=items)
    refused(target.server, response, 413, ErrorCode.PAYLOAD_TOO_LARGE.value, before=before,
            http=target.admin)


def test_a_catastrophic_regex_tag_does_not_hang_profiling(target: Target) -> None:
    http = target.admin
    domain = http.post("/tagdomain", json={"name": "HostileRegex"})
    assert domain.status_code == 201, domain.text
    tag = http.post("/tag", json={"name": "evil", "domainKey": domain.json()["key"],
                                  "tagState": "REGEX", "regEx": "(a|aa)+$", "minScore": 0.5})
    assert tag.status_code == 201, tag.text
    (target.root / "evil.csv").write_text(
        "code\n" + "".join("a" * (30 + i) + "b\n" for i in range(20)))
    started = time.monotonic()
    job = run_job(http, target.source["key"], "PROFILE")
    assert time.monotonic() - started < 120
    assert any("evil" in e["message"] for e in job["errors"]), job["errors"]
    still_answering(target.server, http)
