"""Data sources through HTTP: create, update, view, list; roots, URLs, masking, visibility."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from catalog_nb.server.store.schema import audit_events, data_sources
from tests.conftest import Http, Server
from tests.server.helpers import (
    PASSWORD,
    assert_error,
    audit_search,
    create_role,
    create_user,
    row_count,
)
from tests.server.source_helpers import create_source, run_job

SECRET = "s3cret-Pa55word"


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A data root with folders, a folder outside it, and symbolic links both ways."""
    base = tmp_path_factory.mktemp("roots")
    root, outside = base / "root", base / "outside"
    for folder in (root / "sales", root / "hr", outside / "secrets"):
        folder.mkdir(parents=True)
    (root / "sales" / "a.csv").write_text("id,name\n1,x\n")
    (outside / "secrets" / "s.csv").write_text("id,pw\n1,x\n")
    (root / "escape").symlink_to(outside / "secrets", target_is_directory=True)
    (root / "alias").symlink_to(root / "hr", target_is_directory=True)
    (root / "not-a-folder.txt").write_text("x")
    return {"root": root, "outside": outside}


@pytest.fixture(scope="module")
def rooted(make_server: Callable[..., Server], roots: dict[str, Path]) -> Server:
    return make_server(data_roots=[roots["root"]])


@pytest.fixture(scope="module")
def root_admin(rooted: Server) -> Http:
    return rooted.session()


def _events(http: Http, name: str) -> list[dict[str, Any]]:
    found = audit_search(http, objectType="DATA_SOURCE")
    return [e for e in found if e["objectName"] == name]


def _names(http: Http) -> set[str]:
    response = http.get("/datasource")
    assert response.status_code == 200, response.text
    return {s["name"] for s in response.json()}


def test_a_file_source_is_created_viewed_and_listed(
    rooted: Server, root_admin: Http, roots: dict[str, Path], unique: Callable[[str], str]
) -> None:
    name = unique("sales")
    created = create_source(root_admin, name, "FILE", str(roots["root"] / "sales"),
                            description="Sales exports", includePatterns=["*.csv"],
                            excludePatterns=["tmp/*"])
    assert created["type"] == "datasource" and created["key"]
    assert created["name"] == name and created["description"] == "Sales exports"
    assert created["sourceType"] == "FILE"
    assert created["uri"] == str((roots["root"] / "sales").resolve())
    assert created["includePatterns"] == ["*.csv"] and created["excludePatterns"] == ["tmp/*"]
    assert created["resourceCount"] == 0 and created["lastJob"] is None
    assert created["engine"] == "local"
    assert created["timeOfCreation"] == created["timeOfLastChange"] > 0
    fetched = root_admin.get(f"/datasource/{created['key']}")
    assert fetched.status_code == 200 and fetched.json() == created
    assert name in _names(root_admin)
    events = _events(root_admin, name)
    assert events and events[0]["action"] == "CREATE" and events[0]["outcome"] == "SUCCESS"


def test_names_are_unique_case_insensitively(
    root_admin: Http, roots: dict[str, Path], unique: Callable[[str], str]
) -> None:
    name = unique("Dup")
    create_source(root_admin, name, "FILE", str(roots["root"] / "sales"))
    again = root_admin.post("/datasource", json={
        "name": name.upper(), "sourceType": "FILE", "uri": str(roots["root"] / "hr")})
    assert_error(again, 409, "DUPLICATE_NAME", name.upper())


@pytest.mark.parametrize("where", ["outside", "dotdot", "symlink", "file-url-outside"])
def test_a_folder_outside_the_roots_is_refused_and_nothing_is_stored(
    rooted: Server, root_admin: Http, roots: dict[str, Path], where: str,
    unique: Callable[[str], str],
) -> None:
    uri = {
        "outside": str(roots["outside"] / "secrets"),
        "dotdot": f"{roots['root']}/sales/../../outside/secrets",
        "symlink": str(roots["root"] / "escape"),
        "file-url-outside": (roots["outside"] / "secrets").as_uri(),
    }[where]
    before = row_count(rooted, data_sources)
    name = unique("escape")
    response = root_admin.post("/datasource", json={"name": name, "sourceType": "FILE",
                                                     "uri": uri})
    body = assert_error(response, 400, "SOURCE_OUTSIDE_ROOTS", "outside the data roots")
    assert str(roots["root"].resolve()) in body["message"]
    assert row_count(rooted, data_sources) == before
    assert name not in _names(root_admin)
    events = _events(root_admin, name)
    assert [e["outcome"] for e in events] == ["FAILURE"]


def test_links_and_dots_that_stay_inside_a_root_are_resolved(
    root_admin: Http, roots: dict[str, Path], unique: Callable[[str], str]
) -> None:
    via_link = create_source(root_admin, unique("alias"), "FILE", str(roots["root"] / "alias"))
    assert via_link["uri"] == str((roots["root"] / "hr").resolve())
    dotted = create_source(root_admin, unique("dots"), "FILE", f"{roots['root']}/hr/../sales/.")
    assert dotted["uri"] == str((roots["root"] / "sales").resolve())
    as_url = create_source(root_admin, unique("url"), "FILE", (roots["root"] / "hr").as_uri())
    assert as_url["uri"] == str((roots["root"] / "hr").resolve())
    whole = create_source(root_admin, unique("whole"), "FILE", str(roots["root"]))
    assert whole["uri"] == str(roots["root"].resolve())


@pytest.mark.parametrize(
    ("uri", "mention"),
    [
        ("{root}/nope", "does not exist"),
        ("{root}/not-a-folder.txt", "not a folder"),
        ("relative/folder", "absolute"),
        ("file://otherhost/share", "another host"),
    ],
)
def test_a_folder_that_is_not_one_is_refused(
    root_admin: Http, roots: dict[str, Path], uri: str, mention: str,
    unique: Callable[[str], str],
) -> None:
    response = root_admin.post("/datasource", json={
        "name": unique("bad"), "sourceType": "FILE", "uri": uri.format(root=roots["root"])})
    assert_error(response, 400, "INVALID_SOURCE_URI", mention)


def test_without_data_roots_no_file_source_is_accepted(
    admin: Http, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    response = admin.post("/datasource", json={
        "name": unique("noroot"), "sourceType": "FILE", "uri": str(tmp_path)})
    assert_error(response, 400, "SOURCE_OUTSIDE_ROOTS", "CATALOG_DATA_ROOTS")


@pytest.mark.parametrize(
    ("uri", "mention"),
    [
        ("not a url", "not an SQLAlchemy URL"),
        ("", "String should have at least 1 character"),
        (f"nosuchdb://u:{SECRET}@host/db", "dialect 'nosuchdb' is unknown"),
        (f"mysql+nosuchdriver://u:{SECRET}@host/db", "unknown"),
        (f"postgresql+psycopg://u:{SECRET}@[::1/db", "not an SQLAlchemy URL"),
        ("sqlite:///relative.sqlite3", "absolute path"),
        ("sqlite://", "in-memory"),
        ("sqlite:////data/main.db?attach=nocolon", "attach"),
        ("sqlite:////data/main.db?attach=main:other.db", "reserved"),
        (f"postgresql+psycopg://u:{SECRET}@host/db?attach=s:x.db", "only understood for sqlite"),
    ],
)
def test_a_malformed_sql_url_is_refused_without_showing_the_password(
    rooted: Server, root_admin: Http, uri: str, mention: str, unique: Callable[[str], str]
) -> None:
    before = row_count(rooted, data_sources)
    response = root_admin.post("/datasource", json={
        "name": unique("sql"), "sourceType": "SQL", "uri": uri})
    code = "INVALID_PAYLOAD" if not uri else "INVALID_SOURCE_URI"
    body = assert_error(response, 400, code, mention)
    assert SECRET not in response.text and SECRET not in str(body)
    assert row_count(rooted, data_sources) == before


def test_the_catalog_store_itself_cannot_be_a_source(
    rooted: Server, root_admin: Http, unique: Callable[[str], str]
) -> None:
    if rooted.store.dialect != "sqlite":
        pytest.skip("the store is not a SQLite file on this backend")
    database = rooted.store.engine.url.database
    response = root_admin.post("/datasource", json={
        "name": unique("self"), "sourceType": "SQL", "uri": f"sqlite:///{database}"})
    assert_error(response, 400, "INVALID_SOURCE_URI", "own store")


def _stored_uri(server: Server, key: str) -> str:
    with server.store.read() as conn:
        return str(conn.execute(
            select(data_sources.c.uri).where(data_sources.c.key == key)).scalar_one())


def test_sql_passwords_are_stored_but_never_shown(
    rooted: Server, root_admin: Http, unique: Callable[[str], str]
) -> None:
    name = unique("pg")
    uri = f"postgresql+psycopg://reader:{SECRET}@db.invalid:5432/sales?sslmode=disable"
    created = create_source(root_admin, name, "SQL", uri)
    assert created["uri"] == "postgresql+psycopg://reader:***@db.invalid:5432/sales?sslmode=disable"
    assert _stored_uri(rooted, created["key"]) == uri
    # Sending the masked URL back keeps the password; another host keeps it too.
    moved = created["uri"].replace("db.invalid", "db2.invalid")
    response = root_admin.put(f"/datasource/{created['key']}", json={"uri": moved})
    assert response.status_code == 200, response.text
    assert response.json()["uri"] == moved
    assert _stored_uri(rooted, created["key"]) == uri.replace("db.invalid", "db2.invalid")
    # A query-string password is a secret too.
    response = root_admin.put(f"/datasource/{created['key']}", json={
        "uri": f"postgresql+psycopg://reader@db.invalid/sales?password={SECRET}"})
    assert response.status_code == 200 and "password=***" in response.json()["uri"]
    for path in ("/datasource", f"/datasource/{created['key']}"):
        assert SECRET not in root_admin.get(path).text
    with rooted.store.read() as conn:
        messages = conn.execute(select(audit_events.c.message)).scalars().all()
    assert not [m for m in messages if m and SECRET in m]


def test_an_update_changes_only_what_is_sent(
    rooted: Server, root_admin: Http, roots: dict[str, Path], unique: Callable[[str], str]
) -> None:
    source = create_source(root_admin, unique("upd"), "FILE", str(roots["root"] / "sales"),
                           description="before", includePatterns=["*.csv"])
    renamed = unique("renamed")
    response = root_admin.put(f"/datasource/{source['key']}", json={
        "name": renamed, "excludePatterns": ["old/*"], "uri": str(roots["root"] / "alias")})
    assert response.status_code == 200, response.text
    after = response.json()
    assert after["name"] == renamed and after["description"] == "before"
    assert after["includePatterns"] == ["*.csv"] and after["excludePatterns"] == ["old/*"]
    assert after["uri"] == str((roots["root"] / "hr").resolve())
    assert after["timeOfLastChange"] >= source["timeOfLastChange"]
    assert after["timeOfCreation"] == source["timeOfCreation"]
    events = audit_search(root_admin, objectType="DATA_SOURCE", objectKey=source["key"])
    assert events[0]["action"] == "UPDATE" and events[0]["outcome"] == "SUCCESS"


@pytest.mark.parametrize(
    ("body", "status", "code", "mention"),
    [
        ({"sourceType": "SQL"}, 400, "READ_ONLY_PROPERTY", "cannot change"),
        ({"name": None}, 400, "INVALID_PAYLOAD", "name cannot be set to null"),
        ({"uri": None}, 400, "INVALID_PAYLOAD", "uri cannot be set to null"),
        ({"uri": "/etc"}, 400, "SOURCE_OUTSIDE_ROOTS", "outside"),
        ({"timeOfCreation": 3}, 400, "INVALID_PAYLOAD", "timeOfCreation"),
        ({"color": "red"}, 400, "INVALID_PAYLOAD", "color"),
        ({"includePatterns": ["  "]}, 400, "INVALID_PAYLOAD", "empty"),
        ({"engine": None}, 400, "INVALID_PAYLOAD", "engine cannot be set to null"),
        ({"engine": "hadoop"}, 400, "INVALID_PAYLOAD", "engine"),
    ],
)
def test_a_bad_update_is_refused_and_changes_nothing(
    root_admin: Http, roots: dict[str, Path], body: dict[str, Any], status: int, code: str,
    mention: str, unique: Callable[[str], str],
) -> None:
    source = create_source(root_admin, unique("keep"), "FILE", str(roots["root"] / "sales"))
    response = root_admin.put(f"/datasource/{source['key']}", json=body)
    assert_error(response, status, code, mention)
    assert root_admin.get(f"/datasource/{source['key']}").json() == source


def test_spark_is_a_file_sources_engine_only(
    rooted: Server, root_admin: Http, roots: dict[str, Path], unique: Callable[[str], str]
) -> None:
    before = row_count(rooted, data_sources)
    refused = root_admin.post("/datasource", json={
        "name": unique("sql"), "sourceType": "SQL", "uri": "postgresql+psycopg://reader@db.invalid/sales",
        "engine": "spark"})
    assert_error(refused, 400, "INVALID_PAYLOAD", "profiled by its own database")
    assert row_count(rooted, data_sources) == before
    sql = create_source(root_admin, unique("sql"), "SQL", "postgresql+psycopg://reader@db.invalid/sales")
    assert_error(root_admin.put(f"/datasource/{sql['key']}", json={"engine": "spark"}), 400,
                 "INVALID_PAYLOAD", "Spark engine profiles FILE sources")
    assert_error(root_admin.post("/job", json={"jobType": "PROFILE", "dataSourceKey": sql["key"],
                                               "engine": "spark"}),
                 400, "INVALID_PAYLOAD", "profiled by its own database")
    assert root_admin.get("/job", params={"dataSourceKey": sql["key"]}).json() == []
    files = create_source(root_admin, unique("files"), "FILE", str(roots["root"] / "sales"),
                          engine="spark")
    assert files["engine"] == "spark"
    changed = root_admin.put(f"/datasource/{files['key']}", json={"engine": "local"})
    assert changed.status_code == 200 and changed.json()["engine"] == "local"


def test_unknown_sources_answer_404(root_admin: Http) -> None:
    assert_error(root_admin.get("/datasource/nope"), 404, "DATA_SOURCE_NOT_FOUND", "nope")
    response = root_admin.put("/datasource/nope", json={"description": "x"})
    assert_error(response, 404, "DATA_SOURCE_NOT_FOUND")
    assert_error(root_admin.delete("/datasource/nope"), 405, "METHOD_NOT_ALLOWED")


def test_roles_decide_which_sources_a_user_sees(
    rooted: Server, root_admin: Http, roots: dict[str, Path], unique: Callable[[str], str]
) -> None:
    seen = create_source(root_admin, unique("seen"), "FILE", str(roots["root"] / "sales"))
    hidden = create_source(root_admin, unique("hidden"), "FILE", str(roots["root"] / "hr"))
    role = create_role(root_admin, unique("readers"), "Steward",
                       dataSourceKeys=[seen["key"]])
    user = unique("reader")
    create_user(root_admin, user, roles=[role["name"]])
    reader = rooted.session(user, PASSWORD)
    names = _names(reader)
    assert seen["name"] in names and hidden["name"] not in names
    assert reader.get(f"/datasource/{seen['key']}").status_code == 200
    assert_error(reader.get(f"/datasource/{hidden['key']}"), 404, "DATA_SOURCE_NOT_FOUND")
    # Writes need an Administrator, whatever the source.
    for key in (seen["key"], hidden["key"]):
        response = reader.put(f"/datasource/{key}", json={"description": "mine"})
        assert_error(response, 403, "PERMISSION_DENIED", "Administrator")
    response = reader.post("/datasource", json={
        "name": unique("x"), "sourceType": "FILE", "uri": str(roots["root"])})
    assert_error(response, 403, "PERMISSION_DENIED")
    everything = create_role(root_admin, unique("all"), "Guest", metadataAccessOption="ALL")
    viewer = unique("viewer")
    create_user(root_admin, viewer, roles=[everything["name"]])
    assert {seen["name"], hidden["name"]} <= _names(rooted.session(viewer, PASSWORD))


def test_resource_count_and_last_job_follow_jobs(
    rooted: Server, root_admin: Http, roots: dict[str, Path], unique: Callable[[str], str]
) -> None:
    source = create_source(root_admin, unique("counted"), "FILE", str(roots["root"] / "sales"))
    job = run_job(root_admin, source["key"], "BROWSE")
    after = root_admin.get(f"/datasource/{source['key']}").json()
    assert after["resourceCount"] == 1
    assert after["lastJob"]["key"] == job["key"] and after["lastJob"]["state"] == "SUCCEEDED"
    listed = {s["key"]: s for s in root_admin.get("/datasource").json()}
    assert listed[source["key"]]["lastJob"]["key"] == job["key"]


def test_the_folder_is_checked_again_when_a_job_runs(
    make_server: Callable[..., Server], tmp_path: Path, unique: Callable[[str], str]
) -> None:
    root = tmp_path / "root"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.csv").write_text("a\n1\n")
    server = make_server(data_roots=[root])
    http = server.session()
    source = create_source(http, unique("moved"), "FILE", str(root / "data"))
    # The folder is replaced by a link out of the root after it was registered.
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "data").rename(tmp_path / "old-data")
    (root / "data").symlink_to(outside, target_is_directory=True)
    job = run_job(http, source["key"], "BROWSE", expect="FAILED")
    assert "outside the data roots" in job["message"]
