"""Continuation cursors: the opaque ``cursor`` / ``nextCursor`` of the paged endpoints.

A cursor is URL-safe base64 of a small JSON array: the cursor's kind and version, a
fingerprint of the query it continues, the position the next page starts at, the total
counted when the paging began, and the kind's own resume point (for the metadata query, the
sort key of the last row sent: source name folded, source key, path). It is not signed: all it
can name is a place in an ordering, and every page still applies the caller's visibility.

Anything that is not a cursor of the right kind for the same query is refused with 400
``INVALID_CURSOR`` and a message saying what to do (start again without a cursor).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from typing import Any

import orjson

from catalog_nb.contract import ErrorCode
from catalog_nb.server.errors import BadRequest

__all__ = ["Cursor", "decode_cursor", "encode_cursor", "fingerprint"]

#: The version of the cursor format; a cursor of another version is refused.
VERSION = 1
#: Longest cursor accepted (a resume point holds a path, which the store bounds anyway).
MAX_CURSOR_LENGTH = 16_384


@dataclass(frozen=True)
class Cursor:
    """Where the next page starts: ``position`` rows were sent before it, ``total`` rows
    matched when the paging began, and ``after`` is the kind's resume point."""

    kind: str
    query: str
    position: int
    total: int
    after: tuple[Any, ...]


def fingerprint(*parts: Any) -> str:
    """A short digest of what a query selects (its filters, not its page size or views)."""
    raw = orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(raw).hexdigest()[:16]


def encode_cursor(cursor: Cursor) -> str:
    """The opaque text form of ``cursor``."""
    raw = orjson.dumps([cursor.kind, VERSION, cursor.query, cursor.position, cursor.total,
                        list(cursor.after)])
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _invalid(why: str) -> BadRequest:
    return BadRequest(
        f"The cursor is not valid here: {why}. Pass back the nextCursor of the previous page of "
        "the same query unchanged, or start again without a cursor.",
        ErrorCode.INVALID_CURSOR,
        field="cursor",
    )


def decode_cursor(text: str, kind: str, query: str | None, arity: int) -> Cursor:
    """The cursor in ``text``; 400 INVALID_CURSOR unless it is a ``kind`` cursor of this
    ``query`` (any query when None) whose resume point has ``arity`` parts."""
    if not text or len(text) > MAX_CURSOR_LENGTH:
        raise _invalid("it is empty or too long")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        value = orjson.loads(raw)
    except (binascii.Error, ValueError, orjson.JSONDecodeError):
        raise _invalid("it cannot be read") from None
    if not (isinstance(value, list) and len(value) == 6):
        raise _invalid("it cannot be read")
    found_kind, version, found_query, position, total, after = value
    if found_kind != kind or version != VERSION:
        raise _invalid("it belongs to another endpoint or an older version of the service")
    if not isinstance(found_query, str) or (query is not None and found_query != query):
        raise _invalid("it was made for a query with other filters")
    if not (type(position) is int and type(total) is int and position >= 0
            and total >= 0 and isinstance(after, list) and len(after) == arity
            # PostgreSQL text cannot hold a NUL: a forged one must not reach the store.
            and all(type(part) is int or (type(part) is str and "\x00" not in part)
                    for part in after)):
        raise _invalid("it cannot be read")
    return Cursor(kind, found_query, position, total, tuple(after))


#: The kind of the stored search results' cursors (``/search/page``).
SEARCH_CURSOR = "search"


def search_cursor(search_key: str, position: int, total: int, last_key: str) -> str | None:
    """The ``nextCursor`` of a page of a stored search result that ends at ``position`` (None
    when nothing follows). A stored result is a snapshot of ordered keys, so the position in it
    is a keyset of its own; the last key sent is kept to tell a forged position."""
    if position >= total:
        return None
    return encode_cursor(Cursor(SEARCH_CURSOR, search_key, position, total, (last_key,)))


def resume_search(text: str, search_key: str | None) -> Cursor:
    """The decoded ``/search/page`` cursor; 400 INVALID_CURSOR for anything else, or for the
    cursor of another search than the ``key`` the request names."""
    cursor = decode_cursor(text, SEARCH_CURSOR, None, 1)
    if search_key is not None and search_key != cursor.query:
        raise _invalid("it continues another search than the key sent with it")
    return cursor


def check_resumed(cursor: Cursor, ordered: list[list[Any]]) -> None:
    """400 INVALID_CURSOR unless ``cursor`` points just after the key it says it follows."""
    at = cursor.position
    if not (0 < at <= len(ordered) and ordered[at - 1][0] == cursor.after[0]):
        raise _invalid("it does not point into this search's results")
