"""Time-bounded regular expression matching and the share of matching values (a tag's weight).

Tag patterns are written by people, so one of them may backtrack catastrophically (``(a|aa)+$``
on ``aaaa…b`` takes longer than the universe on a few dozen characters). Matching therefore runs
with the third-party ``regex`` module, whose matching functions take a ``timeout=`` (seconds) and
raise ``TimeoutError`` from inside the matching loop: no thread, no signal, and the worker
thread that runs the job is never stuck. Each value gets ``timeout``; one (tag, field) pair gets
``budget`` in all, so a pattern that is merely slow on every value cannot stall a job either.

Without the ``regex`` module (it is a dependency of the server, but a trimmed install may lack
it) the standard ``re`` module is used with a thread-free bound instead: patterns whose shape
is known to backtrack exponentially (an unbounded repeat whose body starts with another
unbounded repeat, or holds an alternation) are refused, values are cut to
``FALLBACK_MAX_CHARS``, and a match that took longer than the timeout counts as a timeout after
the fact. That is a best effort; the ``regex`` module is the real bound.
"""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from catalog_nb.server.discovery.checks import Check

try:  # the real time bound; see the module docstring
    _regex: Any = importlib.import_module("regex")
except ImportError:  # pragma: no cover - exercised by monkeypatching in the tests
    _regex = None

_COMPILE_ERRORS: tuple[type[BaseException], ...] = (
    re.error, ValueError, TypeError, OverflowError, RecursionError,
    *((_regex.error,) if _regex is not None else ()),
)
#: Values longer than this are cut before matching when the fallback (``re``) is in use.
FALLBACK_MAX_CHARS = 64


class RegexTimeout(Exception):
    """Matching a value took longer than allowed; the tag is skipped for the field."""


class InvalidPattern(Exception):
    """The pattern does not compile, or cannot be time-bounded (fallback only)."""


def _unsafe_shape(pattern: str) -> str | None:
    """Why ``pattern`` may backtrack exponentially (fallback mode), or None when it looks safe."""
    parser: Any = importlib.import_module("re._parser")
    unbounded = parser.MAXREPEAT
    repeats = {parser.MAX_REPEAT, parser.MIN_REPEAT}
    possessive = getattr(parser, "POSSESSIVE_REPEAT", None)

    def body_items(body: Any) -> list[Any]:
        items = list(body)
        while len(items) == 1 and items[0][0] is parser.SUBPATTERN:
            items = list(items[0][1][-1])
        return items

    def walk(items: Any, in_unbounded: bool) -> str | None:
        for op, arg in items:
            if op in repeats or (possessive is not None and op is possessive):
                _low, high, body = arg
                nested = high is unbounded or high > 1
                inner = body_items(body)
                if nested and inner and inner[0][0] in repeats and inner[0][1][1] is unbounded:
                    return "a repeated group that starts with an unbounded repeat"
                if nested and any(o is parser.BRANCH for o, _ in inner):
                    return "an alternation inside a repeated group"
                found = walk(body, in_unbounded or nested)
                if found:
                    return found
            elif op is parser.SUBPATTERN:
                found = walk(arg[-1], in_unbounded)
                if found:
                    return found
            elif op is parser.BRANCH:
                for alternative in arg[1]:
                    found = walk(alternative, in_unbounded)
                    if found:
                        return found
            elif op is parser.GROUPREF and in_unbounded:
                return "a back-reference inside a repeated group"
        return None

    return walk(parser.parse(pattern), False)


class Matcher:
    """A compiled tag pattern whose ``fullmatch`` is time-bounded (see the module docstring)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.bounded = _regex is not None
        try:
            self._compiled: Any = (_regex or re).compile(pattern)
        except _COMPILE_ERRORS as exc:
            raise InvalidPattern(f"the regular expression does not compile: {exc}") from None
        if _regex is None:
            reason = _unsafe_shape(pattern)
            if reason:
                raise InvalidPattern(
                    f"the regular expression has {reason}, which can backtrack without end, "
                    "and the 'regex' module that would bound its matching time is not installed"
                )

    def fullmatch(self, text: str, timeout: float) -> bool:
        """Whether the whole of ``text`` matches; RegexTimeout after ``timeout`` seconds."""
        if timeout <= 0:
            raise RegexTimeout()
        if self.bounded:
            try:
                return self._compiled.fullmatch(text, timeout=timeout) is not None
            except TimeoutError:
                raise RegexTimeout() from None
        started = time.monotonic()
        found = self._compiled.fullmatch(text[:FALLBACK_MAX_CHARS]) is not None
        if time.monotonic() - started > timeout:
            raise RegexTimeout()
        return found


@dataclass(frozen=True)
class Score:
    """How many of a field's sampled values passed a tag's rule, out of how many."""

    matched: int
    total: int

    @property
    def weight(self) -> float:
        return self.matched / self.total if self.total else 0.0


def score_values(
    values: Iterable[str],
    *,
    matcher: Matcher | None,
    check: Check | None,
    min_len: int | None,
    max_len: int | None,
    min_score: float,
    timeout: float,
    budget: float,
) -> Score | None:
    """The share of ``values`` that pass: stripped, within the length bounds, matching the
    pattern (when there is one) and the value check (when there is one).

    Returns None as soon as the share cannot reach ``min_score`` any more (or there is no
    value), since only a suggestion needs the exact share. Raises RegexTimeout when one value
    takes longer than ``timeout`` seconds or all of them together longer than ``budget``.
    """
    texts = [t for t in (v.strip() for v in values) if t]
    total = len(texts)
    if not total:
        return None
    allowed_misses = total - min_score * total
    misses = matched = 0
    deadline = time.monotonic() + budget
    for text in texts:
        ok = (min_len is None or len(text) >= min_len) and (
            max_len is None or len(text) <= max_len
        )
        if ok and matcher is not None:
            ok = matcher.fullmatch(text, min(timeout, deadline - time.monotonic()))
        if ok and check is not None:
            ok = check.value(text)
        if ok:
            matched += 1
        else:
            misses += 1
            if misses > allowed_misses + 1e-9:
                return None
    return Score(matched, total)
