"""What the demo lake's files contain, and the declared part of its ground truth.

``file_frames`` cuts the company's records into the frames the files are written from (nested
JSON flattened to dotted names, in record order). The tables below declare what only the
generator can know: which columns are sensitive, which columns share a key domain, which
resource derives from which. Statistics (uniqueness, containment) are measured on the data by
``lake.py`` rather than declared, so they cannot drift from it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from catalog_nb.demo.lake_data import Company
from catalog_nb.demo.truth import DerivationKind

CUSTOMER_EXPORT = {  # crm/customers.csv column <- sales.customers column
    "customer_id": "customer_id", "label": "full_name", "contact": "email",
    "reach_no": "phone", "ident": "national_id", "born": "birth_date", "street": "street",
    "city": "city", "pc": "postal_code", "segment": "segment", "loyalty_no": "loyalty_no",
    "signup_ts": "created_at",
}
CLEAN_COLUMNS = ("customer_id", "label", "contact", "reach_no", "pc", "segment")
CLEAN_PREDICATE = "contact and reach_no present, segment in ('retail', 'smb')"
# hr/employees.csv column <- hr.employees column (dept is hr.departments.code, joined in)
EMPLOYEE_EXPORT = {
    "emp_no": "employee_id", "nom": "full_name", "c_addr": "email", "dob_ts": "birth_date",
    "hired": "hired_on", "sal_acct": "bank_account", "gross": "salary",
}
ORDER_EXPORT = {  # sales/orders/*.csv column <- sales.orders column (items, total computed)
    "order_no": "order_no", "customer_id": "customer_id", "ordered_at": "ordered_at",
    "status": "status", "channel": "channel", "store_id": "store_id",
    "ship_zip": "ship_postcode",
}

# path -> (file format, encoding, separator)
FILE_FORMATS: dict[str, tuple[str, str | None, str | None]] = {
    "crm/customers.csv": ("csv", "utf-8", ","),
    "crm/customers_clean.csv": ("csv", "utf-8", ","),
    "hr/employees.csv": ("csv", "cp1252", ";"),
    "sales/orders": ("csv", "utf-8", ","),
    "finance/payments.parquet": ("parquet", None, None),
    "finance/payments_2024.csv": ("csv", "utf-8", ","),
    "web/access_log.jsonl": ("jsonl", "utf-8", None),
    "ref/stores.json": ("json", "utf-8", None),
}

_CUSTOMER = {"full_name": "person_name", "email": "email", "phone": "phone",
             "national_id": "national_id", "birth_date": "date_of_birth",
             "postal_code": "postal_code"}
_PAYMENT = {"pan_ref": "payment_card", "acct": "iban", "origin": "ip_address"}

# resource -> column -> sensitive kind; every column not named here holds none.
SENSITIVE: dict[str, dict[str, str]] = {
    "crm/customers.csv": {file: _CUSTOMER[sql] for file, sql in CUSTOMER_EXPORT.items()
                          if sql in _CUSTOMER},
    "crm/customers_clean.csv": {"label": "person_name", "contact": "email", "reach_no": "phone",
                                "pc": "postal_code"},
    "hr/employees.csv": {"nom": "person_name", "c_addr": "email", "dob_ts": "date_of_birth",
                         "sal_acct": "iban"},
    "sales/orders": {"ship_zip": "postal_code"},
    "finance/payments.parquet": _PAYMENT,
    "finance/payments_2024.csv": _PAYMENT,
    "web/access_log.jsonl": {"client.ip": "ip_address"},
    "ref/stores.json": {"address.postcode": "postal_code", "tel": "phone",
                        "manager.name": "person_name", "manager.email": "email"},
    "sales.customers": _CUSTOMER,
    "sales.orders": {"ship_postcode": "postal_code"},
    "sales.customer_revenue": {"full_name": "person_name"},
    "sales.customer_contacts": {"name": "person_name", "mail": "email", "tel": "phone"},
    "sales.top_customers": {"full_name": "person_name"},
    "hr.employees": {"full_name": "person_name", "email": "email", "phone": "phone",
                     "national_id": "national_id", "birth_date": "date_of_birth",
                     "bank_account": "iban"},
    "hr.staff_directory": {"name": "person_name", "work_email": "email"},
}

# Key domains: the columns holding one kind of identifier; the home (unique) column first.
JOIN_DOMAINS: dict[str, list[tuple[str, str]]] = {
    "customer": [
        ("sales.customers", "customer_id"), ("crm/customers.csv", "customer_id"),
        ("crm/customers_clean.csv", "customer_id"), ("sales.customer_revenue", "customer_id"),
        ("sales.customer_contacts", "id"), ("sales.top_customers", "customer_id"),
        ("sales.orders", "customer_id"), ("sales/orders", "customer_id"),
        ("finance/payments.parquet", "customer_id"),
        ("finance/payments_2024.csv", "customer_id"), ("web/access_log.jsonl", "session.user"),
    ],
    "customer_email": [
        ("sales.customers", "email"), ("crm/customers.csv", "contact"),
        ("crm/customers_clean.csv", "contact"), ("sales.customer_contacts", "mail"),
    ],
    "order": [("sales.orders", "order_id"), ("sales.order_items", "order_id")],
    "order_no": [
        ("sales.orders", "order_no"), ("sales/orders", "order_no"),
        ("finance/payments.parquet", "order_no"), ("finance/payments_2024.csv", "order_no"),
    ],
    "product": [("sales.products", "product_id"), ("sales.order_items", "product_id")],
    "store": [("ref/stores.json", "store_id"), ("sales.orders", "store_id"),
              ("sales/orders", "store_id")],
    "payment": [("finance/payments.parquet", "payment_id"),
                ("finance/payments_2024.csv", "payment_id")],
    "employee": [
        ("hr.employees", "employee_id"), ("hr/employees.csv", "emp_no"),
        ("hr.staff_directory", "id"), ("hr.employees", "manager_id"),
        ("ref/stores.json", "manager.emp_no"),
    ],
    "employee_email": [
        ("hr.employees", "email"), ("hr/employees.csv", "c_addr"),
        ("hr.staff_directory", "work_email"), ("ref/stores.json", "manager.email"),
    ],
    "department": [("hr.departments", "department_id"), ("hr.employees", "department_id"),
                   ("hr.staff_directory", "dept_id")],
    "department_code": [("hr.departments", "code"), ("hr/employees.csv", "dept"),
                        ("hr.department_headcount", "code")],
}

# (derived, source, kind, derived column -> source column, predicate)
DERIVATIONS: tuple[tuple[str, str, DerivationKind, dict[str, str], str | None], ...] = (
    ("crm/customers.csv", "sales.customers", "copy", dict(CUSTOMER_EXPORT), None),
    ("crm/customers_clean.csv", "crm/customers.csv", "subset",
     {name: name for name in CLEAN_COLUMNS}, CLEAN_PREDICATE),
    ("hr/employees.csv", "hr.employees", "copy", dict(EMPLOYEE_EXPORT), None),
    ("sales/orders", "sales.orders", "copy", dict(ORDER_EXPORT), None),
    ("finance/payments_2024.csv", "finance/payments.parquet", "filtered",
     {name: name for name in (
         "payment_id", "order_no", "customer_id", "paid_at", "method", "pan_ref", "acct",
         "origin", "amount", "currency", "txn_ref")},
     "paid_at in 2024"),
)


def flatten(record: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested JSON object as one level of dotted keys, in the record's own key order."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def file_frames(company: Company) -> dict[str, pd.DataFrame]:
    """The content of every file resource, keyed by its path under ``files/``."""
    customers = company.customers.rename(
        columns={sql: file for file, sql in CUSTOMER_EXPORT.items()})[list(CUSTOMER_EXPORT)]
    keep = (customers["contact"].notna() & customers["reach_no"].notna()
            & customers["segment"].isin(["retail", "smb"]))
    clean = customers.loc[keep, list(CLEAN_COLUMNS)].reset_index(drop=True)

    staff = company.employees.merge(company.departments[["department_id", "code"]],
                                    on="department_id", how="left", validate="many_to_one")
    employees = staff.rename(columns={sql: file for file, sql in EMPLOYEE_EXPORT.items()})
    employees = employees.rename(columns={"code": "dept"})[
        ["emp_no", "nom", "c_addr", "dob_ts", "hired", "dept", "sal_acct", "gross"]]

    items = company.order_items
    per_order = pd.DataFrame({
        "items": items.groupby("order_id").size(),
        "total": (items["quantity"] * items["unit_price"]).groupby(items["order_id"]).sum(),
    }).round({"total": 2})
    orders = company.orders.join(per_order, on="order_id").rename(
        columns={sql: file for file, sql in ORDER_EXPORT.items()})
    orders = orders[[*ORDER_EXPORT, "items", "total"]]

    payments = company.payments
    in_2024 = payments["paid_at"].str.startswith("2024")
    return {
        "crm/customers.csv": customers,
        "crm/customers_clean.csv": clean,
        "hr/employees.csv": employees,
        "sales/orders": orders,
        "finance/payments.parquet": payments,
        "finance/payments_2024.csv": payments[in_2024].reset_index(drop=True),
        "web/access_log.jsonl": pd.DataFrame([flatten(event) for event in company.weblog]),
        "ref/stores.json": pd.DataFrame([flatten(store) for store in company.stores]),
    }
