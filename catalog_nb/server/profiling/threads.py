"""The threads profiling runs on yield the CPU to the service's requests.

Profiling keeps both cores busy (a reader thread and a pool folding columns in); the service's
request threads must still answer within milliseconds. On Linux each thread has its own nice
value, so profiling threads lower theirs: the kernel then runs a request thread first whenever
both are ready. Elsewhere this does nothing.
"""

from __future__ import annotations

import os
import threading

#: How much lower than the service profiling threads run (0 is normal, 19 the lowest).
BACKGROUND_NICENESS = 10


def run_in_background() -> None:
    """Lower the calling thread's CPU priority (Linux), for the rest of its life."""
    if not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return
    try:
        current = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        target = max(current, BACKGROUND_NICENESS)
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), target)
    except OSError:
        pass  # not allowed here (a sandbox, another platform): the priority stays
