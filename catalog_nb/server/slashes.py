"""A trailing slash names the same route (docs/compatibility.md).

Scripts written for the real product call ``/tag/`` as readily as ``/tag``. Starlette's
``redirect_slashes`` answers such a path with a 307 to the other form, which clients of a
``PUT`` or ``POST`` do not all follow (and a redirect costs a round trip), so the path is
trimmed before routing instead: one route, one answer, under either spelling.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


class TrailingSlash:
    """ASGI middleware: ``/api/v2/tag/`` is routed as ``/api/v2/tag``."""

    def __init__(self, app: ASGIApp, prefix: str) -> None:
        self.app = app
        self.prefix = prefix + "/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            if path.endswith("/") and path.startswith(self.prefix) and path != self.prefix:
                scope = dict(scope)
                scope["path"] = path.rstrip("/")
                raw = scope.get("raw_path")
                if isinstance(raw, bytes):
                    scope["raw_path"] = raw.rstrip(b"/")
        await self.app(scope, receive, send)
