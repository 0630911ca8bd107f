"""Canned answers of the lineage, join condition and overlap endpoints, shaped as
``docs/relations-api.md`` says, for the offline graph and drawing tests."""

from __future__ import annotations

from typing import Any

SQL, FILES = "demo_sql", "demo_files"


def node(key: str, path: str, distance: int | None = 0, *, source: str = SQL,
         rtype: str = "table", **extra: Any) -> dict[str, Any]:
    """A lineage node JSON."""
    schema, _, table = path.partition(".") if source == SQL else ("", "", "")
    return {
        "key": key, "name": path.rsplit("/", 1)[-1].split(".")[-1], "path": path,
        "resourceType": f"resource_type_{rtype}", "dataSourceKey": f"src-{source}",
        "dataSourceName": source, "fileFormat": None if source == SQL else path.rsplit(".")[-1],
        "owner": "ada", "description": None, "rowCount": 10, "schemaName": schema or None,
        "tableName": table or None, "distance": distance,
        "lineageState": "PARSED" if rtype == "view" else None, "lineageReason": None, **extra,
    }


def edge(up: str, down: str, ltype: str = "FACTUAL", score: float | None = None,
         **extra: Any) -> dict[str, Any]:
    """A lineage edge JSON."""
    return {"key": f"e-{up}-{down}", "upstreamKey": up, "downstreamKey": down,
            "lineageType": ltype, "score": score, "evidence": {"parser": "sqlglot"}, **extra}


def answer(root: str, nodes: list[dict[str, Any]], edges: list[dict[str, Any]], *,
           upstream: int = 1, downstream: int = 1, truncated: bool = False,
           reasons: list[str] | None = None, hidden: int = 0) -> dict[str, Any]:
    """A ``GET /lineage/{key}`` answer."""
    return {
        "resourceKey": root, "upstream": upstream, "downstream": downstream,
        "fieldLineage": any("fieldLineage" in e for e in edges),
        "lineageTypes": ["FACTUAL", "INFERRED"], "nodes": nodes, "edges": edges,
        "truncated": truncated, "truncatedReasons": reasons or [], "hiddenCount": hidden,
        "maxDepth": 10,
    }


#: The demo lake's sales views around ``top`` (sales.top_customers), walked upstream.
TOP_UPSTREAM = answer(
    "top",
    [
        node("top", "sales.top_customers", 0, rtype="view"),
        node("rev", "sales.customer_revenue", -1, rtype="view"),
        node("cust", "sales.customers", -2),
        node("ord", "sales.orders", -2),
        node("items", "sales.order_items", -2),
    ],
    [
        edge("rev", "top", fieldLineage=[{"downstreamField": "customer_id",
                                          "upstreamFields": ["customer_id"]}]),
        edge("cust", "rev"), edge("ord", "rev"), edge("items", "rev"),
    ],
    upstream=2, downstream=0,
)

#: Downstream of ``cust`` (sales.customers): views and an inferred file copy.
CUSTOMERS_DOWNSTREAM = answer(
    "cust",
    [
        node("cust", "sales.customers", 0),
        node("rev", "sales.customer_revenue", 1, rtype="view"),
        node("contacts", "sales.customer_contacts", 1, rtype="view"),
        node("csv", "crm/customers.csv", 1, source=FILES, rtype="file"),
        node("top", "sales.top_customers", 2, rtype="view"),
        node("clean", "crm/customers_clean.csv", 2, source=FILES, rtype="file"),
    ],
    [
        edge("cust", "rev"), edge("cust", "contacts"), edge("rev", "top"),
        edge("cust", "csv", "INFERRED", 0.97), edge("csv", "clean", "INFERRED", 0.95),
    ],
    upstream=0, downstream=10,
)


def condition(key: str, left: tuple[str, str, str], lcols: list[str],
              right: tuple[str, str, str], rcols: list[str], card: str, score: float,
              origin: str = "DISCOVERED") -> dict[str, Any]:
    """A JoinConditionTO; ``left``/``right`` are ``(key, source, path)``."""
    def side(prefix: str, which: tuple[str, str, str]) -> dict[str, Any]:
        key_, source, path = which
        return {
            f"{prefix}ResourceId": key_, f"{prefix}ResourceName": path.split(".")[-1],
            f"{prefix}Path": path, f"{prefix}SourceId": f"src-{source}",
            f"{prefix}SourceName": source, f"{prefix}FileFormat": None, f"{prefix}Owner": None,
            f"{prefix}Size": None, f"{prefix}TimeOfLastChange": 0,
            f"{prefix}TimeOfResourceChange": 0, f"{prefix}Tags": [],
            f"{prefix}Origin": [origin],
        }
    return {
        "key": key, **side("left", left), **side("right", right), "leftCols": lcols,
        "rightCols": rcols, "joinOp": "=", "joinOrder": "LEFT_TO_RIGHT",
        "joinCardinality": card, "joinStatState": origin, "tags": [],
        "stats": {"score": str(score), "leftInRight": "1.0", "rightInLeft": "0.9",
                  "leftDistinct": "150", "rightDistinct": "120", "sampleSize": "128",
                  "nameSimilarity": "1.0"},
        "score": score,
    }


CUST = ("cust", SQL, "sales.customers")
ORD = ("ord", SQL, "sales.orders")
ITEMS = ("items", SQL, "sales.order_items")
PROD = ("prod", SQL, "sales.products")
CSV = ("csv", FILES, "crm/customers.csv")
EMP = ("emp", SQL, "hr.employees")

#: Join conditions of a small sales corner of the demo lake.
CONDITIONS = [
    condition("j1", CUST, ["customer_id"], ORD, ["customer_id"], "1:N", 1.0, "DECLARED"),
    condition("j2", ORD, ["order_id"], ITEMS, ["order_id"], "1:N", 1.0, "DECLARED"),
    condition("j3", PROD, ["product_id"], ITEMS, ["product_id"], "1:N", 1.0, "DECLARED"),
    condition("j4", CUST, ["customer_id"], CSV, ["customer_id"], "1:1", 0.93),
    condition("j5", CUST, ["email"], CSV, ["contact"], "1:1", 0.71),
    condition("j6", CSV, ["customer_id"], ORD, ["customer_id"], "1:N", 0.88),
    condition("j7", EMP, ["employee_id"], EMP, ["manager_id"], "1:N", 1.0, "DECLARED"),
]


def page(items: list[dict[str, Any]], start: int = 0) -> dict[str, Any]:
    """A ``{list, totalCount, start, size}`` page holding every item."""
    return {"list": items, "totalCount": len(items), "start": start, "size": 1000}
