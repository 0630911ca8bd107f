"""Example bodies of the OpenAPI document: answers of a running catalog, in the spec's terms.

Models name theirs with :func:`examples` (``model_config``), and ``server/openapi.py`` sets
each operation's request and success examples from its models' (or from :data:`OPERATIONS`
for the answers that have no model).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict

_ENTITY: dict[str, Any] = {
    "description": None, "richDescription": None, "timeOfCreation": 1717430400000,
    "timeOfLastChange": 1717430400000, "restricted": [], "viewAble": [], "updateable": [],
    "score": 0.0, "customProperties": [],
}
DOMAIN: dict[str, Any] = {
    "key": "98d82b308fa34118abb21b8c02b4455b", "name": "Finance",
    "description": "Financial data and reporting terms", "immutable": False, "tagCount": 1,
    "timeOfCreation": 1717430400000, "timeOfLastChange": 1717430400000, "color": "#2E7D32",
    "semantic": "USER_CREATED", "createTags": True, "deleteTags": True, "readTags": True,
}
TAG: dict[str, Any] = {
    **_ENTITY, "key": "afc90c6b468e49b190b7f4220c50c8bc", "type": "tag",
    "description": "Income from sales", "name": "Revenue", "fullName": "Finance.Revenue",
    "domainKey": DOMAIN["key"], "domainName": "Finance", "parentKey": None, "children": [],
    "tagState": "VALUE", "state": "ACCEPTED", "enable": True, "learningEnabled": False,
    "immutable": False, "minScore": 0.8, "regEx": None, "regexMinLen": 0, "regexMaxLen": 0,
    "regexFilterClass": None, "synonyms": ["Income"], "sensitivity": "",
    "allSensitivities": ["PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED"],
    "externalId": "", "externalSourceName": "", "associationCount": 12,
}
ROLE: dict[str, Any] = {
    **_ENTITY, "key": "a1c80b414295421cb4333416ec0707f5", "type": "role",
    "description": "Analysts of the finance team", "name": "Finance Analysts",
    "accessLevel": "Analyst", "defaultRole": False, "metadataAccessOption": "RESTRICTED",
    "dataAccessOption": "RESTRICTED", "resourceReadAccessLevel": None,
    "jobTemplateCreationAllowed": False, "jobExecutionAllowed": False, "virtualFolderKeys": [],
    "domainKeys": [DOMAIN["key"]], "dataSourceKeys": ["5b0e4c1d2f3a4b5c8d9e0f1a2b3c4d5e"],
    "datasetKeys": [],
}
USER: dict[str, Any] = {
    **_ENTITY, "key": "86ad6c13139040e6ab3e45e7e046214c", "type": "user", "name": "jdoe",
    "prefiltersEnabled": False, "assignedByMap": {"Finance Analysts": "admin"},
    "accessLevels": ["Analyst"],
    "attributes": {"firstName": "John", "lastName": "Doe", "email": "jdoe@example.com"},
    "roles": ["Finance Analysts"], "admin": False, "passwordSet": True,
}
LOGIN = {"username": "jdoe", "password": "s3cret-pass"}
LOGIN_RESULT = {"loginResult": "SUCCESS", "message": "Logged in as jdoe.",
                "userInfo": {"username": "jdoe", "displayName": "John Doe"}}
USER_CREATE = {"name": "jdoe", "roles": ["Finance Analysts"], "password": "s3cret-pass",
               "attributes": {"firstName": "John", "lastName": "Doe",
                              "email": "jdoe@example.com"}}
USER_UPDATE = {"attributes": {"firstName": "Robert"}, "prefiltersEnabled": True}
ROLE_CREATE = {"name": "Finance Analysts", "description": "Analysts of the finance team",
               "accessLevel": "Analyst", "domainKeys": [DOMAIN["key"]]}
DOMAIN_IN = {"name": "Finance", "description": "Financial data and reporting terms",
             "color": "#2E7D32"}
TAG_CREATE = {"name": "Revenue", "domainKey": DOMAIN["key"], "description": "Income from sales",
              "synonyms": ["Income"]}
TAG_UPDATE = {"description": "Income from sales, net of returns", "enable": True}
SEARCH = {"searchType": "BASIC", "searchPhrase": "orders", "partialSearch": False,
          "facetSelections": [], "sortBySpecs": [{"propertyName": "score"}],
          "pagingCriteria": {"start": 0, "size": 20}, "preformedQuery": False}
SEARCH_PAGE = {"key": "e8775fdaf1084a079b92f09c85c81469",
               "pagingCriteria": {"start": 20, "size": 20}}
REVIEW = {"entityKey": "0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f", "rating": 4,
          "title": "Clean and current", "text": "Refreshed nightly; the amounts are in EUR."}
AUDIT_SEARCH = {"action": "LOGIN", "outcome": "FAILURE", "fromTime": 1717430400000,
                "from": 0, "size": 100}
AUDIT_EVENT = {"key": "948ac464960f4d03ad02b622522cde39", "time": 1717430400000,
               "userName": "admin", "userKey": "9ee27109eac0481bb572a38bce270504",
               "action": "CREATE", "objectType": "USER", "objectKey": USER["key"],
               "objectName": "jdoe", "outcome": "SUCCESS", "message": None,
               "clientAddress": "10.0.4.17"}
AUDIT_PAGE = {"list": [AUDIT_EVENT], "totalCount": 1, "from": 0, "size": 100}
CUSTOM_PROPERTY_IN = {"name": "Owner", "displayName": "Data owner",
                      "description": "Who answers for the data", "type": "STRING"}
CUSTOM_PROPERTY = {**CUSTOM_PROPERTY_IN, "key": "9d15498f822348dca7015ac6c22cb2cd",
                   "facetAble": False, "timeOfCreation": 1717430400000,
                   "timeOfLastChange": 1717430400000}
_CONFIG = {"name": "session.idleTimeoutMinutes", "value": 120.0, "type": "DOUBLE",
           "description": "Minutes without a request after which a session expires.",
           "readOnly": False, "defaultValue": 120.0, "minimum": 1, "maximum": 525600,
           "changedBy": None, "timeOfLastChange": None}

_SEARCH_RESULT = {
    "key": "e8775fdaf1084a079b92f09c85c81469", "searchPhrase": "orders",
    "facetResults": [{"name": "tag", "displayName": "Tag", "totalCount": 1,
                      "categoryCounts": {"Finance.Revenue": 1},
                      "selectedCategories": []}],
    "preFilters": [], "facetSelections": SEARCH["facetSelections"],
    "entities": [{"key": "0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f", "type": "data_resource",
                  "name": "orders.csv", "resourcePath": "sales/orders.csv", "score": 3.2}],
    "matchedEntityCount": 1, "totalResultCount": 1, "responseEntityCount": 1,
    "matchedKeys": ["0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f"], "start": 0, "size": 20,
    "removedSinceSearch": 0, "facetGroups": [], "refDataResources": [], "nextCursor": None,
}
_COMPARISON = {"virtualFolder": "", "tableOne": "sales.orders", "tableTwo": "sales.orders_2023",
               "commonFields": ["id", "customer_id", "total"], "tableOneUniqueFields": ["status"],
               "tableTwoUniqueFields": ["region"], "overlapPercent": 60.0}

#: Success answers of operations without a response model, by (method, path below /api/v2).
OPERATIONS: dict[tuple[str, str], Any] = {
    ("GET", "/version"): {"name": "catalog-nb", "version": "0.1.0", "apiVersion": "v2",
                          "build": "local"},
    ("GET", "/logout"): {"redirectUrl": "/api/v2/login", "message": "Logged out."},
    ("POST", "/search/new"): _SEARCH_RESULT,
    ("POST", "/search/runFacet"): {**_SEARCH_RESULT, "searchPhrase": None},
    ("POST", "/search/page"): _SEARCH_RESULT,
    ("GET", "/search/facets"): {"DATA_RESOURCE": [
        {"facetName": "tag", "displayName": "Tag", "facetCategories": ["Finance.Revenue"]}]},
    ("GET", "/overlap/table"): _COMPARISON,
    ("POST", "/overlap/table"): [_COMPARISON],
    ("GET", "/user/permit/source"): {"jdoe": True},
    ("GET", "/user/permit/resource"): {"jdoe": False},
    ("GET", "/config"): [_CONFIG],
    ("GET", "/config/{name}"): _CONFIG,
    ("PUT", "/config/{name}"): {**_CONFIG, "value": 60.0, "changedBy": "admin",
                                "timeOfLastChange": 1717430400000},
    ("GET", "/favorites"): {"list": [{"key": "0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f",
                                      "type": "data_resource", "name": "orders.csv"}],
                            "totalCount": 1},
}


def examples(*bodies: dict[str, Any]) -> ConfigDict:
    """The ``model_config`` entry giving a model's examples (merged with its base's config)::

        model_config = examples(TAG)
    """
    return ConfigDict(json_schema_extra={"examples": list(bodies)})
