"""Data sources: typed frames of the sources the caller may see, and the source writes.

A data source is a folder of files (``FILE``) or a database reached through an SQLAlchemy URL
(``SQL``). Its resources come into existence when it is browsed or profiled
(:meth:`~catalog_nb.client.jobs.JobsMixin.profile`).

Example::

    cat.create_source("lake", "/data/lake", include=["**/*.csv"])
    cat.profile("lake")
    cat.sources()[["name", "source_type", "resource_count", "last_job_state"]]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any, Literal, overload
from urllib.parse import quote, urlencode

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.refs import pick

__all__ = ["SOURCE_COLUMNS", "SourceRef", "SourcesMixin", "object_store_uri", "resolve_source"]

#: A data source as callers name it: its name, its key, or its JSON dict / frame row.
SourceRef = str | Mapping[str, Any] | pd.Series

#: Columns of :meth:`SourcesMixin.sources`.
SOURCE_COLUMNS: tuple[Column, ...] = (
    Column("key", "string"),
    Column("name", "string"),
    Column("source_type", "string", "sourceType"),
    Column("uri", "string"),
    Column("description", "string"),
    Column("include", "list", "includePatterns"),
    Column("exclude", "list", "excludePatterns"),
    Column("engine", "string"),
    Column("resource_count", "int", "resourceCount"),
    Column("last_job_key", "string", "lastJob.key"),
    Column("last_job_type", "string", "lastJob.jobType"),
    Column("last_job_state", "string", "lastJob.state"),
    Column("last_job_end", "time", "lastJob.endTime"),
    Column("created", "time", "timeOfCreation"),
    Column("changed", "time", "timeOfLastChange"),
)


def resolve_source(api: CatalogApi, ref: SourceRef) -> dict[str, Any]:
    """The DataSource JSON of ``ref`` (a name, a key, or a record with ``key``).

    Raises :class:`NotFoundError` (``DATA_SOURCE_NOT_FOUND``) when no visible source matches.
    """
    return pick(
        api.list_sources(), ref, "data source", contract.ErrorCode.DATA_SOURCE_NOT_FOUND.value
    )


def _patterns(value: str | Iterable[str] | None) -> list[str] | None:
    if value is None:
        return None
    return [value] if isinstance(value, str) else [str(v) for v in value]


def object_store_uri(
    location: str,
    *,
    endpoint: str | None = None,
    region: str | None = None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
) -> str:
    """An object-store source's uri: ``location`` (``s3://bucket/prefix``) with the store's
    settings, the form the service stores (a catalog_nb extra: the spec's DataSource has no
    field for them)::

        s3://[ACCESS_KEY_ID:SECRET_ACCESS_KEY@]bucket/prefix[?endpoint=URL&region=REGION]

    Without settings the service uses its AWS environment and configuration files
    (``AWS_ENDPOINT_URL`` for a non-AWS store). The secret is answered as ``***`` afterwards.

    >>> object_store_uri("s3://lake/raw", endpoint="http://minio:9000")
    's3://lake/raw?endpoint=http%3A%2F%2Fminio%3A9000'
    """
    if (access_key_id is None) != (secret_access_key is None):
        raise ValueError("give both access_key_id and secret_access_key, or neither")
    scheme, sep, rest = location.partition("://")
    if not sep or scheme.lower() != "s3":
        raise ValueError(f"an object-store location is s3://bucket/prefix, not {location!r}")
    auth = ("" if access_key_id is None else
            f"{quote(access_key_id, safe='')}:{quote(str(secret_access_key), safe='')}@")
    settings = {k: v for k, v in (("endpoint", endpoint), ("region", region)) if v}
    return f"s3://{auth}{rest}" + (f"?{urlencode(settings)}" if settings else "")


def _source_body(
    *,
    name: str | None = None,
    uri: str | PurePath | None = None,
    source_type: str | contract.SourceType | None = None,
    description: str | None = None,
    include: str | Iterable[str] | None = None,
    exclude: str | Iterable[str] | None = None,
    engine: str | contract.JobEngine | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": name,
        "sourceType": None if source_type is None else str(source_type).upper(),
        "uri": None if uri is None else str(uri),
        "description": description,
        "includePatterns": _patterns(include),
        "excludePatterns": _patterns(exclude),
        "engine": None if engine is None else str(engine).lower(),
    }
    return {field: value for field, value in body.items() if value is not None}


class SourcesMixin(CatalogPart):
    """Data source frames and writes; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    @overload
    def sources(self, *, as_frame: Literal[True] = True) -> pd.DataFrame: ...
    @overload
    def sources(self, *, as_frame: Literal[False]) -> list[dict[str, Any]]: ...
    def sources(self, *, as_frame: bool = True) -> pd.DataFrame | list[dict[str, Any]]:
        """The data sources you may see, one row each (``as_frame=False``: the JSON list).

        Columns: key, name, source_type (FILE or SQL), uri (SQL passwords answered as ``***``),
        description, include and exclude (glob lists), engine (of its PROFILE jobs: local or
        spark), resource_count, last_job_key,
        last_job_type, last_job_state, last_job_end, created, changed (UTC datetimes).

        Example::

            cat.sources().query("last_job_state == 'FAILED'")[["name", "uri"]]
        """
        records = self.api.list_sources()
        return to_frame(records, SOURCE_COLUMNS) if as_frame else records

    def source(self, name_or_key: SourceRef) -> dict[str, Any]:
        """One data source's JSON, by name (any case) or key.

        Example::

            cat.source("demo_files")["resourceCount"]
        """
        return resolve_source(self.api, name_or_key)

    def create_source(
        self,
        name: str,
        uri: str | PurePath,
        source_type: str | contract.SourceType = contract.SourceType.FILE,
        *,
        description: str | None = None,
        include: str | Iterable[str] | None = None,
        exclude: str | Iterable[str] | None = None,
        endpoint: str | None = None,
        region: str | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        engine: str | contract.JobEngine | None = None,
    ) -> dict[str, Any]:
        """Register a data source and return its JSON (Administrator only).

        ``uri`` is a folder under one of the service's data roots for ``FILE`` sources, or an
        SQLAlchemy URL for ``SQL`` sources. ``include``/``exclude`` are glob patterns of paths.
        A ``FILE`` source may also be an object store's ``s3://bucket/prefix`` under one of the
        service's object roots; ``endpoint`` (a non-AWS store: MinIO, Ceph), ``region`` and the
        key pair are then stored with it (see :func:`object_store_uri`), else the service's AWS
        environment applies. ``engine``: what profiles the source when a job names none
        (``"local"``, the default, or ``"spark"``, FILE sources only).
        Nothing is read yet: run :meth:`~catalog_nb.client.jobs.JobsMixin.profile` next.

        Raises:
            BadRequestError: ``SOURCE_OUTSIDE_ROOTS`` (folder outside the data roots) or
                ``INVALID_SOURCE_URI``.
            ConflictError: a source with this name exists.

        Example::

            cat.create_source("crm", "/data/lake/crm", include="*.csv")
            cat.create_source("shop", "postgresql+psycopg://reader:pw@db/shop", "SQL")
            cat.create_source("lake", "s3://bucket/prefix", endpoint="http://minio:9000",
                              access_key_id="AKIA...", secret_access_key="...", engine="spark")
        """
        if any(v is not None for v in (endpoint, region, access_key_id, secret_access_key)):
            uri = object_store_uri(str(uri), endpoint=endpoint, region=region,
                                   access_key_id=access_key_id,
                                   secret_access_key=secret_access_key)
        body = _source_body(
            name=name,
            uri=uri,
            source_type=source_type,
            description=description,
            include=include,
            exclude=exclude,
            engine=engine,
        )
        created: dict[str, Any] = self.api.create_source(body)
        return created

    def update_source(
        self,
        name_or_key: SourceRef,
        *,
        name: str | None = None,
        uri: str | PurePath | None = None,
        description: str | None = None,
        include: str | Iterable[str] | None = None,
        exclude: str | Iterable[str] | None = None,
        engine: str | contract.JobEngine | None = None,
    ) -> dict[str, Any]:
        """Change some properties of a data source; ``None`` leaves one unchanged.

        Example::

            cat.update_source("crm", description="CRM exports", exclude=["tmp/**"])
        """
        key = resolve_source(self.api, name_or_key)["key"]
        body = _source_body(
            name=name, uri=uri, description=description, include=include, exclude=exclude,
            engine=engine,
        )
        updated: dict[str, Any] = self.api.update_source(key, body)
        return updated
