"""Read-back bodies: a client reads an object, changes a field and sends the whole object back.

The read form carries derived and system properties (``key``, ``type``, ``timeOfCreation``,
``accessLevels``, ``fullName``, ...) that a client cannot change. A payload class with
``read_form`` keeps the ones it was sent (``Payload.read_back``); the service that loads the
current object hands them here with that object's wire form:

- **update** (:func:`refuse_changed`): a property equal to what the service answers for the
  current object is ignored; one that differs is refused, 400 INVALID_PAYLOAD naming it. A few
  properties move on their own (``timeOfLastChange`` with every write, counts and children with
  other objects' writes): a stale value there is an older read, not a change, so they are always
  ignored (``volatile``).
- **create** (:func:`refuse_on_create`): there is no current object, and a body copied from
  another object or catalog carries that object's key, times, counts and derived values; the
  service assigns those, so they are ignored. Only the properties every new object of the kind
  has one value of are checked: ``type`` must be the kind being created (a user posted to
  ``/tag`` is a mistake worth naming), and a tag domain cannot be created ``immutable`` or
  ``BUILT_IN`` (only the service seeds those). So are the names a body's own references
  determine: a tag association's ``tagName`` or ``resourcePath`` must be those of its
  ``tagKey`` and ``resourceKey``, a job's ``dataSourceName`` that of its ``dataSourceKey``
  (changed, they ask for another tag, resource or source than the keys name).

One rule for every write, so routes stay thin and no route keeps its own copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest
from catalog_nb.server.schemas.common import Payload

#: Properties that change without the client asking: never compared.
VOLATILE = frozenset({"timeOfLastChange"})


def wire(obj: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    """The JSON form of an answer model (or an answer already built as a dict)."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(by_alias=True, mode="json")
    return dict(obj)


def changed(body: Payload, current: BaseModel | Mapping[str, Any],
            volatile: Iterable[str] = ()) -> list[str]:
    """Wire names of the read-only properties the body sends with another value than the
    current object's."""
    now = wire(current)
    skip = VOLATILE | set(volatile)
    return sorted(name for name, sent in body.read_back.items()
                  if name not in skip and not _same(sent, now.get(name)))


def refuse_changed(body: Payload, current: BaseModel | Mapping[str, Any],
                   volatile: Iterable[str] = ()) -> None:
    """Refuse (400 naming them) the read-only properties the body tries to change."""
    _refuse(changed(body, current, volatile))


def refuse_on_create(body: Payload, fixed: Mapping[str, Any]) -> None:
    """On create: the read-only properties are ignored, except those ``fixed`` gives the one
    value of (every new object of the kind has it: ``type``, a tag domain's ``immutable`` and
    ``semantic``; or the body's own references determine it: an association's ``tagName``):
    another value there asks for something a create cannot give, refused by name."""
    _refuse(sorted(name for name, value in fixed.items()
                   if name in body.read_back and not _same(body.read_back[name], value)),
            " (a created object's other read-only properties are assigned by the service)")


def _refuse(names: list[str], detail: str = " (send them as read, or leave them out)") -> None:
    if names:
        raise BadRequest(
            f"read-only properties cannot be changed: {', '.join(names)}{detail}.",
            ErrorCode.INVALID_PAYLOAD, fields=names,
        )


def _same(sent: Any, now: Any) -> bool:
    """JSON equality; numbers compare by value (``0`` is ``0.0``) but a boolean is not one."""
    if isinstance(sent, bool) or isinstance(now, bool):
        return type(sent) is type(now) and sent == now
    if isinstance(sent, dict) and isinstance(now, dict):
        return sent.keys() == now.keys() and all(_same(v, now[k]) for k, v in sent.items())
    if isinstance(sent, list) and isinstance(now, list):
        return len(sent) == len(now) and all(_same(a, b) for a, b in zip(sent, now, strict=True))
    return bool(sent == now)


def merge_map(current: Mapping[str, Any] | None, sent: Mapping[str, Any] | None
              ) -> dict[str, Any]:
    """A map-valued property after a PUT: the sent entries over the current ones, an entry sent
    as null removed, and the whole map cleared when it is itself sent as null.

    The spec's PUT keeps "properties absent from the body unchanged"; an entry of a map is such
    a property to the people who send ``{"attributes": {"firstName": "Robert"}}`` (the real
    product merges too), so replacing the map would lose the entries they did not mention.
    """
    if sent is None:
        return {}
    merged = dict(current or {})
    for name, value in sent.items():
        if value is None:
            merged.pop(name, None)
        else:
            merged[name] = value
    return merged
