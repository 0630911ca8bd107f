"""The catalog a notebook works with: :func:`open_catalog`.

Every notebook in ``notebooks/`` starts with ``cat = open_catalog()``, so one notebook runs
unmodified against a team's server and against the embedded demo:

1. When ``CATALOG_URL`` is set, it logs in to that server, with ``CATALOG_USER`` /
   ``CATALOG_PASSWORD`` or the netrc entry of the URL's host (see
   :mod:`catalog_nb.client.credentials`).
2. Otherwise it uses the demo catalog of a data folder: ``CATALOG_DEMO_DIR``, else the nearest
   ``.catalog-demo`` folder at or above the working directory (the one ``make demo`` fills),
   else ``.catalog-demo`` at the root of the enclosing project (the folder holding
   ``pyproject.toml``), else ``~/.catalog_nb/demo``. When a demo server already serves that
   folder (``make demo`` leaves ``server.json`` there while it runs) the notebook attaches to
   it; when none does, it starts one (``catalog-nb demo --no-tour`` in a child process: the
   lake is built at ``CATALOG_DEMO_SCALE``, default 1.0, and profiled on first use) that stops
   when the notebook's kernel ends. It logs in as the demo administrator unless
   ``CATALOG_USER`` / ``CATALOG_PASSWORD`` name someone else (e.g. the analyst ``ana``).

The notebook half talks HTTP only (it never imports the service): the embedded demo is a
process of its own, like any other server.

Example::

    from catalog_nb.notebook.session import open_catalog, report_dir

    cat = open_catalog()
    cat.resources()
    report_dir()            # where the reporting notebooks write their files
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.client import Catalog, CatalogConnectionError, connect
from catalog_nb.client.credentials import ENV_PASSWORD, ENV_URL, ENV_USER

__all__ = [
    "DEMO_PASSWORD",
    "DEMO_USER",
    "ENV_DEMO_DIR",
    "ENV_DEMO_SCALE",
    "ENV_REPORT_DIR",
    "SERVER_FILE",
    "attach_demo",
    "demo_dir",
    "open_catalog",
    "pick",
    "pid_alive",
    "read_server_file",
    "report_dir",
]

ENV_DEMO_DIR = "CATALOG_DEMO_DIR"
ENV_DEMO_SCALE = "CATALOG_DEMO_SCALE"
ENV_REPORT_DIR = "CATALOG_REPORT_DIR"
#: The file a serving demo keeps in its data folder: ``{"url", "pid", "stop_with"}`` (the
#: process whose end stops it, or null).
SERVER_FILE = "server.json"
#: The demo's administrator (``catalog_nb.demo.run`` creates it; a test keeps both equal).
DEMO_USER = "admin"
DEMO_PASSWORD = "catalog-demo"
DEMO_FOLDER = ".catalog-demo"
#: Seconds to wait for a demo server this module starts (lake build and first profile).
START_TIMEOUT = 600.0

#: Demo server processes this interpreter started, stopped when it exits.
_children: dict[Path, subprocess.Popen[bytes]] = {}


def demo_dir() -> Path:
    """The demo data folder :func:`open_catalog` uses when no ``CATALOG_URL`` is set.

    ``CATALOG_DEMO_DIR``; else the nearest ``.catalog-demo`` at or above the working directory;
    else ``.catalog-demo`` beside the nearest ``pyproject.toml`` above it; else
    ``~/.catalog_nb/demo``.
    """
    configured = os.environ.get(ENV_DEMO_DIR)
    if configured:
        return Path(configured).expanduser().resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / DEMO_FOLDER).is_dir():
            return folder / DEMO_FOLDER
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder / DEMO_FOLDER
    return Path.home() / ".catalog_nb" / "demo"


def report_dir() -> Path:
    """Where notebooks write reports and workbooks (created): ``CATALOG_REPORT_DIR``, else
    ``reports/`` in the demo data folder (:func:`demo_dir`)."""
    configured = os.environ.get(ENV_REPORT_DIR)
    folder = Path(configured).expanduser() if configured else demo_dir() / "reports"
    folder.mkdir(parents=True, exist_ok=True)
    return folder.resolve()


def read_server_file(data_dir: Path) -> dict[str, Any] | None:
    """The ``{"url", "pid", "stop_with"}`` a demo serving ``data_dir`` left there, or ``None``."""
    path = Path(data_dir) / SERVER_FILE
    try:
        found = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and found.get("url") else None


def pid_alive(pid: Any) -> bool:
    """Whether ``pid`` names a running process (``False`` for anything but a positive int)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but someone else's
        return True
    return True


def _credentials(username: str | None, password: str | None) -> tuple[str, str]:
    user = username or os.environ.get(ENV_USER) or DEMO_USER
    if password is None:
        password = os.environ.get(ENV_PASSWORD) or (DEMO_PASSWORD if user == DEMO_USER else None)
    if password is None:
        raise ValueError(f"No password for {user!r}: pass open_catalog(password=...) or set "
                         f"{ENV_PASSWORD}.")
    return user, password


def _attach(data_dir: Path, username: str, password: str, progress: bool) -> Catalog | None:
    """A catalog logged in to the demo serving ``data_dir``, or None when none serves it."""
    found = read_server_file(data_dir)
    if found is None or not pid_alive(found.get("pid")):
        return None
    # A demo another kernel started stops with that kernel: once it is gone, so is the demo.
    if found.get("stop_with") is not None and not pid_alive(found["stop_with"]):
        return None
    try:
        return connect(str(found["url"]), username, password, progress=progress)
    except CatalogConnectionError:
        return None  # the file outlived its server


def attach_demo(
    username: str | None = None,
    password: str | None = None,
    *,
    progress: bool = True,
    data_dir: str | os.PathLike[str] | None = None,
) -> Catalog | None:
    """A catalog logged in to the demo serving ``data_dir`` (default :func:`demo_dir`), as
    :func:`open_catalog` attaches to it, or ``None`` when no demo serves that folder. Never
    starts one (``catalog-nb export`` uses it).

    Credentials as in :func:`open_catalog` (the demo administrator by default).

    Raises:
        ValueError: a user other than the demo administrator without a password.
        AuthenticationError: the demo refused the credentials.

    Example::

        cat = attach_demo()
        if cat is None:
            print("Start the demo first: make demo")
    """
    folder = demo_dir() if data_dir is None else Path(data_dir).expanduser().resolve()
    user, secret = _credentials(username, password)
    return _attach(folder, user, secret, progress)


@contextlib.contextmanager
def _start_lock(data_dir: Path) -> Iterator[None]:
    """One starter per data folder: two notebooks opening at once share one server."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with (data_dir / ".server.lock").open("w") as handle:
        try:
            import fcntl
        except ImportError:  # no advisory locks here (Windows): starting twice is only slower
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _stop_children() -> None:
    for process in _children.values():
        if process.poll() is None:
            # The demo stops on SIGTERM as on Ctrl-C: it removes its server file first.
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
    _children.clear()


def _start_demo(data_dir: Path, scale: float, timeout: float) -> str:
    """Start ``catalog-nb demo --no-tour`` serving ``data_dir``, wait until it is ready and
    return its URL."""
    log = data_dir / "demo-server.log"
    (data_dir / SERVER_FILE).unlink(missing_ok=True)
    command = [sys.executable, "-m", "catalog_nb.cli", "demo", "--no-tour", "--port", "0",
               "--data-dir", str(data_dir), "--scale", str(scale),
               "--stop-with-pid", str(os.getpid())]
    with log.open("wb") as out:
        # Its own session: a kernel manager killing the kernel's process group must not kill
        # the demo before it removes its server file (it watches this process and stops).
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    if not _children:
        atexit.register(_stop_children)
    _children[data_dir] = process
    deadline = time.monotonic() + timeout
    while True:
        found = read_server_file(data_dir)
        if found is not None and found.get("pid") == process.pid:
            return str(found["url"])
        if process.poll() is not None or time.monotonic() > deadline:
            if process.poll() is None:
                process.terminate()
            tail = log.read_text(errors="replace")[-3000:]
            raise RuntimeError(
                f"The demo catalog in {data_dir} did not start (log: {log}):\n{tail}"
            )
        time.sleep(0.2)


def open_catalog(
    username: str | None = None,
    password: str | None = None,
    *,
    scale: float | None = None,
    progress: bool = True,
    timeout: float = START_TIMEOUT,
) -> Catalog:
    """A logged-in :class:`~catalog_nb.client.Catalog`: the server ``CATALOG_URL`` names, or
    the embedded demo (attached to, or started and kept for this process's lifetime).

    Args:
        username, password: credentials (default: ``CATALOG_USER`` / ``CATALOG_PASSWORD``, then
            netrc for a server; the demo administrator for the demo).
        scale: demo lake size when the lake has to be built (default ``CATALOG_DEMO_SCALE``,
            else 1.0).
        progress: show progress bars on long reads.
        timeout: seconds to wait for a demo server this call starts.

    Raises:
        RuntimeError: the demo server could not be started (its log is quoted).
        ValueError: a demo user other than the administrator without a password, or a
            ``CATALOG_DEMO_SCALE`` that is no number.
        ConfigurationError, AuthenticationError, CatalogConnectionError: as
            :func:`catalog_nb.connect` raises them for a named server.

    Example::

        cat = open_catalog()                       # the demo, or CATALOG_URL's server
        ana = open_catalog("ana", "analyst-demo")  # the demo as the analyst
    """
    if os.environ.get(ENV_URL):
        return connect(None, username, password, progress=progress)
    data_dir = demo_dir()
    user, secret = _credentials(username, password)
    with _start_lock(data_dir):
        attached = _attach(data_dir, user, secret, progress)
        if attached is not None:
            return attached
        if scale is None:
            scale = float(os.environ.get(ENV_DEMO_SCALE) or 1.0)
        url = _start_demo(data_dir, scale, timeout)
    return connect(url, user, secret, progress=progress)


def pick(frame: pd.DataFrame, *preferred: str, column: str = "path") -> pd.Series:
    """The row of ``frame`` whose ``column`` is the first of ``preferred`` present, else its
    first row: notebooks name the demo's resources and still run on any other catalog.

    Raises:
        LookupError: ``frame`` is empty.

    Example::

        view = pick(cat.resources(type="view"), "sales.customer_revenue")
        cat.lineage(view["key"])
    """
    if not len(frame):
        raise LookupError("Nothing to pick from: the frame is empty.")
    values = list(frame[column])
    for wanted in preferred:
        if wanted in values:
            return frame.iloc[values.index(wanted)]
    return frame.iloc[0]
