"""Hostile SQL sources: SQLite files outside the data roots, and the catalog's own store in
disguise (a hard link, a symbolic link, its -wal/-shm files, an ATTACHed alias).

The server of this module keeps its store in a SQLite file on every backend, because the cases
are about that file; its data roots are a folder of lake files and the store's own folder, so
that "inside the roots" never excuses the store. Hard links are real ``os.link`` links to the
real store file. What a job would connect to is checked again when it runs: a file swapped for
a link after registration fails the job and records nothing.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select

from catalog_nb.server.store.schema import data_sources
from tests.conftest import Http, Server
from tests.server.hostile.common import StoreState, refused
from tests.server.source_helpers import create_source, resources, run_job

SECRET = "hunter2-Not-Shown"


def _database(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, label TEXT)")
        conn.execute("INSERT INTO t (label) VALUES ('x')")
    return path


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A data root with a database, a folder outside it, and the store's own folder."""
    base = tmp_path_factory.mktemp("hostile-sql")
    root, outside, state = base / "root", base / "outside", base / "state"
    for folder in (root, outside, state):
        folder.mkdir()
    _database(root / "good.sqlite3")
    _database(outside / "secret.sqlite3")
    (root / "escape.sqlite3").symlink_to(outside / "secret.sqlite3")
    (root / "alias.sqlite3").symlink_to(root / "good.sqlite3")
    return {"root": root, "outside": outside, "state": state,
            "store": state / "catalog.sqlite3"}


@pytest.fixture(scope="module")
def fenced(make_server: Callable[..., Server], place: dict[str, Path]) -> Server:
    return make_server(db_url=f"sqlite:///{place['store']}",
                       data_roots=[place["root"], place["state"]])


@pytest.fixture(scope="module")
def boss(fenced: Server) -> Http:
    return fenced.session()


def _post(http: Http, name: str, uri: str) -> object:
    return http.post("/datasource", json={"name": name, "sourceType": "SQL", "uri": uri})


def _linked(place: dict[str, Path], kind: str, target: Path, name: str) -> Path:
    link = place["root"] / name
    if link.exists() or link.is_symlink():
        link.unlink()
    if kind == "hard":
        os.link(target, link)
    else:
        link.symlink_to(target)
    return link


@pytest.mark.parametrize(
    ("case", "suffix"),
    [
        ("hard link", ""),
        ("symbolic link", ""),
        ("the file itself", ""),
        ("dots to the file", ""),
        ("hard link to the -wal file", "-wal"),
        ("symbolic link to the -shm file", "-shm"),
        ("attached hard link", ""),
    ],
)
def test_the_own_store_is_refused_however_it_is_named(
    fenced: Server, boss: Http, place: dict[str, Path], case: str, suffix: str,
    unique: Callable[[str], str], request: pytest.FixtureRequest,
) -> None:
    store = place["store"]
    assert Path(str(fenced.store.engine.url.database)).resolve() == store.resolve()
    # The service opens a connection per request, and SQLite removes -wal and -shm when the last
    # one closes: a reader held open here keeps them for the test.
    holder = sqlite3.connect(store)
    request.addfinalizer(holder.close)
    holder.execute("SELECT count(*) FROM users").fetchone()
    target = Path(f"{store}{suffix}")
    assert target.is_file(), f"the store's {suffix or 'main'} file is missing"
    slug = unique("link")
    uri = {
        "hard link": lambda: f"sqlite:///{_linked(place, 'hard', target, slug)}",
        "symbolic link": lambda: f"sqlite:///{_linked(place, 'soft', target, slug)}",
        "the file itself": lambda: f"sqlite:///{store}",
        "dots to the file": lambda: f"sqlite:///{place['root']}/../state/{store.name}",
        "hard link to the -wal file": lambda: f"sqlite:///{_linked(place, 'hard', target, slug)}",
        "symbolic link to the -shm file":
            lambda: f"sqlite:///{_linked(place, 'soft', target, slug)}",
        "attached hard link": lambda: (
            f"sqlite:///{place['root'] / 'good.sqlite3'}?attach=cat:"
            f"{_linked(place, 'hard', target, slug).name}"),
    }[case]()
    before = StoreState.of(fenced)
    response = _post(boss, unique("self"), uri)
    refused(fenced, response, 400, "INVALID_SOURCE_URI", "own store", before=before, http=boss)


@pytest.mark.parametrize(
    ("case", "uri"),
    [
        ("a system file", "sqlite:////etc/passwd"),
        ("a password in the query", f"sqlite:////etc/passwd?password={SECRET}"),
        ("dots out of the root", "sqlite:///{root}/../outside/secret.sqlite3"),
        ("a link out of the root", "sqlite:///{root}/escape.sqlite3"),
        ("an attachment outside", "sqlite:///{root}/good.sqlite3?attach=x:/etc/passwd"),
        ("a relative attachment", "sqlite:///{root}/good.sqlite3?attach=x:../outside/secret.sqlite3"),
        ("a device", "sqlite:////dev/zero"),
    ],
)
def test_a_sqlite_file_outside_the_data_roots_is_refused(
    fenced: Server, boss: Http, place: dict[str, Path], case: str, uri: str,
    unique: Callable[[str], str],
) -> None:
    before = StoreState.of(fenced)
    response = _post(boss, unique("out"), uri.format(root=place["root"]))
    body = refused(fenced, response, 400, "SOURCE_OUTSIDE_ROOTS", "outside the data roots",
                   before=before, http=boss)
    assert str(place["root"].resolve()) in body["message"]
    assert SECRET not in response.text


def test_a_sqlite_file_inside_the_roots_is_accepted_and_profiled(
    fenced: Server, boss: Http, place: dict[str, Path], unique: Callable[[str], str]
) -> None:
    good = create_source(boss, unique("good"), "SQL", f"sqlite:///{place['root']}/good.sqlite3")
    assert run_job(boss, good["key"], "BROWSE")["state"] == "SUCCEEDED"
    assert set(resources(fenced, good["key"])) == {"main.t"}
    # A link that stays inside the roots is fine, and so is a file that does not exist yet.
    create_source(boss, unique("alias"), "SQL", f"sqlite:///{place['root']}/alias.sqlite3")
    create_source(boss, unique("later"), "SQL", f"sqlite:///{place['root']}/later.sqlite3")


def test_in_memory_sqlite_is_refused(
    fenced: Server, boss: Http, unique: Callable[[str], str]
) -> None:
    for uri in ("sqlite://", "sqlite:///:memory:", "sqlite:///file::memory:?cache=shared"):
        before = StoreState.of(fenced)
        refused(fenced, _post(boss, unique("memory"), uri), 400, "INVALID_SOURCE_URI",
                before=before, http=boss)


def test_without_data_roots_no_sqlite_file_is_accepted(
    live_server: Server, admin: Http, tmp_path: Path, unique: Callable[[str], str]
) -> None:
    before = StoreState.of(live_server)
    response = _post(admin, unique("noroot"), f"sqlite:///{_database(tmp_path / 'x.sqlite3')}")
    refused(live_server, response, 400, "SOURCE_OUTSIDE_ROOTS", "CATALOG_DATA_ROOTS",
            before=before, http=admin)


def test_an_update_cannot_point_a_source_outside_or_at_the_store(
    fenced: Server, boss: Http, place: dict[str, Path], unique: Callable[[str], str]
) -> None:
    source = create_source(boss, unique("moving"), "SQL",
                           f"sqlite:///{place['root']}/good.sqlite3")
    shown = boss.get(f"/datasource/{source['key']}").json()
    link = _linked(place, "hard", place["store"], unique("upd"))
    for uri, code in ((f"sqlite:///{link}", "INVALID_SOURCE_URI"),
                      ("sqlite:////etc/passwd", "SOURCE_OUTSIDE_ROOTS")):
        before = StoreState.of(fenced)
        response = boss.put(f"/datasource/{source['key']}", json={"uri": uri})
        refused(fenced, response, 400, code, before=before, http=boss)
    assert boss.get(f"/datasource/{source['key']}").json() == shown


def _swap(path: Path, kind: str, target: Path) -> None:
    """Replace a registered database by a link, as someone with access to the folder could."""
    path.unlink()
    if kind == "hard":
        os.link(target, path)
    else:
        path.symlink_to(target)


@pytest.mark.parametrize(
    ("kind", "into", "mention"),
    [
        ("hard", "store", "own store"),
        ("soft", "store", "own store"),
        ("soft", "outside", "outside the data roots"),
    ],
)
def test_the_file_is_checked_again_when_a_job_connects(
    fenced: Server, boss: Http, place: dict[str, Path], kind: str, into: str, mention: str,
    unique: Callable[[str], str],
) -> None:
    name = unique("swapped")
    path = _database(place["root"] / f"{name}.sqlite3")
    source = create_source(boss, name, "SQL", f"sqlite:///{path}")
    target = place["store"] if into == "store" else place["outside"] / "secret.sqlite3"
    _swap(path, kind, target)
    job = run_job(boss, source["key"], "BROWSE", expect="FAILED")
    assert mention in job["message"] and name in job["message"]
    assert resources(fenced, source["key"]) == {}
    with fenced.store.read() as conn:
        stored = conn.execute(select(data_sources.c.uri)
                              .where(data_sources.c.key == source["key"])).scalar_one()
    assert stored == f"sqlite:///{path}"


def test_an_attachment_swapped_for_the_store_fails_the_job(
    fenced: Server, boss: Http, place: dict[str, Path], unique: Callable[[str], str]
) -> None:
    name = unique("attached")
    extra = _database(place["root"] / f"{name}.sqlite3")
    source = create_source(boss, name, "SQL",
                           f"sqlite:///{place['root']}/good.sqlite3?attach=more:{extra.name}")
    _swap(extra, "hard", place["store"])
    job = run_job(boss, source["key"], "BROWSE", expect="FAILED")
    assert "own store" in job["message"]
    assert resources(fenced, source["key"]) == {}
