"""Names people could mistake for one another: NFKC normalisation and Unicode TR39 skeletons.

User and role names are stored NFKC-normalised (:func:`canonical_name`), so ``admin`` typed in
fullwidth letters (U+FF41...) *is* ``admin`` and meets the unique name rule. Look-alikes that
NFKC leaves alone (``admin`` with a Cyrillic a, U+0430) are caught by comparing confusable
skeletons (:func:`skeleton`, UTS #39 section 4): NFD, default-ignorable code points removed,
every character replaced by its prototype, NFD again.

The prototypes come from the Unicode confusables data that ``confusable-homoglyphs`` ships
(``confusables.json``, generated from ``confusables.txt``). That file records every line
``source -> prototype`` in both directions, so the direction is recovered here: a source is
one code point with a single entry; a prototype is a sequence, or holds every source that maps
to it. When two code points name only each other the file cannot tell which is the prototype,
and either serves: both map to the smaller one, which keeps "same skeleton" meaning "confusable".

Example::

    >>> canonical_name("\\uff41\\uff44\\uff4d\\uff49\\uff4e")
    'admin'
    >>> skeleton("\\u0430dmin") == skeleton("admin")
    True
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache

__all__ = ["canonical_name", "name_keys", "skeleton"]

#: Default_Ignorable_Code_Point (Unicode DerivedCoreProperties): characters that show nothing.
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
#: Marks the generator of confusables.json wrapped around right-to-left glyphs.
_DIRECTION_MARKS = str.maketrans("", "", "\u200e\u200f")


def canonical_name(name: str) -> str:
    """``name`` as it is stored and compared: NFKC-normalised and trimmed."""
    return unicodedata.normalize("NFKC", name).strip()


_IGNORED = frozenset(chr(p) for low, high in _IGNORABLE for p in range(low, high + 1))


@cache
def _prototypes() -> dict[str, str]:
    """Code point -> prototype (a string), as :func:`skeleton` applies it."""
    # Imported here: 900 KB of JSON, read only once a name is first compared.
    from confusable_homoglyphs import confusables

    graph: dict[str, set[str]] = {}
    for key, entries in confusables.confusables_data.items():
        glyphs = graph.setdefault(key.translate(_DIRECTION_MARKS), set())
        glyphs.update(str(e["c"]).translate(_DIRECTION_MARKS) for e in entries)
    mapping: dict[str, str] = {}
    for char, glyphs in graph.items():
        if len(char) != 1 or len(glyphs) != 1:
            continue
        (other,) = glyphs
        if len(other) != 1 or len(graph.get(other, ())) > 1:
            mapping[char] = other
        elif other != char:
            mapping[char] = min(char, other)
    return {c: p for c, p in mapping.items() if c != p}


def skeleton(text: str) -> str:
    """The TR39 confusable skeleton of ``text``: equal skeletons look alike."""
    prototypes = _prototypes()
    current = unicodedata.normalize("NFD", "".join(c for c in text if c not in _IGNORED))
    # Applied until nothing changes: a prototype chosen for an ambiguous pair may itself sit
    # inside another character's prototype. Two rounds settle it; four is a safe bound.
    for _ in range(4):
        mapped = "".join(prototypes.get(c, c) for c in current if c not in _IGNORED)
        mapped = unicodedata.normalize("NFD", mapped)
        if mapped == current:
            break
        current = mapped
    return current


@lru_cache(maxsize=65_536)
def name_keys(name: str) -> frozenset[str]:
    """What two case-insensitive names must not share: the skeleton of the name as written
    (``Iris`` looks like ``lris``) and of its case fold (``ADMIN`` with a Cyrillic capital A is
    a case of ``admin`` with a Cyrillic a, which looks like ``admin``). Computed on the
    canonical form."""
    canonical = canonical_name(name)
    return frozenset({skeleton(canonical), skeleton(canonical.casefold())})
