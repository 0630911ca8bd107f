"""Run the catalog service inside this process, on 127.0.0.1, in a background thread.

Notebooks, tests and the demo use it to get a real HTTP server without a second terminal.

Example::

    with EmbeddedServer(data_dir="/tmp/cat", admin_password="change-me-now") as server:
        cat = catalog_nb.connect(server.url, "admin", "change-me-now")
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from catalog_nb.server.app import create_app
from catalog_nb.server.settings import Settings


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class EmbeddedServer:
    """A uvicorn server of the catalog service in a daemon thread."""

    def __init__(
        self,
        data_dir: str | Path | None = None,
        *,
        host: str = "127.0.0.1",
        port: int | None = None,
        admin_user: str = "admin",
        admin_password: str | None = None,
        db_url: str | None = None,
        **settings: Any,
    ) -> None:
        values: dict[str, Any] = {"admin_user": admin_user, "admin_password": admin_password,
                                  "db_url": db_url, **settings}
        if data_dir is not None:
            values["data_dir"] = Path(data_dir)
        self.settings = Settings(**values)
        self.host = host
        self.port = port or free_port(host)
        self.admin_user = admin_user
        self.admin_password = admin_password
        self.app = create_app(self.settings)
        config = uvicorn.Config(
            self.app, host=host, port=self.port, log_level="warning", lifespan="on"
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The server root, e.g. ``http://127.0.0.1:8765`` (the API is under /api/v2)."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> EmbeddedServer:
        """Start serving and wait until the server accepts connections.

        Raises RuntimeError when it does not start within ``timeout`` seconds.
        """
        self._thread = threading.Thread(target=self._server.run, name="catalog-nb-server",
                                        daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                # A late start would leave a server nobody stops, holding its store open.
                self.stop()
                raise RuntimeError(
                    f"The catalog service did not start on {self.url}; see the log above."
                )
            time.sleep(0.02)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and wait up to ``timeout`` seconds for the thread to end.

        The application's shutdown (job workers stopped, store connections closed) runs in that
        thread, so it is done once :attr:`running` is False.
        """
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        """Whether the server's thread is still alive (serving, or still shutting down)."""
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> EmbeddedServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
