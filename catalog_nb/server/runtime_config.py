"""The configuration properties of ``/config``: which settings may change while the service runs.

Each :class:`Property` names a field of the live :class:`~catalog_nb.server.settings.Settings`
object, its wire type, its inclusive bounds and whether it is read-only. Every part of the
service reads those fields from the one Settings object at the time it needs them (a request,
a job, a discovery run), so changing a field on that object takes effect at once:

* ``PUT /config/{name}`` validates the value (:func:`check`), stores it in ``config_values``
  and applies it (:meth:`RuntimeConfig.apply`);
* at start, :meth:`RuntimeConfig.refresh` applies the stored values, so they win over the
  environment;
* service processes sharing one store each run a :class:`Watcher` that re-reads the stored
  values every few seconds: a change made through another process takes effect here within
  ``RELOAD_SECONDS``. ``GET /config`` re-reads them at once.

``defaultValue`` of a property is the value this process started with (environment or built-in
default); ``PUT {"value": null}`` removes the stored value and returns to it.

Example::

    runtime = RuntimeConfig(settings)
    runtime.refresh(stored_rows)                   # at start
    value = check(PROPERTIES["search.pageMax"], 500)
    runtime.apply("search.pageMax", value)
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest, NotFound
from catalog_nb.server.schemas.search import DEFAULT_PAGE_SIZE
from catalog_nb.server.settings import Settings
from catalog_nb.server.store import Store
from catalog_nb.server.store import config as config_store

log = logging.getLogger(__name__)

__all__ = [
    "PROPERTIES",
    "RELOAD_SECONDS",
    "ConfigType",
    "Property",
    "RuntimeConfig",
    "Watcher",
    "check",
    "property_named",
    "start",
    "visible",
]

ConfigType = Literal["STRING", "INTEGER", "DOUBLE", "BOOLEAN"]

#: How often each process re-reads the stored values (changes made by other processes).
RELOAD_SECONDS = 5.0


@dataclass(frozen=True)
class Property:
    """One configuration property: wire ``name``, Settings ``field``, type and bounds.

    ``read`` turns the field's value into its wire value when that is not the value itself
    (lists of paths become one ``os.pathsep``-separated string). An ``admin_only`` property is
    neither listed nor read for anyone but an Administrator (see :func:`visible`).
    """

    name: str
    field: str
    type: ConfigType
    description: str
    minimum: float | None = None
    maximum: float | None = None
    read_only: bool = False
    read: Callable[[Any], Any] | None = None
    admin_only: bool = False

    def value_of(self, settings: Settings) -> Any:
        """The wire value of this property in ``settings``."""
        value = getattr(settings, self.field)
        return self.read(value) if self.read is not None else value


def _paths(value: Any) -> str:
    return os.pathsep.join(str(p) for p in value or [])


# Bounds keep the service usable: an idle timeout under a minute, or a lifetime under a quarter
# of an hour, would log the administrator out before they could undo it, and a stored value
# outlives restarts. search.pageMax stays at or above the page size a search uses by default.
_ALL = (
    Property("session.idleTimeoutMinutes", "session_idle_minutes", "DOUBLE",
             "Minutes without a request after which a session expires.", 1, 525_600),
    Property("session.maxLifetimeHours", "session_max_hours", "DOUBLE",
             "Hours after login after which a session expires, active or not.", 0.25, 8_760),
    Property("login.maxFailures", "login_max_failures", "INTEGER",
             "Failed logins for one user name from one client address that make that client "
             "wait login.lockoutSeconds before trying the name again.", 1, 1_000),
    Property("login.clientMaxFailures", "login_client_max_failures", "INTEGER",
             "Failed logins from one client address, whatever the user names, that make that "
             "client wait login.lockoutSeconds.", 1, 100_000),
    Property("login.lockoutSeconds", "login_lockout_seconds", "DOUBLE",
             "Seconds of the first wait after too many failed logins; each further failure "
             "doubles it (up to 64 times).", 1, 86_400),
    Property("profiling.sampleRows", "profile_sample_rows", "INTEGER",
             "Rows per resource the sample-based statistics read (counts see all rows).",
             100, 100_000_000),
    Property("profiling.sparkMaster", "spark_master", "STRING",
             "The Spark master PROFILE jobs with engine 'spark' run on: local[N], "
             "spark://host:port or a Spark Connect URL sc://host:port.",
             admin_only=True),  # a Spark Connect URL may carry a token
    Property("discovery.afterProfile", "discovery_after_profile", "BOOLEAN",
             "Whether each PROFILE job ends with tag discovery over what it profiled."),
    Property("discovery.minLearningScore", "discovery_min_learning_score", "DOUBLE",
             "Least resemblance to the fields people tagged for a learning tag to be suggested.",
             0, 1),
    Property("discovery.regexTimeoutMs", "discovery_regex_timeout_ms", "DOUBLE",
             "Longest a tag's regular expression may take on one sampled value (ms).",
             0.1, 60_000),
    Property("relations.afterProfile", "relations_after_profile", "BOOLEAN",
             "Whether each PROFILE job ends with join and lineage discovery."),
    Property("joins.minContainment", "join_min_containment", "DOUBLE",
             "Least share of one field's distinct values found in another's for a join "
             "candidate.", 0, 1),
    Property("joins.minDistinct", "join_min_distinct", "INTEGER",
             "Fields with fewer distinct values join only a small table's key named like them.",
             1, 1_000_000_000),
    Property("lineage.minContainment", "lineage_min_containment", "DOUBLE",
             "Least share of a file's fields and values found in an older file for INFERRED "
             "lineage.", 0, 1),
    Property("lineage.maxDepth", "lineage_max_depth", "INTEGER",
             "Deepest /lineage walk; larger requests are capped.", 1, 1_000),
    Property("lineage.maxNodes", "lineage_max_nodes", "INTEGER",
             "Most resources one /lineage answer holds.", 1, 100_000),
    Property("search.pageMax", "search_page_max", "INTEGER",
             "Largest page /search/new and /search/page give.", DEFAULT_PAGE_SIZE, 10_000),
    Property("service.build", "build", "STRING", "Build identifier reported by /version.",
             read_only=True),
    Property("service.jobWorkers", "job_workers", "INTEGER",
             "Background threads that run jobs (set at start: CATALOG_JOB_WORKERS).",
             read_only=True),
    Property("service.maxBodyBytes", "max_body_bytes", "INTEGER",
             "Largest request body read (set at start: CATALOG_MAX_BODY_BYTES).",
             read_only=True),
    Property("service.dataRoots", "data_roots", "STRING",
             "Folders FILE data sources may lie under (set at start: CATALOG_DATA_ROOTS).",
             read_only=True, read=_paths, admin_only=True),
    Property("service.objectRoots", "object_roots", "STRING",
             "Object-store prefixes (s3://bucket/prefix) FILE data sources may lie under (set "
             "at start: CATALOG_OBJECT_ROOTS).",
             read_only=True, read=lambda v: ",".join(v or []), admin_only=True),
)

#: Every property by name, in the order ``GET /config`` lists them.
PROPERTIES: dict[str, Property] = {p.name: p for p in _ALL}


def visible(admin: bool) -> list[Property]:
    """The properties a caller may read, in ``GET /config`` order: all of them for an
    Administrator, the others without the ``admin_only`` ones (where the service's files lie
    is no business of theirs)."""
    return [p for p in PROPERTIES.values() if admin or not p.admin_only]


def property_named(name: str, admin: bool = True) -> Property:
    """The property of this name; 404 ``CONFIG_NOT_FOUND`` naming the known ones.

    For a caller who is not an Administrator (``admin=False``) an ``admin_only`` property
    answers exactly as a name that does not exist, and the names offered leave it out.
    """
    shown = visible(admin)
    found = PROPERTIES.get(name)
    if found is None or found not in shown:
        raise NotFound(
            f"There is no configuration property '{name}'; the properties are "
            f"{', '.join(p.name for p in shown)}.",
            ErrorCode.CONFIG_NOT_FOUND,
        )
    return found


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _refuse(prop: Property, value: Any, why: str) -> BadRequest:
    bounds = ""
    if prop.minimum is not None and prop.maximum is not None:
        bounds = f" between {_number(prop.minimum)} and {_number(prop.maximum)}"
    return BadRequest(
        f"{prop.name} takes {'an' if prop.type == 'INTEGER' else 'a'} {prop.type}{bounds}; "
        f"{why}.",
        ErrorCode.INVALID_CONFIG_VALUE,
        name=prop.name, minimum=prop.minimum, maximum=prop.maximum,
    )


def check(prop: Property, value: Any) -> Any:
    """``value`` as the property's type, within its bounds; else 400 ``INVALID_CONFIG_VALUE``.

    A read-only property is 400 ``READ_ONLY_CONFIG``. Booleans are never numbers; an INTEGER
    takes a whole number (``5`` or ``5.0``), never a fraction or a string.

    >>> check(PROPERTIES["search.pageMax"], 500.0)
    500
    """
    if prop.read_only:
        raise BadRequest(f"{prop.name} is read-only; it is set when the service starts.",
                         ErrorCode.READ_ONLY_CONFIG, name=prop.name)
    shown = repr(value) if not isinstance(value, str) else f"the string {value!r}"
    if prop.type == "BOOLEAN":
        if not isinstance(value, bool):
            raise _refuse(prop, value, f"got {shown}")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _refuse(prop, value, f"got {shown}")
    if not math.isfinite(value):
        raise _refuse(prop, value, "got a value that is not a finite number")
    if prop.type == "INTEGER":
        if not float(value).is_integer():
            raise _refuse(prop, value, f"got the fraction {value!r}")
        typed: float = int(value)
    else:
        typed = float(value)
    low, high = prop.minimum, prop.maximum
    if (low is not None and typed < low) or (high is not None and typed > high):
        raise _refuse(prop, value, f"got {_number(typed)}, which is out of range")
    return typed


class RuntimeConfig:
    """The live Settings object with its configuration properties and their stored values.

    One per application (``app.state.runtime_config``). Thread-safe: requests, the watcher and
    the start-up code may apply values at the same time.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        #: The value of each writable property this process started with (its default).
        self.startup: dict[str, Any] = {
            p.name: getattr(settings, p.field) for p in _ALL if not p.read_only
        }
        #: The stored rows last seen: name -> {value, changed_by, changed_ms}.
        self.stored: dict[str, Mapping[str, Any]] = {}
        self._lock = threading.Lock()

    def apply(self, name: str, value: Any, row: Mapping[str, Any] | None = None) -> None:
        """Make ``value`` (already checked) the property's live value; ``None`` returns to the
        start-up value. ``row`` is the stored row that holds it (None once removed)."""
        prop = PROPERTIES[name]
        with self._lock:
            setattr(self.settings, prop.field, self.startup[name] if value is None else value)
            if row is None:
                self.stored.pop(name, None)
            else:
                self.stored[name] = dict(row)

    def refresh(self, rows: Mapping[str, Mapping[str, Any]]) -> list[str]:
        """Apply the stored ``rows`` (name -> row) and return the names whose value changed.

        A property without a row returns to its start-up value (its row was removed by another
        process). A stored value that is no longer valid (bounds tightened in a new version,
        an unknown name) is logged and left out: the start-up value holds.
        """
        changed = []
        for name, prop in PROPERTIES.items():
            if prop.read_only:
                continue
            row = rows.get(name)
            value = None
            if row is not None:
                try:
                    value = check(prop, row["value"])
                except BadRequest as exc:
                    log.warning("ignoring the stored value of %s: %s", name, exc.message)
                    row = None
            target = self.startup[name] if value is None else value
            if getattr(self.settings, prop.field) != target or self.stored.get(name) != row:
                if getattr(self.settings, prop.field) != target:
                    changed.append(name)
                self.apply(name, value, row)
        for name in rows:
            if name not in PROPERTIES:
                log.warning("ignoring the stored value of unknown property %s", name)
        return changed

    def describe(self, prop: Property) -> dict[str, Any]:
        """The wire form of one property."""
        row = self.stored.get(prop.name)
        default = None if prop.read_only else self.startup[prop.name]
        return {
            "name": prop.name,
            "value": prop.value_of(self.settings),
            "type": prop.type,
            "description": prop.description,
            "readOnly": prop.read_only,
            "defaultValue": prop.read(default) if prop.read and default is not None else default,
            "minimum": prop.minimum,
            "maximum": prop.maximum,
            "changedBy": row["changed_by"] if row else None,
            "timeOfLastChange": row["changed_ms"] if row else None,
        }


class Watcher:
    """A daemon thread applying values other processes stored, every ``seconds``.

    ``load`` reads the stored rows (a callable so this module needs no store); a failure is
    logged and retried at the next tick, the values in force stay.
    """

    def __init__(self, runtime: RuntimeConfig,
                 load: Callable[[], Mapping[str, Mapping[str, Any]]],
                 seconds: float = RELOAD_SECONDS) -> None:
        self.runtime = runtime
        self.load = load
        self.seconds = seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="catalog-config-watcher",
                                        daemon=True)

    def start(self) -> Watcher:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(self.seconds + 1)

    def _run(self) -> None:
        while not self._stop.wait(self.seconds):
            try:
                changed = self.runtime.refresh(self.load())
            except Exception:
                log.exception("re-reading the stored configuration failed")
                continue
            if changed:
                log.info("configuration changed by another process: %s", ", ".join(changed))


def start(store: Store, runtime: RuntimeConfig, seconds: float = RELOAD_SECONDS) -> Watcher:
    """Apply the stored values now (they win over the environment), then watch for changes
    made by other processes; stop the returned watcher when the service stops."""

    def load() -> dict[str, dict[str, Any]]:
        with store.read() as conn:
            return config_store.stored(conn)

    changed = runtime.refresh(load())
    if changed:
        log.info("stored configuration applied: %s", ", ".join(changed))
    return Watcher(runtime, load, seconds).start()
