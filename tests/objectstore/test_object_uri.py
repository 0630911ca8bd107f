"""Object-store URIs without a store: parsing, the allow-list, masking and restoring the secret
with the SQL sources' functions, and the client's helper that writes them."""

from __future__ import annotations

import pytest

from catalog_nb.client.resources.sources import object_store_uri
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.profiling.connect import mask_url, redact, restore_secrets
from catalog_nb.server.profiling.object_uri import is_object_uri, parse_object_uri
from catalog_nb.server.settings import Settings
from catalog_nb.server.store.sources import object_uri

SECRET = "se/cr+et=key"


def test_the_client_writes_what_the_service_parses() -> None:
    uri = object_store_uri("s3://lake/raw/2024", endpoint="http://minio.local:9000",
                           region="eu-west-1", access_key_id="AKIA1", secret_access_key=SECRET)
    parsed = parse_object_uri(uri)
    assert (parsed.bucket, parsed.prefix, parsed.endpoint, parsed.region) == (
        "lake", "raw/2024", "http://minio.local:9000", "eu-west-1")
    assert (parsed.access_key, parsed.secret_key) == ("AKIA1", SECRET)
    assert parse_object_uri(parsed.render()) == parsed
    assert is_object_uri(uri) and not is_object_uri("/data/lake")
    with pytest.raises(ValueError):
        object_store_uri("s3://lake", access_key_id="AKIA1")


def test_the_secret_is_masked_redacted_and_restored_by_the_sql_machinery() -> None:
    stored = parse_object_uri(object_store_uri(
        "s3://lake/raw", endpoint="http://minio:9000", access_key_id="AKIA1",
        secret_access_key=SECRET)).render()
    shown = mask_url(stored)
    assert SECRET not in shown and "AKIA1:***@lake/raw" in shown
    assert redact(f"failed with {SECRET}", stored) == "failed with ***"
    assert parse_object_uri(restore_secrets(shown, stored)).secret_key == SECRET
    # A new secret sent in place of *** replaces the stored one.
    changed = shown.replace("***", "other")
    assert parse_object_uri(restore_secrets(changed, stored)).secret_key == "other"


@pytest.mark.parametrize("uri", [
    "s3://lake/raw", "s3://lake/raw/2024/", "s3://k:s@lake/raw/x?endpoint=http://h:1",
])
def test_locations_under_a_root_pass(uri: str) -> None:
    assert object_uri(uri, ["s3://lake/raw"]).startswith("s3://")


@pytest.mark.parametrize(("uri", "roots", "code"), [
    ("s3://lake/raw", [], "SOURCE_OUTSIDE_ROOTS"),
    ("s3://lake/rawer", ["s3://lake/raw"], "SOURCE_OUTSIDE_ROOTS"),
    ("s3://other/raw", ["s3://lake/raw"], "SOURCE_OUTSIDE_ROOTS"),
    ("s3://lake", ["s3://lake/raw"], "SOURCE_OUTSIDE_ROOTS"),
    ("s3://lake/raw/../x", ["s3://lake"], "INVALID_SOURCE_URI"),
    ("s3://lake/raw?secret=x", ["s3://lake"], "INVALID_SOURCE_URI"),
    (f"s3://key@lake/raw?x={SECRET}", ["s3://lake"], "INVALID_SOURCE_URI"),
])
def test_locations_outside_or_malformed_are_refused(uri: str, roots: list[str],
                                                    code: str) -> None:
    with pytest.raises(BadRequest) as refused:
        object_uri(uri, roots)
    assert refused.value.code == code
    assert SECRET not in refused.value.message


def test_object_roots_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CATALOG_OBJECT_ROOTS", "s3://lake/raw/, s3://exports")
    assert Settings().object_roots == ["s3://lake/raw", "s3://exports"]
    monkeypatch.setenv("CATALOG_OBJECT_ROOTS", "s3://key:secret@lake/raw")
    with pytest.raises(ValueError, match="bucket/prefix only"):
        Settings()


def test_store_errors_met_while_reading_are_described_as_such() -> None:
    from catalog_nb.server.profiling.feed import describe_error

    gone = OSError("When reading from key 'raw/a.csv' in bucket 'lake': AWS Error NO_SUCH_KEY "
                   "during GetObject operation: The specified key does not exist.")
    assert describe_error(gone, "csv") == (
        "The file no longer exists: it was moved or deleted after browsing.")
    refused = OSError("When reading from key 'raw/a.csv' in bucket 'lake': AWS Error "
                      "ACCESS_DENIED during GetObject operation: Access Denied")
    assert describe_error(refused, "csv").startswith(
        "The object cannot be read from the store: ")
