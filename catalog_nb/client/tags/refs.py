"""How tags and tag domains are named, looked up, and written on the wire.

* :func:`resolve_domain` / :func:`resolve_tag`: one domain or tag from a name, full name, key
  or record (a request or two each);
* :class:`TagIndex`: many lookups in one ``GET /tag`` answer (the bulk workflows);
* :func:`tag_body`: the camelCase body of a tag from snake_case keywords.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.errors import NotFoundError
from catalog_nb.client.refs import pick

__all__ = [
    "TAG_FIELDS",
    "DomainRef",
    "TagIndex",
    "TagRef",
    "ref_text",
    "resolve_domain",
    "resolve_tag",
    "split_full_name",
    "tag_body",
    "tag_key_of",
]

#: A tag domain as callers name it: its name, its key, or a record with ``key``.
DomainRef = str | Mapping[str, Any] | pd.Series
#: A tag as callers name it: full name, key, unique name, or a record with ``key``.
TagRef = str | Mapping[str, Any] | pd.Series

#: Python keyword -> wire field of a tag, for :meth:`TagsMixin.create_tag` / ``update_tag``.
TAG_FIELDS: dict[str, str] = {
    "name": "name",
    "description": "description",
    "rich_description": "richDescription",
    "tag_state": "tagState",
    "state": "state",
    "enable": "enable",
    "learning_enabled": "learningEnabled",
    "min_score": "minScore",
    "reg_ex": "regEx",
    "regex_min_len": "regexMinLen",
    "regex_max_len": "regexMaxLen",
    "regex_filter_class": "regexFilterClass",
    "synonyms": "synonyms",
    "sensitivity": "sensitivity",
    "external_id": "externalId",
    "external_source_name": "externalSourceName",
}
_UPPER = frozenset({"tag_state", "state", "sensitivity"})


def tag_body(props: Mapping[str, Any]) -> dict[str, Any]:
    """Wire body from snake_case ``props`` (``None`` values left out); unknown names raise
    :class:`TypeError`.

    >>> tag_body({"tag_state": "regex", "reg_ex": "^[0-9]{5}$", "min_score": 0.8})
    {'tagState': 'REGEX', 'regEx': '^[0-9]{5}$', 'minScore': 0.8}
    """
    unknown = sorted(set(props) - set(TAG_FIELDS))
    if unknown:
        raise TypeError(
            f"unknown tag propert(ies) {', '.join(unknown)}; expected some of "
            f"{', '.join(sorted(TAG_FIELDS))} (and domain=, parent=)"
        )
    body: dict[str, Any] = {}
    for name, value in props.items():
        if value is None:
            continue
        if name in _UPPER:
            value = str(value).upper()
        elif name == "synonyms":
            value = [value] if isinstance(value, str) else [str(v) for v in value]
        body[TAG_FIELDS[name]] = value
    return body


def resolve_domain(api: CatalogApi, ref: DomainRef) -> dict[str, Any]:
    """The TagDomain JSON ``ref`` names (name in any case, or key).

    Raises :class:`NotFoundError` (``TAG_DOMAIN_NOT_FOUND``) naming the known domains.
    """
    code = contract.ErrorCode.TAG_DOMAIN_NOT_FOUND.value
    return pick(api.list_tag_domains(), ref, "tag domain", code)


def resolve_tag(api: CatalogApi, ref: TagRef, domain: DomainRef | None = None) -> dict[str, Any]:
    """The Tag JSON ``ref`` names: a record's ``key``, else a full name, a name (within
    ``domain`` when given) or a key.

    Raises :class:`NotFoundError` (``TAG_NOT_FOUND``) when nothing matches.
    """
    key, text = ref_text(ref)
    if key is not None:
        answer: dict[str, Any] = api.get_tag(key)
        return answer
    assert text is not None
    domain_name = None if domain is None else str(resolve_domain(api, domain)["name"])
    try:
        answer = api.get_tag_by_name(text, domain_name)
        return answer
    except NotFoundError as by_name:
        if domain_name is None:
            try:
                answer = api.get_tag(text)
                return answer
            except NotFoundError:
                pass
        where = f" in domain {domain_name!r}" if domain_name else ""
        raise NotFoundError(
            f"No tag is named or keyed {text!r}{where}; cat.tags() lists them.",
            error_code=contract.ErrorCode.TAG_NOT_FOUND.value,
            response=by_name.response,
        ) from by_name


def tag_key_of(api: CatalogApi, ref: TagRef, domain: DomainRef | None = None) -> str:
    """The key of the tag ``ref`` names; a record's ``key`` is taken without a request."""
    key, _ = ref_text(ref)
    return key if key is not None else str(resolve_tag(api, ref, domain)["key"])


def split_full_name(full_name: str, domains: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """``(domain, "Parent.Child")`` of ``Domain.Parent.Child`` (the longest matching domain)."""
    folded = full_name.casefold()
    matches = [d for d in domains if folded.startswith(str(d.get("name")).casefold() + ".")]
    if not matches:
        known = ", ".join(sorted(str(d.get("name")) for d in domains)) or "none"
        raise NotFoundError(
            f"{full_name!r} does not start with a tag domain's name followed by '.'; give "
            f"domain= or a full name Domain.Parent.Name (domains: {known}).",
            error_code=contract.ErrorCode.TAG_DOMAIN_NOT_FOUND.value,
        )
    domain = max(matches, key=lambda d: len(str(d.get("name"))))
    return domain, full_name[len(str(domain["name"])) + 1 :]




def ref_text(ref: Any) -> tuple[str | None, str | None]:
    """``(key, text)`` of a reference: a record's ``key`` (and its ``fullName`` or ``name``),
    or ``(None, ref)`` for a plain string."""
    if isinstance(ref, str):
        return None, ref
    getter = getattr(ref, "get", None)
    if getter is None:
        raise TypeError(f"expected a name, a key or a record with 'key', not {ref!r}")

    def clean(value: Any) -> str | None:
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            return None
        return str(value)

    key = clean(getter("key"))
    text = clean(getter("fullName")) or clean(getter("full_name")) or clean(getter("name"))
    if key is None and text is None:
        raise ValueError(f"cannot tell which object {ref!r} is: it has no 'key' or name")
    return key, text


class TagIndex:
    """The tags of one ``GET /tag`` answer, found by key, full name or unique name.

    Example::

        index = TagIndex(cat.api.list_tags())
        index.find("sensitive.emailaddress")     # -> (tag JSON, None)
        index.find("Nope")                       # -> (None, "unknown tag 'Nope'")
    """

    def __init__(self, tags: Sequence[Mapping[str, Any]]) -> None:
        self.tags = [dict(tag) for tag in tags]
        self.by_key = {str(tag["key"]): tag for tag in self.tags if tag.get("key")}
        self.by_full: dict[str, dict[str, Any]] = {}
        self.by_folded: dict[str, list[dict[str, Any]]] = {}
        self.by_name: dict[str, list[dict[str, Any]]] = {}
        for tag in self.tags:
            full = str(tag.get("fullName") or "")
            self.by_full[full] = tag
            self.by_folded.setdefault(full.casefold(), []).append(tag)
            self.by_name.setdefault(str(tag.get("name") or "").casefold(), []).append(tag)

    def __len__(self) -> int:
        return len(self.tags)

    def add(self, tag: Mapping[str, Any]) -> None:
        """Index one more tag (one just created)."""
        record = dict(tag)
        self.tags.append(record)
        self.by_key[str(record["key"])] = record
        full = str(record.get("fullName") or "")
        self.by_full[full] = record
        self.by_folded.setdefault(full.casefold(), []).append(record)
        self.by_name.setdefault(str(record.get("name") or "").casefold(), []).append(record)

    def find(self, ref: Any) -> tuple[dict[str, Any] | None, str | None]:
        """``(tag, None)`` for the tag ``ref`` names, or ``(None, reason)``.

        ``ref`` is a key, a full name (exact, then any case), a name only one tag carries, or
        a record with ``key`` / ``fullName``.
        """
        key, text = ref_text(ref)
        if key is not None and key in self.by_key:
            return self.by_key[key], None
        if text is None:
            return None, f"unknown tag key {key!r}"
        if text in self.by_full:
            return self.by_full[text], None
        if text in self.by_key:
            return self.by_key[text], None
        for candidates in (self.by_folded.get(text.casefold()), self.by_name.get(text.casefold())):
            if candidates and len(candidates) == 1:
                return candidates[0], None
            if candidates:
                names = ", ".join(sorted(str(c.get("fullName")) for c in candidates))
                return None, f"ambiguous tag {text!r}: give its full name ({names})"
        return None, f"unknown tag {text!r}"
