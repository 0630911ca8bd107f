"""Small helpers every store module shares: keys, clocks, name folding, unique violations,
and the look-alike rule for people-facing names (:func:`claim_name`)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import orjson
from sqlalchemy import ColumnElement, Connection, Table, Text, any_, bindparam, func, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import IntegrityError
from sqlalchemy.types import Integer

from catalog_nb.contract import MAX_NAME_LENGTH, ErrorCode
from catalog_nb.server.confusables import canonical_name, name_keys
from catalog_nb.server.errors import BadRequest, Conflict

#: Keys per ``IN (...)`` list: well under the oldest SQLite limit of 999 bound parameters.
IN_CHUNK = 500


def chunks(keys: Sequence[str], size: int = IN_CHUNK) -> Iterator[Sequence[str]]:
    """``keys`` in slices of at most ``size``, one ``IN (...)`` list each.

    >>> [list(c) for c in chunks(["a", "b", "c"], 2)]
    [['a', 'b'], ['c']]
    """
    for at in range(0, len(keys), size):
        yield keys[at:at + size]


#: Up to this many keys, ``any_key`` binds each as a parameter of its own (what a plan with a
#: literal list handles best); more go as one bound value.
FEW_KEYS = 8


def any_key(conn: Connection, column: Any, keys: Sequence[Any]) -> ColumnElement[bool]:
    """``column IN keys``, with many keys as one bound value (an array on PostgreSQL, a JSON
    text on SQLite); keys are text, or integers for an integer column.

    A page's thousand keys as a thousand bound parameters cost more than the query itself:
    SQLAlchemy renders each (with a cast on PostgreSQL) and psycopg parses each placeholder,
    some 15 ms a query on PostgreSQL. (Unnesting a JSON text there instead led the planner
    astray: five times slower than the array.)
    """
    listed = list(keys)
    if len(listed) <= FEW_KEYS:
        return column.in_(listed)
    if conn.dialect.name == "postgresql":
        element = column.type if isinstance(column.type, Integer) else Text()
        return column == any_(bindparam(None, listed, type_=postgresql.ARRAY(element)))
    values = func.json_each(bindparam(None, orjson.dumps(listed).decode(), type_=Text))
    return column.in_(select(values.table_valued("value").c.value))


def code_points(conn: Connection, column: Any) -> Any:
    """``column`` compared and ordered by code point on every server, as SQLite compares text
    (PostgreSQL's locale collations skip punctuation and fold case)."""
    return column.collate("C") if conn.dialect.name == "postgresql" else column


def stored_json(value: Any) -> bytes | str:
    """The text of a JSON column's value on PostgreSQL (the engine's ``json_serializer``):
    orjson's compact UTF-8, or the stdlib's text for what orjson refuses (an integer wider than
    64 bits, a key that is not text), so whatever was stored before is stored still.

    A large job's rows are mostly JSON (field statistics, sketches, search criteria): the stdlib
    encoder took a fifth of the bulk fixture's time on PostgreSQL.

    >>> stored_json({"min": 1, "max": 2 ** 70})
    '{"min": 1, "max": 1180591620717411303424}'
    """
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value)


def new_key() -> str:
    """A fresh opaque key."""
    return uuid.uuid4().hex


def now_ms() -> int:
    """The current time in epoch milliseconds."""
    return int(time.time() * 1000)


def fold(name: str) -> str:
    """The case-insensitive form of a name, as kept in ``name_fold`` columns."""
    return name.casefold()


#: Key of the PostgreSQL advisory lock that serialises changes to role memberships.
_MEMBERSHIP_LOCK = 7_242_001
#: Keys of the PostgreSQL advisory locks that serialise name changes, per table.
_NAME_LOCKS = {"users": 7_242_002, "roles": 7_242_003}


def advisory_lock(conn: Connection, key: int) -> None:
    """Serialise the transactions that take lock ``key``, until this one ends.

    PostgreSQL's READ COMMITTED lets two writers each see the rows before the other's change:
    two "delete these, insert those" writes of the same rows would both insert. SQLite already
    runs one writer at a time (BEGIN IMMEDIATE), so it needs nothing.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})


def lock_memberships(conn: Connection) -> None:
    """Serialise transactions that take roles away, until the end of this transaction.

    The "at least one role" and "at least one administrator" rules count rows after a change.
    Under PostgreSQL's READ COMMITTED two concurrent removals could each see the other's row
    and both pass; this lock makes the second wait and then count what the first committed.
    SQLite already serialises writers (BEGIN IMMEDIATE), so it needs nothing here.
    """
    advisory_lock(conn, _MEMBERSHIP_LOCK)


@contextmanager
def unique_name(kind: str, name: str) -> Iterator[None]:
    """Turn a unique-constraint violation inside the block into a 409 naming the duplicate.

    The constraint, not a prior SELECT, decides: two requests racing to create the same name
    cannot both succeed.
    """
    try:
        yield
    except IntegrityError as exc:
        raise Conflict(
            f"A {kind} named '{name}' already exists (names are compared case-insensitively).",
            ErrorCode.DUPLICATE_NAME,
        ) from exc


def name_forms(name: str) -> list[str]:
    """The ``name_fold`` values a name looked up may be stored under: its canonical (NFKC) form,
    and the form as given, which names stored before names were normalised still have."""
    return list(dict.fromkeys([fold(canonical_name(name)), fold(name)]))


def claim_name(conn: Connection, table: Table, kind: str, name: str,
               key: str | None = None) -> str:
    """The canonical (NFKC) form of a new or changed ``name`` in ``table`` (users, roles),
    once no other row's name looks like it; call inside the write that stores it.

    400 INVALID_PAYLOAD when normalising makes the name too long. 409 CONFUSABLE_NAME, naming
    the existing name, when another row (not ``key``) has the same confusable skeleton
    (:func:`~catalog_nb.server.confusables.name_keys`) without being the same name folded:
    an exact duplicate is left to the unique constraint (409 DUPLICATE_NAME). On PostgreSQL an
    advisory lock serialises these checks until the transaction ends, so two look-alikes
    created at once cannot both pass; SQLite already runs one writer at a time.
    """
    canonical = canonical_name(name)
    if not canonical or len(canonical) > MAX_NAME_LENGTH:
        raise BadRequest(
            f"The {kind} name {name!r} is {len(canonical)} characters once normalised (NFKC); "
            f"a name has 1 to {MAX_NAME_LENGTH}.",
            ErrorCode.INVALID_PAYLOAD,
        )
    advisory_lock(conn, _NAME_LOCKS.get(table.name, _NAME_LOCKS["users"]))
    wanted = name_keys(canonical)
    folded = fold(canonical)
    rows = conn.execute(select(table.c.key, table.c.name, table.c.name_fold))
    for other_key, other_name, other_fold in rows:
        if other_key == key or other_fold == folded:
            continue
        if wanted & name_keys(str(other_name)):
            raise Conflict(
                f"The {kind} name '{canonical}' looks like the existing {kind} name "
                f"'{other_name}' (they differ only in look-alike characters); choose a name "
                "that cannot be mistaken for it.",
                ErrorCode.CONFUSABLE_NAME,
                existing=str(other_name),
            )
    return canonical


def loads_many(texts: Sequence[str | bytes | None]) -> list[Any]:
    """Decode many JSON texts in one call (a missing text is None).

    One ``orjson.loads`` over the texts joined into an array costs a fraction of a decoder call
    per value. A text orjson refuses (``NaN``, which Python's encoder writes and SQLite keeps)
    sends the batch to the stdlib decoder, which reads it; the answer's encoder writes it as null.
    """
    if not texts:
        return []
    parts = [t.decode() if isinstance(t, bytes) else ("null" if t is None else t) for t in texts]
    joined = "[" + ",".join(parts) + "]"
    try:
        values: list[Any] = orjson.loads(joined)
    except orjson.JSONDecodeError:
        values = json.loads(joined)
    return values
