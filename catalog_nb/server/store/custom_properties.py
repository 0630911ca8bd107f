"""Custom property definitions, and the values people give them on data resources.

A definition names a typed property (``STRING``, ``INTEGER``, ``NUMBER``, ``BOOLEAN``, ``DATE``,
``STRING_LIST``); a value is stored per (resource, property) as JSON in its canonical form
(an integral ``3.0`` sent for an INTEGER is kept as ``3``, a DATE as ``YYYY-MM-DD``). A value of
the wrong type is refused (400 ``INVALID_PROPERTY_VALUE``), and a definition's type may change
only while every stored value fits the new type (409 otherwise), so a stored value always
matches its definition.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from catalog_nb.contract import CustomPropertyType, ErrorCode
from catalog_nb.server.errors import BadRequest, Conflict, NotFound
from catalog_nb.server.store import search
from catalog_nb.server.store.common import any_key, fold, new_key, now_ms, unique_name
from catalog_nb.server.store.schema import custom_properties, resource_custom_values

#: Columns a create or update may set.
COLUMNS = ("name", "display_name", "description", "type", "facet_able")

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_STRING_LIST_MAX = 1000


class _Unfit(ValueError):
    """A value that does not fit a property type; the message says what was expected."""


def _canonical(prop_type: str, value: Any) -> Any:
    """The stored form of ``value`` for ``prop_type``; raises _Unfit when it does not fit."""
    kind = CustomPropertyType(prop_type)
    if kind is CustomPropertyType.STRING:
        if isinstance(value, str):
            return value
        raise _Unfit("a string")
    if kind is CustomPropertyType.BOOLEAN:
        if isinstance(value, bool):
            return value
        raise _Unfit("true or false")
    if kind is CustomPropertyType.INTEGER:
        # bool is an int in Python, but true is not a number on the wire.
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            if _LONG_MIN <= value <= _LONG_MAX:
                return value
            raise _Unfit("an integer that fits in 64 bits")
        raise _Unfit("an integer")
    if kind is CustomPropertyType.NUMBER:
        finite = isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))
        if finite and not isinstance(value, bool):
            return value
        raise _Unfit("a finite number")
    if kind is CustomPropertyType.DATE:
        if isinstance(value, str) and _DATE.match(value):
            try:
                return date.fromisoformat(value).isoformat()
            except ValueError:
                pass
        raise _Unfit('a date written YYYY-MM-DD (e.g. "2024-01-31")')
    # STRING_LIST
    if (
        isinstance(value, list)
        and len(value) <= _STRING_LIST_MAX
        and all(isinstance(v, str) for v in value)
    ):
        return list(value)
    raise _Unfit(f"a list of at most {_STRING_LIST_MAX} strings")


def check_value(prop_type: str, value: Any, name: str) -> Any:
    """The canonical form of a value for a property; 400 INVALID_PROPERTY_VALUE naming it."""
    try:
        return _canonical(prop_type, value)
    except _Unfit as exc:
        raise BadRequest(
            f"The custom property '{name}' is of type {prop_type}: its value must be {exc}, "
            f"not {_describe(value)}.",
            ErrorCode.INVALID_PROPERTY_VALUE,
            property=name,
        ) from exc


def _describe(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _row(row: Mapping[Any, Any]) -> dict[str, Any]:
    return {str(k): v for k, v in row.items() if k != "name_fold"}


def list_all(conn: Connection) -> list[dict[str, Any]]:
    """Every definition, by name."""
    query = select(custom_properties).order_by(custom_properties.c.name_fold)
    return [_row(r) for r in conn.execute(query).mappings()]


def get(conn: Connection, key: str) -> dict[str, Any]:
    """The definition with this key; 404 when there is none."""
    row = conn.execute(
        select(custom_properties).where(custom_properties.c.key == key)
    ).mappings().first()
    if row is None:
        raise NotFound(
            f"There is no custom property with key '{key}'.",
            ErrorCode.CUSTOM_PROPERTY_NOT_FOUND,
        )
    return _row(row)


def create(conn: Connection, values: Mapping[str, Any]) -> dict[str, Any]:
    """Create a definition; 409 when the name is taken (case-insensitively)."""
    now = now_ms()
    row = {c: values.get(c) for c in COLUMNS}
    row["type"] = row["type"] or CustomPropertyType.STRING.value
    row["facet_able"] = bool(row["facet_able"])
    key = new_key()
    row.update(key=key, name_fold=fold(str(row["name"])), created_ms=now, changed_ms=now)
    with unique_name("custom property", str(row["name"])):
        conn.execute(insert(custom_properties).values(**row))
    return get(conn, key)


def update_definition(conn: Connection, key: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Change the given columns of a definition; a type change must fit every stored value."""
    # Exclusive row lock: value writes hold a shared one (by_names), so no value checked
    # against the old type can be written while the stored values are checked against the new.
    conn.execute(
        select(custom_properties.c.key).where(custom_properties.c.key == key).with_for_update()
    )
    current = get(conn, key)
    row = {c: v for c, v in values.items() if c in COLUMNS}
    if "type" in row and row["type"] != current["type"]:
        _retype(conn, current, str(row["type"]))
    if "name" in row:
        row["name_fold"] = fold(str(row["name"]))
    row["changed_ms"] = now_ms()
    with unique_name("custom property", str(values.get("name", ""))):
        conn.execute(update(custom_properties).where(custom_properties.c.key == key).values(**row))
    return get(conn, key)


def _retype(conn: Connection, current: Mapping[str, Any], new_type: str) -> None:
    """Convert every stored value to ``new_type``; 409 when some do not fit (nothing changes)."""
    stored = conn.execute(
        select(resource_custom_values.c.resource_key, resource_custom_values.c.value).where(
            resource_custom_values.c.property_key == current["key"]
        )
    ).all()
    converted: list[tuple[str, Any]] = []
    misfits = 0
    example: Any = None
    for resource_key, value in stored:
        try:
            converted.append((resource_key, _canonical(new_type, value)))
        except _Unfit:
            misfits += 1
            example = value if misfits == 1 else example
    if misfits:
        raise Conflict(
            f"The custom property '{current['name']}' cannot become {new_type}: {misfits} "
            f"resource(s) hold values that do not fit (for example {_describe(example)}). "
            "Change or remove those values first.",
            ErrorCode.INCOMPATIBLE_PROPERTY_TYPE,
            misfits=misfits,
        )
    table = resource_custom_values
    for resource_key, value in converted:
        conn.execute(
            update(table)
            .where(table.c.resource_key == resource_key, table.c.property_key == current["key"])
            .values(value=value)
        )
    search.refresh(conn, [resource_key for resource_key, _ in converted])


def by_names(conn: Connection, names: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Definitions by case-folded name, share-locked for the value writes that follow (see
    ``update_definition``); 400 UNKNOWN_REFERENCE naming every unknown name."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return {}
    query = select(custom_properties).where(
        custom_properties.c.name_fold.in_([fold(n) for n in wanted])
    ).with_for_update(read=True)
    found = {r["name_fold"]: _row(r) for r in conn.execute(query).mappings()}
    missing = [n for n in wanted if fold(n) not in found]
    if missing:
        raise BadRequest(
            f"Unknown custom property name(s): {', '.join(repr(m) for m in missing)}; define "
            "them first with POST /customproperty.",
            ErrorCode.UNKNOWN_REFERENCE,
            field="customProperties",
            unknown=missing,
        )
    return found


def values_of(conn: Connection, resource_keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The set values of many resources in one query, as wire CustomProperty objects."""
    keys = list(resource_keys)
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    if not keys:
        return found
    cp, values = custom_properties, resource_custom_values
    query = (
        select(values.c.resource_key, values.c.value, cp.c.name, cp.c.display_name,
               cp.c.description, cp.c.type, cp.c.facet_able)
        .join(cp, cp.c.key == values.c.property_key)
        .where(any_key(conn, values.c.resource_key, keys))
        .order_by(values.c.resource_key, cp.c.name_fold)
    )
    for key, value, name, display_name, description, kind, facet_able in conn.execute(query):
        found[key].append({"name": name, "displayName": display_name,
                           "description": description, "type": kind, "value": value,
                           "facetAble": bool(facet_able)})
    return found


def set_values(conn: Connection, resource_key: str, values: Mapping[str, Any]) -> None:
    """Set (or, for None, remove) values of one resource by property key; already checked."""
    table = resource_custom_values
    if not values:
        return
    conn.execute(
        delete(table).where(
            table.c.resource_key == resource_key, table.c.property_key.in_(list(values))
        )
    )
    rows = [
        {"resource_key": resource_key, "property_key": k, "value": v}
        for k, v in values.items()
        if v is not None
    ]
    if rows:
        conn.execute(insert(table), rows)
    search.refresh(conn, [resource_key])
