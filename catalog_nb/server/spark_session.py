"""The job process's one Spark session, made from the service's settings.

``CATALOG_SPARK_MASTER`` (``profiling.sparkMaster``) names where the Spark engine runs:

* ``local[N]`` / ``local[*]`` (the default): a JVM started by the job process itself;
* ``spark://host:port[,host2:port2]``: a standalone cluster;
* ``sc://host:port[/;token=...]``: a Spark Connect server (Spark 3.4 and later).

The session is made on the first PROFILE job with engine ``spark`` and kept for the next ones
(starting a JVM costs seconds); a changed master stops it and makes a new one. A master that
cannot be reached is found out by a plain TCP connection with a short timeout before Spark is
asked, so the job fails at once with a sentence instead of waiting for Spark's own retries
(a minute or more) and ending in a Java stack trace.

Only this module and :mod:`catalog_nb.server.profiling.spark` import ``pyspark``: the rest of
the service (and the client) never pays for it.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
import threading
import warnings
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

#: Seconds a Spark master has to accept a TCP connection before the job fails.
CONNECT_TIMEOUT = 5.0
SPARK_PORT = 7077
CONNECT_PORT = 15002
_LOCAL = re.compile(r"^local(\[(\*|\d+)(,\d+)?\])?$")
_lock = threading.Lock()
_current: tuple[str, Any] | None = None


class SparkUnavailable(Exception):
    """Spark cannot be used for a job: the message is a sentence for the job's message."""


def spark_session(master: str, *, conf: dict[str, str] | None = None) -> SparkSession:
    """The process's session on ``master`` (made on first use, reused afterwards).

    Raises :class:`SparkUnavailable` with a readable sentence when pyspark or Java is missing
    or the master cannot be reached.
    """
    global _current
    master = master.strip()
    with _lock:
        if _current is not None and _current[0] == master:
            return _current[1]
        check_reachable(master)  # first: a master that is down leaves the current session be
        stop_session()
        session = _build(master, conf or {})
        _current = (master, session)
        return session


def stop_session() -> None:
    """Stop the process's session, if any (a new master, or the process ending)."""
    global _current
    if _current is not None:
        try:
            _current[1].stop()
        except Exception:
            log.warning("the Spark session did not stop cleanly", exc_info=True)
        _current = None


def check_reachable(master: str) -> None:
    """Raise :class:`SparkUnavailable` unless ``master`` is local or one of its hosts accepts a
    TCP connection within :data:`CONNECT_TIMEOUT` seconds."""
    if _LOCAL.match(master):
        return
    if master.startswith("spark://"):
        hosts = master[len("spark://"):].split("/", 1)[0].split(",")
        default = SPARK_PORT
    elif master.startswith("sc://"):
        hosts = [urlsplit(master).netloc.split("@")[-1]]
        default = CONNECT_PORT
    else:
        raise SparkUnavailable(
            f"The Spark master {_shown(master)!r} is not understood: use local[N], "
            "spark://host:port or sc://host:port (profiling.sparkMaster)."
        )
    problems = []
    for entry in hosts:
        host, _, port = entry.rpartition(":") if ":" in entry else (entry, "", "")
        try:
            with socket.create_connection((host, int(port or default)), CONNECT_TIMEOUT):
                return
        except (OSError, ValueError) as exc:
            problems.append(f"{entry}: {getattr(exc, 'strerror', None) or exc}")
    raise SparkUnavailable(
        f"The Spark master {_shown(master)} cannot be reached ({'; '.join(problems)}). Check "
        "that it runs and that profiling.sparkMaster (CATALOG_SPARK_MASTER) names it."
    )


def _shown(master: str) -> str:
    """The master without a Spark Connect token (never in a job's message)."""
    return re.sub(r"(token=)[^;/]*", r"\1***", master)


def _build(master: str, conf: dict[str, str]) -> SparkSession:
    # pyspark warns on every Arrow task that it does not support pandas 3 yet: the engine
    # hands it Arrow batches only, never pandas frames.
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise SparkUnavailable(
            "The Spark engine needs pyspark: install catalog-nb[spark] (and Java 17)."
        ) from None
    try:
        if master.startswith("sc://"):
            builder = SparkSession.builder.remote(master)
        else:
            # Executors run this very interpreter's catalog_nb (local mode), or the same Python
            # found on the cluster's PATH (a cluster needs catalog-nb installed on its workers).
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
            builder = SparkSession.builder.master(master).appName("catalog-nb profile")
            settings = {
                "spark.ui.enabled": "false",
                "spark.ui.showConsoleProgress": "false",
                "spark.sql.shuffle.partitions": "4",
                "spark.sql.execution.arrow.pyspark.enabled": "true",
                "spark.driver.extraJavaOptions": "-Dlog4j2.level=warn",
                **conf,
            }
            if _LOCAL.match(master):
                # In-process Spark talks to itself only: on loopback, without looking up the
                # machine's name (a VM's may resolve to nothing useful, costing seconds).
                settings = {"spark.driver.host": "127.0.0.1",
                            "spark.driver.bindAddress": "127.0.0.1", **settings}
            for key, value in settings.items():
                builder = builder.config(key, value)
        session = builder.getOrCreate()
        if not master.startswith("sc://"):
            session.sparkContext.setLogLevel("ERROR")
        return session
    except SparkUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - Java's failures arrive as many exception types
        raise SparkUnavailable(f"Spark could not start on {_shown(master)}: {first_line(exc)}") \
            from None


def first_line(exc: BaseException) -> str:
    """The first meaningful line of a (possibly Java) exception's text, without a trace."""
    text = str(exc).strip() or type(exc).__name__
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "Traceback", "File ", "---")):
            return line[:500]
    return text[:500]
