"""Does the time a failed login takes tell whether the user name exists?

Starts the embedded service, then alternates failed logins for an existing user name and for
unknown ones (interleaved, so load on a shared machine hits both alike), each from its own
client address so the throttle never answers first, and prints both means side by side with
their ratio and the load average. The target: the two means within 10 % of each other.

    .venv/bin/python -m tests.benchmarks.login_timing [--rounds 40]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid

import requests

from catalog_nb.contract import API_PREFIX
from catalog_nb.demo.embedded import EmbeddedServer
from tests.benchmarks.harness import PASSWORD


def _login(base: str, source: str, name: str) -> float:
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter()
    adapter.init_poolmanager(1, 1, source_address=(source, 0))
    session.mount("http://", adapter)
    started = time.perf_counter()
    response = session.post(f"{base}/login", json={"username": name, "password": "not-it-1"},
                            timeout=60)
    took = time.perf_counter() - started
    if response.status_code != 401:
        raise RuntimeError(f"expected 401, got {response.status_code}: {response.text}")
    return took


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="catalog-login-") as folder, \
            EmbeddedServer(folder, admin_password=PASSWORD,
                           login_max_failures=10_000, login_client_max_failures=10_000) as srv:
        base = srv.url + API_PREFIX
        known: list[float] = []
        unknown: list[float] = []
        for i in range(args.rounds + 2):
            source = f"127.0.{i // 250}.{i % 250 + 2}"
            pair = (_login(base, source, "admin"),
                    _login(base, source, f"nobody-{uuid.uuid4().hex[:8]}"))
            if i >= 2:  # the first rounds warm the server up
                known.append(pair[0])
                unknown.append(pair[1])
    load = os.getloadavg()[0]
    k, u = statistics.mean(known), statistics.mean(unknown)
    ratio = u / k
    print(f"failed logins, {args.rounds} of each (load average {load:.2f})")
    for label, times in (("existing user name", known), ("unknown user name ", unknown)):
        print(f"  {label}: mean {statistics.mean(times) * 1000:7.1f} ms  "
              f"(median {statistics.median(times) * 1000:.1f})")
    met = abs(ratio - 1) <= 0.10
    print(f"  unknown / existing: {ratio:.2f}  target 0.90-1.10: {'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
