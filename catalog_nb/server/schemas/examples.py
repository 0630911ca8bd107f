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
    "entities": [{"key": "0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f", "type": "dataresource",
                  "name": "orders.csv", "resourcePath": "sales/orders.csv", "score": 3.2}],
    "matchedEntityCount": 1, "totalResultCount": 1, "responseEntityCount": 1,
    "matchedKeys": ["0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f"], "start": 0, "size": 20,
    "removedSinceSearch": 0, "facetGroups": [], "refDataResources": [], "nextCursor": None,
}
_COMPARISON = {"virtualFolder": "", "tableOne": "sales.orders", "tableTwo": "sales.orders_2023",
               "commonFields": ["id", "customer_id", "total"], "tableOneUniqueFields": ["status"],
               "tableTwoUniqueFields": ["region"], "overlapPercent": 60.0}

# Data sources, jobs, virtual folders and data sets (a SQL warehouse, profiled).
SOURCE_CREATE = {"name": "warehouse", "sourceType": "SQL",
                 "uri": "postgresql://catalog:s3cret-pass@db.example.com:5432/warehouse",
                 "description": "Sales and finance warehouse", "includePatterns": ["sales.*"]}
SOURCE_UPDATE = {"description": "Sales and finance warehouse (read replica)"}
JOB_CREATE = {"jobType": "PROFILE", "dataSourceKey": ROLE["dataSourceKeys"][0],
              "resourcePath": "sales.orders"}
JOB: dict[str, Any] = {
    "key": "6f1f0942770e4d66ba4e9d4bb4525bab", "jobType": "PROFILE",
    "dataSourceKey": ROLE["dataSourceKeys"][0], "dataSourceName": "warehouse",
    "resourcePath": None, "state": "SUCCEEDED", "progress": 1.0, "total": 11, "done": 11,
    "workUnit": "rows", "workTotal": 2110, "workDone": 2110,
    "counts": {"created": 11, "updated": 0, "unchanged": 0, "skipped": 0, "errors": 0},
    "engine": "local", "worker": "vm:10657", "errors": [],
    "message": "Profiled 11 resources of data source 'warehouse': 11 new, 0 updated, "
               "0 unchanged (not read again), 0 errors.",
    "requestedBy": "admin", "timeOfCreation": 1717430400000, "startTime": 1717430400080,
    "endTime": 1717430402300,
}
SOURCE: dict[str, Any] = {
    "key": ROLE["dataSourceKeys"][0], "type": "datasource", "name": "warehouse",
    "description": "Sales and finance warehouse", "sourceType": "SQL",
    "uri": "postgresql://catalog:***@db.example.com:5432/warehouse",
    "includePatterns": ["sales.*"], "excludePatterns": [], "engine": "local",
    "timeOfCreation": 1717430400000, "timeOfLastChange": 1717430400000, "resourceCount": 11,
    "lastJob": JOB,
}
_PATH_SPEC = {"sourcePath": "sales", "includePattern": "orders*", "excludePattern": None}
FOLDER_CREATE = {"name": "Finance", "description": "Finance tables",
                 "dataSourceKey": SOURCE["key"],
                 "pathSpecs": [{"sourcePath": "sales", "includePattern": "orders*"}]}
FOLDER_UPDATE = {"description": "Finance tables and views"}
FOLDER: dict[str, Any] = {
    "key": "39a6dd6b9bde41b2a0a06711e87d8c9e", "type": "virtualfolder", "name": "Finance",
    "description": "Finance tables", "dataSourceKey": SOURCE["key"], "dataSourceName": "warehouse",
    "parentKey": None, "pathSpecs": [_PATH_SPEC], "resourceCount": 2,
    "timeOfCreation": 1717430400000, "timeOfLastChange": 1717430400000,
}
DATASET_CREATE = {"name": "Quarterly revenue", "description": "Orders and payments",
                  "dataSetPathSpecs": {SOURCE["key"]: [{"sourcePath": "sales.orders"}]}}
DATASET_UPDATE = {"description": "Orders, items and payments"}
DATASET: dict[str, Any] = {
    "key": "26d6c6440a014e37b1c9b6084a6d5891", "type": "dataset", "name": "Quarterly revenue",
    "description": "Orders and payments", "resourceCount": 1,
    "dataSetPathSpecs": {SOURCE["key"]: [{"sourcePath": "sales.orders", "includePattern": None,
                                          "excludePattern": None}]},
    "timeOfCreation": 1717430400000, "timeOfLastChange": 1717430400000,
}

# Tag associations, the data resource they tag, its joins and lineage.
_RESOURCE_KEY = REVIEW["entityKey"]
ASSOCIATION_IN = {"resourceKey": _RESOURCE_KEY, "tagKey": TAG["key"], "field": "total",
                  "state": "ACCEPTED", "semantic": "OTHER"}
ASSOCIATION_UPDATE = {"state": "REJECTED", "description": "Totals include tax, not revenue"}
ASSOCIATION: dict[str, Any] = {
    "key": "426f820aba764af4b4cc542a212bd627", "tagKey": TAG["key"], "tagName": "Revenue",
    "tagFullName": "Finance.Revenue", "domainKey": DOMAIN["key"], "domainName": "Finance",
    "resourceKey": _RESOURCE_KEY, "resourcePath": "sales.orders",
    "dataSourceName": "warehouse", "field": "total", "state": "ACCEPTED", "semantic": "OTHER",
    "description": None, "weight": 1.0, "rules": [], "sensitivity": "INTERNAL",
    "createdBy": "jdoe", "changedBy": "jdoe", "timeOfCreation": 1717430400000,
    "timeOfLastChange": 1717430400000,
}
ASSOCIATION_PAGE = {"list": [ASSOCIATION], "totalCount": 1, "start": 0, "pageSize": 100}
BULK_ITEM = {"index": 0, "ok": True, "outcome": "created", "association": ASSOCIATION}
_NODE = {"key": _RESOURCE_KEY, "name": "orders", "path": "sales.orders",
         "resourceType": "resource_type_table", "dataSourceKey": SOURCE["key"],
         "dataSourceName": "warehouse", "fileFormat": None, "owner": "sales-data@example.com",
         "description": "One row per order", "rowCount": 669, "schemaName": "sales",
         "tableName": "orders", "lineageState": None, "lineageReason": None}
_VIEW_NODE = {**_NODE, "key": "228fdf38d70d4de590505cf238fb449b", "name": "customer_revenue",
              "path": "sales.customer_revenue", "resourceType": "resource_type_view",
              "owner": None, "description": None, "rowCount": 131,
              "tableName": "customer_revenue", "lineageState": "PARSED"}
_EDGE = {"key": "481ee6ad65ef47bc8f8baa8da610197a", "upstreamKey": _NODE["key"],
         "downstreamKey": _VIEW_NODE["key"], "lineageType": "FACTUAL", "score": 1.0,
         "evidence": {"parser": "sqlglot", "dialect": "postgres", "state": "PARSED",
                      "tablesRead": ["sales.orders", "sales.customers"], "unknownTables": []}}
LINEAGE = {"resourceKey": _RESOURCE_KEY, "upstream": 1, "downstream": 1, "fieldLineage": False,
           "lineageTypes": ["FACTUAL", "INFERRED"],
           "nodes": [{**_NODE, "distance": 0}, {**_VIEW_NODE, "distance": 1}], "edges": [_EDGE],
           "truncated": False, "truncatedReasons": [], "hiddenCount": 0, "maxDepth": 10}
LINEAGE_PAGE = {"list": [{**_EDGE, "upstream": _NODE, "downstream": _VIEW_NODE}],
                "totalCount": 1, "start": 0, "size": 100}
JOIN: dict[str, Any] = {
    "key": "3ea9eb14f80546f0b2f9dd9ac4e5ff86", "leftResourceId": "a54458aec44d4592bc1623abd654b4b3",
    "leftResourceName": "customers", "leftPath": "sales.customers",
    "leftSourceId": SOURCE["key"], "leftSourceName": "warehouse", "leftFileFormat": "",
    "leftOwner": "", "leftSize": 0, "leftTimeOfLastChange": 1717430400000,
    "leftTimeOfResourceChange": 0, "leftTags": [], "rightResourceId": _RESOURCE_KEY,
    "rightResourceName": "orders", "rightPath": "sales.orders", "rightSourceId": SOURCE["key"],
    "rightSourceName": "warehouse", "rightFileFormat": "", "rightOwner": "sales-data@example.com",
    "rightSize": 0, "rightTimeOfLastChange": 1717430400000, "rightTimeOfResourceChange": 0,
    "rightTags": [], "leftCols": ["customer_id"], "rightCols": ["customer_id"],
    "leftOrigin": ["DECLARED"], "rightOrigin": ["DECLARED"], "joinOp": "=",
    "joinOrder": "LEFT_TO_RIGHT", "joinCardinality": "1:N", "joinStatState": "DECLARED",
    "tags": [], "score": 1.0,
    "stats": {"score": "1", "leftInRight": "0.8733", "rightInLeft": "1", "leftDistinct": "150",
              "rightDistinct": "131", "sampleSize": "150", "nameSimilarity": "1", "evidence": ""},
}
_FIELD = {"name": "total", "displayName": "Order total", "description": "Amount in EUR, with tax",
          "comment": None, "dataType": "DOUBLE", "nullable": False, "position": 3,
          "properties": [{"name": "density", "value": 1.0, "type": "DOUBLE"},
                         {"name": "distinctCount", "value": 640, "type": "LONG"}],
          "tags": [ASSOCIATION]}
RESOURCE: dict[str, Any] = {
    **_ENTITY, "key": _RESOURCE_KEY, "type": "dataresource", "name": "orders",
    "resourcePath": "sales.orders", "resourceType": "resource_type_table",
    "description": "One row per order", "owner": "sales-data@example.com",
    "dataSourceName": "warehouse", "dataSourceType": "SQL", "dataSourceKey": SOURCE["key"],
    "dataSourceUri": SOURCE["uri"], "databaseName": "warehouse", "dataSchemaName": "sales",
    "tableName": "orders", "tableType": "TABLE", "resourceState": "OK", "status": "PROFILED",
    "fileFormat": None, "fileFormatDisplay": None, "separator": None, "errorMsg": None,
    "runId": JOB["key"], "sensitivity": "INTERNAL", "rowCount": 669, "fieldCount": 8,
    "resourceSize": 0, "partitionCount": 0, "headerRow": 0, "header": False,
    "timeOfLastProfile": 1717430402300, "timeOfLastRefresh": 1717430402300, "processedTime": 21,
    "updateable": ["customProperties", "description", "fields", "owner", "richDescription"],
    "canAssociateTag": True, "canDisassociateTag": True, "canRunJob": True,
    "canAddOrRemoveResourceFromDataset": True, "canCreateHiveTableOrView": False,
    "permittedToRead": True, "dataPermitted": True, "dataSetRoot": False, "dataSetMember": True,
    "collectionRoot": False, "parquetBinaryAsString": False, "lastPartitionProfile": False,
    "favorite": True, "subscribersCount": 0, "curationCount": 1, "dataSetSchemaVersion": 0,
    "averageRating": 4.0, "ratingCount": 1, "usageCount": 0, "allowedTagDomainKeys": [],
    "dataSetVirtualFolders": [], "joinResources": [], "origins": [], "logicalFolders": [],
    "partitionDefinition": [], "permToReadMap": {}, "reportedFields": [],
    "dataSetPathSpecs": {}, "experts": None, "joinConditions": [JOIN],
    "detailedStatus": [{"stageName": "profile", "status": "SUCCEEDED", "errorMsg": None,
                        "runId": JOB["key"], "workflowId": None, "startTime": 1717430400080,
                        "endTime": 1717430402300, "numberSampledRows": 669,
                        "lastPartitionProfile": False}],
    "timeOfResourceChange": None, "timeOfResourceCreation": None, "timeOfResourceAccess": None,
    "landing": False, "encoding": None, "collectionKey": None, "memberPaths": [],
    "inferredKeys": {"primaryKey": ["order_id"], "uniqueColumns": ["order_id"],
                     "compositeKeys": []},
    "sourceDetails": {"primaryKey": ["order_id"], "foreignKeys": [{
        "columns": ["customer_id"], "referredSchema": "sales", "referredTable": "customers",
        "referredColumns": ["customer_id"]}]},
    **dict.fromkeys(("dataSetId", "xmlRowTag", "xmlRootTag", "datasetVirtualFolderName",
                     "logicalFolderContext", "dataSetRootResource", "browseContextDataset",
                     "virtualFolderContextName")),
    "fields": [_FIELD], "tagAssociationViewList": [ASSOCIATION],
}
#: ``PUT /dataresource/...``: what people write about a resource (server/openapi.py documents
#: the body the route reads itself).
RESOURCE_CHANGE = {"description": "One row per order", "owner": "sales-data@example.com",
                   "customProperties": [{"name": "Owner", "value": "Sales operations"}],
                   "fields": [{"name": "total", "displayName": "Order total",
                               "description": "Amount in EUR, with tax"}]}
#: ``POST /user/remove/role``: role names to take, by user key.
ROLE_REMOVALS = {USER["key"]: ["Finance Analysts"]}
_REVIEW_OUT = {**REVIEW, "key": "96c48ce0264d4e92acc8fb26c22ce46f", "userName": "jdoe",
               "timeOfCreation": 1717430400000, "timeOfLastChange": 1717430400000,
               "resourcePath": "sales.orders", "dataSourceName": "warehouse"}
REVIEW_UPDATE = {"rating": 5, "title": "Clean, current and documented"}
CONFIG_UPDATE = {"value": 60}
USER_FOUND = {"name": "jdoe", "key": USER["key"], "attributes": USER["attributes"]}

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
    ("GET", "/favorites"): {"list": [{
        **{k: v for k, v in RESOURCE.items() if k not in ("fields", "tagAssociationViewList")},
        "favoriteTime": 1717430400000}], "totalCount": 1},
    ("POST", "/favorites/{entity_key}"): {"entityKey": _RESOURCE_KEY,
                                          "favoriteTime": 1717430400000},
    ("GET", "/dataresource/metadata"): {"list": [RESOURCE], "totalCount": 1, "start": 0,
                                        "pageSize": 100, "nextCursor": None},
    ("GET", "/dataresource/{key}"): RESOURCE,
    ("PUT", "/dataresource/{key}"): RESOURCE,
    ("GET", "/dataresource/source/{source_name}"): RESOURCE,
    ("PUT", "/dataresource/source/{source_name}"): RESOURCE,
    ("GET", "/joincondition"): {"list": [JOIN], "totalCount": 1, "start": 0, "size": 1000},
    ("GET", "/reviews"): {"list": [_REVIEW_OUT], "totalCount": 1, "averageRating": 4.0,
                          "ratingCount": 1},
    ("POST", "/reviews"): _REVIEW_OUT,
    ("GET", "/reviews/{key}"): _REVIEW_OUT,
    ("PUT", "/reviews/{key}"): {**_REVIEW_OUT, **REVIEW_UPDATE},
}


def examples(*bodies: dict[str, Any]) -> ConfigDict:
    """The ``model_config`` entry giving a model's examples (merged with its base's config)::

        model_config = examples(TAG)
    """
    return ConfigDict(json_schema_extra={"examples": list(bodies)})
