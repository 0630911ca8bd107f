"""The demo as `make demo` makes it, run once per test process for the tests that read it.

Building and profiling the demo catalog is most of what these tests cost (a fresh run takes
as long as the tour it then executes): ``test_tour`` checks the run's tour, ``test_demo`` the
catalog it printed and left. None of them changes what another asserts: ``test_demo`` runs
the demo again on the same folder (the lake and the catalog unchanged) and reads the catalog.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

#: The demo lake's size in these tests.
SCALE = "0.1"


@dataclass(frozen=True)
class DemoRun:
    """A finished ``catalog-nb demo --once`` run: its data folder and what it printed."""

    data_dir: Path
    stdout: str


def run_demo(data_dir: Path, *extra: str, timeout: float = 900) -> DemoRun:
    """``catalog-nb demo --once`` on ``data_dir`` as a real process (asserting it succeeded)."""
    done = subprocess.run(
        [sys.executable, "-m", "catalog_nb.cli", "demo", "--once", "--port", "0",
         "--scale", SCALE, *extra, "--data-dir", str(data_dir)],
        capture_output=True, text=True, timeout=timeout, check=False,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    return DemoRun(data_dir, done.stdout)


@pytest.fixture(scope="session")
def made_demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The README's first command, tour included, on a fresh folder: run once per process."""
    return run_demo(tmp_path_factory.mktemp("made-demo") / "demo")
