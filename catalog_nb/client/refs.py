"""Naming a catalog object "by name or key": the one lookup every family uses.

Analysts name a data source, a role, a folder, a custom property... by its name (any case), by
its key, or by handing back a record (a JSON dict or a frame row with ``key``, or ``name``).

* :func:`pick` finds the record a reference names among records already read (the families
  whose list endpoint is small: data sources, folders, data sets, custom properties, domains);
* :func:`lookup` asks the service, by name first and then as a key (users and roles, which have
  a by-name endpoint);
* :func:`ref_parts` and :func:`ref_key` read what a reference carries.

A miss is a :class:`~catalog_nb.client.errors.NotFoundError` with the family's error code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from catalog_nb.client.errors import NotFoundError

__all__ = ["lookup", "pick", "ref_key", "ref_parts"]

#: How many known names a "not found" message lists.
_SHOWN = 20


def _text(value: Any) -> str | None:
    return None if value is None or (not isinstance(value, str) and pd.isna(value)) else str(value)


def ref_parts(ref: Any) -> tuple[str | None, str | None]:
    """``(key, name)`` a reference carries: a string is both candidates, a dict/row its own."""
    if isinstance(ref, str):
        return ref, ref
    getter = getattr(ref, "get", None)
    if getter is None:
        raise TypeError(f"expected a name, a key or a record with 'key', not {ref!r}")
    key, name = _text(getter("key")), _text(getter("name"))
    if key is None and name is None:
        raise ValueError(f"cannot tell which object {ref!r} is: it has no 'key' or 'name'")
    return key, name


def ref_key(ref: Any) -> str | None:
    """The ``key`` of a JSON dict or frame row, or ``None`` for a plain string."""
    if isinstance(ref, str):
        return None
    key = _text(ref.get("key") if hasattr(ref, "get") else None)
    if key is None:
        raise ValueError(f"cannot tell which object {ref!r} is: it has no 'key'")
    return key


def pick(
    records: Sequence[Mapping[str, Any]],
    ref: Any,
    kind: str,
    error_code: str,
) -> dict[str, Any]:
    """The record of ``records`` that ``ref`` names: by name (case-insensitive), then by key.

    ``ref`` is a name, a key, or a JSON dict / frame row with ``key`` (or ``name``). Raises
    :class:`NotFoundError` with ``error_code`` naming the known ones when nothing matches.

    Example::

        pick(cat.api.list_sources(), "demo_files", "data source", "DATA_SOURCE_NOT_FOUND")
    """
    key, name = ref_parts(ref)
    if isinstance(ref, str):
        folded = ref.casefold()
        for record in records:
            if str(record.get("name") or "").casefold() == folded:
                return dict(record)
    for record in records:
        if key is not None and record.get("key") == key:
            return dict(record)
    if not isinstance(ref, str) and name is not None:
        for record in records:
            if str(record.get("name") or "").casefold() == name.casefold():
                return dict(record)
    known = sorted(str(r.get("name")) for r in records)
    shown = ", ".join(known[:_SHOWN]) + (" ..." if len(known) > _SHOWN else "")
    raise NotFoundError(
        f"No {kind} is named or keyed {key or name!r}"
        + (f"; the ones you can see: {shown}." if known else "; you can see none."),
        error_code=error_code,
    )


def lookup(
    ref: Any,
    by_name: Callable[[str], Any],
    by_key: Callable[[str], Any],
    kind: str,
    error_code: str,
) -> dict[str, Any]:
    """The JSON of the object ``ref`` names, asked of the service: a record by its ``key``; a
    string as a name first (``by_name``), then as a key (``by_key``).

    Raises :class:`NotFoundError` with ``error_code`` when neither matches.
    """
    key = ref_key(ref)
    if key is not None:
        found: dict[str, Any] = by_key(key)
        return found
    name = str(ref)
    try:
        found = by_name(name)
    except NotFoundError as missing:
        try:
            found = by_key(name)
        except NotFoundError:
            raise NotFoundError(
                f"No {kind} is named or keyed {name!r}.",
                error_code=error_code,
                response=missing.response,
            ) from missing
    return found
