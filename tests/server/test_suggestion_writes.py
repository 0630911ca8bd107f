"""Discovery's suggestions written many at a time (``associations.record_suggestions``) keep
the rules of one at a time (``record_suggestion``): new ones are SUGGESTED, a new weight or rules
update a suggestion, people's REJECTED and ACCEPTED are kept, and the same suggestion again
changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from catalog_nb.server.store import associations as association_store
from catalog_nb.server.store.schema import tag_associations
from tests.conftest import Http, Server
from tests.server.tag_helpers import associate, make_domain, make_tag, small_source


@pytest.fixture(scope="module")
def lake(live_server: Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return small_source(live_server, tmp_path_factory.mktemp("suggestions"))


def stored(server: Server, resource_key: str) -> dict[tuple[str, str], tuple[Any, ...]]:
    a = tag_associations.c
    with server.store.read() as conn:
        rows = conn.execute(select(a.field_scope, a.tag_key, a.state, a.weight, a.rules,
                                   a.created_by).where(a.resource_key == resource_key)).all()
    return {(r.field_scope, r.tag_key): (r.state, r.weight, list(r.rules or []), r.created_by)
            for r in rows}


def test_many_suggestions_at_once_keep_the_rules_of_one_at_a_time(
    live_server: Server, admin: Http, lake: dict[str, str],
) -> None:
    domain = make_domain(admin, "bulk-suggestions")
    tag = [make_tag(admin, domain["key"], f"T{i}")["key"] for i in range(4)]
    key = lake["orders"]
    with live_server.store.write() as conn:
        association_store.record_suggestion(conn, key, "order_id", tag[0], 0.5, ["regex:a"])
        association_store.record_suggestion(conn, key, "order_id", tag[1], 0.5, ["regex:a"])
    associate(admin, key, tag[1], field="amount", state="REJECTED")
    associate(admin, key, tag[2], state="ACCEPTED")
    before = stored(live_server, key)

    with live_server.store.write() as conn:
        outcomes = association_store.record_suggestions(conn, key, [
            ("amount", tag[0], 0.91234, ["regex:b", "learning:name", "regex:b"]),
            ("order_id", tag[0], 0.5, ["regex:a"]),
            ("order_id", tag[1], 0.7, ["regex:c"]),
            ("amount", tag[1], 0.9, ["regex:c"]),
            (None, tag[2], 0.2, ["regex:c"]),
            *((f"extra_{i}", tag[3], 2.0, ["regex:d"]) for i in range(12)),
        ])

    assert outcomes == ["created", "unchanged", "updated", "rejected", "accepted",
                        *["created"] * 12]
    after = stored(live_server, key)
    assert after[("amount", tag[0])] == ("SUGGESTED", 0.9123, ["learning:name", "regex:b"],
                                         "discovery")
    assert after[("order_id", tag[0])] == before[("order_id", tag[0])]
    assert after[("order_id", tag[1])] == ("SUGGESTED", 0.7, ["regex:c"], "discovery")
    assert after[("amount", tag[1])] == before[("amount", tag[1])]
    assert after[("amount", tag[1])][0] == "REJECTED"
    assert after[("", tag[2])] == before[("", tag[2])]
    assert after[("", tag[2])][0] == "ACCEPTED"
    assert all(after[(f"extra_{i}", tag[3])] == ("SUGGESTED", 1.0, ["regex:d"], "discovery")
               for i in range(12))
    assert len(after) == len(before) + 13

    with live_server.store.write() as conn:
        again = association_store.record_suggestions(conn, key, [
            ("amount", tag[0], 0.91234, ["learning:name", "regex:b"]),
            (f"extra_{3}", tag[3], 1.0, ["regex:d"]),
        ])
        assert association_store.record_suggestions(conn, key, []) == []
    assert again == ["unchanged", "unchanged"]
    assert stored(live_server, key) == after
