"""Answers of hot reads kept per process, reused while nothing they depend on has changed.

A read that people repeat (``GET /dataresource/{key}``: a notebook re-running a cell, a page
polling) costs a dozen statements and shaping; its answer depends on what the catalog holds and
on who asks. Both are counted in the store (``schema.store_generations``): ``auth`` moves with
every change to users, roles and grants (triggers), ``catalog`` with every transaction that
changed anything else people can read (``Store`` bumps it as the transaction commits, in the
same transaction). The caller's request has already read both, with its session, in its one
authenticating statement (``Caller.generations``). So an answer kept under the generations it
was read with, for one caller, is exactly the answer a new read would give while both are
unchanged, in any process sharing the store; the first change anywhere makes every kept answer
stale at once.

It follows that a read made while writes go on (a profiling job recording resources) is read
again each time, as without the cache, and that a change made behind the store's back (SQL typed
into the database) shows after ``CACHE_SECONDS`` at the latest.

Requests that find no answer at the same moment (30 connections asking for the same resource
when its answer goes stale) share one read of it (:class:`SingleFlight`) instead of making 30.

Example (a route)::

    body = await cache.fetch(("resource", key), caller, read_and_encode)
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from catalog_nb.server.security import Caller

__all__ = ["CACHE_SECONDS", "MAX_BYTES", "ReadCache", "SingleFlight"]

T = TypeVar("T")

#: The longest an answer is reused with the generations unchanged: the bound on how stale a
#: change made behind the store's back (not through ``Store``) may be seen.
CACHE_SECONDS = 5.0
#: Bytes of answers kept at most per process; the least recently used go first.
MAX_BYTES = 32 * 1024 * 1024


class SingleFlight(Generic[T]):
    """Concurrent requests of the event loop for one key share one fill: the first runs it,
    the others wait for its result (or its error) instead of running their own."""

    def __init__(self) -> None:
        self._pending: dict[Hashable, asyncio.Future[T]] = {}

    async def run(self, key: Hashable, fill: Callable[[], Awaitable[T]]) -> T:
        """``fill()``'s result, shared with every caller that asks for ``key`` meanwhile."""
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            result = await fill()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning without waiters
            raise
        else:
            future.set_result(result)
            return result
        finally:
            del self._pending[key]


@dataclass(frozen=True)
class _Kept:
    body: bytes
    generations: tuple[int, int]
    stored: float


class ReadCache:
    """Encoded answers by (what was read, who read it), valid for their generations and
    ``seconds`` (thread-safe; least recently used out first beyond ``max_bytes``)."""

    def __init__(self, seconds: float = CACHE_SECONDS, max_bytes: int = MAX_BYTES) -> None:
        self.seconds = seconds
        self.max_bytes = max_bytes
        self._kept: OrderedDict[tuple[Hashable, str], _Kept] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._flights: SingleFlight[bytes] = SingleFlight()

    async def fetch(self, what: Hashable, caller: Caller,
                    read: Callable[[], Awaitable[bytes]]) -> bytes:
        """The answer kept for ``caller`` reading ``what``, else ``read()``'s, kept (requests
        missing it at the same moment share one ``read()``)."""
        body = self.get(what, caller)
        if body is not None:
            return body

        async def fill() -> bytes:
            body = await read()
            self.put(what, caller, body)
            return body

        return await self._flights.run((what, caller.key, caller.generations), fill)

    def get(self, what: Hashable, caller: Caller) -> bytes | None:
        """The answer kept for ``caller`` reading ``what``, if still valid."""
        if caller.generations is None:
            return None
        entry_key = (what, caller.key)
        with self._lock:
            kept = self._kept.get(entry_key)
            if kept is None:
                return None
            if (kept.generations != caller.generations
                    or time.monotonic() - kept.stored > self.seconds):
                self._drop(entry_key)
                return None
            self._kept.move_to_end(entry_key)
            return kept.body

    def put(self, what: Hashable, caller: Caller, body: bytes) -> None:
        """Keep ``body``, read by ``caller`` under ``caller.generations``."""
        if caller.generations is None or len(body) > self.max_bytes:
            return
        entry_key = (what, caller.key)
        with self._lock:
            self._drop(entry_key)
            self._kept[entry_key] = _Kept(body, caller.generations, time.monotonic())
            self._bytes += len(body)
            while self._bytes > self.max_bytes:
                self._drop(next(iter(self._kept)))

    def clear(self) -> None:
        """Forget every answer."""
        with self._lock:
            self._kept.clear()
            self._bytes = 0

    def _drop(self, entry_key: tuple[Hashable, str]) -> None:
        kept = self._kept.pop(entry_key, None)
        if kept is not None:
            self._bytes -= len(kept.body)
