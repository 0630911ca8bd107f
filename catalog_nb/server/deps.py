"""FastAPI dependencies: the store, the settings and the authenticated caller of a request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from catalog_nb.contract import SESSION_COOKIE
from catalog_nb.server.security import Caller
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import roles as role_store
from catalog_nb.server.store import sessions as session_store
from catalog_nb.server.store import users as user_store
from catalog_nb.server.store.common import now_ms


def get_store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def get_settings(request: Request) -> Settings:
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


def current_caller(request: Request) -> Caller:
    """The caller of a request, from the session cookie; 401 without a live session."""
    store = get_store(request)
    token = request.cookies.get(SESSION_COOKIE)
    policy = session_policy(get_settings(request))
    now = now_ms()
    with store.read() as conn:
        user_key, stale = session_store.resolve(conn, token, policy, now)
        user = user_store.get(conn, user_key)
        roles = role_store.of_user(conn, user_key)
    if stale and token:
        with store.write() as conn:
            session_store.touch(conn, token, now)
    return Caller(
        key=user.key, name=user.name, roles=roles, token=token, client=client_address(request)
    )


StoreDep = Annotated[Store, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
CallerDep = Annotated[Caller, Depends(current_caller)]
