"""The demo company in memory: Acme Outfitters, a small US retailer with shops and a web store.

``generate_company(seed, scale)`` returns the operational records every file and table of the
lake is cut from, with the column names of the SQL database (the system of record). The files of
the lake rename and reshape them (see ``lake.py``), as real exports do.

Randomness comes from one numpy ``Generator`` and Faker instances seeded from the same seed, and
is consumed in a fixed order, so the same (seed, scale) always yields the same company. Dates are
drawn between fixed bounds, never relative to today.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np
import pandas as pd
from faker import Faker

from catalog_nb.demo import lake_values as values

COMPANY_DOMAIN = "acme-outfitters.example"
ORDERS_FROM = datetime(2023, 7, 1)
ORDERS_UNTIL = datetime(2025, 1, 1)
WEBLOG_FROM = datetime(2024, 10, 1)
WEBLOG_UNTIL = datetime(2025, 1, 1)

DEPARTMENTS: tuple[tuple[int, str, str, str], ...] = (
    (1, "FIN", "Finance", "CC-100"),
    (2, "HR", "Human Resources", "CC-110"),
    (3, "IT", "Information Technology", "CC-120"),
    (4, "MKT", "Marketing", "CC-200"),
    (5, "OPS", "Operations", "CC-300"),
    (6, "RET", "Retail Stores", "CC-400"),
    (7, "SAL", "Sales", "CC-410"),
    (8, "CS", "Customer Service", "CC-420"),
)
_DEPT_WEIGHTS = np.array([4, 2, 6, 4, 8, 40, 10, 12], dtype=float)
_EMPLOYEE_LOCALES = ("en_US", "de_DE", "fr_FR", "es_ES")
_EMPLOYEE_LOCALE_WEIGHTS = np.array([0.5, 0.2, 0.15, 0.15])
_ADJECTIVES = ("Alpine", "Trail", "Summit", "Coastal", "Urban", "Storm", "Ridge", "Canyon")
_NOUNS = (("Jacket", "Apparel"), ("Boots", "Footwear"), ("Backpack", "Gear"), ("Tent", "Gear"),
          ("Fleece", "Apparel"), ("Sneakers", "Footwear"), ("Headlamp", "Gear"),
          ("Gloves", "Accessories"), ("Beanie", "Accessories"), ("Bottle", "Accessories"))
_APP_VERSIONS = ("3.11.2.87", "3.12.0.45", "3.12.1.102")
_REFERRERS = ("https://www.google.com/", "https://www.bing.com/", "https://duckduckgo.com/",
              "https://www.instagram.com/")


@dataclass(frozen=True)
class Company:
    """The operational records of the demo company (SQL column names)."""

    customers: pd.DataFrame
    products: pd.DataFrame
    departments: pd.DataFrame
    employees: pd.DataFrame
    stores: list[dict[str, Any]]
    orders: pd.DataFrame
    order_items: pd.DataFrame
    payments: pd.DataFrame
    weblog: list[dict[str, Any]]


def scaled(base: int, scale: float, minimum: int) -> int:
    """``base * scale`` rounded, but never below ``minimum`` (tiny lakes stay meaningful)."""
    return max(minimum, round(base * scale))


def _day(start: date, rng: np.random.Generator, days: int) -> date:
    return start + timedelta(days=int(rng.integers(0, days)))


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _maybe(rng: np.random.Generator, share_missing: float, value: Any) -> Any:
    return None if rng.random() < share_missing else value


def _customers(rng: np.random.Generator, fake: Faker, count: int) -> pd.DataFrame:
    taken: set[str] = set()
    rows = []
    segments = np.array(["retail", "smb", "enterprise", "inactive"])
    for customer_id in range(1, count + 1):
        first, last = fake.first_name(), fake.last_name()
        mail = values.email(first, last, fake.free_email_domain(), rng, taken)
        postal = fake.zipcode_plus4() if rng.random() < 0.1 else fake.zipcode()
        created = datetime(2018, 1, 1) + timedelta(seconds=int(rng.integers(0, 206_000_000)))
        rows.append({
            "customer_id": customer_id,
            "full_name": f"{first} {last}",
            "email": _maybe(rng, 0.03, mail),
            "phone": _maybe(rng, 0.08, values.phone(rng)),
            "national_id": fake.ssn(),
            "birth_date": _maybe(rng, 0.05, _day(date(1940, 1, 1), rng, 24_100).isoformat()),
            "street": fake.street_address(),
            "city": fake.city(),
            "postal_code": postal,
            "segment": str(rng.choice(segments, p=[0.6, 0.2, 0.05, 0.15])),
            # A decoy: ten digits, like an unformatted phone number, but a loyalty card.
            "loyalty_no": _maybe(rng, 0.3, "7" + "".join(map(str, rng.integers(0, 10, 9)))),
            "created_at": _stamp(created),
        })
    return pd.DataFrame(rows)


def _products(rng: np.random.Generator, count: int) -> pd.DataFrame:
    skus: set[str] = set()
    rows = []
    for product_id in range(1, count + 1):
        sku = ""
        while not sku or sku in skus:  # product codes: digits and letters, never sensitive
            sku = f"PRD-{rng.integers(10000, 100000)}-{chr(65 + int(rng.integers(0, 26)))}"
        skus.add(sku)
        noun, category = _NOUNS[int(rng.integers(0, len(_NOUNS)))]
        adjective = _ADJECTIVES[int(rng.integers(0, len(_ADJECTIVES)))]
        price = float(np.floor(np.exp(rng.normal(3.6, 0.7)))) + 0.99
        rows.append({"product_id": product_id, "sku": sku, "name": f"{adjective} {noun}",
                     "category": category, "list_price": price})
    return pd.DataFrame(rows)


def _employee_name(rng: np.random.Generator, fakers: dict[str, Faker]) -> tuple[str, str]:
    locale = str(rng.choice(_EMPLOYEE_LOCALES, p=_EMPLOYEE_LOCALE_WEIGHTS))
    while True:
        first, last = fakers[locale].first_name(), fakers[locale].last_name()
        try:  # the HR export is written in cp1252: keep names that encoding can hold
            f"{first} {last}".encode("cp1252")
        except UnicodeEncodeError:
            locale = "en_US"
            continue
        return first, last


def _employees(rng: np.random.Generator, fakers: dict[str, Faker], count: int) -> pd.DataFrame:
    taken: set[str] = set()
    heads = {dept[0]: index + 2 for index, dept in enumerate(DEPARTMENTS)}
    rows = []
    for employee_id in range(1, count + 1):
        if employee_id == 1:
            department, manager = 5, None  # the CEO sits in Operations and reports to no one
        elif employee_id - 1 <= len(DEPARTMENTS):
            department, manager = employee_id - 1, 1
        else:
            department = int(rng.choice(len(DEPARTMENTS), p=_DEPT_WEIGHTS / _DEPT_WEIGHTS.sum()))
            department += 1
            manager = heads[department]
        first, last = _employee_name(rng, fakers)
        born = _day(date(1958, 1, 1), rng, 16_000)
        earliest = max(date(2008, 1, 1), born.replace(year=born.year + 19, day=1))
        hired = _day(earliest, rng, max((date(2024, 12, 31) - earliest).days, 1))
        salary = float(np.clip(rng.normal(62_000, 18_000), 36_000, 160_000))
        if manager in (None, 1):
            salary += 60_000
        rows.append({
            "employee_id": employee_id,
            "full_name": f"{first} {last}",
            "email": values.email(first, last, COMPANY_DOMAIN, rng, taken),
            "phone": values.phone(rng, style=1),
            "national_id": fakers["en_US"].ssn(),
            "birth_date": born.isoformat(),
            "hired_on": hired.isoformat(),
            "department_id": department,
            "manager_id": manager,
            "salary": int(round(salary, -2)),
            "bank_account": values.iban(rng),
        })
    frame = pd.DataFrame(rows)
    frame["manager_id"] = frame["manager_id"].astype("Int64")
    return frame


def _stores(rng: np.random.Generator, fake: Faker, count: int,
            employees: pd.DataFrame) -> list[dict[str, Any]]:
    retail = employees[employees["department_id"] == 6].reset_index(drop=True)
    stores = []
    for store_id in range(1, count + 1):
        city = fake.city()
        manager = retail.iloc[int(rng.integers(0, len(retail)))]
        stores.append({
            "store_id": store_id,
            "name": f"Acme Outfitters {city}",
            "address": {"street": fake.street_address(), "city": city,
                        "postcode": fake.zipcode()},
            "tel": values.phone(rng, style=0),
            "manager": {"emp_no": int(manager["employee_id"]), "name": manager["full_name"],
                        "email": manager["email"]},
            "opened": _day(date(2010, 3, 1), rng, 4_900).isoformat(),
        })
    return stores


def _orders(rng: np.random.Generator, fake: Faker, customers: pd.DataFrame,
            store_count: int) -> pd.DataFrame:
    rate = np.where(customers["segment"] == "inactive", 0.5, 5.5)
    owners = np.repeat(customers["customer_id"].to_numpy(), rng.poisson(rate))
    span = int((ORDERS_UNTIL - ORDERS_FROM).total_seconds())
    offsets = rng.integers(0, span, size=len(owners))
    order = np.lexsort((owners, offsets))
    owners, offsets = owners[order], offsets[order]
    postal = dict(zip(customers["customer_id"], customers["postal_code"], strict=True))
    recent = ORDERS_UNTIL - timedelta(days=6)
    rows = []
    for index, (owner, offset) in enumerate(zip(owners, offsets, strict=True)):
        ordered = ORDERS_FROM + timedelta(seconds=int(offset))
        in_store = rng.random() < 0.3
        if ordered >= recent:
            status = str(rng.choice(["placed", "shipped"]))
        else:
            status = str(rng.choice(["delivered", "cancelled", "returned"], p=[0.93, 0.04, 0.03]))
        ship = None if in_store else (postal[owner] if rng.random() < 0.85 else fake.zipcode())
        rows.append({
            "order_id": index + 1,
            "order_no": f"SO-{ordered.year}-{index + 1:06d}",  # a decoy: digits, not sensitive
            "customer_id": int(owner),
            "ordered_at": _stamp(ordered),
            "status": status,
            "channel": "store" if in_store else "web",
            "store_id": int(rng.integers(1, store_count + 1)) if in_store else None,
            "ship_postcode": ship,
        })
    frame = pd.DataFrame(rows)
    frame["store_id"] = frame["store_id"].astype("Int64")
    return frame


def _order_items(rng: np.random.Generator, orders: pd.DataFrame,
                 products: pd.DataFrame) -> pd.DataFrame:
    popularity = 1.0 / np.arange(1, len(products) + 1) ** 0.8
    popularity /= popularity.sum()
    lines = 1 + rng.poisson(0.8, size=len(orders))
    order_ids = np.repeat(orders["order_id"].to_numpy(), lines)
    line_no = np.concatenate([np.arange(1, n + 1) for n in lines])
    picks = rng.choice(len(products), size=len(order_ids), p=popularity)
    prices = products["list_price"].to_numpy()[picks]
    discounted = rng.random(len(order_ids)) < 0.1
    return pd.DataFrame({
        "order_id": order_ids,
        "line_no": line_no,
        "product_id": products["product_id"].to_numpy()[picks],
        "quantity": 1 + rng.poisson(0.3, size=len(order_ids)),
        "unit_price": np.round(np.where(discounted, prices * 0.9, prices), 2),
    })


def _payments(rng: np.random.Generator, orders: pd.DataFrame,
              items: pd.DataFrame) -> pd.DataFrame:
    totals = (items["quantity"] * items["unit_price"]).groupby(items["order_id"]).sum().round(2)
    cards: dict[int, str] = {}
    accounts: dict[int, str] = {}
    rows = []
    columns = ("order_id", "order_no", "customer_id", "ordered_at", "status", "channel")
    for order_id, order_no, customer, ordered_at, status, channel in zip(
            *(orders[name].tolist() for name in columns), strict=True):
        if status == "cancelled":
            continue
        total = float(totals[order_id])
        parts = [total] if rng.random() >= 0.05 else [round(total / 2, 2),
                                                     round(total - round(total / 2, 2), 2)]
        ordered = datetime.fromisoformat(ordered_at)
        web = channel == "web"
        methods, weights = ((["card", "transfer", "paypal"], [0.75, 0.15, 0.10]) if web
                            else (["card", "cash"], [0.9, 0.1]))
        for part in parts:
            method = str(rng.choice(methods, p=weights))
            card = None
            if method == "card":  # customers mostly pay with the card they used before
                if customer not in cards or rng.random() < 0.2:
                    cards[customer] = values.card_number(rng)
                card = cards[customer]
            account = None
            if method == "transfer":
                if customer not in accounts:
                    accounts[customer] = values.iban(rng, grouped=rng.random() < 0.25)
                account = accounts[customer]
            if not web:
                origin = values.private_ipv4(rng)
            else:
                origin = values.ipv6(rng) if rng.random() < 0.1 else values.public_ipv4(rng)
            delay = int(rng.integers(30, 3 * 86_400)) if web else int(rng.integers(0, 120))
            rows.append({
                "order_no": order_no, "customer_id": customer,
                "paid_at": _stamp(ordered + timedelta(seconds=delay)), "method": method,
                "pan_ref": card, "acct": account, "origin": origin, "amount": part,
                "currency": "EUR" if method == "transfer" else "USD",
                "txn_ref": values.non_luhn_digits(rng),  # a decoy of card length, fails Luhn
            })
    frame = pd.DataFrame(rows).sort_values(["paid_at", "order_no"], kind="stable")
    frame.insert(0, "payment_id", np.arange(1, len(frame) + 1))
    return frame.reset_index(drop=True)


def _weblog(rng: np.random.Generator, fake: Faker, count: int, customers: pd.DataFrame,
            products: pd.DataFrame, orders: pd.DataFrame) -> list[dict[str, Any]]:
    agents = [fake.user_agent() for _ in range(40)]
    sessions = []
    for _ in range(max(count // 6, 1)):
        app = _APP_VERSIONS[int(rng.integers(0, 3))] if rng.random() < 0.2 else None
        roll = rng.random()
        ip = (values.ipv6(rng) if roll < 0.08 else values.private_ipv4(rng) if roll < 0.12
              else values.public_ipv4(rng))
        user = int(rng.choice(customers["customer_id"])) if rng.random() < 0.4 else None
        ua = f"AcmeApp/{app} (iOS 17.{int(rng.integers(0, 6))})" if app else agents[
            int(rng.integers(0, len(agents)))]
        sessions.append({"id": rng.bytes(8).hex(), "user": user, "ip": ip, "app": app, "ua": ua})
    span_ms = int((WEBLOG_UNTIL - WEBLOG_FROM).total_seconds() * 1000)
    moments = np.sort(rng.integers(0, span_ms, size=count))
    skus, order_nos = products["sku"].to_numpy(), orders["order_no"].to_numpy()
    events = []
    for moment in moments:
        session = sessions[int(rng.integers(0, len(sessions)))]
        kind = int(rng.choice(6, p=[0.15, 0.35, 0.15, 0.1, 0.1, 0.15]))
        sku = skus[int(rng.integers(0, len(skus)))]
        path = ("/", f"/p/{sku}", f"/search?q={_NOUNS[int(rng.integers(0, 10))][0].lower()}",
                "/cart", f"/account/orders/{order_nos[int(rng.integers(0, len(order_nos)))]}",
                f"/api/v2/stock/{sku}")[kind]
        status = int(rng.choice([200, 304, 404, 500], p=[0.915, 0.05, 0.03, 0.005]))
        stamp = WEBLOG_FROM + timedelta(milliseconds=int(moment))
        events.append({
            "ts": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z",
            "level": "ERROR" if status >= 500 else "WARN" if status == 404 else "INFO",
            "request": {
                "method": "POST" if kind == 3 and rng.random() < 0.5 else "GET",
                "path": path, "status": status,
                "bytes": int(rng.integers(200, 90_000)) if status == 200 else 0,
                "ua": session["ua"],
                "ref": _REFERRERS[int(rng.integers(0, 4))] if rng.random() < 0.2 else None,
            },
            # client.app is a decoy: a four-part version number that looks like an IPv4.
            "client": {"ip": session["ip"], "app": session["app"]},
            "session": {"id": session["id"], "user": session["user"]},
            "latency_ms": round(float(rng.lognormal(3.0, 0.8)), 1),
        })
    return events


def generate_company(seed: int, scale: float) -> Company:
    """The whole company for ``seed`` at ``scale`` (1.0: about 3,000 customers)."""
    rng = np.random.default_rng(seed)
    fake = Faker("en_US")
    fake.seed_instance(seed)
    fakers = {locale: Faker(locale) for locale in _EMPLOYEE_LOCALES}
    for offset, locale in enumerate(_EMPLOYEE_LOCALES):
        fakers[locale].seed_instance(seed * 101 + offset + 1)
    customers = _customers(rng, fake, scaled(3000, scale, 60))
    products = _products(rng, scaled(150, scale, 20))
    departments = pd.DataFrame(DEPARTMENTS,
                               columns=["department_id", "code", "name", "cost_center"])
    employees = _employees(rng, fakers, scaled(300, scale, 30))
    stores = _stores(rng, fake, scaled(25, scale, 5), employees)
    orders = _orders(rng, fake, customers, len(stores))
    items = _order_items(rng, orders, products)
    payments = _payments(rng, orders, items)
    weblog = _weblog(rng, fake, scaled(20_000, scale, 300), customers, products, orders)
    return Company(customers=customers, products=products, departments=departments,
                   employees=employees, stores=stores, orders=orders, order_items=items,
                   payments=payments, weblog=weblog)
