"""Tag domains and tags: typed frames with the hierarchy as columns, and their writes.

A tag lives in a domain and may have a parent; its ``fullName`` is the dotted path
``Domain.Parent.Child``. Every method takes a domain by name (any case) or key, and a tag by
full name, key, a name only one tag carries, or a record (JSON dict / frame row) with ``key``.

Example::

    cat.create_tag_domain("Finance", "Money matters")
    cat.create_tag("Finance.Revenue", sensitivity="CONFIDENTIAL")
    cat.create_tag("Net", "Finance", parent="Finance.Revenue")
    cat.tags("Finance")[["full_name", "parent", "depth", "sensitivity"]]
    cat.get_tag("Finance.Revenue.Net")["key"]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.errors import NotFoundError
from catalog_nb.client.frames import to_frame
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.refs import pick
from catalog_nb.client.tags.frames import TAG_DOMAIN_COLUMNS, tags_frame
from catalog_nb.client.tags.refs import (
    DomainRef,
    TagIndex,
    TagRef,
    resolve_domain,
    resolve_tag,
    split_full_name,
    tag_body,
    tag_key_of,
)

__all__ = ["DomainRef", "TagRef", "TagsMixin"]


class TagsMixin(CatalogPart):
    """Tag domains and tags; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""


    # -- tag domains ---------------------------------------------------------------------------

    @overload
    def tag_domains(self, *, as_frame: Literal[True] = ...) -> pd.DataFrame: ...
    @overload
    def tag_domains(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def tag_domains(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """The tag domains, one row each (``as_frame=False``: the JSON list).

        Columns: key, name, description, immutable (built-in), tag_count, created, changed.

        Example::

            cat.tag_domains()[["name", "tag_count", "immutable"]]
        """
        records = self.api.list_tag_domains()
        return to_frame(records, TAG_DOMAIN_COLUMNS) if as_frame else records

    def create_tag_domain(self, name: str, description: str | None = None) -> dict[str, Any]:
        """Create a tag domain (Administrator only) and return its JSON.

        Raises:
            ConflictError: ``DUPLICATE_NAME``.

        Example::

            cat.create_tag_domain("Finance", "Money matters")
        """
        body: dict[str, Any] = {"name": name}
        if description is not None:
            body["description"] = description
        created: dict[str, Any] = self.api.create_tag_domain(body)
        return created

    def create_tag_domains(
        self, domains: Iterable[str | Mapping[str, Any]] | pd.DataFrame, *, as_frame: bool = True
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Create several tag domains at once, all or nothing (``POST /tagdomain/list``).

        ``domains``: names, ``{name, description}`` dicts, or a DataFrame with a ``name`` (and
        optionally a ``description``) column. Returns the created domains as a frame.

        Example::

            cat.create_tag_domains(["Finance", {"name": "HR", "description": "People"}])
        """
        items = domains.to_dict("records") if isinstance(domains, pd.DataFrame) else domains
        bodies = []
        for item in items:
            if isinstance(item, str):
                bodies.append({"name": item})
                continue
            body = {"name": item["name"]}
            text = item.get("description")
            if text is not None and not (not isinstance(text, str) and pd.isna(text)):
                body["description"] = text
            bodies.append(body)
        records = self.api.create_tag_domains(bodies)
        return to_frame(records, TAG_DOMAIN_COLUMNS) if as_frame else records

    def update_tag_domain(
        self, domain: DomainRef, *, name: str | None = None, description: str | None = None
    ) -> dict[str, Any]:
        """Rename a tag domain or change its description (``None`` leaves it unchanged).

        Example::

            cat.update_tag_domain("Finance", description="Revenue, costs and budgets")
        """
        key = str(resolve_domain(self.api, domain)["key"])
        body = {"name": name, "description": description}
        body = {field: value for field, value in body.items() if value is not None}
        updated: dict[str, Any] = self.api.update_tag_domain(key, body)
        return updated

    def delete_tag_domain(self, domain: DomainRef) -> None:
        """Delete an empty tag domain.

        Raises:
            ConflictError: ``DOMAIN_NOT_EMPTY`` while it holds tags, ``IMMUTABLE`` (built-in).
        """
        self.api.delete_tag_domain(str(resolve_domain(self.api, domain)["key"]))

    # -- tags: reads ---------------------------------------------------------------------------

    @overload
    def tags(
        self, domain: DomainRef | None = ..., *, as_frame: Literal[True] = ...
    ) -> pd.DataFrame: ...
    @overload
    def tags(
        self, domain: DomainRef | None = ..., *, as_frame: Literal[False]
    ) -> list[dict[str, Any]]: ...
    def tags(
        self, domain: DomainRef | None = None, *, as_frame: bool = True
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Every tag, or those of one domain, one row each in tree order.

        Columns: key, name, full_name, domain, domain_key, parent (full name), parent_key,
        depth (0 directly under the domain), tag_state (VALUE, REGEX), state, enable,
        learning_enabled, immutable, min_score, reg_ex, regex_min_len, regex_max_len,
        synonyms (list), sensitivity, association_count, description, created, changed.
        ``as_frame=False`` returns the service's JSON list as is.

        Example::

            cat.tags("Sensitive").query("tag_state == 'REGEX'")[["name", "reg_ex", "min_score"]]
        """
        key = None if domain is None else str(resolve_domain(self.api, domain)["key"])
        records = self.api.list_tags(key)
        return tags_frame(records) if as_frame else records

    def get_tag(self, tag: TagRef, domain: DomainRef | None = None) -> dict[str, Any]:
        """One tag's JSON (with its direct ``children``), by full name, key or name.

        Example::

            cat.get_tag("Sensitive.EmailAddress")["regEx"]
            cat.get_tag("EmailAddress", domain="Sensitive")
        """
        return resolve_tag(self.api, tag, domain)

    @overload
    def tag_children(self, tag: TagRef, *, as_frame: Literal[True] = ...) -> pd.DataFrame: ...
    @overload
    def tag_children(self, tag: TagRef, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def tag_children(
        self, tag: TagRef, *, as_frame: bool = True
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """The direct children of a tag, with the columns of :meth:`tags`.

        Example::

            cat.tag_children("Finance.Revenue")["full_name"].tolist()
        """
        key = tag_key_of(self.api, tag)
        records = self.api.list_tag_children(key)
        return tags_frame(records) if as_frame else records

    # -- tags: writes --------------------------------------------------------------------------

    def _placement(
        self, name: str, domain: DomainRef | None, parent: TagRef | None
    ) -> dict[str, Any]:
        """``{name, domainKey, parentKey?}`` of a new tag named ``name`` (or a full name)."""
        if parent is not None:
            parent_tag = resolve_tag(self.api, parent, domain)
            if "." in name:
                raise ValueError(f"a tag name cannot contain '.': {name!r} (parent= was given)")
            return {
                "name": name,
                "domainKey": parent_tag["domainKey"],
                "parentKey": parent_tag["key"],
            }
        if domain is not None:
            domain_json = resolve_domain(self.api, domain)
            path = name
        else:
            domain_json, path = split_full_name(name, self.api.list_tag_domains())
        body: dict[str, Any] = {"domainKey": domain_json["key"], "name": path.rsplit(".", 1)[-1]}
        if "." in path:
            parent_full = f"{domain_json['name']}.{path.rsplit('.', 1)[0]}"
            body["parentKey"] = resolve_tag(self.api, parent_full)["key"]
        return body

    def create_tag(
        self,
        name: str,
        domain: DomainRef | None = None,
        parent: TagRef | None = None,
        **props: Any,
    ) -> dict[str, Any]:
        """Create a tag and return its JSON (Steward of the domain, or Administrator).

        Name it by full name (``"Finance.Revenue.Net"``: the domain and parent come from it),
        or by ``name`` with ``domain=`` (a dotted ``name`` is then a path inside the domain)
        and/or ``parent=`` (a tag reference). ``props`` are snake_case tag properties:
        description, rich_description, tag_state (VALUE or REGEX), enable, learning_enabled,
        min_score, reg_ex, regex_min_len, regex_max_len, regex_filter_class, synonyms,
        sensitivity (PUBLIC, INTERNAL, CONFIDENTIAL, RESTRICTED), external_id,
        external_source_name, state.

        Raises:
            ConflictError: ``DUPLICATE_NAME`` (a sibling has this name, in any case).
            BadRequestError: ``INVALID_REGEX`` (with the regex error), ``UNKNOWN_REFERENCE``.

        Example::

            cat.create_tag("Finance.Revenue", sensitivity="CONFIDENTIAL")
            cat.create_tag("Iban", "Finance", tag_state="REGEX", reg_ex=r"^[A-Z]{2}\\d{2}",
                           min_score=0.8, regex_min_len=15, regex_max_len=34)
        """
        body = {**tag_body(props), **self._placement(name, domain, parent)}
        created: dict[str, Any] = self.api.create_tag(body)
        return created

    def create_tags(
        self, tags: Iterable[Mapping[str, Any]] | pd.DataFrame, *, as_frame: bool = True
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Create several tags, parents before children, and return them as a frame.

        Each item (dict or frame row) has ``full_name``, or ``name`` with ``domain`` and
        optionally ``parent`` (full name), plus any property of :meth:`create_tag` (missing
        values are left out). Tags of one depth are created in one ``POST /tag/list`` (all or
        nothing); a parent may be created by the same call.

        Example::

            cat.create_tags(pd.DataFrame({
                "full_name": ["HR.Salary", "HR.Salary.Bonus"],
                "sensitivity": ["RESTRICTED", "RESTRICTED"]}))
        """
        items = tags.to_dict("records") if isinstance(tags, pd.DataFrame) else list(tags)
        domains = self.api.list_tag_domains()
        index = TagIndex(self.api.list_tags())
        levels: dict[int, list[tuple[str, str, dict[str, Any]]]] = {}
        for item in items:
            values = {
                str(k): v
                for k, v in item.items()
                if v is not None and (isinstance(v, list | tuple) or not pd.isna(v))
            }
            full = values.pop("full_name", None)
            if full is None:
                if "domain" not in values or "name" not in values:
                    raise ValueError(f"each tag needs full_name, or name and domain: {item!r}")
                domain = pick(
                    domains,
                    values.pop("domain"),
                    "tag domain",
                    contract.ErrorCode.TAG_DOMAIN_NOT_FOUND.value,
                )
                parent = values.pop("parent", None)
                prefix = str(parent) if parent is not None else str(domain["name"])
                full = f"{prefix}.{values.pop('name')}"
            domain, path = split_full_name(str(full), domains)
            values.pop("domain", None)
            values.pop("name", None)
            body = {**tag_body(values), "domainKey": domain["key"]}
            levels.setdefault(path.count("."), []).append((str(full), path, body))
        created: list[dict[str, Any]] = []
        for depth in sorted(levels):
            bodies = []
            for full, path, body in levels[depth]:
                body["name"] = path.rsplit(".", 1)[-1]
                if depth:
                    parent_tag, reason = index.find(full.rsplit(".", 1)[0])
                    if parent_tag is None:
                        raise NotFoundError(
                            f"cannot create {full!r}: {reason} (its parent)",
                            error_code=contract.ErrorCode.TAG_NOT_FOUND.value,
                        )
                    body["parentKey"] = parent_tag["key"]
                bodies.append(body)
            for tag in self.api.create_tags(bodies):
                index.add(tag)
                created.append(tag)
        return tags_frame(created) if as_frame else created

    def update_tag(
        self,
        tag: TagRef,
        *,
        domain: DomainRef | None = None,
        parent: TagRef | None = None,
        **props: Any,
    ) -> dict[str, Any]:
        """Change some properties of a tag (``None`` leaves one unchanged); returns the tag.

        ``props`` are those of :meth:`create_tag` plus ``name``. ``parent=`` moves the tag under
        another tag (``parent=""`` moves it to the root of its domain); ``domain=`` moves it,
        with its subtree, to another domain. Built-in tags only take enable, min_score,
        learning_enabled and synonyms.

        Raises:
            BadRequestError: ``TAG_CYCLE`` (under itself or a descendant), ``INVALID_REGEX``.
            ConflictError: ``DUPLICATE_NAME``, ``IMMUTABLE``.

        Example::

            cat.update_tag("Sensitive.PostalCode", min_score=0.9)
            cat.update_tag("Finance.Net", parent="Finance.Revenue")
        """
        key = tag_key_of(self.api, tag)
        body = tag_body(props)
        if domain is not None:
            body["domainKey"] = resolve_domain(self.api, domain)["key"]
        if parent == "":
            body["parentKey"] = None
        elif parent is not None:
            body["parentKey"] = tag_key_of(self.api, parent)
        updated: dict[str, Any] = self.api.update_tag(key, body)
        return updated

    def delete_tag(self, tag: TagRef) -> None:
        """Delete a tag and its associations.

        Raises:
            ConflictError: ``TAG_HAS_CHILDREN`` (delete the children first), ``IMMUTABLE``.
        """
        self.api.delete_tag(tag_key_of(self.api, tag))
