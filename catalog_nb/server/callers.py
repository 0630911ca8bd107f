"""Who is calling: a request's session cookie resolved to its user and roles, with a cache.

Every request reads its session row, and in the same statement the store's ``auth`` generation
(``store.schema.store_generations``: a counter that triggers bump in the transaction of every
write to users, their roles, roles and grants, whoever makes it). The user's name and roles come
from a per-process cache, valid while the generation read is the one they were loaded under and
for at most ``CACHE_SECONDS``; otherwise they are read again. So:

* a logout, an expired or ended session (the sessions of a user whose password changed) answers
  401 on the very next request: the session row itself is read every time;
* a role removed, a grant changed, a user deleted takes effect on the very next request in every
  process sharing the store: the generation moved, the cached roles are not used;
* a request whose caller is cached costs one statement to authenticate, and no transaction; on
  PostgreSQL the requests of a process that arrive while one such statement is on its way share
  the next one (``sessions.SessionReads``), which still starts after each of them arrived.

Example (what ``deps.current_caller`` does)::

    live = sessions.resolve(conn, token, policy, now)     # one statement
    identity = cache.get(live.user_key, live.generation) or load_identity(store, live)
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import Unauthorized
from catalog_nb.server.read_cache import SingleFlight
from catalog_nb.server.store import Store
from catalog_nb.server.store import users as user_store
from catalog_nb.server.store.roles import RoleRecord
from catalog_nb.server.store.sessions import LiveSession

__all__ = ["CACHE_SECONDS", "CallerCache", "Identity", "load_identity"]

#: The longest a cached identity is used, even with the generation unchanged: a safety net for
#: a store changed behind the triggers' back (a restored backup), not the invalidation itself.
CACHE_SECONDS = 5.0
#: Identities kept at most (one per user who made a request in the last CACHE_SECONDS).
MAX_ENTRIES = 10_000


@dataclass(frozen=True)
class Identity:
    """A user's name and roles as loaded under one auth generation."""

    key: str
    name: str
    roles: tuple[RoleRecord, ...]
    generation: int
    loaded: float


class CallerCache:
    """Identities by user key, each valid for its generation and ``seconds`` (thread-safe)."""

    def __init__(self, seconds: float = CACHE_SECONDS, max_entries: int = MAX_ENTRIES) -> None:
        self.seconds = seconds
        self.max_entries = max_entries
        self._entries: dict[str, Identity] = {}
        self._lock = threading.Lock()
        #: Loads in flight on the application's event loop: the requests of one user that
        #: find the entry stale at the same moment share one load.
        self.loads: SingleFlight[Identity] = SingleFlight()

    def get(self, user_key: str, generation: int | None) -> Identity | None:
        """The cached identity of ``user_key`` if loaded under ``generation`` and fresh."""
        found = self._entries.get(user_key)
        if found is None or generation is None or found.generation != generation:
            return None
        if time.monotonic() - found.loaded > self.seconds:
            return None
        return found

    def put(self, identity: Identity) -> None:
        """Keep ``identity``; when full, entries of older generations or time go first."""
        with self._lock:
            if len(self._entries) >= self.max_entries and identity.key not in self._entries:
                cutoff = time.monotonic() - self.seconds
                self._entries = {
                    k: v for k, v in self._entries.items()
                    if v.generation == identity.generation and v.loaded >= cutoff
                }
                if len(self._entries) >= self.max_entries:
                    self._entries.clear()
            self._entries[identity.key] = identity

    def clear(self) -> None:
        """Forget every identity."""
        with self._lock:
            self._entries.clear()


def load_identity(store: Store, live: LiveSession) -> Identity:
    """The user of a live session with their roles, read from the store (one transaction).

    The data read is at least as new as ``live.generation``, which it is filed under: a write
    in between makes the next request see a newer generation and read again, never the reverse.
    401 when the user is gone (deleted since the session was read).
    """
    with store.read() as conn:
        user = user_store.find(conn, live.user_key)
    if user is None:
        raise Unauthorized(
            "Your session is not valid (it ended or was never issued); log in again.",
            ErrorCode.AUTHENTICATION_REQUIRED,
        )
    return Identity(key=user.key, name=user.name, roles=tuple(user.roles),
                    generation=-1 if live.generation is None else live.generation,
                    loaded=time.monotonic())
