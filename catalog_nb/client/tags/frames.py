"""Column specs of the tag frames, the tag hierarchy columns, and how tags are looked up.

* :data:`TAG_DOMAIN_COLUMNS`: one row per tag domain (:meth:`Catalog.tag_domains`).
* :data:`TAG_COLUMNS`: one row per tag (:meth:`Catalog.tags`), with the hierarchy as columns:
  ``full_name`` (``Domain.Parent.Child``), ``parent`` (the parent's full name, missing at the
  root), ``parent_key`` and ``depth`` (0 for a tag directly under its domain).
* :data:`ASSOCIATION_COLUMNS`: one row per tag association (:meth:`Catalog.associations`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from catalog_nb.client.frames import Column, to_frame

__all__ = [
    "ASSOCIATION_COLUMNS",
    "TAG_COLUMNS",
    "TAG_DOMAIN_COLUMNS",
    "association_tag_name",
    "tag_depth",
    "tag_parent",
    "tags_frame",
]

#: Columns of :meth:`Catalog.tag_domains`.
TAG_DOMAIN_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("name", "string"),
    Column("description", "string"),
    Column("immutable", "bool"),
    Column("tag_count", "int", "tagCount"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)


def _path_in_domain(tag: Mapping[str, Any]) -> str | None:
    """``Parent.Child`` of ``Domain.Parent.Child`` (the full name without its domain)."""
    full = tag.get("fullName")
    if full is None:
        return None
    full = str(full)
    domain = tag.get("domainName")
    if domain and full.casefold().startswith(str(domain).casefold() + "."):
        return full[len(str(domain)) + 1 :]
    # no domain name to strip: tag names never hold a dot, so the first segment is the domain
    return full.split(".", 1)[1] if "." in full else full


def tag_depth(tag: Mapping[str, Any]) -> int | None:
    """0 for a tag directly under its domain, 1 for its children, ...

    >>> tag_depth({"fullName": "Finance.Revenue.Net", "domainName": "Finance"})
    1
    """
    path = _path_in_domain(tag)
    return None if path is None else path.count(".")


def tag_parent(tag: Mapping[str, Any]) -> str | None:
    """The full name of a tag's parent, ``None`` at the root of its domain.

    >>> tag_parent({"fullName": "Finance.Revenue.Net", "domainName": "Finance"})
    'Finance.Revenue'
    """
    if not tag_depth(tag):
        return None
    return str(tag["fullName"]).rsplit(".", 1)[0]


#: Columns of :meth:`Catalog.tags` and :meth:`Catalog.tag_children`.
TAG_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("name", "string"),
    Column("full_name", "string", "fullName"),
    Column("domain", "string", "domainName"),
    Column("domain_key", "string", "domainKey"),
    Column("parent", "string", tag_parent),
    Column("parent_key", "string", "parentKey"),
    Column("depth", "int", tag_depth),
    Column("tag_state", "string", "tagState"),
    Column("state", "string"),
    Column("enable", "bool"),
    Column("learning_enabled", "bool", "learningEnabled"),
    Column("immutable", "bool"),
    Column("min_score", "float", "minScore"),
    Column("reg_ex", "string", "regEx"),
    # A service answering as the spec types them sends 0 and "" for unset: missing here, as a
    # service that sends null gives (docs/compatibility.md).
    Column("regex_min_len", "int", lambda r: r.get("regexMinLen") or None),
    Column("regex_max_len", "int", lambda r: r.get("regexMaxLen") or None),
    Column("synonyms", "list"),
    Column("sensitivity", "string", lambda r: r.get("sensitivity") or None),
    Column("association_count", "int", "associationCount"),
    Column("description", "string"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)


def association_tag_name(view: Mapping[str, Any]) -> str | None:
    """The full name of an association's tag (``Domain.Tag`` when only the names are sent)."""
    full = view.get("tagFullName")
    if full:
        return str(full)
    name, domain = view.get("tagName"), view.get("domainName")
    if name and domain:
        return f"{domain}.{name}"
    return None if name is None else str(name)


#: Columns of :meth:`Catalog.associations` (one row per association, long form).
ASSOCIATION_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("source", "string", "dataSourceName"),
    Column("path", "string", "resourcePath"),
    Column("resource_key", "string", "resourceKey"),
    Column("field", "string", lambda r: r.get("field") or None),
    Column("tag", "string", association_tag_name),
    Column("tag_key", "string", "tagKey"),
    Column("domain", "string", "domainName"),
    Column("state", "string"),
    Column("weight", "float"),
    Column("rules", "list"),
    Column("sensitivity", "string"),
    Column("semantic", "string"),
    Column("description", "string"),
    Column("created_by", "string", "createdBy"),
    Column("changed_by", "string", "changedBy"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)


def tags_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The frame of :data:`TAG_COLUMNS`, sorted by domain and full name (a tree's reading
    order: every tag right after its parent)."""
    rows = sorted(
        records,
        key=lambda r: (
            str(r.get("domainName") or "").casefold(),
            [part.casefold() for part in str(r.get("fullName") or "").split(".")],
        ),
    )
    return to_frame(rows, TAG_COLUMNS)
