"""Browsing and profiling data sources: a pure library (no store, no HTTP, no jobs).

Given a folder or an SQLAlchemy engine, find the data resources and compute their system-owned
properties::

    browse(root)                  -> [ResourceProfile]   files and collections, not yet read
    profile_file(path, root=...)  -> ResourceProfile     one CSV/TSV/JSON(L)/Parquet file
    profile_collection(folder)    -> ResourceProfile     a folder of same-schema partitions
    browse_sql(engine)            -> [ResourceProfile]   tables and views with keys, no rows
    profile_table(engine, s, t)   -> ResourceProfile     exact row count + sampled statistics

Modules: ``model`` (dataclasses), ``files`` (folders), ``sql`` (databases), ``stats``
(column statistics with bounded memory), ``sketch`` (value sketches for discovery), and the
helpers ``formats`` (sniffing), ``readers`` (chunked readers), ``inference`` (types) and
``feed`` (readers into statistics).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from catalog_nb.server.profiling.files import browse, profile_collection, profile_file
    from catalog_nb.server.profiling.model import (
        DataType,
        FieldProfile,
        FileFormat,
        ProfilingError,
        ResourceProfile,
        ResourceState,
    )
    from catalog_nb.server.profiling.sketch import ValueSketch, build_sketch
    from catalog_nb.server.profiling.sql import browse_sql, profile_table
    from catalog_nb.server.profiling.stats import profile_frame, profile_series

#: Where each public name lives. They are imported on first use (PEP 562): the service
#: imports this package for a model class or a sketch and must not pay for pandas, pyarrow
#: and Polars at start-up (a worker that never profiles never loads them).
_HOMES = {
    "browse": "files", "profile_collection": "files", "profile_file": "files",
    "DataType": "model", "FieldProfile": "model", "FileFormat": "model",
    "ProfilingError": "model", "ResourceProfile": "model", "ResourceState": "model",
    "ValueSketch": "sketch", "build_sketch": "sketch",
    "browse_sql": "sql", "profile_table": "sql",
    "profile_frame": "stats", "profile_series": "stats",
}

__all__ = [
    "DataType",
    "FieldProfile",
    "FileFormat",
    "ProfilingError",
    "ResourceProfile",
    "ResourceState",
    "ValueSketch",
    "browse",
    "browse_sql",
    "build_sketch",
    "profile_collection",
    "profile_file",
    "profile_frame",
    "profile_series",
    "profile_table",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # once found, a plain module attribute
    return value
