"""Profiling's threads run below the service's priority, so requests are served first."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from catalog_nb.server.profiling import stats
from catalog_nb.server.profiling.files import profile_file
from catalog_nb.server.profiling.threads import BACKGROUND_NICENESS

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="per-thread nice is Linux's")


def _nice(native_id: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, native_id)


def test_the_folding_threads_run_niced(tmp_path: Path) -> None:
    path = tmp_path / "big.csv"
    path.write_text("a,b,c\n" + "".join(f"{i},{i % 7},x{i % 13}\n" for i in range(60_000)))
    seen: dict[str, int] = {}
    original = stats.ColumnAccumulator.update

    def spy(self: stats.ColumnAccumulator, column: object) -> object:
        seen[threading.current_thread().name] = _nice(threading.get_native_id())
        return original(self, column)  # type: ignore[arg-type]

    stats.ColumnAccumulator.update = spy  # type: ignore[method-assign]
    try:
        profile = profile_file(path, chunk_rows=20_000)
    finally:
        stats.ColumnAccumulator.update = original  # type: ignore[method-assign]
    assert profile.state == "OK" and profile.row_count == 60_000
    folding = {name: nice for name, nice in seen.items() if name.startswith("catalog-profile")}
    assert folding, seen  # the pool did the folding
    assert all(nice >= BACKGROUND_NICENESS for nice in folding.values()), folding
    assert _nice(threading.get_native_id()) < BACKGROUND_NICENESS  # the caller is untouched
