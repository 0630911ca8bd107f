"""The README's first command: the demo catalog, built and profiled, then served.

Steps: generate the demo lake (files and an SQLite database, deterministic) unless it is there
already, start the embedded service with the lake as its data root, register the lake's two data
sources, profile them through the service's own jobs, show what the catalog now knows, execute the
tour notebook against it (``catalog_nb.demo.tour``: the executed notebook, the HTML report and the
Excel workbook land in ``<data dir>/reports``), and serve until Ctrl-C.

While it serves, ``<data dir>/server.json`` holds ``{"url", "pid", "stop_with"}`` so notebooks
attach to it (``catalog_nb.notebook.session.open_catalog``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

import pandas as pd

from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.demo.lake import TRUTH_FILE, build_lake, lake_sources
from catalog_nb.notebook.session import SERVER_FILE, pid_alive, read_server_file

DEMO_USER = "admin"
DEMO_PASSWORD = "catalog-demo"
#: A second, unprivileged user, so the demo shows what an analyst sees.
ANALYST_USER = "ana"
ANALYST_PASSWORD = "analyst-demo"


def _setup_catalog(cat: Any, lake: Path) -> None:
    """Register the lake's sources (once), grant the Analyst role the files, profile both."""
    known = set(cat.sources()["name"])
    for payload in lake_sources(lake):
        if payload["name"] not in known:
            cat.create_source(payload["name"], payload["uri"], payload["sourceType"],
                              description=payload.get("description"))
    files_key = cat.source("demo_files")["key"]
    analyst = cat.roles().set_index("name").loc["Analyst"]
    if files_key not in list(analyst["data_source_keys"]):
        cat.update_role("Analyst", data_source_keys=[*analyst["data_source_keys"], files_key])
    if ANALYST_USER not in set(cat.users()["name"]):
        cat.create_user(ANALYST_USER, roles=["Analyst"], password=ANALYST_PASSWORD,
                        first_name="Ana", last_name="Lytic", email="ana@example.org")
    # A bar only on a terminal, where it is erased before the job's message is printed; in a
    # log file or a pipe its carriage returns would leave it glued to the text.
    bars = sys.stderr.isatty()
    for payload in lake_sources(lake):
        print(f"  {payload['name']} ...", flush=True)
        job = cat.profile(payload["name"], progress=bars)
        print(f"  {job['message']}", flush=True)


def _text(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as people read it printed: lists as comma-separated text, missing as blank."""
    shown = frame.astype(object)
    for column in shown.columns:
        shown[column] = [", ".join(map(str, v)) if isinstance(v, list | tuple)
                         else "" if v is None or v is pd.NA or v != v else v
                         for v in shown[column]]
    return shown


def show_catalog(cat: Any) -> None:
    """Print what the catalog knows after the demo's profiling: users, data sources, data
    resources (a collection's partition files counted in its row, ``files``), the suggested
    sensitive fields and one resource's fields. Every title's count is the sum of its rows."""
    users = cat.users()
    print(f"\nUsers ({len(users)}):")
    print(_text(users[["name", "roles", "admin", "email"]]).to_string(index=False))
    sources = cat.sources()
    frame = cat.resources(progress=False)
    print(f"\nData sources ({len(sources)}; {len(frame)} resources, partition files "
          "included):")
    print(_text(sources[["name", "source_type", "resource_count", "last_job_state"]])
          .rename(columns={"resource_count": "resources"}).to_string(index=False))
    top, files = _fold_partitions(frame)
    folded = len(frame) - len(top)
    # The title adds up: the rows listed, plus the partition files their collection counts.
    print(f"\nData resources ({len(frame)}" + (
        f" = {len(top)} rows below + {folded} partition files counted in their collection's "
        "'files'" if folded else "") + "):")
    listed = top[["source", "path", "type", "format", "rows", "field_count", "state"]].copy()
    listed.insert(3, "files", files.astype("Int64").where(files > 0))
    print(_text(listed).to_string(index=False))
    suggested = cat.associations(state="SUGGESTED", progress=False)
    print(f"\nSensitive fields suggested by discovery ({len(suggested)}; review them with "
          "cat.review_suggestions()):")
    if len(suggested):
        print(_text(suggested.sort_values(["tag", "source", "path", "field"])[
            ["tag", "source", "path", "field", "weight"]]).to_string(index=False))
    fields = cat.fields("demo_files", "crm/customers.csv")
    print(f"\nFields of demo_files crm/customers.csv ({len(fields)}):")
    shown = _text(fields[["name", "data_type", "density", "distinct_count", "min", "max"]])
    shown["density"] = [f"{d:.0%}" if isinstance(d, float) else d for d in shown["density"]]
    print(shown.to_string(index=False))


def _fold_partitions(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """The resources of ``frame`` outside every collection of their source, and for each how
    many of ``frame``'s rows lie inside it (0 but for collections)."""
    is_collection = frame["type"] == "collection"
    collections = [(str(s), f"{p}/") for s, p in
                   zip(frame.loc[is_collection, "source"], frame.loc[is_collection, "path"],
                       strict=True)]
    members = {c: 0 for c in collections}
    keep = []
    for source, path in zip(frame["source"], frame["path"], strict=True):
        parent = next((c for c in collections
                       if c[0] == str(source) and str(path).startswith(c[1])), None)
        keep.append(parent is None)
        if parent is not None:
            members[parent] += 1
    top = frame[keep]
    files = pd.Series([members.get((str(s), f"{p}/"), 0)
                       for s, p in zip(top["source"], top["path"], strict=True)],
                      index=top.index, dtype="int64")
    return top, files


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _release(data_dir: Path) -> None:
    """Remove the server file, when it is still this process's (a later demo on the same
    folder may have replaced it)."""
    found = read_server_file(data_dir)
    if found is not None and found.get("pid") == os.getpid():
        (data_dir / SERVER_FILE).unlink(missing_ok=True)


def run_demo(
    data_dir: Path,
    *,
    port: int = 8765,
    serve: bool = True,
    scale: float = 1.0,
    tour: bool = True,
    stop_with_pid: int | None = None,
) -> int:
    """Build the demo lake and catalog in ``data_dir``, show it, run the tour notebook (unless
    ``tour`` is False), then serve (unless ``serve`` is False; ``stop_with_pid``: only while
    that process lives). Returns the process exit code: 1 when the tour failed.
    """
    import catalog_nb

    data_dir.mkdir(parents=True, exist_ok=True)
    lake = (data_dir / "lake").resolve()
    if not (lake / TRUTH_FILE).is_file():
        print(f"Building the demo lake in {lake} ...", flush=True)
        build_lake(lake, scale=scale)
    server = EmbeddedServer(
        data_dir, port=port, admin_user=DEMO_USER, admin_password=DEMO_PASSWORD,
        data_roots=[lake],
    ).start()
    server_file = data_dir / SERVER_FILE
    status = 0
    if threading.current_thread() is threading.main_thread():
        # `kill` (and notebooks stopping the demo they started) stop it like Ctrl-C does.
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        with catalog_nb.connect(server.url, DEMO_USER, DEMO_PASSWORD) as cat:
            print(f"Connected: {cat!r}\nProfiling the demo sources:", flush=True)
            _setup_catalog(cat, lake)
            with pd.option_context("display.width", 140, "display.max_columns", 12,
                                   "display.max_colwidth", 40):
                show_catalog(cat)
        print(
            f"\nThe catalog is at {server.url}/api/v2 (docs: {server.url}/api/v2/docs); its store "
            f"and the demo lake are in {data_dir.resolve()}.\nIn a notebook:\n"
            f"    import catalog_nb\n"
            f"    cat = catalog_nb.connect({server.url!r}, {DEMO_USER!r}, {DEMO_PASSWORD!r})\n"
            f"    cat.resources()\n"
            f"(or log in as the analyst {ANALYST_USER!r} / {ANALYST_PASSWORD!r}); the notebooks "
            f"in notebooks/ attach to it with\n"
            f"    from catalog_nb.notebook.session import open_catalog\n"
            f"    cat = open_catalog()",
            flush=True,
        )
        # Notebooks opened now attach to this server instead of starting their own.
        server_file.write_text(json.dumps({"url": server.url, "pid": os.getpid(),
                                           "stop_with": stop_with_pid}))
        if tour:
            from catalog_nb.demo.tour import run_tour

            status = run_tour(server.url, data_dir, DEMO_USER, DEMO_PASSWORD)
        if serve:
            print("\nServing until Ctrl-C.", flush=True)
            while stop_with_pid is None or pid_alive(stop_with_pid):
                time.sleep(1.0)
            print("\nThe process it served ended; stopped.")
    except KeyboardInterrupt:
        print("\nStopped.")
    finally:
        _release(data_dir)
        server.stop()
    return status
