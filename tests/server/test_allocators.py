"""A job process's allocators keep freed memory (``server/allocators.py``): the next profile
reuses it instead of faulting every page in again. Measured in fresh processes, with and
without the settings, by the page faults of a repeated Polars computation (jemalloc)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import resource, sys, time
if sys.argv[1] == "keep":
    from catalog_nb.server.allocators import keep_freed_memory
    assert keep_freed_memory(), "Arrow or Polars was loaded first"
import numpy as np
import polars as pl

series = pl.Series(np.arange(4 * 2**20, dtype=np.float64))  # 32 MB


def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        doubled = series * 2.0  # 32 MB from Polars' allocator, every page written
        del doubled
        time.sleep(0.3)  # longer than jemalloc keeps freed memory by default
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


faults()  # the first round faults the memory in, either way
print(faults())
"""


def _second_round_faults(mode: str, inherited: str | None = None) -> int:
    # One Polars thread: each of its threads allocates from an arena of its own, so work that
    # lands on another thread than last time finds no freed memory to reuse, kept or not.
    env = {**os.environ, "POLARS_MAX_THREADS": "1"}
    # A fresh process's environment, or one inheriting ``inherited`` from its parent.
    env.pop("_RJEM_MALLOC_CONF", None)
    if inherited is not None:
        env["_RJEM_MALLOC_CONF"] = inherited
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True,
                          timeout=120, check=True, env=env)
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="page faults as Linux counts")
def test_freed_memory_is_reused_instead_of_faulted_in_again() -> None:
    returned = _second_round_faults("plain")
    kept = _second_round_faults("keep")
    # A job process started by a process that imported Polars inherits the decays Polars sets
    # on import: they are replaced as well.
    import polars  # noqa: F401

    inherited = os.environ.get("_RJEM_MALLOC_CONF")
    assert inherited, "Polars sets its allocator's decays on import"
    kept_after_polars = _second_round_faults("keep", inherited)
    # Without the settings every round faults its 32 MB in again (8,192 pages of 4 kB, fewer
    # with huge pages); with them the second round finds its memory still mapped.
    assert returned >= 16, returned
    assert kept * 4 <= returned, (kept, returned)
    assert kept_after_polars * 4 <= returned, (kept_after_polars, returned)
