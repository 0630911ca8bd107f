"""Helpers of the discovery tests: data files with known sensitive columns, and direct store
access for what the tag endpoints (built in parallel) would otherwise do: user tags, people's
ACCEPTED / REJECTED associations, and reading back what discovery wrote."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert, select, update

from catalog_nb.demo import lake_values
from catalog_nb.server.store.common import fold, new_key, now_ms
from catalog_nb.server.store.schema import data_resources, tag_associations, tag_domains, tags
from tests.conftest import Server

FIRST = ("Ana", "Bruno", "Chloé", "Dmitri", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jonas",
         "Kenji", "Liam", "Maya", "Noah", "Olga", "Paul", "Quinn", "Rosa", "Sven", "Tara")
LAST = ("Almeida", "Berger", "Costa", "Dubois", "Eriksen", "Fischer", "García", "Haddad",
        "Ivanova", "Jansen", "Kowalski", "Larsen", "Moreau", "Novak", "Okafor", "Petrov")


def names(rng: np.random.Generator, count: int) -> list[str]:
    """``count`` distinct person names."""
    found: list[str] = []
    while len(found) < count:
        name = f"{FIRST[int(rng.integers(0, len(FIRST)))]} {LAST[int(rng.integers(0, 16))]}"
        if name not in found:
            found.append(name)
    return found


def csv_text(columns: dict[str, list[Any]]) -> str:
    """A CSV file of equally long columns (None: empty cell); values must hold no comma."""
    header = ",".join(columns)
    rows = zip(*columns.values(), strict=True)
    return header + "\n" + "".join(
        ",".join("" if v is None else str(v) for v in row) + "\n" for row in rows
    )


def people_file(rows: int = 40, seed: int = 3) -> str:
    """A customer extract: one column of each built-in kind under a non-obvious name, and
    decoys that look alike (order numbers, product codes, card-length references failing Luhn,
    byte counts, a version number, hiring dates, unformatted loyalty numbers)."""
    rng = np.random.default_rng(seed)
    ips = [lake_values.public_ipv4(rng) if i % 5 else lake_values.ipv6(rng) for i in range(rows)]
    return csv_text({
        "k": list(range(1, rows + 1)),
        "who": names(rng, rows),
        "handle": [f"user{i}.x@mail{i % 3}.example.org" for i in range(rows)],
        "line": [lake_values.phone(rng) for _ in range(rows)],
        "doc": [f"{rng.integers(100, 899)}-{rng.integers(10, 99)}-{rng.integers(1000, 9999)}"
                for _ in range(rows)],
        "plastic": [lake_values.card_number(rng) for _ in range(rows)],
        "born_on": [f"{rng.integers(1945, 2004)}-{rng.integers(1, 13):02d}-"
                    f"{rng.integers(1, 29):02d}" for _ in range(rows)],
        "zone": [f"0{rng.integers(1000, 9999)}" for _ in range(rows)],
        "origin": ips,
        "acct": [lake_values.iban(rng, grouped=i % 4 == 0) for i in range(rows)],
        "order_ref": [f"SO-2024-{i:06d}" for i in range(rows)],
        "sku": [f"PRD-{rng.integers(10000, 99999)}-{chr(65 + i % 26)}" for i in range(rows)],
        "txn": [lake_values.non_luhn_digits(rng) for _ in range(rows)],
        "bytes": [int(rng.integers(10000, 99999)) for _ in range(rows)],
        "app": [("3.12.0.45", "3.11.2.87", "3.12.1.102")[i % 3] for i in range(rows)],
        "hired": [f"{rng.integers(2012, 2025)}-{rng.integers(1, 13):02d}-10"
                  for _ in range(rows)],
        "loyalty": [f"7{rng.integers(100000000, 999999999)}" for _ in range(rows)],
    })


#: What discovery must suggest on ``people_file`` (field -> built-in tag), and nothing else.
PEOPLE_TAGS = {"who": "PersonName", "handle": "EmailAddress", "line": "PhoneNumber",
               "doc": "NationalId", "plastic": "PaymentCard", "born_on": "DateOfBirth",
               "zone": "PostalCode", "origin": "IPAddress", "acct": "IBAN"}


def write(folder: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    return folder


def associations(server: Server, source_key: str, domain: str | None = "Sensitive"
                 ) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """``(path, field) -> {tag name: association row}`` of a source (one domain, or all)."""
    query = (
        select(tag_associations, tags.c.name.label("tag_name"), tags.c.full_name,
               data_resources.c.path)
        .join(tags, tags.c.key == tag_associations.c.tag_key)
        .join(data_resources, data_resources.c.key == tag_associations.c.resource_key)
        .where(data_resources.c.data_source_key == source_key)
    )
    found: dict[tuple[str, str], dict[str, dict[str, Any]]] = defaultdict(dict)
    with server.store.read() as conn:
        for row in conn.execute(query).mappings():
            if domain is None or str(row["full_name"]).startswith(domain + "."):
                found[(str(row["path"]), str(row["field_scope"]))][str(row["tag_name"])] = dict(
                    row)
    return dict(found)


def tag_key(server: Server, full_name: str) -> str:
    with server.store.read() as conn:
        return str(conn.execute(
            select(tags.c.key).where(tags.c.full_name == full_name)).scalar_one())


def add_tag(server: Server, name: str, *, domain: str = "Tests", **columns: Any) -> str:
    """A user tag (REGEX when ``reg_ex`` is given) in ``domain``, created if needed; its key."""
    now = now_ms()
    with server.store.write() as conn:
        domain_key = conn.execute(select(tag_domains.c.key).where(
            tag_domains.c.name_fold == fold(domain))).scalar_one_or_none()
        if domain_key is None:
            domain_key = new_key()
            conn.execute(insert(tag_domains).values(
                key=domain_key, name=domain, name_fold=fold(domain), immutable=False,
                created_ms=now, changed_ms=now))
        key = new_key()
        values = {"tag_state": "REGEX" if columns.get("reg_ex") else "VALUE",
                  "state": "ACCEPTED", "enable": True, "learning_enabled": False,
                  "immutable": False, "synonyms": [], **columns}
        conn.execute(insert(tags).values(
            key=key, domain_key=domain_key, parent_key=None, parent_scope="", name=name,
            name_fold=fold(name), full_name=f"{domain}.{name}", created_ms=now, changed_ms=now,
            **values))
    return key


def set_tag(server: Server, key: str, **columns: Any) -> None:
    with server.store.write() as conn:
        conn.execute(update(tags).where(tags.c.key == key).values(**columns))


def set_association(server: Server, source_key: str, path: str, field: str, tag: str,
                    state: str, by: str = "steward") -> None:
    """Write people's word on an association (create it, or change its state)."""
    key = tag_key(server, tag)
    now = now_ms()
    with server.store.write() as conn:
        resource = conn.execute(select(data_resources.c.key).where(
            data_resources.c.data_source_key == source_key,
            data_resources.c.path == path)).scalar_one()
        current = conn.execute(select(tag_associations.c.key).where(
            tag_associations.c.resource_key == resource,
            tag_associations.c.field_scope == field,
            tag_associations.c.tag_key == key)).scalar_one_or_none()
        if current is None:
            conn.execute(insert(tag_associations).values(
                key=new_key(), resource_key=resource, field_scope=field, tag_key=key,
                state=state, weight=None, rules=[], created_by=by, changed_by=by,
                created_ms=now, changed_ms=now))
        else:
            conn.execute(update(tag_associations).where(tag_associations.c.key == current)
                         .values(state=state, changed_by=by, changed_ms=now))
