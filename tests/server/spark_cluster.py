"""Real Spark clusters on 127.0.0.1 for the tests, started as the README tells a newcomer to.

pyspark's pip package ships Spark's launch scripts: ``bin/spark-class`` starts a standalone
Master and Worker, ``sbin/start-connect-server.sh`` a Spark Connect server. Each JVM runs in a
process group of its own (the scripts are shells around ``java``, and a Worker forks executors
and Python workers), so stopping one kills its whole group, whatever state the test left it in.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyspark

#: Where pyspark installed Spark (its jars, bin/ and sbin/).
SPARK_HOME = Path(pyspark.__file__).parent

#: Seconds a JVM has to come up (two at once on a busy 2-core machine take a while).
START_TIMEOUT = 120.0


@dataclass
class Daemon:
    """One Spark JVM (with the shell scripts around it), its output in ``log``."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def text(self) -> str:
        """Everything the daemon printed so far."""
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def tail(self, lines: int = 30) -> str:
        """The end of the log, without Java's stack frames: for a failed test's message."""
        kept = [line for line in self.text().splitlines() if not line.lstrip().startswith("at ")]
        return f"--- {self.name} ({self.log}) ---\n" + "\n".join(kept[-lines:])

    def stop(self, timeout: float = 20.0) -> None:
        """Kill the daemon's process group: SIGTERM (a Master and Worker log off cleanly), then
        SIGKILL for whatever is still there after ``timeout`` seconds."""
        group = self.process.pid  # started in a session of its own: the group's id is its pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._group_alive():
            time.sleep(0.2)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)

    def _group_alive(self) -> bool:
        # The shell at the top may end before its java child: ask the group, having reaped
        # our own child (a zombie would count as a member).
        self.process.poll()
        try:
            os.killpg(self.process.pid, 0)
        except ProcessLookupError:
            return False
        return True


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on (free when asked)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def spark_environment(folder: Path) -> dict[str, str]:
    """The daemons' environment: on loopback only, their Python workers on this venv's
    interpreter (which imports catalog_nb), their logs and pid files in ``folder``."""
    return {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOG_DIR": str(folder / "logs"),
        "SPARK_PID_DIR": str(folder / "pids"),
        # The Master's REST submission server listens on a fixed port (6066) by default: two
        # test runs on one machine would collide, and the tests submit nothing through it.
        "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
    }


def start_daemon(name: str, command: list[str], folder: Path) -> Daemon:
    """``command`` in a new session (its own process group), its output in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{name}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, cwd=folder,
                                   env=spark_environment(folder), start_new_session=True)
    return Daemon(name, process, log)


def wait_for(ready: Callable[[], bool], daemons: list[Daemon], what: str,
             timeout: float = START_TIMEOUT) -> None:
    """Poll ``ready`` until it is true; fail with the daemons' logs when one of them ends or
    ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not ready():
        ended = [d for d in daemons if d.process.poll() is not None]
        if ended or time.monotonic() > deadline:
            why = f"{ended[0].name} ended" if ended else f"not within {timeout:.0f} s"
            raise RuntimeError(f"{what}: {why}\n" + "\n".join(d.tail() for d in daemons))
        time.sleep(0.5)


def accepts(port: int) -> bool:
    """Whether something listens on ``port`` of 127.0.0.1."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def start_standalone(folder: Path, started: list[Daemon]) -> str:
    """A standalone Master and one Worker (1 core, 1 GiB) on 127.0.0.1; returns the master's
    URL once the worker has registered. Each daemon is appended to ``started`` as soon as it
    runs, so that the caller stops it even when this fails."""
    port = free_port()
    master_url = f"spark://127.0.0.1:{port}"
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    master = start_daemon("master", [
        spark_class, "org.apache.spark.deploy.master.Master",
        "--host", "127.0.0.1", "--port", str(port), "--webui-port", "0"], folder)
    started.append(master)
    # Both JVMs start at once (half the waiting): a Worker that finds no Master yet retries.
    worker = start_daemon("worker", [
        spark_class, "org.apache.spark.deploy.worker.Worker", master_url,
        "--cores", "1", "--memory", "1g", "--webui-port", "0",
        "--work-dir", str(folder / "work")], folder)
    started.append(worker)
    wait_for(lambda: "Registering worker" in master.text(), [master, worker],
             "the Spark worker did not register with the master")
    return master_url


def start_connect_server(folder: Path, started: list[Daemon]) -> str:
    """A Spark Connect server on 127.0.0.1 running on ``local[1]``, as
    ``sbin/start-connect-server.sh`` starts it (``--wait``: in the foreground, so that this
    process owns it); returns its ``sc://`` URL once it accepts connections."""
    port = free_port()
    server = start_daemon("connect", [
        str(SPARK_HOME / "sbin" / "start-connect-server.sh"), "--wait",
        "--master", "local[1]",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", "spark.ui.enabled=false"], folder)
    started.append(server)
    wait_for(lambda: accepts(port), [server], "the Spark Connect server did not start")
    return f"sc://127.0.0.1:{port}"
