"""What a job process imports, loaded once in the fork server its job processes are forked from.

:mod:`catalog_nb.server.job_process` names this module as the fork server's preload: the server
imports it once, and every job process forked from it starts with it imported, instead of
importing the profiler, discovery, pandas, Arrow and SQLAlchemy again (about 2.5 s of CPU per
job process on a 2-core machine). Polars is left out: its thread pool must not be forked, so a
job process imports it on first use.
"""

from __future__ import annotations

from catalog_nb.server.allocators import keep_freed_memory

#: Whether the allocators were told to keep freed memory in time, before Arrow and Polars
#: loaded (they read their settings when they load).
ALLOCATORS_IN_TIME = keep_freed_memory()

# After the allocators' settings, on purpose.
from catalog_nb.server.job_run import run_job  # noqa: E402
from catalog_nb.server.runtime_config import RuntimeConfig  # noqa: E402
from catalog_nb.server.store import Store, share_write_turns  # noqa: E402
from catalog_nb.server.store import config as config_store  # noqa: E402

__all__ = ["ALLOCATORS_IN_TIME", "RuntimeConfig", "Store", "config_store", "run_job",
           "share_write_turns"]
