"""How join discovery reads column names: words, a table's column prefix, similarity.

``l_orderkey`` of TPC-H's lineitem and ``o_orderkey`` of orders name one key: the table prefix
(``l_``, ``o_``) names the table, and ``key`` glued to ``order`` says "identifier". A generic
name (``id``, ``code``) borrows its resource's name (``id`` of ``customers`` is the customer
id). Two names agree when the longer word set is mostly matched by the other, abbreviations of
three letters or more included (``emp`` / ``employee``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Name similarity two dense integer ranges need to be kept.
RANGE_NAME_SIMILARITY = 0.5
#: Name parts that say "identifier" but not of what: a field named only by them is read with
#: its resource's name ("id" of "customers" is the customer id).
GENERIC_TOKENS = frozenset({"id", "no", "nr", "num", "number", "key", "code", "ref", "fk", "pk",
                            "uid", "uuid"})
#: Key suffixes glued to a word (``custkey``): split off so the word meets ``customer``.
GLUED_SUFFIXES = ("key",)
#: Fewest letters of an abbreviation read as a word's skeleton (``dept``, ``cust``).
SKELETON_LETTERS = 4
#: Longest table prefix of column names (``ps_``), without the underscore.
MAX_PREFIX = 2

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")


def words(text: str) -> list[str]:
    """The words of a name, lower-cased (``customerId`` -> ``customer``, ``id``)."""
    return [w.lower() for w in _WORD.findall(text)]


def singular(word: str) -> str:
    """A plural's singular, roughly (``categories`` -> ``category``)."""
    if len(word) > 3 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _unglued(word: str) -> str:
    """``orderkey`` -> ``order``: a key suffix glued to its word (TPC-H's ``o_orderkey``)."""
    for suffix in GLUED_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def table_prefix(names: Sequence[str]) -> str:
    """The short prefix every column of a table carries (``l_`` of ``l_orderkey``,
    ``l_partkey``...), or ``""``: it names the table, not what the column holds, and would
    halve the similarity of ``l_orderkey`` and ``o_orderkey``.

    >>> table_prefix(["ps_partkey", "ps_suppkey"]), table_prefix(["id", "name"])
    ('ps_', '')
    """
    if len(names) < 2:
        return ""
    heads = {name.split("_", 1)[0] + "_" if "_" in name else "" for name in names}
    head = heads.pop() if len(heads) == 1 else ""
    return head if 1 < len(head) <= MAX_PREFIX + 1 else ""


def name_tokens(field: str, resource: str, prefix: str = "") -> frozenset[str]:
    """The meaningful words of a field's name (without its table's ``prefix``, see
    :func:`table_prefix`); a generic name (``id``, ``code``) borrows its resource's name
    (``customers.csv`` -> ``customer``).

    >>> sorted(name_tokens("id", "customer_contacts"))
    ['contact', 'customer']
    >>> sorted(name_tokens("l_orderkey", "lineitem", "l_"))
    ['order']
    """
    if prefix and field.startswith(prefix) and len(field) > len(prefix):
        field = field[len(prefix):]
    # A nested field is named by its last part's words plus its parents' (session.user).
    found = [_unglued(singular(w)) for w in words(field)]
    meaningful = [w for w in found if w not in GENERIC_TOKENS]
    if not meaningful:
        stem = _EXTENSION.sub("", resource.rsplit("/", 1)[-1])
        meaningful = [singular(w) for w in words(stem) if w not in GENERIC_TOKENS]
    return frozenset(meaningful)


def same_word(a: str, b: str) -> bool:
    """Equal words, or an abbreviation: a prefix of at least three letters (``emp`` /
    ``employee``), or four letters or more found in order from the first (``dept`` /
    ``department``)."""
    if a == b:
        return True
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    if len(short) >= 3 and long_.startswith(short):
        return True
    if len(short) < SKELETON_LETTERS or short[0] != long_[0]:
        return False
    rest = iter(long_)
    return all(letter in rest for letter in short)


def name_similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Share of the longer word set matched by the other (0-1).

    >>> name_similarity(frozenset({"emp"}), frozenset({"employee"}))
    1.0
    """
    if not a or not b:
        return 0.0
    matched = sum(1 for x in a if any(same_word(x, y) for y in b))
    return matched / max(len(a), len(b))
