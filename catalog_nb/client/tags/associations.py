"""Tag associations: which tag applies to which data resource or field, in which state.

``associations(...)`` reads them in long form, one row per association: page by page from
``GET /tagassociation`` (progress bar, ``limit=``, a loud
:class:`~catalog_nb.client.errors.TruncatedResultWarning` when cut short), or, for one
resource (``path=``), from ``/tagassociation/byresource`` / ``byfield``. ``tag(...)`` and
``untag(...)`` tag and untag one resource or field; the bulk forms live in
:mod:`catalog_nb.client.tags.bulk`.

A resource is named by its key, a ``(source, path)`` tuple (source name or key), or a record
(JSON dict, frame row, :class:`~catalog_nb.client.resources.view.Resource`) with ``key``.

Example::

    cat.tag(("demo_files", "crm/customers.csv"), "Sensitive.EmailAddress", field="contact")
    cat.associations("demo_files", state="SUGGESTED", min_weight=0.8)
    cat.associations("demo_files", "crm/customers.csv")[["field", "tag", "state", "weight"]]
    cat.untag(("demo_files", "crm/customers.csv"), "Sensitive.EmailAddress", field="contact")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.api.tags import ASSOCIATION_PAGE_MAX
from catalog_nb.client.errors import NotFoundError
from catalog_nb.client.frames import to_frame
from catalog_nb.client.paging import check_limit, read_pages, warn_truncated
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.resources.sources import SourceRef, resolve_source
from catalog_nb.client.tags.frames import ASSOCIATION_COLUMNS
from catalog_nb.client.tags.refs import TagRef, tag_key_of

__all__ = [
    "DEFAULT_ASSOCIATION_PAGE",
    "STATES",
    "AssociationRef",
    "AssociationsMixin",
    "ResourceRef",
    "association_state",
    "read_associations",
    "resource_by_path",
    "resource_key_of",
]

#: Page size of :meth:`AssociationsMixin.associations`.
DEFAULT_ASSOCIATION_PAGE = 500
#: The three association states.
STATES: tuple[str, ...] = tuple(state.value for state in contract.TagAssociationState)

#: A data resource: key, ``(source, path)``, or a record with ``key``.
ResourceRef = str | tuple[SourceRef, str] | Mapping[str, Any] | pd.Series
#: An association: its key or a record with ``key``.
AssociationRef = str | Mapping[str, Any] | pd.Series


def association_state(value: Any) -> str:
    """The wire spelling of an association state; :class:`ValueError` outside the three.

    >>> association_state("accepted")
    'ACCEPTED'
    """
    text = str(value).strip().upper()
    if text not in STATES:
        raise ValueError(f"invalid state {value!r}; expected one of {', '.join(STATES)}")
    return text


def _present(value: Any) -> bool:
    return value is not None and (isinstance(value, str) or not pd.isna(value))


def resource_by_path(
    api: CatalogApi, source: SourceRef, path: str, call: Callable[[str], Any]
) -> Any:
    """``call(source_name)``, retried with the resolved name when ``source`` was a key."""
    name = str(source) if isinstance(source, str) else str(resolve_source(api, source)["name"])
    try:
        return call(name)
    except NotFoundError as exc:
        if exc.error_code != contract.ErrorCode.DATA_SOURCE_NOT_FOUND.value:
            raise
        resolved = str(resolve_source(api, source)["name"])
        if resolved == name:
            raise
        return call(resolved)


def _location(ref: Any) -> tuple[Any, str] | None:
    """``(source, path)`` a tuple or a record names, or ``None``."""
    if isinstance(ref, tuple | list):
        if len(ref) != 2:
            raise ValueError(f"a resource tuple is (source, path), not {ref!r}")
        return ref[0], str(ref[1])
    source = ref.get("dataSourceName", ref.get("source"))
    path = ref.get("resourcePath", ref.get("path"))
    return (source, str(path)) if _present(source) and _present(path) else None


def resource_key_of(api: CatalogApi, ref: ResourceRef) -> str:
    """The key of the resource ``ref`` names (a lookup only for ``(source, path)``)."""
    if isinstance(ref, str):
        return ref
    if not isinstance(ref, tuple | list):
        key = ref.get("resource_key", ref.get("resourceKey", ref.get("key")))
        if _present(key):
            return str(key)
    where = _location(ref)
    if where is None:
        raise ValueError(f"cannot tell which resource {ref!r} is: no key and no source/path")
    source, path = where
    found = resource_by_path(api, source, path, lambda name: api.get_resource_by_path(name, path))
    return str(found["key"])


def _source_and_path(api: CatalogApi, ref: ResourceRef) -> tuple[Any, str]:
    """The data source (as given: name, key or record) and path of the resource ``ref``."""
    where = None if isinstance(ref, str) else _location(ref)
    if where is not None:
        return where
    found = api.get_resource(resource_key_of(api, ref))
    return str(found["dataSourceName"]), str(found["resourcePath"])


def _weight_at_least(record: Mapping[str, Any], minimum: float) -> bool:
    weight = record.get("weight")
    return weight is not None and float(weight) >= minimum


def _association_key(ref: AssociationRef) -> str:
    if isinstance(ref, str):
        return ref
    key = ref.get("key")
    if not _present(key):
        raise ValueError(f"cannot tell which association {ref!r} is: it has no 'key'")
    return str(key)


def read_associations(
    api: CatalogApi,
    *,
    state: str | None = None,
    tag_key: str | None = None,
    source_key: str | None = None,
    min_weight: float | None = None,
    limit: int | None = None,
    page_size: int = DEFAULT_ASSOCIATION_PAGE,
    progress: bool = False,
    caller: str = "associations",
) -> tuple[list[dict[str, Any]], int]:
    """Page through ``GET /tagassociation`` with its server-side filters.

    Returns ``(records, total)``: at most ``limit`` records and how many matched.
    """
    if not 1 <= page_size <= ASSOCIATION_PAGE_MAX:
        raise ValueError(f"page_size must be between 1 and {ASSOCIATION_PAGE_MAX}")

    def fetch(start: int, size: int, _cursor: str | None) -> Any:
        return api.list_associations(
            state=state,
            tag_key=tag_key,
            data_source_key=source_key,
            min_weight=min_weight,
            start=start,
            page_size=size,
        )

    return read_pages(
        fetch, page_size=page_size, limit=limit, progress=progress, description=caller
    )


class AssociationsMixin(CatalogPart):
    """Association frames, tag and untag; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    @overload
    def associations(
        self,
        source: SourceRef | None = ...,
        path: str | None = ...,
        field: str | None = ...,
        state: str | None = ...,
        tag: TagRef | None = ...,
        min_weight: float | None = ...,
        limit: int | None = ...,
        *,
        page_size: int = ...,
        progress: bool | None = ...,
        as_frame: Literal[True] = ...,
    ) -> pd.DataFrame: ...
    @overload
    def associations(
        self,
        source: SourceRef | None = ...,
        path: str | None = ...,
        field: str | None = ...,
        state: str | None = ...,
        tag: TagRef | None = ...,
        min_weight: float | None = ...,
        limit: int | None = ...,
        *,
        page_size: int = ...,
        progress: bool | None = ...,
        as_frame: Literal[False],
    ) -> list[dict[str, Any]]: ...
    def associations(
        self,
        source: SourceRef | None = None,
        path: str | None = None,
        field: str | None = None,
        state: str | None = None,
        tag: TagRef | None = None,
        min_weight: float | None = None,
        limit: int | None = None,
        *,
        page_size: int = DEFAULT_ASSOCIATION_PAGE,
        progress: bool | None = None,
        as_frame: bool = True,
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Tag associations in long form: one row per (resource or field, tag).

        Filters (ANDed): ``source`` (name or key), ``path`` (one resource of ``source``; its
        resource and field level associations), ``field`` (a field name), ``state``
        (ACCEPTED, REJECTED, SUGGESTED), ``tag`` (full name, key or record), ``min_weight``
        (discovery's confidence, 0..1; associations without a weight never pass it).
        ``limit`` caps the rows (a :class:`TruncatedResultWarning` says when more matched);
        ``progress`` overrides the catalog's progress-bar setting; ``as_frame=False``
        returns the TagAssociationView JSON records.

        Columns: key, source, path, resource_key, field (missing for the resource itself),
        tag (full name), tag_key, domain, state, weight, rules (list), sensitivity, semantic,
        description, created_by, changed_by, created, changed.

        Example::

            cat.associations(state="SUGGESTED", min_weight=0.9)
            cat.associations("demo_sql", "crm.customers", field="email")
        """
        check_limit(limit, "every association")
        wanted = None if state is None else association_state(state)
        tag_key = None if tag is None else tag_key_of(self.api, tag)
        if path is not None:
            if source is None:
                raise ValueError("path= names a resource of a data source: give source= too")
            by_field = field is not None
            records: list[dict[str, Any]] = resource_by_path(
                self.api,
                source,
                path,
                lambda name: (
                    self.api.associations_by_field(name, path, str(field))
                    if by_field
                    else self.api.associations_by_resource(name, path)
                ),
            )
            total = None
        else:
            source_key = None if source is None else str(resolve_source(self.api, source)["key"])
            records, server_total = read_associations(
                self.api,
                state=wanted,
                tag_key=tag_key,
                source_key=source_key,
                min_weight=min_weight,
                limit=None if field is not None else limit,
                page_size=page_size,
                progress=self.progress if progress is None else progress,
                caller="associations",
            )
            total = None if field is not None else server_total
        records = [
            record
            for record in records
            if (wanted is None or record.get("state") == wanted)
            and (tag_key is None or record.get("tagKey") == tag_key)
            and (field is None or (record.get("field") or None) == field)
            and (min_weight is None or _weight_at_least(record, min_weight))
        ]
        if total is None:
            total = len(records)
        if limit is not None and total > limit:
            records = records[:limit]
            warn_truncated("associations", shown=len(records), total=total,
                           noun="associations", because=f"limit={limit}")
        return to_frame(records, ASSOCIATION_COLUMNS) if as_frame else records

    # -- writes --------------------------------------------------------------------------------

    def tag(
        self,
        resource: ResourceRef,
        tag: TagRef,
        field: str | None = None,
        state: str | None = None,
        *,
        semantic: str | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Tag a data resource, or one of its fields, and return the association's JSON.

        ``state`` defaults to ACCEPTED for Stewards and Administrators, SUGGESTED for Analysts.
        Tagging again with another state promotes an existing SUGGESTED or REJECTED
        association; the same state answers it unchanged. (Read one tag with
        :meth:`~catalog_nb.client.tags.tags.TagsMixin.get_tag`.)

        Raises:
            BadRequestError: ``UNKNOWN_FIELD``, or a state outside the three.
            NotFoundError: unknown (or invisible) resource, unknown tag.
            PermissionDeniedError: the tag's domain is not one of your roles' domains.

        Example::

            cat.tag(("demo_files", "crm/customers.csv"), "Sensitive.EmailAddress", "contact")
            cat.tag(res.key, "Finance.Revenue", state="SUGGESTED")
        """
        body: dict[str, Any] = {
            "resourceKey": resource_key_of(self.api, resource),
            "tagKey": tag_key_of(self.api, tag),
        }
        if field is not None:
            body["field"] = field
        if state is not None:
            body["state"] = association_state(state)
        if semantic is not None:
            body["semantic"] = semantic
        if description is not None:
            body["description"] = description
        created: dict[str, Any] = self.api.create_association(body)
        return created

    def untag(self, resource: ResourceRef, tag: TagRef, field: str | None = None) -> dict[str, Any]:
        """Remove a tag from a data resource (``field=None``) or one of its fields.

        Returns the deleted association's JSON.

        Raises:
            NotFoundError: ``TAG_ASSOCIATION_NOT_FOUND`` when the tag is not associated there.

        Example::

            cat.untag(("demo_files", "crm/customers.csv"), "Sensitive.EmailAddress", "contact")
        """
        tag_key = tag_key_of(self.api, tag)
        source, path = _source_and_path(self.api, resource)
        views = resource_by_path(
            self.api, source, path, lambda name: self.api.associations_by_resource(name, path)
        )
        for view in views:
            if view.get("tagKey") == tag_key and (view.get("field") or None) == field:
                self.api.delete_association(str(view["key"]))
                return dict(view)
        where = f"field {field!r} of " if field else ""
        raise NotFoundError(
            f"The tag is not associated with {where}{path!r} of data source {source!r}.",
            error_code=contract.ErrorCode.TAG_ASSOCIATION_NOT_FOUND.value,
        )

    def update_association(
        self,
        association: AssociationRef,
        *,
        state: str | None = None,
        semantic: str | None = None,
        description: str | None = None,
    ) -> dict[str, Any]:
        """Change an association's state, semantic or description (``None``: unchanged).

        Example::

            row = cat.associations(state="SUGGESTED").iloc[0]
            cat.update_association(row, state="REJECTED")
        """
        body: dict[str, Any] = {}
        if state is not None:
            body["state"] = association_state(state)
        if semantic is not None:
            body["semantic"] = semantic
        if description is not None:
            body["description"] = description
        updated: dict[str, Any] = self.api.update_association(_association_key(association), body)
        return updated

    def delete_association(self, association: AssociationRef) -> None:
        """Delete an association by key (or a record with ``key``, e.g. a frame row)."""
        self.api.delete_association(_association_key(association))
