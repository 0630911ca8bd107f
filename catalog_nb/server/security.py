"""Passwords, callers and permission checks.

Passwords are hashed with scrypt (memory-hard, in the standard library) and a per-password salt;
the parameters travel inside the hash so they can be raised later without breaking old hashes.

Visibility follows DESIGN.md: Administrators and roles with ``metadataAccessOption = ALL`` see
every data source; other roles see the sources in their ``dataSourceKeys``, plus the resources
under their virtual folders and data sets. Anything a caller may not see answers 404, not 403.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

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


_DUMMY_HASH = hash_password(secrets.token_hex(8))


@dataclass(frozen=True)
class Caller:
    """Who is making a request, with the roles that decide what they may do."""

    key: str
    name: str
    roles: Sequence[RoleRecord]
    token: str | None = None
    client: str | None = None

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


def path_matches(spec: Mapping[str, Any], path: str) -> bool:
    """Whether a resource path falls under a path specification.

    ``sourcePath`` is a folder prefix (empty or "/" means the whole source); ``includePattern``
    and ``excludePattern`` are glob patterns matched against the path below it and against the
    resource's own name, so ``*.csv`` works at any depth.

    >>> path_matches({"sourcePath": "/sales", "includePattern": "*.csv"}, "/sales/2024/q1.csv")
    True
    """
    base = str(spec.get("sourcePath") or "").rstrip("/")
    clean = path.rstrip("/")
    if base and clean != base and not clean.startswith(base + "/"):
        return False
    below = clean[len(base):].lstrip("/")
    name = clean.rsplit("/", 1)[-1]

    def hit(pattern: str | None) -> bool:
        if not pattern:
            return False
        return fnmatchcase(below, str(pattern)) or fnmatchcase(name, str(pattern))

    include = spec.get("includePattern")
    if include and not hit(include):
        return False
    return not hit(spec.get("excludePattern"))


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
