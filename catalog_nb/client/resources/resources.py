"""Data resources: the paged metadata frame, one resource, field statistics, and annotations.

``resources(**filters)`` pages through ``GET /dataresource/metadata`` (progress bar, ``limit=``,
a :class:`~catalog_nb.client.errors.TruncatedResultWarning` when cut short); the keyword filters
are mapped onto the query as :mod:`catalog_nb.client.resources.query` documents. The columns are
those of :mod:`catalog_nb.client.resources.frames`.

Example::

    cat.resources("demo_files", type="file", format=["csv", "parquet"])
    cat.resource("demo_files", "crm/customers.csv")
    cat.fields("demo_files", "crm/customers.csv").query("density < 0.9")
    cat.fields(source="demo_sql")            # every field of every table, long form
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.errors import NotFoundError
from catalog_nb.client.paging import check_limit, gc_paused, read_pages, warn_truncated
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.refs import pick
from catalog_nb.client.resources.arrow_frame import ACCEPT as ARROW_ACCEPT
from catalog_nb.client.resources.arrow_frame import arrow_available, decode_page, is_arrow
from catalog_nb.client.resources.frames import FRAME_WIRE_PROPERTIES, fields_frame
from catalog_nb.client.resources.paged_frame import PagedFrame
from catalog_nb.client.resources.query import ResourceFilters, annotation_body, build_query
from catalog_nb.client.resources.sources import SourceRef, resolve_source
from catalog_nb.client.resources.view import Resource

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["DEFAULT_PAGE_SIZE", "ResourceRef", "ResourcesMixin"]

#: Page size of :meth:`ResourcesMixin.resources`: the largest the service allows (1..1000), so
#: 100,000 resources are 100 round trips.
DEFAULT_PAGE_SIZE = contract.METADATA_PAGE_MAX

#: A resource as callers name it: its key, or a JSON dict / frame row / Resource with ``key``.
ResourceRef = str | Mapping[str, Any] | pd.Series


def _record_key(ref: Any) -> str | None:
    """The ``key`` of a record-like reference, or ``None`` for a plain string."""
    if isinstance(ref, str):
        return None
    key = ref.get("key") if hasattr(ref, "get") else None
    if key is None or (not isinstance(key, str) and pd.isna(key)):
        raise ValueError(f"cannot tell which resource {ref!r} is: it has no 'key'")
    return str(key)


class ResourcesMixin(CatalogPart):
    """Data resource frames and writes; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    #: Whether :meth:`resources` asks for its pages in the Arrow layout where pyarrow is
    #: installed (client/resources/arrow_frame.py); False reads them as JSON (the same frame,
    #: slower).
    arrow_pages: bool = True

    # -- helpers -------------------------------------------------------------------------------

    def _source_names(self, refs: list[Any]) -> list[str]:
        code = contract.ErrorCode.DATA_SOURCE_NOT_FOUND.value
        sources = self.api.list_sources()
        return [str(pick(sources, ref, "data source", code)["name"]) for ref in refs]

    def _folder_keys(self, refs: list[Any]) -> list[str]:
        code = contract.ErrorCode.VIRTUAL_FOLDER_NOT_FOUND.value
        folders = self.api.list_virtual_folders()
        return [str(pick(folders, ref, "virtual folder", code)["key"]) for ref in refs]

    def _by_path(self, source: SourceRef, path: str, call: Any) -> dict[str, Any]:
        """``call(source_name)``, retried with the source's name when ``source`` was a key."""
        name = source if isinstance(source, str) else None
        if name is None:
            name = str(resolve_source(self.api, source)["name"])
        try:
            answer: dict[str, Any] = call(name)
        except NotFoundError as exc:
            if exc.error_code != contract.ErrorCode.DATA_SOURCE_NOT_FOUND.value:
                raise
            resolved = str(resolve_source(self.api, source)["name"])
            if resolved == name:
                raise
            answer = call(resolved)
        return answer

    def _resource_json(self, source: SourceRef | ResourceRef, path: str | None) -> dict[str, Any]:
        if path is None:
            key = _record_key(source)
            answer: dict[str, Any] = self.api.get_resource(key if key is not None else str(source))
            return answer
        return self._by_path(source, path, lambda name: self.api.get_resource_by_path(name, path))

    def _read_metadata(
        self,
        filters: Mapping[str, Any],
        *,
        fields: bool,
        tags: bool,
        limit: int | None,
        page_size: int | None,
        progress: bool | None,
        caller: str,
        keep: Any = None,
        properties: Iterable[str] = (),
        arrow: bool = False,
    ) -> list[Any]:
        check_limit(limit, "every resource")
        largest = contract.ARROW_PAGE_MAX if arrow else contract.METADATA_PAGE_MAX
        # By default the first page is one any service takes; once the service has answered in
        # the Arrow layout, the pages are the largest that layout takes (without a limit).
        grow = arrow and page_size is None and limit is None
        page_size = contract.METADATA_PAGE_MAX if page_size is None else page_size
        if not 1 <= page_size <= largest:
            raise ValueError(f"page_size must be between 1 and {largest}"
                             + (" (10000 for a frame without fields or tags, where pyarrow is "
                                "installed)" if not arrow else ""))
        query = build_query(
            {name: value for name, value in filters.items() if value is not None},
            source_names=self._source_names,
            folder_keys=self._folder_keys,
            fields=fields,
            tags=tags,
        )
        arguments = query.arguments()
        accept = ARROW_ACCEPT if arrow else None
        grown: list[int] = []  # the page size once the service answered Arrow

        def fetch(start: int, size: int, cursor: str | None) -> Any:
            answer = self.api.resource_metadata(**arguments, page_size=grown[0] if grown else size,
                                                start=start, cursor=cursor, decode=False,
                                                properties=properties, accept=accept)
            if grow and not grown and is_arrow(answer):
                grown.append(contract.ARROW_PAGE_MAX)
            return answer

        def decode(response: Any) -> Any:
            return decode_page(response, self.api.http.decode)

        records, total = read_pages(
            fetch,
            page_size=page_size,
            limit=limit,
            progress=self.progress if progress is None else progress,
            description=caller,
            decode=decode if arrow else self.api.http.decode,
            keep=keep,
        )
        if limit is not None and total > limit:
            warn_truncated(caller, shown=len(records), total=total, noun="resources",
                           because=f"limit={limit}")
        return records

    # -- reads ---------------------------------------------------------------------------------

    @overload
    def resources(
        self,
        source: SourceRef | Iterable[SourceRef] | None = ...,
        *,
        path: str | Iterable[str] | None = ...,
        fields: bool = ...,
        tags: bool = ...,
        custom: bool = ...,
        limit: int | None = ...,
        page_size: int | None = ...,
        progress: bool | None = ...,
        as_frame: Literal[True] = ...,
        **filters: Unpack[ResourceFilters],
    ) -> pd.DataFrame: ...
    @overload
    def resources(
        self,
        source: SourceRef | Iterable[SourceRef] | None = ...,
        *,
        path: str | Iterable[str] | None = ...,
        fields: bool = ...,
        tags: bool = ...,
        custom: bool = ...,
        limit: int | None = ...,
        page_size: int | None = ...,
        progress: bool | None = ...,
        as_frame: Literal[False],
        **filters: Unpack[ResourceFilters],
    ) -> list[dict[str, Any]]: ...
    def resources(
        self,
        source: SourceRef | Iterable[SourceRef] | None = None,
        *,
        path: str | Iterable[str] | None = None,
        fields: bool = False,
        tags: bool = False,
        custom: bool = True,
        limit: int | None = None,
        page_size: int | None = None,
        progress: bool | None = None,
        as_frame: bool = True,
        **filters: Unpack[ResourceFilters],
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Data resources matching the filters, one row each, read page by page.

        Filters (ANDed; a list ORs its values): ``source`` (names or keys), ``type`` (``file``,
        ``collection``, ``table``, ``view``), ``format``, ``owner``, ``state`` (OK, ERROR),
        ``status`` (BROWSED, PROFILED, ERROR, MISSING), ``name``, ``path`` (the resource at or
        under a path, by whole ``/`` segments: ``crm`` finds ``crm/a.csv``), ``keys``,
        ``virtual_folder`` (names or keys), ``modified_after`` and ``modified_before``
        (datetime, date, ISO text, Timestamp or epoch ms; naive is UTC).

        Columns: key, source, path, name, type (short: ``file``, ``table``...), format, rows,
        size (bytes), field_count (rows and field_count missing until profiled),
        partition_count, state, status, error, owner, description, virtual_folders (list),
        modified (file change time), profiled, refreshed, created, changed (catalog record),
        then ``fields`` (list of field names) with ``fields=True``, ``tags`` (tag names) with
        ``tags=True``, and one ``cp_<name>`` column per custom property definition, typed by
        its definition (``custom=False`` leaves them out and saves one request).

        ``limit`` caps the rows (a :class:`TruncatedResultWarning` says when more matched),
        ``page_size`` sets the page (1..1000; 1..10,000 for a frame without fields or tags where
        pyarrow is installed, read in the Arrow layout; default: the largest), ``progress``
        overrides the catalog's progress-bar setting, ``as_frame=False`` returns the JSON
        records.

        Example::

            cat.resources("demo_files", type="file", modified_after="2024-01-01")
            cat.resources(status="ERROR")[["source", "path", "error"]]
        """
        all_filters = {"source": source, "path": path, **filters}
        paged = PagedFrame(fields=fields, tags=tags) if as_frame else None
        with gc_paused():  # see client/paging.py: the collector costs more than the decoding
            records = self._read_metadata(
                all_filters,
                fields=fields,
                tags=tags,
                limit=limit,
                page_size=page_size,
                progress=progress,
                caller="resources",
                keep=paged,
                # The frame shows a quarter of a DataResource: only that travels.
                properties=FRAME_WIRE_PROPERTIES if as_frame else (),
                # Fields and tags come with views, which are JSON only.
                arrow=(as_frame and not fields and not tags and self.arrow_pages
                       and arrow_available()),
            )
            if paged is None:
                return records
            definitions = self.api.list_custom_properties() if custom else None
            return paged.frame(records, definitions)

    def resource(self, source: SourceRef | ResourceRef, path: str | None = None) -> Resource:
        """One data resource: by data source (name or key) and path, or by resource key.

        Returns a :class:`~catalog_nb.client.resources.view.Resource`: a summary and a fields
        table in Jupyter, ``.fields`` (a frame), ``.raw`` (the JSON), and read-only mapping
        access to the JSON (``res["rowCount"]``).

        Example::

            res = cat.resource("demo_files", "crm/customers.csv")
            res.fields[["name", "data_type", "density"]]
            cat.resource(res.key)
        """
        return Resource.from_json(self._resource_json(source, path))

    @overload
    def fields(
        self,
        source: SourceRef | Iterable[SourceRef] | ResourceRef | None = ...,
        path: str | None = ...,
        *,
        limit: int | None = ...,
        page_size: int | None = ...,
        progress: bool | None = ...,
        as_frame: Literal[True] = ...,
        **filters: Unpack[ResourceFilters],
    ) -> pd.DataFrame: ...
    @overload
    def fields(
        self,
        source: SourceRef | Iterable[SourceRef] | ResourceRef | None = ...,
        path: str | None = ...,
        *,
        limit: int | None = ...,
        page_size: int | None = ...,
        progress: bool | None = ...,
        as_frame: Literal[False],
        **filters: Unpack[ResourceFilters],
    ) -> list[dict[str, Any]]: ...
    def fields(
        self,
        source: SourceRef | Iterable[SourceRef] | ResourceRef | None = None,
        path: str | None = None,
        *,
        limit: int | None = None,
        page_size: int | None = None,
        progress: bool | None = None,
        as_frame: bool = True,
        **filters: Unpack[ResourceFilters],
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Fields with their profiling statistics as columns.

        * ``fields(source, path)`` (and nothing else), or ``fields(resource_record)``: the
          fields of that one resource. Columns: name, position, data_type, nullable,
          description, display_name, comment, density (non-null share), value_count,
          null_count, distinct_count, distinct_approximate, min, max (JSON values), mean,
          min_length, max_length, most_frequent, patterns (lists), sampled, sample_size.
        * otherwise the long form over every resource matching the filters of
          :meth:`resources` (``path`` then means "at or under"): resource_key, source,
          resource_path, resource_name, resource_type, then the columns above. ``limit`` caps
          the number of resources read.

        ``as_frame=False`` returns the field JSON of the one resource, or the resource JSON
        records (with their fields) of the long form.

        Example::

            cat.fields("demo_files", "crm/customers.csv").sort_values("density")
            cat.fields(source="demo_sql", type="table").query("distinct_count == value_count")
        """
        single_ref = source is not None and not isinstance(source, str) and path is None
        if single_ref and isinstance(source, Mapping | pd.Series) and "key" in source:
            one: dict[str, Any] | None = self._resource_json(source, None)
        elif path is not None and not filters and isinstance(source, str | Mapping | pd.Series):
            one = self._resource_json(source, path)
        else:
            one = None
        if one is not None:
            if not as_frame:
                return list(one.get("fields") or [])
            return fields_frame([one], long=False)
        records = self._read_metadata(
            {"source": source, "path": path, **filters},
            fields=True,
            tags=False,
            limit=limit,
            page_size=page_size,
            progress=progress,
            caller="fields",
        )
        return fields_frame(records, long=True) if as_frame else records

    # -- writes --------------------------------------------------------------------------------

    def update_resource(
        self,
        source_or_key: SourceRef | ResourceRef,
        path: str | None = None,
        *,
        description: str | None = None,
        rich_description: str | None = None,
        owner: str | None = None,
        custom: Mapping[str, Any] | None = None,
        field_descriptions: Mapping[str, Any] | None = None,
    ) -> Resource:
        """Annotate a data resource (Steward or Administrator) and return it updated.

        Name it by data source and path, or by key (or a record / :class:`Resource`).
        ``None`` leaves a property unchanged (pass ``""`` to clear a text). ``custom`` maps
        custom property names to values (``None`` removes a value); ``field_descriptions``
        maps field names to a description, or to ``{description, display_name, comment}``.
        System-owned properties (rows, formats, data types...) cannot be changed.

        Raises:
            BadRequestError: an unknown custom property or field, a value of the wrong type
                (``INVALID_PROPERTY_VALUE``).

        Example::

            cat.update_resource("demo_files", "crm/customers.csv",
                                description="CRM export", owner="ada",
                                custom={"sensitivity": "high"},
                                field_descriptions={"contact": "customer e-mail"})
        """
        body = annotation_body(
            description=description,
            rich_description=rich_description,
            owner=owner,
            custom=custom,
            field_descriptions=field_descriptions,
        )
        if not body:
            return self.resource(source_or_key, path)
        if path is None:
            key = _record_key(source_or_key)
            answer = self.api.update_resource(key if key is not None else str(source_or_key), body)
        else:
            answer = self._by_path(
                source_or_key,
                path,
                lambda name: self.api.update_resource_by_path(name, path, body),
            )
        return Resource.from_json(answer)
