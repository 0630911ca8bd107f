"""Login, logout and the service version."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request, Response
from sqlalchemy import Connection

from catalog_nb.contract import (
    API_PREFIX,
    API_VERSION,
    DISTRIBUTION,
    SESSION_COOKIE,
    AuditAction,
    AuditObjectType,
    AuditOutcome,
    ErrorCode,
    distribution_version,
)
from catalog_nb.server.auditing import record_event
from catalog_nb.server.confusables import canonical_name
from catalog_nb.server.deps import CallerDep, SettingsDep, StoreDep, client_address, session_policy
from catalog_nb.server.errors import Throttled
from catalog_nb.server.passwords import verify_password
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.schemas.answers import LogoutAnswer
from catalog_nb.server.schemas.users import LoginRequest, LoginResult, UserInfo, display_name
from catalog_nb.server.security import Caller
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store, throttle
from catalog_nb.server.store import sessions as session_store
from catalog_nb.server.store import users as user_store
from catalog_nb.server.store.common import fold, now_ms

router = APIRouter(tags=["login"])

_FAILED = "The user name or password is wrong (or the user has no password)."


def throttle_policy(settings: Settings) -> throttle.ThrottlePolicy:
    """The login throttling limits in force (they can change at run time through /config)."""
    return throttle.ThrottlePolicy(
        account_failures=settings.login_max_failures,
        client_failures=settings.login_client_max_failures,
        lockout_ms=int(settings.login_lockout_seconds * 1000),
    )


@router.post("/login", response_model=LoginResult, response_model_by_alias=True)
def login(body: LoginRequest, request: Request, response: Response, store: StoreDep,
          settings: SettingsDep) -> LoginResult | JSONResponse:
    """Check a user name and password and start a session (an HttpOnly cookie)."""
    # NFKC, as names are stored: a fullwidth spelling finds the user and shares its count.
    name = canonical_name(body.username)
    name_fold = fold(name)
    now = now_ms()
    client = client_address(request)
    policy = session_policy(settings)

    def audit(outcome: AuditOutcome, message: str, account: str | None = None,
              conn: Connection | None = None) -> None:
        # The account's key is the event's object; it is its user only once the login succeeded.
        actor_key = account if outcome == AuditOutcome.SUCCESS else None
        record_event(
            store, actor=None, actor_name=name, actor_key=actor_key, action=AuditAction.LOGIN,
            object_type=AuditObjectType.SESSION, object_key=account, object_name=name,
            outcome=outcome, message=message, client=client, conn=conn,
        )

    limits = throttle_policy(settings)
    with store.write() as conn:
        session_store.purge_expired(conn, policy, now)
        throttle.purge(conn, limits, now)
        wait = throttle.reserve(conn, name_fold, client, limits, now)
    if wait is not None:
        audit(AuditOutcome.FAILURE, "throttled after repeated failures")
        seconds = max(1, math.ceil(wait))
        raise Throttled(
            f"Too many failed logins from your address; try again in {seconds} seconds.",
            headers={"Retry-After": str(seconds)},
            retryAfter=seconds,
        )
    with store.read() as conn:
        user = user_store.find_by_name(conn, name, roles=False)
    # Always hash, for unknown names too, so the time taken does not tell which names exist.
    matches = verify_password(body.password, user.password_hash if user else None)
    if user is None or not matches:
        audit(AuditOutcome.FAILURE, "wrong user name or password", user.key if user else None)
        return JSONResponse(
            status_code=401,
            content={"loginResult": "FAILURE", "message": _FAILED,
                     "errorCode": ErrorCode.LOGIN_FAILED.value, "status": 401},
        )
    with store.write() as conn:
        throttle.release(conn, name_fold, client, limits, now_ms())
        token = session_store.open_session(conn, user.key, client, now)
        # The session and its audit event commit together (one transaction fewer per login).
        audit(AuditOutcome.SUCCESS, "logged in", user.key, conn)
    response.set_cookie(
        SESSION_COOKIE, token, max_age=int(policy.max_ms / 1000), path="/",
        httponly=True, samesite="lax", secure=settings.cookie_secure,
    )
    return LoginResult(
        login_result="SUCCESS",
        message=f"Logged in as {user.name}.",
        user_info=UserInfo(username=user.name, display_name=display_name(user)),
    )


# Two routes rather than one with two methods, so each gets its own OpenAPI operation id.
@router.post("/logout", status_code=204)
def logout(caller: CallerDep, store: StoreDep) -> Response:
    """End the caller's session; the cookie stops working, even if replayed."""
    _end_session(caller, store)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/logout", responses={200: {"model": LogoutAnswer}})
def logout_get(caller: CallerDep, store: StoreDep) -> JSONResponse:
    """End the caller's session, answered as the product does: 200 ``{redirectUrl, message}``
    (scripts written for it call ``.json()`` on the answer; docs/compatibility.md)."""
    _end_session(caller, store)
    response = JSONResponse({"redirectUrl": f"{API_PREFIX}/login", "message": "Logged out."})
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def _end_session(caller: Caller, store: Store) -> None:
    """Close the caller's session in the store and record the logout."""
    if caller.token:
        with store.write() as conn:
            session_store.close_session(conn, caller.token)
    record_event(
        store, actor=caller, actor_name=None, action=AuditAction.LOGOUT,
        object_type=AuditObjectType.SESSION, object_key=caller.key, object_name=caller.name,
        outcome=AuditOutcome.SUCCESS, message="logged out", client=caller.client,
    )


def version_document(settings: Settings) -> dict[str, str]:
    """What ``GET /version`` answers: name and version of the running service (the edge,
    ``edge.CachedReads``, answers it with this too, before routing)."""
    return {
        "name": DISTRIBUTION,
        "version": distribution_version(),
        "apiVersion": API_VERSION,
        "build": settings.build,
        "basePath": API_PREFIX,
    }


@router.get("/version")
async def version(caller: CallerDep, settings: SettingsDep) -> dict[str, str]:
    """Name and version of the running service."""
    # async: nothing here waits, so a trip to a worker thread would be the dearest part.
    return version_document(settings)
