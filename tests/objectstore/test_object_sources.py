"""Object-store FILE sources through the real HTTP interface, against moto's S3 server.

Registration (object roots, masked secrets), browse and profile of CSV / JSON / Parquet objects
(the same field profiles as the same files on local disk), Hive-partitioned prefixes as
collections, re-profiling only the object that changed, and the failures: a missing bucket,
wrong credentials (the secret in no answer, job, audit event or log line), an object deleted
while its job runs.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catalog_nb.server import job_work
from tests.conftest import Http, Server
from tests.objectstore.conftest import ObjectStore
from tests.server.source_helpers import create_source, fields, resources, run_job

BUCKET = "lake"
ROOT = f"s3://{BUCKET}/data"
MISSING_BUCKET = "no-such-bucket"


def _table(rows: int = 300, shift: int = 0) -> pa.Table:
    return pa.table({
        "id": list(range(shift, shift + rows)),
        "name": [f"customer {i % 37}" for i in range(rows)],
        "amount": [round((i * 7.31) % 1000, 2) if i % 11 else None for i in range(rows)],
        "country": [["NL", "DE", "FR", "US"][i % 4] for i in range(rows)],
        "day": [f"2024-01-{1 + i % 28:02d}" for i in range(rows)],
    })


def _csv(table: pa.Table) -> bytes:
    lines = [",".join(table.column_names)]
    for row in table.to_pylist():
        lines.append(",".join("" if v is None else str(v) for v in row.values()))
    return ("\n".join(lines) + "\n").encode()


def _jsonl(table: pa.Table) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in table.to_pylist()).encode()


def _json_array(table: pa.Table) -> bytes:
    return json.dumps(table.to_pylist()).encode()


def _parquet(table: pa.Table, row_group_size: int | None = None) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, row_group_size=row_group_size)
    return out.getvalue()


#: The files of the comparison: name -> content.
FILES: dict[str, bytes] = {
    "orders.csv": _csv(_table()),
    "events.jsonl": _jsonl(_table(200, 5)),
    "people.json": _json_array(_table(150, 9)),
    "sales.parquet": _parquet(_table(400), row_group_size=100),
}


@pytest.fixture(scope="module")
def local_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("local-lake")
    for name, body in FILES.items():
        (root / name).write_bytes(body)
    return root


@pytest.fixture(scope="module")
def store(object_store: ObjectStore) -> ObjectStore:
    object_store.client.create_bucket(Bucket=BUCKET)
    return object_store


@pytest.fixture(scope="module")
def s3_server(make_server: Callable[..., Server], local_root: Path, store: ObjectStore) -> Server:
    # Jobs on threads: one test deletes an object between browsing and profiling it.
    return make_server(data_roots=[local_root], job_isolation="thread",
                       object_roots=[ROOT, f"s3://{MISSING_BUCKET}"])


@pytest.fixture(scope="module")
def boss(s3_server: Server) -> Http:
    return s3_server.session()


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    """A prefix of this test's own under the object root."""
    return f"data/{request.node.name}"


def _upload(store: ObjectStore, prefix: str, files: dict[str, bytes]) -> None:
    for name, body in files.items():
        store.put(BUCKET, f"{prefix}/{name}", body)


def _without_keys(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("resource_key", "key")}


# ------------------------------------------------------------------------------ registration


def test_locations_outside_the_object_roots_are_refused(boss: Http, store: ObjectStore) -> None:
    for uri in (store.uri(BUCKET, "elsewhere"), store.uri("other-bucket", "data"),
                store.uri(BUCKET), "s3://lake/data-not-under"):
        answer = boss.post("/datasource", json={"name": "outside", "sourceType": "FILE",
                                                "uri": uri})
        assert answer.status_code == 400, (uri, answer.text)
        assert answer.json()["errorCode"] == "SOURCE_OUTSIDE_ROOTS"
        assert store.secret_key not in answer.text


def test_without_object_roots_no_object_source_is_registered(
        admin: Http, store: ObjectStore) -> None:
    answer = admin.post("/datasource", json={"name": "no-roots", "sourceType": "FILE",
                                             "uri": store.uri(BUCKET, "data")})
    assert answer.status_code == 400
    assert answer.json()["errorCode"] == "SOURCE_OUTSIDE_ROOTS"
    assert "CATALOG_OBJECT_ROOTS" in answer.json()["message"]


def test_malformed_uris_are_refused(boss: Http, store: ObjectStore) -> None:
    for uri in ("s3://", "s3://lake/data/../secret", "s3://lake/data?token=x",
                "s3://lake:9000/data", "s3://lake/data?endpoint=ftp://host"):
        answer = boss.post("/datasource", json={"name": "bad", "sourceType": "FILE",
                                                "uri": uri})
        assert answer.status_code == 400, (uri, answer.text)
        assert answer.json()["errorCode"] == "INVALID_SOURCE_URI", uri


def test_the_secret_is_masked_and_kept_when_sent_back(
        boss: Http, store: ObjectStore, prefix: str, unique: Callable[[str], str]) -> None:
    _upload(store, prefix, {"orders.csv": FILES["orders.csv"]})
    source = create_source(boss, unique("masked"), "FILE", store.uri(BUCKET, prefix))
    assert store.secret_key not in json.dumps(source)
    assert f"{store.access_key}:***@{BUCKET}/{prefix}" in source["uri"]
    # A client that sends back what it read keeps the stored secret: the source still reads.
    changed = boss.put(f"/datasource/{source['key']}",
                       json={"uri": source["uri"], "description": "sent back masked"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["uri"] == source["uri"]
    job = run_job(boss, source["key"], "BROWSE")
    assert job["counts"]["created"] == 1


# ------------------------------------------------------------------------------ happy paths


def test_profiles_match_the_same_files_on_local_disk(
        s3_server: Server, boss: Http, store: ObjectStore, local_root: Path, prefix: str,
        unique: Callable[[str], str]) -> None:
    _upload(store, prefix, FILES)
    remote = create_source(boss, unique("remote"), "FILE", store.uri(BUCKET, prefix))
    local = create_source(boss, unique("local"), "FILE", str(local_root))
    for source in (remote, local):
        job = run_job(boss, source["key"])
        assert job["counts"]["errors"] == 0, job
    got, want = resources(s3_server, remote["key"]), resources(s3_server, local["key"])
    assert sorted(got) == sorted(want) == sorted(FILES)
    for path, expected in want.items():
        actual = got[path]
        for column in ("resource_type", "file_format", "separator", "header", "encoding",
                       "row_count", "resource_size", "field_count", "resource_state"):
            assert actual[column] == expected[column], (path, column)
        remote_fields = {n: _without_keys(r) for n, r in fields(s3_server, actual["key"]).items()}
        local_fields = {n: _without_keys(r) for n, r in fields(s3_server, expected["key"]).items()}
        assert remote_fields == local_fields, path


def test_a_partitioned_prefix_is_one_collection(
        s3_server: Server, boss: Http, store: ObjectStore, prefix: str,
        unique: Callable[[str], str]) -> None:
    parts = {f"sales/year=2024/month={m:02d}/part-0.parquet": _parquet(_table(50, m * 100))
             for m in (1, 2, 3)}
    parts["_SUCCESS"] = b""
    _upload(store, prefix, parts)
    source = create_source(boss, unique("partitioned"), "FILE", store.uri(BUCKET, prefix))
    job = run_job(boss, source["key"])
    assert job["counts"]["errors"] == 0, job
    found = resources(s3_server, source["key"])
    sales = found["sales"]
    assert sales["resource_type"] == "resource_type_collection"
    assert sales["partition_count"] == 3
    assert sales["row_count"] == 150
    assert sales["file_format"] == "parquet"
    assert set(fields(s3_server, sales["key"])) == set(_table(1).column_names)


def test_a_reprofile_reads_only_the_object_that_changed(
        s3_server: Server, boss: Http, store: ObjectStore, prefix: str,
        unique: Callable[[str], str]) -> None:
    _upload(store, prefix, FILES)
    source = create_source(boss, unique("changes"), "FILE", store.uri(BUCKET, prefix))
    first = run_job(boss, source["key"])
    assert first["counts"]["created"] == len(FILES)
    before = resources(s3_server, source["key"])
    store.put(BUCKET, f"{prefix}/orders.csv", _csv(_table(320)))  # another size
    again = run_job(boss, source["key"])
    assert again["counts"]["updated"] == 1, again
    assert again["counts"]["unchanged"] == len(FILES) - 1, again
    after = resources(s3_server, source["key"])
    assert after["orders.csv"]["row_count"] == 320
    for path in FILES:
        if path != "orders.csv":
            assert after[path]["time_of_last_profile"] == before[path]["time_of_last_profile"]


def test_credentials_and_endpoint_from_the_aws_environment(
        boss: Http, store: ObjectStore, prefix: str, unique: Callable[[str], str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Jobs run on the server's threads here, so they see this process's environment.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", store.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", store.secret_key)
    monkeypatch.setenv("AWS_ENDPOINT_URL", store.endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    _upload(store, prefix, {"orders.csv": FILES["orders.csv"]})
    source = create_source(boss, unique("env"), "FILE",
                           store.uri(BUCKET, prefix, endpoint=False, credentials=False))
    assert source["uri"] == f"s3://{BUCKET}/{prefix}"
    job = run_job(boss, source["key"])
    assert job["counts"]["created"] == 1, job


def test_the_client_registers_and_profiles_an_object_source(
        s3_server: Server, store: ObjectStore, prefix: str,
        unique: Callable[[str], str]) -> None:
    import catalog_nb

    _upload(store, prefix, {"sales.parquet": FILES["sales.parquet"]})
    cat = catalog_nb.connect(s3_server.url, username=s3_server.admin_user,
                             password=s3_server.admin_password)
    name = unique("client")
    created = cat.create_source(name, f"s3://{BUCKET}/{prefix}", endpoint=store.endpoint,
                                access_key_id=store.access_key,
                                secret_access_key=store.secret_key)
    assert store.secret_key not in json.dumps(created)
    job = cat.profile(name, as_frame=False)
    assert job["state"] == "SUCCEEDED", job
    assert resources(s3_server, created["key"])["sales.parquet"]["row_count"] == 400


# ------------------------------------------------------------------------------ failures


def test_a_missing_bucket_fails_the_job_clearly(
        boss: Http, store: ObjectStore, unique: Callable[[str], str]) -> None:
    source = create_source(boss, unique("missing"), "FILE", store.uri(MISSING_BUCKET, "x"))
    job = run_job(boss, source["key"], "BROWSE", expect="FAILED")
    assert f"The bucket '{MISSING_BUCKET}' does not exist" in job["message"], job


def test_an_empty_prefix_fails_the_job_clearly(
        boss: Http, store: ObjectStore, unique: Callable[[str], str]) -> None:
    source = create_source(boss, unique("empty"), "FILE", store.uri(BUCKET, "data/nothing"))
    job = run_job(boss, source["key"], "BROWSE", expect="FAILED")
    assert f"no objects under s3://{BUCKET}/data/nothing" in job["message"], job


def test_wrong_credentials_fail_the_job_without_showing_the_secret(
        boss: Http, store: ObjectStore, prefix: str, unique: Callable[[str], str],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    _upload(store, prefix, {"orders.csv": FILES["orders.csv"]})
    wrong = "Wr0ng/Secret+Key-that-must-never-show"
    for uri, code in ((store.uri(BUCKET, prefix, secret=wrong), "SIGNATURE_DOES_NOT_MATCH"),
                      (store.uri(BUCKET, prefix, secret=wrong).replace(
                          store.access_key, "AKIANOTAKEY0000000"), "INVALID_ACCESS_KEY_ID")):
        source = create_source(boss, unique("wrong"), "FILE", uri)
        job = run_job(boss, source["key"], expect="FAILED")
        assert "refused the credentials" in job["message"] and code in job["message"], job
        shown = [json.dumps(source), json.dumps(job),
                 boss.get(f"/datasource/{source['key']}").text,
                 boss.get("/job", params={"dataSourceKey": source["key"]}).text,
                 boss.get("/auditevent/list", params={"limit": 1000}).text]
        for text in shown:
            assert wrong not in text
            assert json.dumps(wrong)[1:-1] not in text
    logged = "\n".join(logging.Formatter("%(name)s %(message)s").format(r)
                       for r in caplog.records)
    assert wrong not in logged
    assert store.secret_key not in logged


def test_an_object_deleted_mid_job_is_an_error_and_the_job_goes_on(
        s3_server: Server, boss: Http, store: ObjectStore, prefix: str,
        unique: Callable[[str], str], monkeypatch: pytest.MonkeyPatch) -> None:
    _upload(store, prefix, FILES)
    source = create_source(boss, unique("deleted"), "FILE", store.uri(BUCKET, prefix))
    real = job_work.profile_file

    def deleted_first(path: str, **options: Any) -> Any:
        # The object goes away after browsing listed it, right before it is read.
        if path == "events.jsonl":
            store.client.delete_object(Bucket=BUCKET, Key=f"{prefix}/{path}")
        return real(path, **options)

    monkeypatch.setattr(job_work, "profile_file", deleted_first)
    job = run_job(boss, source["key"])
    assert job["counts"]["errors"] == 1, job
    assert job["counts"]["created"] == len(FILES) - 1, job
    assert job["errors"][0]["path"] == "events.jsonl"
    assert "no longer exists" in job["errors"][0]["message"]
    found = resources(s3_server, source["key"])
    assert found["events.jsonl"]["resource_state"] == "ERROR"
    assert fields(s3_server, found["events.jsonl"]["key"]) == {}  # nothing half-written
    assert found["orders.csv"]["row_count"] == 300
