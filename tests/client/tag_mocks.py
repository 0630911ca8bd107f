"""Mocked answers of the tag families (domains, tags, associations) for client tests.

:class:`TagWorld` registers ``responses`` callbacks that answer from in-memory lists the way
``docs/tags-api.md`` says: ``GET /tag``, ``GET /tagdomain``, ``GET /datasource``, the metadata
query (``id:``, ``data_source:`` and ``path:`` filters, with fields and associations),
``GET /tagassociation`` (filters and paging) and ``POST /tagassociation/list`` (per-item
results, scriptable by a function of the item).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import responses

from tests.client.mocks import API
from tests.client.resource_mocks import SOURCES, field_json, resource_json

DOMAINS: list[dict[str, Any]] = [
    {
        "key": "d-sens",
        "name": "Sensitive",
        "description": "Built-in",
        "immutable": True,
        "tagCount": 2,
        "color": None,
        "semantic": "BUILT_IN",
        "createTags": True,
        "deleteTags": True,
        "readTags": True,
        "timeOfCreation": 1704067200000,
        "timeOfLastChange": 1704067200000,
    },
    {
        "key": "d-fin",
        "name": "Finance",
        "description": None,
        "immutable": False,
        "tagCount": 4,
        "color": None,
        "semantic": "USER_CREATED",
        "createTags": True,
        "deleteTags": True,
        "readTags": True,
        "timeOfCreation": 1704067200000,
        "timeOfLastChange": 1704153600000,
    },
    {
        "key": "d-hr",
        "name": "HR",
        "description": "People",
        "immutable": False,
        "tagCount": 1,
        "color": None,
        "semantic": "USER_CREATED",
        "createTags": True,
        "deleteTags": True,
        "readTags": True,
        "timeOfCreation": 1704067200000,
        "timeOfLastChange": 1704067200000,
    },
]
_DOMAIN_NAMES = {d["key"]: d["name"] for d in DOMAINS}


def tag_json(
    key: str, full_name: str, parent_key: str | None = None, **extra: Any
) -> dict[str, Any]:
    """A Tag as the service answers it."""
    domain_name, _, path = full_name.partition(".")
    domain_key = next(k for k, n in _DOMAIN_NAMES.items() if n == domain_name)
    record: dict[str, Any] = {
        "key": key,
        "type": "tag",
        "name": path.rsplit(".", 1)[-1],
        "fullName": full_name,
        "domainKey": domain_key,
        "domainName": domain_name,
        "parentKey": parent_key,
        "children": [],
        "tagState": "VALUE",
        "state": "ACCEPTED",
        "enable": True,
        "learningEnabled": False,
        "immutable": False,
        "minScore": 0.8,
        "regEx": None,
        "regexFilterClass": None,
        "regexMinLen": 0,
        "regexMaxLen": 0,
        "synonyms": [],
        "sensitivity": "",
        "associationCount": 0,
        "description": None,
        "externalId": "",
        "externalSourceName": "",
        "timeOfCreation": 1704067200000,
        "timeOfLastChange": 1704067200000,
    }
    record.update(extra)
    record.setdefault("allSensitivities", [record["sensitivity"]] if record["sensitivity"] else [])
    return record


TAGS = [
    tag_json(
        "t-email",
        "Sensitive.EmailAddress",
        tagState="REGEX",
        regEx="^[^@]+@[^@]+$",
        minScore=0.8,
        regexMinLen=5,
        regexMaxLen=254,
        sensitivity="CONFIDENTIAL",
        immutable=True,
        associationCount=3,
        synonyms=["email", "mail"],
    ),
    tag_json("t-phone", "Sensitive.PhoneNumber", sensitivity="CONFIDENTIAL", immutable=True),
    tag_json("t-rev", "Finance.Revenue", sensitivity="INTERNAL"),
    tag_json("t-net", "Finance.Revenue.Net", "t-rev"),
    tag_json("t-gross", "Finance.Revenue.Gross", "t-rev"),
    tag_json("t-fname", "Finance.Name"),
    tag_json("t-hname", "HR.Name"),
]
TAG_BY_KEY = {t["key"]: t for t in TAGS}


def view(
    key: str, resource: dict[str, Any], tag_key: str, field: str | None, state: str, **extra: Any
) -> dict[str, Any]:
    """A TagAssociationView."""
    tag = TAG_BY_KEY[tag_key]
    record: dict[str, Any] = {
        "key": key,
        "tagKey": tag_key,
        "tagName": tag["name"],
        "tagFullName": tag["fullName"],
        "domainKey": tag["domainKey"],
        "domainName": tag["domainName"],
        "resourceKey": resource["key"],
        "resourcePath": resource["resourcePath"],
        "dataSourceName": resource["dataSourceName"],
        "field": field or "",
        "state": state,
        "semantic": "OTHER",
        "description": None,
        "weight": 1.0,
        "rules": [],
        "sensitivity": tag["sensitivity"],
        "createdBy": "admin",
        "changedBy": "admin",
        "timeOfCreation": 1704067200000,
        "timeOfLastChange": 1704067200000,
    }
    record.update(extra)
    return record


CUSTOMERS = resource_json(
    1,
    name="customers.csv",
    resourcePath="crm/customers.csv",
    fields=[field_json("customer_id", 0, "LONG"), field_json("contact", 1)],
)
ORDERS = resource_json(
    2,
    name="orders.parquet",
    resourcePath="sales/orders.parquet",
    fields=[field_json("order_id", 0, "LONG"), field_json("amount", 1, "DOUBLE")],
)
RAW = resource_json(3, name="raw.csv", resourcePath="tmp/raw.csv", fields=[], status="BROWSED")
ORDERS_SQL = resource_json(
    4,
    name="orders",
    resourcePath="sales.orders",
    dataSourceKey="src-sql",
    dataSourceName="demo_sql",
    resourceType="resource_type_table",
    fields=[field_json("amount", 0, "DOUBLE")],
)
CUSTOMERS["tagAssociationViewList"] = [
    view("a-1", CUSTOMERS, "t-email", "contact", "SUGGESTED", weight=0.97, rules=["regex:Email"]),
    view("a-2", CUSTOMERS, "t-rev", None, "ACCEPTED"),
]
ORDERS["tagAssociationViewList"] = [
    view("a-3", ORDERS, "t-net", "amount", "REJECTED", weight=0.4),
    view("a-4", ORDERS, "t-gross", "amount", "ACCEPTED"),
]
RAW["tagAssociationViewList"] = []
ORDERS_SQL["tagAssociationViewList"] = []
RESOURCES = [CUSTOMERS, ORDERS, RAW, ORDERS_SQL]
ASSOCIATIONS = [v for r in RESOURCES for v in r["tagAssociationViewList"]]


def _query(request: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(str(request.url)).query)


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


class TagWorld:
    """In-memory tag service answering on a ``responses`` mock (see the module docstring)."""

    def __init__(
        self,
        mock: responses.RequestsMock,
        *,
        resources: list[dict] | None = None,
        associations: list[dict] | None = None,
        tags: list[dict] | None = None,
    ) -> None:
        self.mock = mock
        self.resources = RESOURCES if resources is None else resources
        self.associations = ASSOCIATIONS if associations is None else associations
        self.tags = TAGS if tags is None else tags
        #: ``item -> (ok, association or error)``; the default accepts every item.
        self.result: Callable[[dict], tuple[bool, dict]] = self._accept
        self.posted: list[list[dict]] = []
        mock.add(responses.GET, API + "/tagdomain", json=DOMAINS)
        mock.add(responses.GET, API + "/datasource", json=SOURCES)
        self._callback("GET", "/tag", lambda r: (200, self.tags))
        self._callback("GET", "/dataresource/metadata", self._metadata)
        self._callback("GET", "/tagassociation", self._list)
        self._callback("POST", "/tagassociation/list", self._post_list)

    def _callback(self, method: str, path: str, answer: Callable[[Any], tuple[int, Any]]) -> None:
        def respond(request: Any) -> tuple[int, dict[str, str], str]:
            status, body = answer(request)
            return status, {}, json.dumps(body)

        self.mock.add_callback(
            method, API + path, callback=respond, content_type="application/json"
        )

    def _metadata(self, request: Any) -> tuple[int, Any]:
        query = _query(request)
        found = list(self.resources)
        for text in query.get("propertyFilter", []):
            prop, _, values = text.partition(":")
            options = values.split(";")
            if prop == "id":
                found = [r for r in found if r["key"] in options]
            elif prop == "data_source":
                found = [r for r in found if r["dataSourceName"] in options]
            elif prop == "path":
                found = [r for r in found if any(_under(r["resourcePath"], p) for p in options)]
        start, size = int(query["start"][0]), int(query["pageSize"][0])
        page = found[start : start + size]
        return 200, {"list": page, "totalCount": len(found), "start": start, "pageSize": size}

    def _list(self, request: Any) -> tuple[int, Any]:
        query = {name: values[0] for name, values in _query(request).items()}
        found = [
            a
            for a in self.associations
            if ("state" not in query or a["state"] == query["state"])
            and ("tagKey" not in query or a["tagKey"] == query["tagKey"])
            and ("minWeight" not in query or (a["weight"] or -1) >= float(query["minWeight"]))
            and (
                "dataSourceKey" not in query
                or next(r for r in self.resources if r["key"] == a["resourceKey"])[
                    "dataSourceKey"
                ]
                == query["dataSourceKey"]
            )
        ]
        start, size = int(query.get("start", 0)), int(query.get("pageSize", 500))
        page = found[start : start + size]
        return 200, {"list": page, "totalCount": len(found), "start": start, "pageSize": size}

    @staticmethod
    def _accept(item: dict) -> tuple[bool, dict]:
        resource = next(r for r in RESOURCES if r["key"] == item["resourceKey"])
        return True, view("new-" + item["tagKey"], resource, item["tagKey"], item.get("field"),
                          item.get("state", "ACCEPTED"))

    def _post_list(self, request: Any) -> tuple[int, Any]:
        items = json.loads(request.body)
        self.posted.append(items)
        answers = []
        for index, item in enumerate(items):
            ok, payload = self.result(item)
            answers.append(
                {"index": index, "ok": True, "association": payload}
                if ok
                else {"index": index, "ok": False, "error": payload}
            )
        return 201, answers


def calls(mock: responses.RequestsMock, method: str, path: str) -> list[Any]:
    """Recorded calls of ``method`` to ``API + path`` (query ignored)."""
    return [
        call
        for call in mock.calls
        if call.request.method == method and str(call.request.url).split("?")[0] == API + path
    ]


def query_of(call: Any) -> str:
    """The raw query string a recorded call sent."""
    return urlsplit(str(call.request.url)).query
