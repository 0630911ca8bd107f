"""The README's first command: start the embedded catalog and show a client working against it."""

from __future__ import annotations

import time
from pathlib import Path

from catalog_nb.demo.embedded import EmbeddedServer

DEMO_USER = "admin"
DEMO_PASSWORD = "catalog-demo"


def run_demo(data_dir: Path, *, port: int = 8765, serve: bool = True) -> int:
    """Start the service over ``data_dir``, log in with the client, list users; then serve.

    Returns the process exit code.
    """
    import pandas as pd

    import catalog_nb

    data_dir.mkdir(parents=True, exist_ok=True)
    server = EmbeddedServer(data_dir, port=port, admin_user=DEMO_USER,
                            admin_password=DEMO_PASSWORD).start()
    try:
        with catalog_nb.connect(server.url, DEMO_USER, DEMO_PASSWORD) as cat:
            print(f"Connected: {cat!r}")
            with pd.option_context("display.width", 120, "display.max_columns", 8):
                print("\nUsers:")
                print(cat.users()[["name", "roles", "admin", "password_set", "created"]])
                print("\nRoles:")
                print(cat.roles()[["name", "access_level", "default_role",
                                   "metadata_access_option"]])
        print(
            f"\nThe catalog is at {server.url}/api/v2 (docs: {server.url}/api/v2/docs), "
            f"store in {data_dir.resolve()}.\nIn a notebook:\n"
            f"    import catalog_nb\n"
            f"    cat = catalog_nb.connect({server.url!r}, {DEMO_USER!r}, {DEMO_PASSWORD!r})"
        )
        if serve:
            print("\nServing until Ctrl-C.", flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        print("\nStopped.")
    finally:
        server.stop()
    return 0
