"""Memory allocators of a process that profiles, told to keep what is freed for a while.

Profiling one file after another allocates and frees the same few hundred megabytes each time,
through three allocators: glibc's ``malloc`` (NumPy), mimalloc (Arrow's default pool) and
jemalloc (Polars). Each returns freed memory to the kernel at once or within milliseconds, so
the next file faults every page in again: on TPC-H's orders.csv (16 MB) that was 4,000-6,500
page faults and 30-40 ms of system time per profile, about a tenth of its CPU time. Told to
keep freed memory for :data:`KEEP_SECONDS`, the next profile reuses it (about 20 faults).

The cost is memory held after a profile: at most the profile's own peak, returned by Arrow's
and Polars' allocators once idle for :data:`KEEP_SECONDS`; glibc keeps up to
:data:`TRIM_THRESHOLD` at the top of its heap. Only job processes (and benchmarks measuring
them) call :func:`keep_freed_memory`: never the service, nor a notebook importing the profiler.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

#: How long Arrow's and Polars' allocators keep freed memory before returning it.
KEEP_SECONDS = 10
#: Allocations below this size come from glibc's heap instead of a mapping of their own (a
#: mapping is returned to the kernel on free, and faulted in again on the next allocation).
MMAP_THRESHOLD = 32 * 2**20
#: Free memory glibc keeps at the top of its heap before trimming it.
TRIM_THRESHOLD = 256 * 2**20
_JEMALLOC_CONF = "_RJEM_MALLOC_CONF"
_DECAYS = frozenset({"dirty_decay_ms", "muzzy_decay_ms"})
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def keep_freed_memory() -> bool:
    """Tell the process's allocators to keep freed memory for reuse (see the module docstring).

    Call it first thing in a fresh process: Arrow's and Polars' allocators read their settings
    when they load, so it only reaches them before ``pyarrow`` and ``polars`` are imported (it
    says False when one of them already was). glibc's settings apply at any time. Does nothing
    where an allocator is absent (not Linux, musl).
    """
    keep_ms = str(KEEP_SECONDS * 1000)
    os.environ.setdefault("MIMALLOC_PURGE_DELAY", keep_ms)
    # Polars' jemalloc is built with the "_rjem_" prefix, so it reads this name. Importing
    # Polars sets it to decays of its own choosing when it is unset, and a process started
    # from one that imported Polars inherits that: a setting of decays only is replaced, any
    # other is someone's tuning and kept.
    current = os.environ.get(_JEMALLOC_CONF, "")
    if {part.split(":")[0] for part in current.split(",") if part} <= _DECAYS:
        os.environ[_JEMALLOC_CONF] = f"dirty_decay_ms:{keep_ms},muzzy_decay_ms:{keep_ms}"
    name = ctypes.util.find_library("c")
    if sys.platform.startswith("linux") and name:
        try:
            libc = ctypes.CDLL(name)
            libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
            libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
        except (OSError, AttributeError):
            pass  # no glibc malloc here: nothing to tune
    return not ({"pyarrow", "polars"} & set(sys.modules))
