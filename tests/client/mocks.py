"""Helpers of the client tests: mocked answers and a scripted stdlib HTTP server.

``responses`` replaces the transport adapter, so it cannot show what urllib3 really does
(connect retries, ``Retry-After`` waits, timeouts); :class:`ScriptedServer` is a real socket
server on 127.0.0.1 that answers from a script, for those tests.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import responses

from catalog_nb.contract import API_PREFIX

BASE = "http://catalog.test:8765"
API = BASE + API_PREFIX
#: Password of the users the live tests create.
LIVE_PASSWORD = "live-password-1"
LOGIN_OK = {
    "loginResult": "SUCCESS",
    "message": "Logged in.",
    "userInfo": {"username": "admin", "displayName": "Admin"},
}


def error_body(status: int, code: str, message: str = "It failed.", **extra: Any) -> dict[str, Any]:
    """The service's error body."""
    return {"message": message, "errorCode": code, "status": status, **extra}


def add_login(mock: responses.RequestsMock, *, cookie: str = "s1") -> Any:
    """Mock a successful ``POST /login`` that sets the session cookie."""
    return mock.add(
        responses.POST,
        API + "/login",
        json=LOGIN_OK,
        headers={"Set-Cookie": f"catalog_session={cookie}; Path=/; HttpOnly"},
    )


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class ScriptedServer:
    """A real HTTP server on 127.0.0.1 answering from a script, recording what it received."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.default = Reply(200, {"ok": True})
        self.received: list[tuple[str, str, float]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                server.received.append((self.command, self.path, time.monotonic()))
                reply = server.script.pop(0) if server.script else server.default
                if reply.delay:
                    time.sleep(reply.delay)
                payload = b"" if reply.body is None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:  # the client gave up (timeout test)
                    pass

            do_GET = do_POST = do_PUT = do_DELETE = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def url_of(call: Any) -> str:
    """The URL a recorded ``responses`` call went to."""
    return str(call.request.url)


def json_of(call: Any) -> Any:
    """The JSON body a recorded ``responses`` call sent (``None`` without a body)."""
    body = call.request.body
    return json.loads(body) if body else None
