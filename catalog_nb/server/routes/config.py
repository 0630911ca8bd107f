"""Configuration (``/config``): the service settings that can change while it runs.

See docs/objects-api.md and :mod:`catalog_nb.server.runtime_config`. Every signed-in user reads,
except the administrator-only properties (``service.dataRoots``): for anyone else they are not
listed, and reading one answers 404 like a name that does not exist. Administrators change
values. There is no create and no delete: the properties are the
service's own, and ``PUT {"value": null}`` returns one to its start-up value. A change is
stored, applied to the running service at once, and audited.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from catalog_nb.contract import AuditAction, AuditObjectType
from catalog_nb.server.auditing import audited
from catalog_nb.server.deps import CallerDep, StoreDep
from catalog_nb.server.responses import JSONResponse
from catalog_nb.server.runtime_config import RuntimeConfig, check, property_named, visible
from catalog_nb.server.schemas.answers import ConfigProperty
from catalog_nb.server.schemas.objects import ConfigUpdate
from catalog_nb.server.security import require_admin
from catalog_nb.server.store import Store
from catalog_nb.server.store import config as config_store

router = APIRouter(tags=["config"])


def _runtime(request: Request) -> RuntimeConfig:
    runtime: RuntimeConfig = request.app.state.runtime_config
    return runtime


def _fresh(request: Request, store: Store) -> RuntimeConfig:
    """The runtime configuration with what other processes stored applied first."""
    runtime = _runtime(request)
    with store.read() as conn:
        runtime.refresh(config_store.stored(conn))
    return runtime


@router.get("/config", responses={200: {"model": list[ConfigProperty]}})
def list_config(request: Request, caller: CallerDep, store: StoreDep) -> JSONResponse:
    """Every configuration property the caller may read, with its value in force, type, bounds
    and last change (administrator-only ones for Administrators only)."""
    runtime = _fresh(request, store)
    return JSONResponse([runtime.describe(p) for p in visible(caller.admin)])


@router.get("/config/{name}", responses={200: {"model": ConfigProperty}})
def get_config(name: str, request: Request, caller: CallerDep, store: StoreDep) -> JSONResponse:
    """One configuration property (404 ``CONFIG_NOT_FOUND``, also for an administrator-only one
    read by anyone else)."""
    prop = property_named(name, caller.admin)
    return JSONResponse(_fresh(request, store).describe(prop))


@router.put("/config/{name}", responses={200: {"model": ConfigProperty}})
def set_config(name: str, body: ConfigUpdate, request: Request, caller: CallerDep,
               store: StoreDep) -> JSONResponse:
    """Change a property (Administrator): checked, stored, applied at once; null returns it
    to its start-up value. 400 ``READ_ONLY_CONFIG`` / ``INVALID_CONFIG_VALUE``."""
    runtime = _runtime(request)
    row: dict[str, Any] | None = None
    with audited(store, caller, AuditAction.UPDATE, AuditObjectType.CONFIG,
                 key=name, name=name) as w:
        require_admin(caller, "Changing the configuration")
        prop = property_named(name)
        value = None if body.value is None and not prop.read_only else check(prop, body.value)
        before = prop.value_of(runtime.settings)
        if value is None:
            config_store.remove(w.conn, prop.name)
            after = runtime.startup[prop.name]
            w.message = f"reset to the start-up value {after!r} (was {before!r})"
        else:
            row = config_store.put(w.conn, prop.name, value, caller.name)
            w.message = f"set to {value!r} (was {before!r})"
    # Applied once committed: a failed commit must not leave a value the store does not hold.
    runtime.apply(prop.name, value, row)
    return JSONResponse(runtime.describe(prop))
