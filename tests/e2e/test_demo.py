"""The README's first command, run the way a newcomer runs it (one-shot, as a real process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_demo_starts_the_catalog_and_a_client_lists_users(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "catalog_nb.cli", "demo", "--once", "--port", "0",
         "--data-dir", str(tmp_path / "demo")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Connected: <Catalog http://127.0.0.1:" in out and "as admin>" in out
    users_block = out.split("Users:")[1].split("Roles:")[0]
    assert "admin" in users_block and "True" in users_block
    roles_block = out.split("Roles:")[1]
    for role in ("Administrator", "Steward", "Analyst", "Guest"):
        assert role in roles_block
    assert (tmp_path / "demo" / "catalog.sqlite3").is_file()
