"""Which store a ``catalog-nb`` command uses: said on standard error, created only by the
commands meant to make one, never silently in the home folder by a command that reads.

Run as the console command runs (a fresh process, ``HOME`` a temporary folder, no
``CATALOG_*`` variables), so the default folder ``~/.catalog_nb`` is the one a person gets."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from catalog_nb.cli import main


def _cli(home: Path, *argv: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
    return subprocess.run([sys.executable, "-m", "catalog_nb.cli", *argv], input=stdin,
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**clean, "HOME": str(home), **env})


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize(("command", "argv"), [
    ("user list", ("user", "list")),
    ("user set-password", ("user", "set-password", "ana", "--password-stdin")),
    ("profile", ("profile", "demo_files")),
], ids=["user list", "user set-password", "profile"])
def test_a_command_that_only_uses_a_store_refuses_to_make_one(
    tmp_path: Path, command: str, argv: tuple[str, ...]
) -> None:
    done = _cli(tmp_path, *argv, stdin="long-enough-1\n")
    assert done.returncode == 1 and done.stdout == ""
    default = tmp_path / ".catalog_nb" / "catalog.sqlite3"
    assert done.stderr.startswith(
        f"error: there is no catalog store at {default} (from the default folder; no "
        f"--data-dir, --db-url, CATALOG_DATA_DIR or CATALOG_DB_URL given); '{command}' "
        "creates none. Name the store of your catalog with --data-dir DIR or --db-url URL")
    assert "Traceback" not in done.stderr
    assert _files(tmp_path) == []  # nothing made in the home folder


def test_a_named_folder_without_a_store_is_refused_too(tmp_path: Path) -> None:
    typo = tmp_path / "catalgo"
    done = _cli(tmp_path, "user", "list", "--data-dir", str(typo))
    assert done.returncode == 1
    assert f"no catalog store at {typo / 'catalog.sqlite3'} (from --data-dir)" in done.stderr
    env = _cli(tmp_path, "user", "list", CATALOG_DATA_DIR=str(typo))
    assert env.returncode == 1 and "(from CATALOG_DATA_DIR)" in env.stderr
    assert not typo.exists()
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    done = _cli(tmp_path, "user", "list", "--db-url", f"sqlite:///{empty}")
    assert done.returncode == 1 and "holds no catalog" in done.stderr
    memory = _cli(tmp_path, "user", "list", "--db-url", "sqlite://")
    assert memory.returncode == 1 and "in-memory store" in memory.stderr


def test_user_create_makes_the_store_and_says_where_then_reads_say_which(tmp_path: Path) -> None:
    default = tmp_path / ".catalog_nb" / "catalog.sqlite3"
    made = _cli(tmp_path, "user", "create", "ana", "--password-stdin", stdin="long-enough-1\n")
    assert made.returncode == 0, made.stderr
    assert made.stderr.splitlines()[0] == (
        f"Store: sqlite:///{default} (from the default folder; no --data-dir, --db-url, "
        "CATALOG_DATA_DIR or CATALOG_DB_URL given); new, created now")
    assert made.stdout.startswith("Created user ana")
    listed = _cli(tmp_path, "user", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.splitlines()[0] == (
        f"Store: sqlite:///{default} (from the default folder; no --data-dir, --db-url, "
        "CATALOG_DATA_DIR or CATALOG_DB_URL given)")
    # The listing on standard output stays a listing.
    assert listed.stdout.splitlines()[0].split() == ["name", "roles", "password", "email"]
    assert [line.split()[0] for line in listed.stdout.splitlines()[1:]] == ["ana"]

    folder = tmp_path / "team"
    named = _cli(tmp_path, "user", "create", "bo", "--data-dir", str(folder))
    assert named.returncode == 0, named.stderr
    assert named.stderr.splitlines()[0] == (
        f"Store: sqlite:///{folder / 'catalog.sqlite3'} (from --data-dir); new, created now")
    again = _cli(tmp_path, "user", "list", CATALOG_DATA_DIR=str(folder))
    assert again.stderr.splitlines()[0].endswith("(from CATALOG_DATA_DIR)")
    assert "bo" in again.stdout and "ana" not in again.stdout


def test_serve_says_it_creates_the_store(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "catalog_nb.cli", "serve", "--port", "0", "--log-level",
         "warning"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**clean, "HOME": str(tmp_path)})
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
    finally:
        process.terminate()
        process.wait(30)
    default = tmp_path / ".catalog_nb" / "catalog.sqlite3"
    assert first.startswith("Serving the catalog on http://127.0.0.1:0/api/v2 (store: ")
    assert f"sqlite:///{default} (from the default folder;" in first
    assert "; new, created now)" in first


def test_reading_a_store_not_made_yet_is_refused_on_every_backend(
    store_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        main(["user", "list", "--db-url", store_url])
    assert str(refused.value.code).startswith("error: ")
    assert "no catalog" in str(refused.value.code)
    monkeypatch.setattr("sys.stdin", io.StringIO("long-enough-1\n"))
    assert main(["user", "create", "ana", "--password-stdin", "--db-url", store_url]) == 0
    assert main(["user", "list", "--db-url", store_url]) == 0
    out, err = capsys.readouterr()
    assert "ana" in out and "(from --db-url)" in err
