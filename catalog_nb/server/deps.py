"""FastAPI dependencies: the store, the settings and the authenticated caller of a request.

They are ``async def``: FastAPI runs a plain ``def`` dependency in a worker thread, and handing
each request to a thread and back costs more than the dependency's work (measured with
tests/benchmarks/request_rate.py). Store work a dependency does runs on the event loop only
where it cannot stall it (:attr:`Store.quick_reads`, :attr:`Store.quick_single_reads`), else
in a worker thread, and writes always go to a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from catalog_nb.contract import SESSION_COOKIE
from catalog_nb.server.callers import CallerCache, Identity, load_identity
from catalog_nb.server.security import Caller
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import sessions as session_store
from catalog_nb.server.store.common import now_ms

T = TypeVar("T")

#: Where the edge leaves the caller it authenticated for a request it passes on to the routes
#: (``edge.CachedReads``), so that the request's session is read once.
CALLER_SCOPE_KEY = "catalog.caller"


async def get_store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def session_policy(settings: Settings) -> session_store.SessionPolicy:
    """The idle and absolute session lifetimes in force."""
    return session_store.SessionPolicy(
        idle_ms=int(settings.session_idle_minutes * 60_000),
        max_ms=int(settings.session_max_hours * 3_600_000),
    )


def client_address(request: Request) -> str | None:
    return request.client.host if request.client else None


async def read_quickly(store: Store, read: Callable[..., T], *args: Any) -> T:
    """``read(*args)`` on the event loop when the store's reads never wait (a short read costs
    less there than the trip to a worker thread), else in a worker thread.

    Only for reads of bounded size (one session, one resource): a long one would hold up every
    other request of the process.
    """
    if store.quick_reads:
        return read(*args)
    return await run_in_threadpool(read, *args)


def _resolve(store: Store, token: str | None, policy: session_store.SessionPolicy,
             now: int) -> session_store.LiveSession:
    with store.single() as conn:
        return session_store.resolve(conn, token, policy, now)


async def _load(store: Store, cache: CallerCache, live: session_store.LiveSession) -> Identity:
    identity = await read_quickly(store, load_identity, store, live)
    if live.generation is not None:
        cache.put(identity)
    return identity


def _touch(store: Store, token: str, now: int) -> None:
    with store.write() as conn:
        session_store.touch(conn, token, now)


def _session_reads(app_state: Any, store: Store) -> session_store.SessionReads | None:
    """The session reads of the application's event loop (made on first use), where its store
    makes them together (``sessions.SessionReads.applies``)."""
    reads: session_store.SessionReads | None = getattr(app_state, "session_reads", None)
    if reads is not None and reads.store is store:
        return reads
    if not session_store.SessionReads.applies(store):
        return None
    reads = app_state.session_reads = session_store.SessionReads(store)
    return reads


async def current_caller(request: Request) -> Caller:
    """The caller of a request, from the session cookie; 401 without a live session.

    One statement when the caller's identity is cached (``server.callers``; on PostgreSQL one
    for the requests arriving together, ``sessions.SessionReads``), a write every
    ``sessions.TOUCH_INTERVAL_MS`` per session to push its idle expiry back.
    """
    known: Caller | None = request.scope.get(CALLER_SCOPE_KEY)
    if known is not None:
        return known
    app_state = request.app.state
    store: Store = app_state.store
    cache: CallerCache = app_state.callers
    token = request.cookies.get(SESSION_COOKIE)
    now = now_ms()
    policy = session_policy(app_state.settings)
    reads = _session_reads(app_state, store)
    if reads is not None:
        # Read with the sessions of the requests arriving meanwhile, the loop serving others.
        live = await reads.resolve(token, policy, now)
    elif store.quick_single_reads:
        # On the event loop's held connection, straight through the driver.
        live = session_store.resolve_held(store, token, policy, now)
    else:
        live = await run_in_threadpool(_resolve, store, token, policy, now)
    identity = cache.get(live.user_key, live.generation)
    if identity is None:
        # One load for the requests of one user that all find their entry stale at once.
        identity = await cache.loads.run((live.user_key, live.generation),
                                         lambda: _load(store, cache, live))
    if live.stale and token:
        await run_in_threadpool(_touch, store, token, now)
    generations = None
    if live.generation is not None and live.catalog_generation is not None:
        generations = (live.generation, live.catalog_generation)
    return Caller(key=identity.key, name=identity.name, roles=identity.roles, token=token,
                  client=client_address(request), generations=generations)


StoreDep = Annotated[Store, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
CallerDep = Annotated[Caller, Depends(current_caller)]
