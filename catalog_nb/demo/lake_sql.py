"""The demo lake's SQL side: two SQLite schemas (``sales``, ``hr``) and how to open them.

SQLite has one schema per database file, and a connection gains more by ``ATTACH``. The lake
writes ``sql/sales.sqlite3`` and ``sql/hr.sqlite3`` plus an empty main database
``sql/company.sqlite3``, and names the attachments in the SQLAlchemy URL of the data source::

    sqlite:////abs/lake/sql/company.sqlite3?attach=sales:sales.sqlite3&attach=hr:hr.sqlite3

``attach=<schema>:<file>`` may repeat; a relative file resolves against the main database's
folder. The URL handling lives in ``catalog_nb.server.profiling.connect`` (the catalog service
opens such sources with it); ``split_attachments``, ``sqlite_url`` and
``sqlite_engine_with_schemas`` are re-exported here for the demo and its users.

Foreign keys and views stay inside their schema, because SQLite refuses cross-database ones.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.demo.lake_data import Company
from catalog_nb.demo.truth import ViewTruth
from catalog_nb.server.profiling.connect import (
    ATTACH_PARAM,
    split_attachments,
    sqlite_engine_with_schemas,
    sqlite_url,
)

__all__ = [
    "ATTACH_PARAM",
    "MAIN_DB",
    "SCHEMA_FILES",
    "TABLE_KEYS",
    "VIEWS",
    "read_sql_resources",
    "split_attachments",
    "sqlite_engine_with_schemas",
    "sqlite_url",
    "write_databases",
]

MAIN_DB = "company.sqlite3"
SCHEMA_FILES: dict[str, str] = {"sales": "sales.sqlite3", "hr": "hr.sqlite3"}

SALES_DDL = """
CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY,
    full_name VARCHAR(100) NOT NULL,
    email VARCHAR(120) UNIQUE,
    phone VARCHAR(20),
    national_id CHAR(11) NOT NULL,
    birth_date DATE,
    street VARCHAR(120),
    city VARCHAR(60),
    postal_code VARCHAR(10),
    segment VARCHAR(20) NOT NULL,
    loyalty_no VARCHAR(10),
    created_at TIMESTAMP NOT NULL
);
CREATE TABLE products (
    product_id INTEGER PRIMARY KEY,
    sku VARCHAR(12) NOT NULL UNIQUE,
    name VARCHAR(80) NOT NULL,
    category VARCHAR(30) NOT NULL,
    list_price REAL NOT NULL
);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    order_no VARCHAR(14) NOT NULL UNIQUE,
    customer_id INTEGER NOT NULL,
    ordered_at TIMESTAMP NOT NULL,
    status VARCHAR(12) NOT NULL,
    channel VARCHAR(8) NOT NULL,
    store_id INTEGER,
    ship_postcode VARCHAR(10),
    CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES customers (customer_id)
);
CREATE INDEX ix_orders_customer ON orders (customer_id);
CREATE TABLE order_items (
    order_id INTEGER NOT NULL,
    line_no INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL,
    unit_price REAL NOT NULL,
    PRIMARY KEY (order_id, line_no),
    CONSTRAINT fk_items_order FOREIGN KEY (order_id) REFERENCES orders (order_id),
    CONSTRAINT fk_items_product FOREIGN KEY (product_id) REFERENCES products (product_id)
);
"""

HR_DDL = """
CREATE TABLE departments (
    department_id INTEGER PRIMARY KEY,
    code VARCHAR(8) NOT NULL UNIQUE,
    name VARCHAR(60) NOT NULL,
    cost_center VARCHAR(10) NOT NULL
);
CREATE TABLE employees (
    employee_id INTEGER PRIMARY KEY,
    full_name VARCHAR(100) NOT NULL,
    email VARCHAR(120) NOT NULL UNIQUE,
    phone VARCHAR(20),
    national_id CHAR(11) NOT NULL,
    birth_date DATE NOT NULL,
    hired_on DATE NOT NULL,
    department_id INTEGER NOT NULL,
    manager_id INTEGER,
    salary INTEGER NOT NULL,
    bank_account VARCHAR(34),
    CONSTRAINT fk_employees_department FOREIGN KEY (department_id)
        REFERENCES departments (department_id),
    CONSTRAINT fk_employees_manager FOREIGN KEY (manager_id) REFERENCES employees (employee_id)
);
"""

# schema.table -> (primary key, [(columns, referenced table, referenced columns)])
TABLE_KEYS: dict[str, tuple[tuple[str, ...], list[tuple[tuple[str, ...], str, tuple[str, ...]]]]]
TABLE_KEYS = {
    "sales.customers": (("customer_id",), []),
    "sales.products": (("product_id",), []),
    "sales.orders": (("order_id",), [(("customer_id",), "sales.customers", ("customer_id",))]),
    "sales.order_items": (("order_id", "line_no"), [
        (("order_id",), "sales.orders", ("order_id",)),
        (("product_id",), "sales.products", ("product_id",)),
    ]),
    "hr.departments": (("department_id",), []),
    "hr.employees": (("employee_id",), [
        (("department_id",), "hr.departments", ("department_id",)),
        (("manager_id",), "hr.employees", ("employee_id",)),
    ]),
}


def _view(view: str, sql: str, tables: tuple[str, ...],
          columns: dict[str, tuple[str, ...]]) -> ViewTruth:
    return ViewTruth(view=view, sql=sql.strip(), tables=tables, columns=columns)


VIEWS: tuple[ViewTruth, ...] = (
    _view("sales.customer_revenue", """
CREATE VIEW customer_revenue AS
SELECT c.customer_id,
       c.full_name,
       COUNT(DISTINCT o.order_id) AS order_count,
       ROUND(SUM(i.quantity * i.unit_price), 2) AS revenue,
       MAX(o.ordered_at) AS last_order_at
FROM customers AS c
JOIN orders AS o ON o.customer_id = c.customer_id
JOIN order_items AS i ON i.order_id = o.order_id
WHERE o.status <> 'cancelled'
GROUP BY c.customer_id, c.full_name
""", ("sales.customers", "sales.orders", "sales.order_items"), {
        "customer_id": ("sales.customers.customer_id",),
        "full_name": ("sales.customers.full_name",),
        "order_count": ("sales.orders.order_id",),
        "revenue": ("sales.order_items.quantity", "sales.order_items.unit_price"),
        "last_order_at": ("sales.orders.ordered_at",),
    }),
    _view("sales.customer_contacts", """
CREATE VIEW customer_contacts AS
SELECT customer_id AS id, full_name AS name, email AS mail, phone AS tel
FROM customers
WHERE email IS NOT NULL
""", ("sales.customers",), {
        "id": ("sales.customers.customer_id",), "name": ("sales.customers.full_name",),
        "mail": ("sales.customers.email",), "tel": ("sales.customers.phone",),
    }),
    # A view over a view, so that lineage has more than one level upstream.
    _view("sales.top_customers", """
CREATE VIEW top_customers AS
SELECT customer_id, full_name, revenue
FROM customer_revenue
ORDER BY revenue DESC, customer_id
LIMIT 50
""", ("sales.customer_revenue",), {
        "customer_id": ("sales.customer_revenue.customer_id",),
        "full_name": ("sales.customer_revenue.full_name",),
        "revenue": ("sales.customer_revenue.revenue",),
    }),
    _view("hr.staff_directory", """
CREATE VIEW staff_directory AS
SELECT e.employee_id AS id, e.full_name AS name, e.email AS work_email,
       e.department_id AS dept_id, d.name AS dept_name
FROM employees AS e
JOIN departments AS d ON d.department_id = e.department_id
""", ("hr.employees", "hr.departments"), {
        "id": ("hr.employees.employee_id",), "name": ("hr.employees.full_name",),
        "work_email": ("hr.employees.email",), "dept_id": ("hr.employees.department_id",),
        "dept_name": ("hr.departments.name",),
    }),
    _view("hr.department_headcount", """
CREATE VIEW department_headcount AS
SELECT d.code, d.name, COUNT(e.employee_id) AS headcount, ROUND(AVG(e.salary), 0) AS avg_salary
FROM departments AS d
LEFT JOIN employees AS e ON e.department_id = d.department_id
GROUP BY d.department_id, d.code, d.name
""", ("hr.departments", "hr.employees"), {
        "code": ("hr.departments.code",), "name": ("hr.departments.name",),
        "headcount": ("hr.employees.employee_id",), "avg_salary": ("hr.employees.salary",),
    }),
)

_SCHEMA_TABLES: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {
    "sales": (SALES_DDL, (("customers", "customers"), ("products", "products"),
                          ("orders", "orders"), ("order_items", "order_items"))),
    "hr": (HR_DDL, (("departments", "departments"), ("employees", "employees"))),
}


def _rows(frame: pd.DataFrame) -> list[tuple[Any, ...]]:
    """Plain Python tuples with None for missing values (numpy scalars confuse sqlite3)."""
    plain = frame.astype(object).where(frame.notna(), None)
    return [tuple(v.item() if hasattr(v, "item") else v for v in row)
            for row in plain.itertuples(index=False, name=None)]


def write_databases(folder: Path, company: Company) -> dict[str, Path]:
    """Write the main and the schema databases into ``folder``; returns schema -> file."""
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for schema, (ddl, tables) in _SCHEMA_TABLES.items():
        path = folder / SCHEMA_FILES[schema]
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA foreign_keys = ON")  # inserts prove the keys really hold
            conn.executescript(ddl)
            for table, attribute in tables:
                frame: pd.DataFrame = getattr(company, attribute)
                marks = ", ".join("?" for _ in frame.columns)
                conn.executemany(f"INSERT INTO {table} VALUES ({marks})", _rows(frame))
            for view in VIEWS:
                if view.view.startswith(f"{schema}."):
                    conn.execute(view.sql)
        conn.close()
        written[schema] = path
    with sqlite3.connect(folder / MAIN_DB) as conn:
        conn.execute("PRAGMA user_version = 1")  # gives the empty main database its header
    conn.close()
    return written


def read_sql_resources(folder: Path) -> dict[str, pd.DataFrame]:
    """Every table and view of the written databases as frames, keyed ``schema.name``."""
    frames: dict[str, pd.DataFrame] = {}
    with sqlite3.connect(folder / MAIN_DB) as conn:
        for schema, file in SCHEMA_FILES.items():
            conn.execute(f'ATTACH DATABASE ? AS "{schema}"', (str(folder / file),))
            names = conn.execute(
                f'SELECT name FROM "{schema}".sqlite_master WHERE type IN (\'table\', \'view\') '
                "ORDER BY type, name").fetchall()
            for (name,) in names:
                frames[f"{schema}.{name}"] = pd.read_sql_query(
                    f'SELECT * FROM "{schema}"."{name}"', conn)
    conn.close()
    return frames
