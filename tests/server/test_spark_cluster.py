"""PROFILE jobs on real Spark clusters, as the README's *Apache Spark* section sets them up: a
standalone Master and Worker (``spark://``) and a Spark Connect server (``sc://``), each started
by this module on 127.0.0.1 and used by a served catalog over HTTP. Either way the stored profile
is the local engine's, field by field.

The jobs run in the service's job processes, as served: a job process is the Spark driver (or
the Spark Connect client), and the cluster's executors run ``catalog_nb`` from this venv. Each
cluster is started once for the module and stopped by its fixture's finaliser, whatever the
test did. The store plays the part it plays for any PROFILE job (checked on every backend by
the local engine's tests; the engine's own columns by ``test_spark_jobs.py``): these tests are
about where Spark runs, not where profiles are kept, so the PostgreSQL run leaves them to the
SQLite run (``store_neutral``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.conftest import Server
from tests.server.spark_cluster import Daemon, start_connect_server, start_standalone
from tests.server.spark_helpers import SAMPLE_ROWS, assert_engines_agree, needs_java, write_lake

#: Seconds one job may take on the one-core cluster (executors start with the first stage).
#: The test takes about 80 s idle. On a CI machine whose CPU did the same work 3.5 times slower,
#: with the suite's other runs beside it, the job was still at 4 of 6 resources after 300 s.
JOB_TIMEOUT = 900

pytestmark = needs_java


def _cluster(tmp_path_factory: pytest.TempPathFactory, name: str,
             start: Callable[[Path, list[Daemon]], str]) -> Iterator[tuple[str, list[Daemon]]]:
    """The URL and daemons of a cluster started by ``start``; every daemon it started is
    stopped afterwards, also when starting failed half way."""
    started: list[Daemon] = []
    with ExitStack() as stack:
        stack.callback(lambda: [d.stop() for d in reversed(started)])
        yield start(tmp_path_factory.mktemp(name), started), started


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[Daemon]]]:
    """A standalone Master and one Worker: ``spark://127.0.0.1:P`` and the two daemons."""
    yield from _cluster(tmp_path_factory, "spark-standalone", start_standalone)


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory
                   ) -> Iterator[tuple[str, list[Daemon]]]:
    """A Spark Connect server on local[1]: ``sc://127.0.0.1:P`` and its daemon."""
    yield from _cluster(tmp_path_factory, "spark-connect", start_connect_server)


def _engines_agree(make_server: Callable[..., Server], master: str, tmp_path: Path,
                   unique: Callable[[str], str]) -> dict[str, dict[str, object]]:
    """The small lake profiled by both engines through a served catalog whose Spark master
    is ``master``, the stored profiles compared field by field."""
    members = write_lake(tmp_path / "lake", small=True)
    server = make_server(data_roots=[tmp_path], spark_master=master,
                         profile_sample_rows=SAMPLE_ROWS, discovery_after_profile=False,
                         relations_after_profile=False)
    expected = assert_engines_agree(server, tmp_path / "lake", unique, timeout=JOB_TIMEOUT)
    assert set(expected) == {"orders.csv", "orders.parquet", "shift", *members["shift"]}
    assert {expected[path]["status"] for path in ("orders.csv", "orders.parquet", "shift")} \
        == {"PROFILED"}
    return expected


# About 20 s for the two daemons, 25 s for the driver's JVM, 20 s for the executor's first
# Python task (a JVM, then a Python worker importing catalog_nb), a few seconds per stage after.
@pytest.mark.slow(seconds=100)
@pytest.mark.store_neutral
def test_a_job_on_a_standalone_cluster_stores_the_local_engines_profile(
        standalone: tuple[str, list[Daemon]], make_server: Callable[..., Server],
        tmp_path: Path, unique: Callable[[str], str]) -> None:
    master_url, (master, worker) = standalone
    _engines_agree(make_server, master_url, tmp_path, unique)
    # The tasks ran on the cluster: the job process registered as an application, and the
    # worker launched an executor for it.
    assert "Registered app catalog-nb profile" in master.text(), master.tail()
    assert "Asked to launch executor" in worker.text(), worker.tail()


# No driver JVM in the job process (a gRPC client): about 25 s for the server, 35 s for the jobs.
@pytest.mark.slow(seconds=70)
@pytest.mark.store_neutral
def test_a_job_on_spark_connect_stores_the_local_engines_profile(
        connect_server: tuple[str, list[Daemon]], make_server: Callable[..., Server],
        tmp_path: Path, unique: Callable[[str], str]) -> None:
    url, _ = connect_server
    _engines_agree(make_server, url, tmp_path, unique)
