"""Raw endpoints of tag domains, tags and tag associations (``docs/tags-api.md``).

Mixed into :class:`~catalog_nb.client.api.core.CatalogApi` (reach them as ``cat.api``); each method
is one endpoint and returns the service's JSON as is (camelCase bodies, epoch milliseconds).

Example::

    domain = cat.api.create_tag_domain({"name": "Finance"})
    tag = cat.api.create_tag({"name": "Revenue", "domainKey": domain["key"]})
    cat.api.create_association({"resourceKey": res_key, "tagKey": tag["key"], "field": "amount"})
    cat.api.list_associations(state="SUGGESTED", min_weight=0.8, page_size=100)["totalCount"]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from catalog_nb import contract
from catalog_nb.client.api.base import JSON, RawCalls, segment

__all__ = ["ASSOCIATION_LIST_MAX", "ASSOCIATION_PAGE_MAX", "TagsApi"]


#: Most items ``POST /tagassociation/list`` takes in one request.
ASSOCIATION_LIST_MAX = contract.ASSOCIATION_LIST_MAX
#: Largest ``pageSize`` of ``GET /tagassociation`` (the same limit on the service).
ASSOCIATION_PAGE_MAX = contract.ASSOCIATION_LIST_MAX


def _bodies(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [dict(item) for item in items]


class TagsApi(RawCalls):
    """The raw calls of the tag families; needs ``self.http``."""

    # -- tag domains ---------------------------------------------------------------------------

    def list_tag_domains(self) -> list[JSON]:
        """``GET /tagdomain``: every TagDomain ``{key, name, description, immutable, tagCount,
        timeOfCreation, timeOfLastChange}``."""
        answer: list[JSON] = self.http.request("GET", "/tagdomain")
        return answer

    def get_tag_domain(self, key: str) -> JSON:
        """``GET /tagdomain/{key}`` (404 ``TAG_DOMAIN_NOT_FOUND``)."""
        return self.http.request("GET", f"/tagdomain/{segment(key)}")

    def create_tag_domain(self, body: Mapping[str, Any]) -> JSON:
        """``POST /tagdomain {name, description?}`` -> the TagDomain (409 ``DUPLICATE_NAME``)."""
        return self.http.request("POST", "/tagdomain", json=dict(body))

    def create_tag_domains(self, bodies: Iterable[Mapping[str, Any]]) -> list[JSON]:
        """``POST /tagdomain/list [{name, description?}]`` -> the TagDomains, all or nothing."""
        answer: list[JSON] = self.http.request("POST", "/tagdomain/list", json=_bodies(bodies))
        return answer

    def update_tag_domain(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /tagdomain/{key} {name?, description?}`` -> the TagDomain."""
        return self.http.request("PUT", f"/tagdomain/{segment(key)}", json=dict(body))

    def delete_tag_domain(self, key: str) -> None:
        """``DELETE /tagdomain/{key}`` (204; 409 ``DOMAIN_NOT_EMPTY`` while it holds tags)."""
        self.http.request("DELETE", f"/tagdomain/{segment(key)}")

    # -- tags ----------------------------------------------------------------------------------

    def list_tags(self, domain_key: str | None = None) -> list[JSON]:
        """``GET /tag[?domainKey=]``: every Tag, or those of one domain."""
        answer: list[JSON] = self.http.request("GET", "/tag", params={"domainKey": domain_key})
        return answer

    def get_tag(self, key: str) -> JSON:
        """``GET /tag/{key}`` (404 ``TAG_NOT_FOUND``)."""
        return self.http.request("GET", f"/tag/{segment(key)}")

    def get_tag_by_name(self, tag_name: str, domain_name: str | None = None) -> JSON:
        """``GET /tag/byname?tagName=&domainName=``; ``tag_name`` is a name or a full name."""
        params = {"tagName": tag_name, "domainName": domain_name}
        return self.http.request("GET", "/tag/byname", params=params)

    def list_tag_children(self, key: str) -> list[JSON]:
        """``GET /tag/children/{tagKey}``: the direct children of a tag."""
        answer: list[JSON] = self.http.request("GET", f"/tag/children/{segment(key)}")
        return answer

    def create_tag(self, body: Mapping[str, Any]) -> JSON:
        """``POST /tag {name, domainKey, parentKey?, tagState?, enable?, ...}`` -> the Tag."""
        return self.http.request("POST", "/tag", json=dict(body))

    def create_tags(self, bodies: Iterable[Mapping[str, Any]]) -> list[JSON]:
        """``POST /tag/list``: several tags, all or nothing -> the Tags."""
        answer: list[JSON] = self.http.request("POST", "/tag/list", json=_bodies(bodies))
        return answer

    def update_tag(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /tag/{key}``: absent properties stay unchanged -> the Tag."""
        return self.http.request("PUT", f"/tag/{segment(key)}", json=dict(body))

    def update_tags(self, bodies: Iterable[Mapping[str, Any]]) -> list[JSON]:
        """``PUT /tag/list``: several tags (each with its ``key``), all or nothing."""
        answer: list[JSON] = self.http.request("PUT", "/tag/list", json=_bodies(bodies))
        return answer

    def delete_tag(self, key: str) -> None:
        """``DELETE /tag/{key}`` with its associations (409 ``TAG_HAS_CHILDREN``)."""
        self.http.request("DELETE", f"/tag/{segment(key)}")

    # -- tag associations ----------------------------------------------------------------------

    def create_association(self, body: Mapping[str, Any]) -> JSON:
        """``POST /tagassociation {resourceKey, tagKey, field?, state?, semantic?,
        description?}`` -> the TagAssociationView (an existing SUGGESTED or REJECTED one is
        promoted to ``state``)."""
        return self.http.request("POST", "/tagassociation", json=dict(body))

    def create_associations(self, bodies: Iterable[Mapping[str, Any]]) -> list[JSON]:
        """``POST /tagassociation/list``: each item in its own transaction (at most
        :data:`ASSOCIATION_LIST_MAX`) -> ``[{index, ok, association?, error?: {status,
        errorCode, message}}]``."""
        answer: list[JSON] = self.http.request(
            "POST", "/tagassociation/list", json=_bodies(bodies)
        )
        return answer

    def associations_by_resource(self, source_name: str, resource_path: str) -> list[JSON]:
        """``GET /tagassociation/byresource?sourceName=&resourcePath=``: the resource's
        associations, resource and field level."""
        params = {"sourceName": source_name, "resourcePath": resource_path}
        answer: list[JSON] = self.http.request("GET", "/tagassociation/byresource", params=params)
        return answer

    def associations_by_field(
        self, source_name: str, resource_path: str, field_name: str
    ) -> list[JSON]:
        """``GET /tagassociation/byfield?sourceName=&resourcePath=&fieldName=``."""
        params = {"sourceName": source_name, "resourcePath": resource_path, "fieldName": field_name}
        answer: list[JSON] = self.http.request("GET", "/tagassociation/byfield", params=params)
        return answer

    def list_associations(
        self,
        *,
        state: str | None = None,
        tag_key: str | None = None,
        data_source_key: str | None = None,
        min_weight: float | None = None,
        start: int = 0,
        page_size: int = 500,
    ) -> JSON:
        """``GET /tagassociation?state=&tagKey=&dataSourceKey=&minWeight=&start=&pageSize=``:
        one page ``{list, totalCount, start, pageSize}`` of the visible associations.

        Example::

            cat.api.list_associations(state="SUGGESTED", min_weight=0.9)["list"]
        """
        params = {
            "state": state,
            "tagKey": tag_key,
            "dataSourceKey": data_source_key,
            "minWeight": min_weight,
            "start": start,
            "pageSize": page_size,
        }
        return self.http.request("GET", "/tagassociation", params=params)

    def update_association(self, key: str, body: Mapping[str, Any]) -> JSON:
        """``PUT /tagassociation/tagassociation/{key} {state?, semantic?, description?}`` ->
        the TagAssociationView."""
        return self.http.request(
            "PUT", f"/tagassociation/tagassociation/{segment(key)}", json=dict(body)
        )

    def delete_association(self, key: str) -> None:
        """``DELETE /tagassociation/tagassociation/{key}`` (204)."""
        self.http.request("DELETE", f"/tagassociation/tagassociation/{segment(key)}")
