"""Raw endpoints of data sources, jobs, data resources, custom properties, folders and data sets.

Mixed into :class:`~catalog_nb.client.api.core.CatalogApi` (reach them as ``cat.api``); each method
is one endpoint of ``docs/resources-api.md`` and returns the service's JSON as is.

Example::

    page = cat.api.resource_metadata(["data_source:demo_files"], page_size=50)
    page["totalCount"], page["list"][0]["resourcePath"]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from catalog_nb import contract
from catalog_nb.client.api.base import JSON, RawCalls, segment

__all__ = ["ResourcesApi"]



class ResourcesApi(RawCalls):
    """The raw calls of the resource families; needs ``self.http``."""

    # -- data sources --------------------------------------------------------------------------

    def list_sources(self) -> list[JSON]:
        """``GET /datasource``: the data sources the caller may see."""
        answer: list[JSON] = self.http.request("GET", "/datasource")
        return answer

    def create_source(self, body: Mapping[str, Any]) -> JSON:
        """``POST /datasource {name, sourceType, uri, description?, includePatterns?,
        excludePatterns?}`` -> the DataSource."""
        return self.http.request("POST", "/datasource", json=dict(body))

    def get_source(self, key: str) -> JSON:
        """``GET /datasource/{key}``."""
        return self.http.request("GET", f"/datasource/{segment(key)}")

    def update_source(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /datasource/{key}``: absent properties stay unchanged -> the DataSource."""
        return self.http.request("PUT", f"/datasource/{segment(key)}", json=dict(body))

    # -- jobs ----------------------------------------------------------------------------------

    def create_job(
        self, job_type: str, data_source_key: str, resource_path: str | None = None,
        engine: str | None = None,
    ) -> JSON:
        """``POST /job {jobType, dataSourceKey, resourcePath?, engine?}`` -> the Job (201)."""
        body: dict[str, Any] = {"jobType": str(job_type), "dataSourceKey": data_source_key}
        if resource_path is not None:
            body["resourcePath"] = resource_path
        if engine is not None:
            body["engine"] = str(engine)
        return self.http.request("POST", "/job", json=body)

    def list_jobs(
        self,
        state: str | None = None,
        data_source_key: str | None = None,
        limit: int | None = None,
    ) -> list[JSON]:
        """``GET /job?state=&dataSourceKey=&limit=``: jobs newest first (service default 100)."""
        params = {"state": state, "dataSourceKey": data_source_key, "limit": limit}
        answer: list[JSON] = self.http.request("GET", "/job", params=params)
        return answer

    def get_job(self, key: str) -> JSON:
        """``GET /job/{key}``: state, progress, total, done, counts, errors, message."""
        return self.http.request("GET", f"/job/{segment(key)}")

    # -- data resources ------------------------------------------------------------------------

    def get_resource(self, key: str) -> JSON:
        """``GET /dataresource/{key}``: the DataResource with fields and tags."""
        return self.http.request("GET", f"/dataresource/{segment(key)}")

    def get_resource_by_path(self, source_name: str, resource_path: str) -> JSON:
        """``GET /dataresource/source/{sourceName}?resourcePath=``."""
        return self.http.request(
            "GET",
            f"/dataresource/source/{segment(source_name)}",
            params={"resourcePath": resource_path},
        )

    def resource_metadata(
        self,
        property_filters: Iterable[str] = (),
        *,
        virtual_folder_keys: Iterable[str] = (),
        views: Iterable[str] = (),
        page_size: int = contract.METADATA_PAGE_DEFAULT,
        start: int = 0,
        modified_from: int | None = None,
        modified_to: int | None = None,
        cursor: str | None = None,
        decode: bool = True,
        properties: Iterable[str] = (),
        accept: str | None = None,
    ) -> JSON:
        """``GET /dataresource/metadata``: one page ``{list, totalCount, start, pageSize,
        nextCursor}``; ``cursor`` (the previous page's ``nextCursor``) reads the next page of
        the same query by keyset, instead of ``start``. ``properties`` limits each resource to
        those properties (and its key). ``decode=False`` returns the HTTP response undecoded
        (see :meth:`HttpSession.request`); ``accept`` is the request's ``Accept``
        (``contract.ARROW_STREAM`` asks for the Arrow layout: read such an undecoded answer
        with ``client.resources.arrow_frame.decode_page``).

        ``property_filters`` are ``"<property>:<v1>;<v2>"`` strings, sent as repeated
        ``propertyFilter`` parameters (ANDed); ``virtual_folder_keys`` as repeated
        ``virtualFolderKeys``; ``views`` comma-separated; ``modified_from``/``modified_to`` are
        epoch milliseconds.

        Example::

            cat.api.resource_metadata(["resource_type:resource_type_table"], views=["viewFields"])
        """
        params: dict[str, Any] = {
            "propertyFilter": list(property_filters) or None,
            "virtualFolderKeys": list(virtual_folder_keys) or None,
            "views": ",".join(views) or None,
            "properties": ",".join(sorted(properties)) or None,
            "pageSize": page_size,
            "start": start,
            "cursor": cursor,
            "resourceModifiedDateFromL": modified_from,
            "resourceModifiedDateToL": modified_to,
        }
        return self.http.request("GET", "/dataresource/metadata", params=params, decode=decode,
                                 headers={"Accept": accept} if accept else None)

    def update_resource(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /dataresource/{key} {description?, richDescription?, owner?,
        customProperties?, fields?}`` -> the DataResource."""
        return self.http.request("PUT", f"/dataresource/{segment(key)}", json=dict(body))

    def update_resource_by_path(
        self, source_name: str, resource_path: str, body: Mapping[str, Any]
    ) -> JSON:
        """``PUT /dataresource/source/{sourceName}?resourcePath=`` with the body of
        :meth:`update_resource`."""
        return self.http.request(
            "PUT",
            f"/dataresource/source/{segment(source_name)}",
            params={"resourcePath": resource_path},
            json=dict(body),
        )

    # -- custom property definitions -----------------------------------------------------------

    def list_custom_properties(self) -> list[JSON]:
        """``GET /customproperty``: every custom property definition."""
        answer: list[JSON] = self.http.request("GET", "/customproperty")
        return answer

    def create_custom_property(self, body: Mapping[str, Any]) -> JSON:
        """``POST /customproperty {name, type, displayName?, description?, facetAble?}``."""
        return self.http.request("POST", "/customproperty", json=dict(body))

    def get_custom_property(self, key: str) -> JSON:
        """``GET /customproperty/{key}``."""
        return self.http.request("GET", f"/customproperty/{segment(key)}")

    def update_custom_property(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /customproperty/{key}``: partial update -> the definition."""
        return self.http.request("PUT", f"/customproperty/{segment(key)}", json=dict(body))

    # -- virtual folders -----------------------------------------------------------------------

    def list_virtual_folders(self) -> list[JSON]:
        """``GET /virtualfolder``."""
        answer: list[JSON] = self.http.request("GET", "/virtualfolder")
        return answer

    def create_virtual_folder(self, body: Mapping[str, Any]) -> JSON:
        """``POST /virtualfolder {name, dataSourceKey, pathSpecs, parentKey?, description?}``."""
        return self.http.request("POST", "/virtualfolder", json=dict(body))

    def get_virtual_folder(self, key: str) -> JSON:
        """``GET /virtualfolder/{key}``."""
        return self.http.request("GET", f"/virtualfolder/{segment(key)}")

    def update_virtual_folder(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /virtualfolder/{key}``."""
        return self.http.request("PUT", f"/virtualfolder/{segment(key)}", json=dict(body))

    def delete_virtual_folder(self, key: str) -> None:
        """``DELETE /virtualfolder/{key}`` (204)."""
        self.http.request("DELETE", f"/virtualfolder/{segment(key)}")

    # -- data sets -----------------------------------------------------------------------------

    def list_datasets(self) -> list[JSON]:
        """``GET /dataset``."""
        answer: list[JSON] = self.http.request("GET", "/dataset")
        return answer

    def create_dataset(self, body: Mapping[str, Any]) -> JSON:
        """``POST /dataset {name, dataSetPathSpecs: {sourceKey: [PathSpecification]},
        description?}``."""
        return self.http.request("POST", "/dataset", json=dict(body))

    def get_dataset(self, key: str) -> JSON:
        """``GET /dataset/{key}``."""
        return self.http.request("GET", f"/dataset/{segment(key)}")

    def update_dataset(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /dataset/{key}``."""
        return self.http.request("PUT", f"/dataset/{segment(key)}", json=dict(body))

    def delete_dataset(self, key: str) -> None:
        """``DELETE /dataset/{key}`` (204)."""
        self.http.request("DELETE", f"/dataset/{segment(key)}")
