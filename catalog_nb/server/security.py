"""Passwords, callers and permission checks.

Passwords are hashed with scrypt (memory-hard, in the standard library) and a per-password salt;
the parameters travel inside the hash so they can be raised later without breaking old hashes.

Visibility follows DESIGN.md: Administrators and roles with ``metadataAccessOption = ALL`` see
every data source; other roles see the sources in their ``dataSourceKeys``, plus the resources
under their virtual folders and data sets. Anything a caller may not see answers 404, not 403.
A grant of a virtual folder covers the resources its own path specifications match (not those
of its child folders). ``visibility(conn, roles)`` resolves all of this once per request into a
``Visibility`` that the store turns into one SQL condition for many resources at once.
``readable_roles`` applies the same rules to what roles grant, so reading another role never
shows a non-administrator the keys of what they may not see.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import hmac
import re
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection

from catalog_nb.contract import AccessLevel, ErrorCode, MetadataAccessOption
from catalog_nb.server.errors import Forbidden
from catalog_nb.server.store.roles import RoleRecord

_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**14, 8, 1
_RANK = {level.value: rank for rank, level in enumerate(reversed(list(AccessLevel)))}


def hash_password(password: str) -> str:
    """A salted scrypt hash of ``password``, self-describing (``scrypt$n$r$p$salt$hash``)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(
        password.encode(), salt=salt, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P, dklen=32
    )
    return _stored_form(salt, digest)


def _stored_form(salt: bytes, digest: bytes) -> str:
    b64 = base64.b64encode
    return f"scrypt${_SCRYPT_N}${_SCRYPT_R}${_SCRYPT_P}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, stored: str | None) -> bool:
    """Whether ``password`` matches ``stored``; False for a user without a password.

    A missing hash is checked against a dummy so that the time taken does not tell whether the
    user exists.
    """
    candidate = stored or _DUMMY_HASH
    try:
        scheme, n, r, p, salt, digest = candidate.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        actual = hashlib.scrypt(
            password.encode(),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
        )
    except ValueError:
        return False
    return stored is not None and hmac.compare_digest(actual, expected)


#: What a missing hash is checked against: a hash of the usual form with a random salt, so the
#: check costs one scrypt like a real one; its random digest matches no password. Made without
#: hashing anything: a real hash here would cost a scrypt at every import of the service.
_DUMMY_HASH = _stored_form(secrets.token_bytes(16), secrets.token_bytes(32))


@dataclass(frozen=True)
class Caller:
    """Who is making a request, with the roles that decide what they may do."""

    key: str
    name: str
    roles: Sequence[RoleRecord]
    token: str | None = None
    client: str | None = None
    #: The store's (auth, catalog) generations read with the caller's session: what a cached
    #: read may be reused under (``server.read_cache``); None when unknown.
    generations: tuple[int, int] | None = None

    @property
    def level(self) -> str:
        """The caller's most powerful access level (Guest when they hold no role)."""
        if not self.roles:
            return AccessLevel.GUEST.value
        return max((r.access_level for r in self.roles), key=lambda lvl: _RANK.get(lvl, -1))

    @property
    def admin(self) -> bool:
        return self.level == AccessLevel.ADMINISTRATOR.value

    def at_least(self, level: AccessLevel) -> bool:
        """Whether the caller's most powerful role reaches ``level``."""
        return _RANK.get(self.level, -1) >= _RANK[level.value]


def require_level(caller: Caller, level: AccessLevel, doing: str) -> None:
    """403 unless the caller holds a role of ``level`` or above."""
    if not caller.at_least(level):
        raise Forbidden(
            f"{doing} needs a role with the {level.value} access level; your roles give "
            f"{caller.level}.",
            ErrorCode.PERMISSION_DENIED,
        )


def require_admin(caller: Caller, doing: str) -> None:
    """403 unless the caller is an Administrator."""
    require_level(caller, AccessLevel.ADMINISTRATOR, doing)


def granted_domains(roles: Iterable[RoleRecord]) -> frozenset[str]:
    """The tag domain keys these roles are granted (their ``domainKeys``)."""
    return frozenset(k for r in roles for k in r.granted("DOMAIN"))


def domain_level(caller: Caller, domain_key: str) -> AccessLevel | None:
    """The caller's most powerful access level *in one tag domain*.

    Administrators hold every domain. Otherwise only the roles whose ``domainKeys`` include the
    domain count, so a Steward role without the domain and an Analyst role with it make the
    caller an Analyst there. None when no role grants the domain.
    """
    if caller.admin:
        return AccessLevel.ADMINISTRATOR
    levels = [r.access_level for r in caller.roles if domain_key in r.granted("DOMAIN")]
    if not levels:
        return None
    return AccessLevel(max(levels, key=lambda lvl: _RANK.get(lvl, -1)))


def require_domain(
    caller: Caller, domain_key: str, domain_name: str, level: AccessLevel, doing: str
) -> None:
    """403 unless a role of the caller grants the tag domain at ``level`` or above."""
    held = domain_level(caller, domain_key)
    if held is not None and _RANK.get(held.value, -1) >= _RANK[level.value]:
        return
    if held is None:
        reason = f"none of your roles includes the tag domain '{domain_name}' in its domainKeys"
    else:
        reason = f"your roles give {held.value} in the tag domain '{domain_name}'"
    raise Forbidden(
        f"{doing} needs a role with the {level.value} access level that includes the tag "
        f"domain '{domain_name}'; {reason}.",
        ErrorCode.PERMISSION_DENIED,
    )


def sees_every_source(roles: Iterable[RoleRecord]) -> bool:
    """Whether these roles lift the data source restriction altogether."""
    return any(
        r.access_level == AccessLevel.ADMINISTRATOR.value
        or r.metadata_access_option == MetadataAccessOption.ALL.value
        for r in roles
    )


def sees_source(roles: Sequence[RoleRecord], source_key: str) -> bool:
    """Whether these roles see a whole data source."""
    return sees_every_source(roles) or any(source_key in r.granted("DATA_SOURCE") for r in roles)


@dataclass(frozen=True)
class PathSpec:
    """A compiled path specification (``sourcePath``, ``includePattern``, ``excludePattern``).

    ``base`` is the folder prefix without leading or trailing "/" (empty: the whole source).
    Compiling once and matching many paths is what lets a page of 1,000 resources be checked
    against every folder of its sources without re-reading the patterns each time.
    """

    base: str
    include: str | None
    exclude: str | None

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> PathSpec:
        """The compiled form of a stored or sent path specification."""
        return cls(
            str(spec.get("sourcePath") or "").strip("/"),
            str(spec["includePattern"]) if spec.get("includePattern") else None,
            str(spec["excludePattern"]) if spec.get("excludePattern") else None,
        )

    @property
    def has_patterns(self) -> bool:
        return bool(self.include or self.exclude)

    def under_base(self, path: str) -> bool:
        """Whether ``path`` is the base itself or lies below it (patterns not considered)."""
        clean = path.strip("/")
        return not self.base or clean == self.base or clean.startswith(self.base + "/")

    def matches(self, path: str) -> bool:
        """Whether a resource path falls under this specification (see :func:`path_matches`)."""
        if not self.under_base(path):
            return False
        clean = path.strip("/")
        below = clean[len(self.base):].lstrip("/")
        name = clean.rsplit("/", 1)[-1]
        if self.include and not _hit(self.include, below, name):
            return False
        return not (self.exclude and _hit(self.exclude, below, name))


@lru_cache(maxsize=1024)
def _glob(pattern: str) -> Callable[[str], Any]:
    return re.compile(fnmatch.translate(pattern)).match


def _hit(pattern: str, below: str, name: str) -> bool:
    match = _glob(pattern)
    return match(below) is not None or match(name) is not None


def path_matches(spec: Mapping[str, Any], path: str) -> bool:
    """Whether a resource path falls under a path specification.

    ``sourcePath`` is a folder prefix (empty or "/" means the whole source; leading and trailing
    "/" are ignored on both sides, so ``/sales`` and ``sales`` name the same folder);
    ``includePattern`` and ``excludePattern`` are case-sensitive glob patterns matched against the
    path below it and against the resource's own name, so ``*.csv`` works at any depth.

    >>> path_matches({"sourcePath": "/sales", "includePattern": "*.csv"}, "/sales/2024/q1.csv")
    True
    >>> path_matches({"sourcePath": "sales", "excludePattern": "2024/*"}, "sales/2024/q1.csv")
    False
    """
    return PathSpec.of(spec).matches(path)


def sees_resource(
    roles: Sequence[RoleRecord],
    source_key: str,
    path: str,
    folders: Mapping[str, Mapping[str, Any]],
    datasets: Mapping[str, Mapping[str, Any]],
) -> bool:
    """Whether these roles see one resource: through its source, a virtual folder or a data set.

    ``folders`` and ``datasets`` map keys to their stored rows (the ones the roles are granted).
    """
    if sees_source(roles, source_key):
        return True
    for role in roles:
        for key in role.granted("VIRTUAL_FOLDER"):
            folder = folders.get(key)
            if folder and folder["data_source_key"] == source_key and any(
                path_matches(spec, path) for spec in folder["path_specs"] or []
            ):
                return True
        for key in role.granted("DATASET"):
            dataset = datasets.get(key)
            specs = (dataset or {}).get("path_specs") or {}
            if any(path_matches(spec, path) for spec in specs.get(source_key, [])):
                return True
    return False


@dataclass(frozen=True)
class Visibility:
    """What one caller may see, resolved once per request and applied to many resources.

    ``sources`` are the data sources seen whole; ``specs`` maps every other source the caller
    reaches through a granted virtual folder or data set to the compiled path specifications
    of those grants. ``everything`` (Administrators, ``metadataAccessOption = ALL``) makes the
    rest irrelevant. The store turns this into one SQL condition (``store.resources``); the
    helpers below answer for single resources, folders and data sets.
    """

    everything: bool
    sources: frozenset[str] = frozenset()
    specs: Mapping[str, tuple[PathSpec, ...]] = field(default_factory=dict)
    folder_keys: frozenset[str] = frozenset()
    dataset_keys: frozenset[str] = frozenset()

    def sees_source(self, source_key: str) -> bool:
        """Whether the whole data source is visible."""
        return self.everything or source_key in self.sources

    def touches(self, source_key: str) -> bool:
        """Whether at least part of the data source is visible."""
        return self.sees_source(source_key) or source_key in self.specs

    def sees(self, source_key: str, path: str) -> bool:
        """Whether the resource at ``path`` of a source is visible."""
        if self.sees_source(source_key):
            return True
        return any(spec.matches(path) for spec in self.specs.get(source_key, ()))

    def sees_folder(self, folder: Mapping[str, Any]) -> bool:
        """A virtual folder is visible with its whole source, or when granted."""
        return self.sees_source(str(folder["data_source_key"])) or folder["key"] in self.folder_keys

    def sees_dataset(self, dataset: Mapping[str, Any]) -> bool:
        """A data set is visible when granted, or when one of its sources is seen whole."""
        if self.everything or dataset["key"] in self.dataset_keys:
            return True
        return any(self.sees_source(k) for k in (dataset.get("path_specs") or {}))


def visibility(conn: Connection, roles: Sequence[RoleRecord]) -> Visibility:
    """Resolve what these roles see, reading their granted folders and data sets once."""
    if sees_every_source(roles):
        return Visibility(everything=True)
    # Imported here: store.sources is the data source family's module and may one day need the
    # permission checks of this module; a top-level import would then be circular.
    from catalog_nb.server.store import sources as source_store

    whole = frozenset(k for r in roles for k in r.granted("DATA_SOURCE"))
    folder_keys = frozenset(k for r in roles for k in r.granted("VIRTUAL_FOLDER"))
    dataset_keys = frozenset(k for r in roles for k in r.granted("DATASET"))
    specs: dict[str, list[PathSpec]] = {}
    for folder in source_store.virtual_folders_by_key(conn, folder_keys):
        source = str(folder["data_source_key"])
        if source not in whole:
            specs.setdefault(source, []).extend(
                PathSpec.of(s) for s in folder["path_specs"] or []
            )
    for dataset in source_store.datasets_by_key(conn, dataset_keys):
        for source, listed in (dataset["path_specs"] or {}).items():
            if source not in whole:
                specs.setdefault(source, []).extend(PathSpec.of(s) for s in listed or [])
    return Visibility(
        everything=False,
        sources=whole,
        specs={k: tuple(dict.fromkeys(v)) for k, v in specs.items() if v},
        folder_keys=folder_keys,
        dataset_keys=dataset_keys,
    )


def readable_roles(conn: Connection, caller: Caller,
                   records: Sequence[RoleRecord]) -> list[RoleRecord]:
    """Roles as ``caller`` may read them: whole for an Administrator; for anyone else every grant
    list keeps only the keys the caller's own roles grant.

    A data source, virtual folder or data set key stays when the caller may see that object
    (``metadataAccessOption = ALL`` sees every source, and the folders and data sets on them);
    a tag domain key stays when one of the caller's roles grants that domain. The caller's own
    roles therefore read whole. Any grant kind not named here is hidden.
    """
    if caller.admin:
        return list(records)
    # Imported here for the reason given in visibility().
    from catalog_nb.server.store import sources as source_store

    seen = visibility(conn, caller.roles)
    domains = granted_domains(caller.roles)
    folders = {f["key"]: f for f in source_store.virtual_folders_by_key(
        conn, {k for r in records for k in r.granted("VIRTUAL_FOLDER")})}
    datasets = {d["key"]: d for d in source_store.datasets_by_key(
        conn, {k for r in records for k in r.granted("DATASET")})}

    def keep(kind: str, key: str) -> bool:
        if kind == "DATA_SOURCE":
            return seen.sees_source(key)
        if kind == "VIRTUAL_FOLDER":
            return key in folders and seen.sees_folder(folders[key])
        if kind == "DATASET":
            return key in datasets and seen.sees_dataset(datasets[key])
        if kind == "DOMAIN":
            return key in domains
        return False

    return [
        replace(r, grants={kind: [k for k in keys if keep(kind, k)]
                           for kind, keys in r.grants.items()})
        for r in records
    ]
