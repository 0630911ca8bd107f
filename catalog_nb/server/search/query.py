"""Search phrases parsed into a small tree, so no caller text ever reaches an FTS engine raw.

Text is reduced to *words* (runs of letters and digits, case-folded); everything else, FTS
syntax included (``"``, ``*``, ``NEAR(``, ``-``, ``:``, ``'``), only separates words. The engines
(``store.search``) render each :class:`Term` from these words alone, quoted, so the phrase cannot
change the structure of the engine's query.

BASIC: every white-space separated word must match (a word such as ``orders_q1`` that holds
several words must match as a phrase); ``partial`` makes each a prefix. A phrase without words
matches everything.

ADVANCED: ``field:value`` terms, quoted phrases, ``AND``, ``OR``, ``NOT`` (upper case), parentheses;
adjacent terms are ANDed, a trailing ``*`` makes a term a prefix. A malformed query raises
:class:`QueryError` saying where, and so does one nested deeper than ``MAX_QUERY_DEPTH``
(parentheses and NOTs) or holding more than ``MAX_QUERY_TERMS`` terms: the tree is walked
recursively here and in the store, and each term is a clause of one SQL statement.

>>> parse_basic('orders "2024" *', partial=False)
And(items=(Term(words=('orders',), field=None, prefix=False), Term(words=('2024',), field=None, prefix=False)))
>>> parse_advanced('name:orders AND NOT tag:pii')
And(items=(Term(words=('orders',), field='name', prefix=False), Not(item=Term(words=('pii',), field='tag', prefix=False))))
"""  # noqa: E501

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from catalog_nb.contract import MAX_QUERY_DEPTH, MAX_QUERY_TERMS

#: What counts as a word: letters and digits (the underscore separates, as punctuation does).
_WORD = re.compile(r"[^\W_]+")

#: ADVANCED fields matched as text, and the index column each reads (None: every column).
TEXT_FIELDS = {"name": "name", "path": "path", "description": "descriptions",
               "field": "fields", "tag": "tags"}
#: ADVANCED fields matched against a resource property (case-insensitive equality).
ATTRIBUTE_FIELDS = ("source", "format", "owner", "type")


class QueryError(ValueError):
    """A malformed ADVANCED query; the message says where."""


def words(text: str) -> tuple[str, ...]:
    """The case-folded words of ``text``."""
    return tuple(_WORD.findall(text.casefold()))


def normalise(text: str | None) -> str:
    """Text as the index stores it: its words (case kept) separated by single spaces."""
    return " ".join(_WORD.findall(text or ""))


@dataclass(frozen=True)
class Term:
    """Words that must appear in this order (in ``field``'s column, or any); ``prefix`` makes
    the last one a prefix."""

    words: tuple[str, ...]
    field: str | None = None
    prefix: bool = False


@dataclass(frozen=True)
class Attribute:
    """A resource property equal (case-insensitively) to ``value``."""

    field: str
    value: str


@dataclass(frozen=True)
class And:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    item: Node


@dataclass(frozen=True)
class Everything:
    """Matches every resource (an empty phrase)."""


Node = Union[Term, Attribute, And, Or, Not, Everything]  # noqa: UP007 - a runtime alias


def parse_basic(phrase: str, *, partial: bool) -> Node:
    """The tree of a BASIC phrase: its words ANDed."""
    terms: list[Node] = []
    for chunk in phrase.split():
        found = words(chunk)
        if found:
            terms.append(Term(found, None, partial))
    if not terms:
        return Everything()
    if len(terms) > MAX_QUERY_TERMS:
        raise QueryError(
            f"The phrase has {len(terms)} words; at most {MAX_QUERY_TERMS} are taken."
        )
    return terms[0] if len(terms) == 1 else And(tuple(terms))


# ------------------------------------------------------------------------------ ADVANCED

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<lparen>\() | (?P<rparen>\)) |
        (?P<field>[A-Za-z]+):(?P<fvalue>"[^"]*"|[^\s()"]*) |
        (?P<quoted>"[^"]*") |
        (?P<word>[^\s()"]+) |
        (?P<open>")
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class _Tok:
    kind: str  # LPAREN RPAREN AND OR NOT TERM
    pos: int
    node: Node | None = None


def _term(raw: str, field: str | None, pos: int, partial: bool) -> Node:
    quoted = raw.startswith('"')
    text = raw[1:-1] if quoted else raw
    prefix = partial or (not quoted and text.endswith("*"))
    if field in ATTRIBUTE_FIELDS:
        value = text.strip()
        if not value:
            raise QueryError(f"'{field}:' at position {pos + 1} has no value.")
        return Attribute(field, value)
    found = words(text)
    if not found:
        what = f"'{field}:'" if field else f"'{raw}'"
        raise QueryError(f"{what} at position {pos + 1} holds no word to search for.")
    return Term(found, TEXT_FIELDS[field] if field else None, prefix)


def _tokens(query: str, partial: bool) -> list[_Tok]:
    found: list[_Tok] = []
    at = 0
    while at < len(query):
        match = _TOKEN.match(query, at)
        if match is None or match.end() == at:
            break
        kind = next(k for k in ("lparen", "rparen", "field", "quoted", "word", "open")
                    if match.group(k) is not None)
        pos = match.start(kind)
        at = match.end()
        if kind == "lparen":
            found.append(_Tok("LPAREN", pos))
        elif kind == "rparen":
            found.append(_Tok("RPAREN", pos))
        elif kind == "open":
            raise QueryError(f"The quote at position {pos + 1} is never closed.")
        elif kind == "field":
            field = str(match.group("field")).lower()
            if field not in TEXT_FIELDS and field not in ATTRIBUTE_FIELDS:
                known = ", ".join(f"{f}:" for f in (*TEXT_FIELDS, *ATTRIBUTE_FIELDS))
                raise QueryError(
                    f"Unknown field '{match.group('field')}:' at position {pos + 1}; the "
                    f"fields are {known}."
                )
            value = str(match.group("fvalue"))
            found.append(_Tok("TERM", pos, _term(value, field, pos, partial)))
        elif kind == "quoted":
            found.append(_Tok("TERM", pos, _term(str(match.group("quoted")), None, pos, partial)))
        else:
            word = str(match.group("word"))
            if word in ("AND", "OR", "NOT"):
                found.append(_Tok(word, pos))
            else:
                found.append(_Tok("TERM", pos, _term(word, None, pos, partial)))
    return found


class _Parser:
    def __init__(self, tokens: list[_Tok], length: int) -> None:
        self.tokens = tokens
        self.at = 0
        self.length = length
        self.depth = 0

    def descend(self, tok: _Tok) -> None:
        self.depth += 1
        if self.depth > MAX_QUERY_DEPTH:
            raise QueryError(
                f"The query nests parentheses and NOTs more than {MAX_QUERY_DEPTH} deep "
                f"(at position {tok.pos + 1}); write it with fewer levels."
            )

    def peek(self) -> _Tok | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def where(self) -> str:
        tok = self.peek()
        return f"at position {tok.pos + 1}" if tok else "at the end of the query"

    def expr(self) -> Node:
        items = [self.conjunction()]
        while (tok := self.peek()) is not None and tok.kind == "OR":
            self.at += 1
            items.append(self.conjunction())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def conjunction(self) -> Node:
        items = [self.unary()]
        while (tok := self.peek()) is not None and tok.kind in ("AND", "NOT", "TERM", "LPAREN"):
            if tok.kind == "AND":
                self.at += 1
            items.append(self.unary())
        return items[0] if len(items) == 1 else And(tuple(items))

    def unary(self) -> Node:
        tok = self.peek()
        if tok is None:
            raise QueryError(f"A term is missing {self.where()}.")
        if tok.kind == "NOT":
            self.at += 1
            self.descend(tok)
            node = Not(self.unary())
            self.depth -= 1
            return node
        if tok.kind == "LPAREN":
            self.at += 1
            self.descend(tok)
            inner = self.expr()
            self.depth -= 1
            close = self.peek()
            if close is None or close.kind != "RPAREN":
                raise QueryError(
                    f"The parenthesis opened at position {tok.pos + 1} is not closed "
                    f"({self.where()})."
                )
            self.at += 1
            return inner
        if tok.kind == "TERM" and tok.node is not None:
            self.at += 1
            return tok.node
        raise QueryError(f"Unexpected '{tok.kind if tok.kind != 'RPAREN' else ')'}' "
                         f"{self.where()}.")


def parse_advanced(query: str, *, partial: bool = False) -> Node:
    """The tree of an ADVANCED query; raises QueryError for a malformed one."""
    tokens = _tokens(query, partial)
    if not tokens:
        return Everything()
    terms = sum(1 for t in tokens if t.kind == "TERM")
    if terms > MAX_QUERY_TERMS:
        raise QueryError(f"The query has {terms} terms; at most {MAX_QUERY_TERMS} are taken.")
    parser = _Parser(tokens, len(query))
    node = parser.expr()
    if parser.peek() is not None:
        raise QueryError(f"Unexpected text {parser.where()}.")
    return node


def positive_terms(node: Node, negated: bool = False) -> list[Term]:
    """The text terms that count towards relevance (those not under a NOT)."""
    if isinstance(node, Term):
        return [] if negated else [node]
    if isinstance(node, Not):
        return positive_terms(node.item, not negated)
    if isinstance(node, And | Or):
        return [t for item in node.items for t in positive_terms(item, negated)]
    return []


def pure_conjunction(node: Node) -> list[Term] | None:
    """The terms of a tree that is only text terms ANDed (every BASIC phrase), else None."""
    if isinstance(node, Term):
        return [node]
    if isinstance(node, And) and all(isinstance(i, Term) for i in node.items):
        return [i for i in node.items if isinstance(i, Term)]
    return None
