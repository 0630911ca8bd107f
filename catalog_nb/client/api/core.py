"""The raw layer: one method per REST endpoint, returning the service's JSON as is.

Reach it as ``cat.api``. It is for people who want the JSON, and for endpoints the
:class:`~catalog_nb.client.catalog.Catalog` facade does not cover yet (``cat.api.get(...)``).
Path parameters are URL-quoted here; bodies use the service's camelCase field names. The calls
of the resource families (data sources, jobs, data resources, custom properties, virtual
folders, data sets) live in :mod:`catalog_nb.client.api.resources`, those of tag domains, tags
and tag associations in :mod:`catalog_nb.client.api.tags`, those of search in
:mod:`catalog_nb.client.api.search`, those of lineage, join conditions and table overlap in
:mod:`catalog_nb.client.api.relations`, those of favorites and reviews in
:mod:`catalog_nb.client.api.annotations`; the generic calls, users, roles, the audit trail, the
version and the service configuration are here.

Example::

    cat.api.get_user_by_name("ada")["roles"]
    cat.api.get("/version")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog_nb import contract
from catalog_nb.client.api.annotations import AnnotationsApi
from catalog_nb.client.api.base import JSON, segment
from catalog_nb.client.api.relations import RelationsApi
from catalog_nb.client.api.resources import ResourcesApi
from catalog_nb.client.api.search import SearchApi
from catalog_nb.client.api.tags import TagsApi
from catalog_nb.client.http import HttpSession, Timeout

__all__ = ["CatalogApi"]


class CatalogApi(ResourcesApi, TagsApi, SearchApi, RelationsApi, AnnotationsApi):
    """One method per endpoint of ``/api/v2``; every call goes through :class:`HttpSession`.

    The data source, job, data resource, custom property, virtual folder and data set calls
    come from :class:`~catalog_nb.client.api.resources.ResourcesApi`; the tag domain, tag and
    tag association calls from :class:`~catalog_nb.client.api.tags.TagsApi`; the search calls
    from :class:`~catalog_nb.client.api.search.SearchApi`; lineage, join and overlap calls from
    :class:`~catalog_nb.client.api.relations.RelationsApi`; favorite and review calls from
    :class:`~catalog_nb.client.api.annotations.AnnotationsApi`.
    """

    def __init__(self, http: HttpSession) -> None:
        self.http = http

    def __repr__(self) -> str:
        return f"<CatalogApi {self.http.api_url}>"

    # -- generic -------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: JSON = None,
        timeout: Timeout | None = None,
    ) -> JSON:
        """Any call: ``cat.api.request("GET", "/user", params={"name": "ada"})``."""
        return self.http.request(method, path, params=params, json=json, timeout=timeout)

    def get(self, path: str, **params: Any) -> JSON:
        """``GET path?params``: ``cat.api.get("/search/user", searchUsersBy="ad")``."""
        return self.http.request("GET", path, params=params)

    def post(self, path: str, body: JSON = None, **params: Any) -> JSON:
        """``POST path`` with a JSON ``body``."""
        return self.http.request("POST", path, params=params, json=body)

    def put(self, path: str, body: JSON = None, **params: Any) -> JSON:
        """``PUT path`` with a JSON ``body``."""
        return self.http.request("PUT", path, params=params, json=body)

    def delete(self, path: str, **params: Any) -> JSON:
        """``DELETE path``."""
        return self.http.request("DELETE", path, params=params)

    # -- session and service -------------------------------------------------------------------

    def login(self, username: str | None = None, password: str | None = None) -> JSON:
        """``POST /login``: ``{loginResult, message, userInfo}``; sets the session cookie."""
        return self.http.login(username, password)

    def logout(self) -> None:
        """``GET /logout``: end the session on the service (a later call logs in again)."""
        self.http.logout()

    def version(self) -> JSON:
        """``GET /version``: ``{name, version, apiVersion, build}``."""
        return self.http.request("GET", "/version")

    # -- configuration -------------------------------------------------------------------------

    def list_config(self) -> list[JSON]:
        """``GET /config``: every property ``{name, value, type, description, readOnly,
        defaultValue, minimum, maximum, changedBy, timeOfLastChange}``."""
        answer: list[JSON] = self.http.request("GET", "/config")
        return answer

    def get_config(self, name: str) -> JSON:
        """``GET /config/{name}`` (404 ``CONFIG_NOT_FOUND``)."""
        return self.http.request("GET", f"/config/{segment(name)}")

    def set_config(self, name: str, value: Any) -> JSON:
        """``PUT /config/{name} {value}`` -> the property (Administrator; ``None`` returns it to
        its start-up value; 400 ``INVALID_CONFIG_VALUE`` / ``READ_ONLY_CONFIG``)."""
        return self.http.request("PUT", f"/config/{segment(name)}", json={"value": value})

    # -- users ---------------------------------------------------------------------------------

    def list_users(self, name: str | None = None) -> list[JSON]:
        """``GET /user[?name=]``: all users, or the one named ``name``."""
        answer: list[JSON] = self.http.request("GET", "/user", params={"name": name})
        return answer

    def create_user(self, body: Mapping[str, Any]) -> JSON:
        """``POST /user``: ``{name, description?, attributes?, roles?, password?, ...}``."""
        return self.http.request("POST", "/user", json=dict(body))

    def get_me(self) -> JSON:
        """``GET /user/_me``: the caller's User."""
        return self.http.request("GET", "/user/_me")

    def update_me(self, body: Mapping[str, Any]) -> None:
        """``PUT /user/_me``: only ``{prefiltersEnabled}`` is supported."""
        self.http.request("PUT", "/user/_me", json=dict(body))

    def get_user(self, key: str) -> JSON:
        """``GET /user/{key}``."""
        return self.http.request("GET", f"/user/{segment(key)}")

    def update_user(self, key: str, body: Mapping[str, Any]) -> None:
        """``PUT /user/{key}``: partial update; ``roles`` replaces the set."""
        self.http.request("PUT", f"/user/{segment(key)}", json=dict(body))

    def delete_user(self, key: str) -> None:
        """``DELETE /user/{key}``."""
        self.http.request("DELETE", f"/user/{segment(key)}")

    def get_user_by_name(self, name: str) -> JSON:
        """``GET /user/name/{username}``."""
        return self.http.request("GET", f"/user/name/{segment(name)}")

    def assign_role(self, user_name: str, role_name: str) -> JSON:
        """``POST /user/assign/role {userName, roleName}``: the updated User."""
        body = {"userName": user_name, "roleName": role_name}
        return self.http.request("POST", "/user/assign/role", json=body)

    def remove_roles(self, roles_by_user_key: Mapping[str, list[str] | str]) -> list[JSON]:
        """``POST /user/remove/role {"<userKey>": ["roleName", ...]}``: the updated Users."""
        answer: list[JSON] = self.http.request(
            "POST", "/user/remove/role", json=dict(roles_by_user_key)
        )
        return answer

    def list_my_roles(self) -> list[JSON]:
        """``GET /user/list/roles``: the caller's Roles."""
        answer: list[JSON] = self.http.request("GET", "/user/list/roles")
        return answer

    def permit_source(self, data_source_name: str) -> dict[str, bool]:
        """``GET /user/permit/source``: ``{userName: can see the data source}``."""
        answer: dict[str, bool] = self.http.request(
            "GET", "/user/permit/source", params={"dataSourceName": data_source_name}
        )
        return answer

    def permit_resource(self, data_source_name: str, resource_path: str) -> dict[str, bool]:
        """``GET /user/permit/resource``: ``{userName: can see the resource}``."""
        params = {"dataSourceName": data_source_name, "resourcePath": resource_path}
        answer: dict[str, bool] = self.http.request("GET", "/user/permit/resource", params=params)
        return answer

    def search_users(self, chars: str, limit: int | None = None) -> list[JSON]:
        """``GET /search/user?searchUsersBy=&limit=``: ``[{name, key, attributes}]``."""
        params = {"searchUsersBy": chars, "limit": limit}
        answer: list[JSON] = self.http.request("GET", "/search/user", params=params)
        return answer

    # -- roles ---------------------------------------------------------------------------------

    def create_role(self, body: Mapping[str, Any]) -> JSON:
        """``POST /user/role``: ``{name, accessLevel, description?, ...}`` -> the Role."""
        return self.http.request("POST", "/user/role", json=dict(body))

    def list_roles(self) -> list[JSON]:
        """``GET /user/role``: every Role."""
        answer: list[JSON] = self.http.request("GET", "/user/role")
        return answer

    def get_role_by_name(self, name: str) -> JSON:
        """``GET /user/role/byname?name=``."""
        return self.http.request("GET", "/user/role/byname", params={"name": name})

    def get_role(self, key: str) -> JSON:
        """``GET /user/role/{roleKey}``."""
        return self.http.request("GET", f"/user/role/{segment(key)}")

    def update_role(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /user/role/{roleKey}``: partial update -> the Role."""
        return self.http.request("PUT", f"/user/role/{segment(key)}", json=dict(body))

    def delete_role(self, key: str) -> None:
        """``DELETE /user/role/{roleKey}``."""
        self.http.request("DELETE", f"/user/role/{segment(key)}")

    # -- audit trail (Administrator only) --------------------------------------------------------

    def list_audit_events(self, start: int = 0, size: int = 100) -> JSON:
        """``GET /auditevent/list?from=&size=``: one page ``{list, totalCount, from, size}``."""
        size = min(size, contract.AUDIT_PAGE_MAX)
        return self.http.request("GET", "/auditevent/list", params={"from": start, "size": size})

    def search_audit_events(self, body: Mapping[str, Any]) -> JSON:
        """``POST /auditevent/search {userName?, action?, objectType?, outcome?, fromTime?,
        toTime?, from?, size?}``: the same page shape as :meth:`list_audit_events`."""
        return self.http.request("POST", "/auditevent/search", json=dict(body))

    def get_audit_event(self, key: str) -> JSON:
        """``GET /auditevent/{key}``."""
        return self.http.request("GET", f"/auditevent/{segment(key)}")

    def delete_audit_event(self, key: str) -> None:
        """``DELETE /auditevent/{key}``."""
        self.http.request("DELETE", f"/auditevent/{segment(key)}")
