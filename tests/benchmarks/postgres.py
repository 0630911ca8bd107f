"""A throw-away PostgreSQL for the benchmarks that measure on it: a cluster of
``scripts/pg-cluster`` in a folder of its own, stopped when the block ends."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "pg-cluster"


@contextmanager
def pg_cluster(folder: Path) -> Iterator[str]:
    """A cluster started in ``folder`` (which pg-cluster hands to the postgres user); its
    administrator URL."""
    admin = subprocess.run([str(SCRIPT), "start", str(folder)], check=True, text=True,
                           stdout=subprocess.PIPE).stdout.strip()
    try:
        yield admin
    finally:
        subprocess.run([str(SCRIPT), "stop", str(folder)], check=False, capture_output=True)


@contextmanager
def postgres_database(folder: Path, name: str) -> Iterator[str]:
    """A cluster in ``folder`` with an empty database ``name``; the database's URL."""
    with pg_cluster(folder) as admin:
        engine = create_engine(admin, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        engine.dispose()
        yield make_url(admin).set(database=name).render_as_string(hide_password=False)
