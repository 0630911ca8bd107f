"""Callers and permission checks: access levels, administrators, tag domains.

Passwords live in ``server.passwords``; what a caller may *see* (data sources, folders, data
sets, resources) in ``server.visibility`` (the rules) and ``store.visible`` (resolved and
applied in SQL).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from catalog_nb.contract import AccessLevel, ErrorCode
from catalog_nb.server.errors import Forbidden
from catalog_nb.server.store.roles import RoleRecord

_RANK = {level.value: rank for rank, level in enumerate(reversed(list(AccessLevel)))}


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


def stewards_domain(caller: Caller, domain_key: str) -> bool:
    """Whether the caller may create, change and delete the tags of this tag domain (Steward
    or above there, as :func:`require_domain` checks)."""
    held = domain_level(caller, domain_key)
    return held is not None and _RANK.get(held.value, -1) >= _RANK[AccessLevel.STEWARD.value]


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
