"""The README's first command, run the way a newcomer runs it (one-shot, as a real process):
the run ``made_demo`` (``tests/e2e/conftest.py``) made, which ``test_tour`` checks too."""

from __future__ import annotations

import pytest

import catalog_nb
from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.demo.run import ANALYST_PASSWORD, ANALYST_USER, DEMO_PASSWORD, DEMO_USER
from tests.e2e.conftest import DemoRun, run_demo


@pytest.mark.slow(seconds=25)
def test_demo_builds_profiles_and_shows_the_catalog(made_demo: DemoRun) -> None:
    out = made_demo.stdout
    assert "Connected: <Catalog http://127.0.0.1:" in out and "as admin>" in out
    assert "Profiled 8 resources of data source 'demo_files': 8 new" in out
    assert "Profiled 11 resources of data source 'demo_sql': 11 new" in out
    listing = out.split("Data resources")[1].split("Fields of")[0]
    for path in ("crm/customers.csv", "sales/orders", "web/access_log.jsonl",
                 "finance/payments.parquet", "sales.customer_revenue", "hr.employees"):
        assert path in listing
    assert "sales/orders/2024-01.csv" not in listing  # partitions show through their collection
    assert "catalog_nb.connect(" in out
    suggested = out.split("Sensitive fields suggested by discovery")[1].split("Fields of")[0]
    pan = [line for line in suggested.splitlines() if line.split()[-2:-1] == ["pan_ref"]]
    assert pan and all("Sensitive.PaymentCard" in line for line in pan)

    # Running it again re-uses the lake and skips unchanged files.
    again = run_demo(made_demo.data_dir, "--no-tour", timeout=300).stdout
    assert "8 unchanged (not read again)" in again


@pytest.mark.slow(seconds=20)
def test_the_demo_catalog_is_browsable_by_the_analyst(made_demo: DemoRun) -> None:
    server = EmbeddedServer(made_demo.data_dir, admin_user=DEMO_USER,
                            admin_password=DEMO_PASSWORD)
    with server, catalog_nb.connect(server.url, ANALYST_USER, ANALYST_PASSWORD) as cat:
        frame = cat.resources(progress=False)
        # The Analyst role is granted the files only: the SQL source stays invisible.
        assert set(frame["source"]) == {"demo_files"}
        fields = cat.fields("demo_files", "crm/customers.csv")
        assert {"customer_id", "contact", "ident"} <= set(fields["name"])
