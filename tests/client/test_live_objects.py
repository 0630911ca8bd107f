"""Favorites, reviews and configuration through the client, against a real service.

One server of the module's own (the configuration is the whole service's): a small folder is
registered and profiled through the client, an Analyst sees it, a Guest sees it read-only, and
a second folder stays hidden from both.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest

from catalog_nb.client import (
    BadRequestError,
    Catalog,
    NotFoundError,
    PermissionDeniedError,
    connect,
)
from catalog_nb.client.favorites import FAVORITE_COLUMNS
from catalog_nb.client.reviews import REVIEW_COLUMNS
from catalog_nb.client.service_config import CONFIG_COLUMNS
from catalog_nb.contract import ErrorCode
from tests.client.mocks import LIVE_PASSWORD

CSV = "id,email\n1,a@example.org\n2,b@example.org\n"


@dataclass
class World:
    admin: Catalog
    ana: Catalog
    guest: Catalog
    source: str
    hidden_key: str
    keys: dict[str, str]


@pytest.fixture(scope="module")
def world(
    make_server: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    root = tmp_path_factory.mktemp("objects")
    for name, files in (("shown", ("a.csv", "b.csv")), ("hidden", ("s.csv",))):
        (root / name).mkdir()
        for file in files:
            (root / name / file).write_text(CSV)
    server = make_server(data_roots=[root])
    admin = connect(server.url, server.admin_user, server.admin_password, progress=False)
    tag = uuid.uuid4().hex[:6]
    shown = admin.create_source(f"shown-{tag}", root / "shown")
    admin.create_source(f"hidden-{tag}", root / "hidden")
    admin.profile(shown["name"], timeout=120)
    admin.profile(f"hidden-{tag}", timeout=120)
    analysts = admin.create_role(f"ana-{tag}", "Analyst", data_source_keys=[shown["key"]])
    guests = admin.create_role(f"guest-{tag}", "Guest", data_source_keys=[shown["key"]])
    admin.create_user("ana", roles=[analysts["name"]], password=LIVE_PASSWORD)
    admin.create_user("gus", roles=[guests["name"]], password=LIVE_PASSWORD)
    ana = connect(server.url, "ana", LIVE_PASSWORD, progress=False)
    guest = connect(server.url, "gus", LIVE_PASSWORD, progress=False)
    frame = admin.resources(shown["name"])
    keys = dict(zip(frame["path"], frame["key"], strict=True))
    hidden = admin.resource(f"hidden-{tag}", "s.csv")
    yield World(admin, ana, guest, shown["name"], str(hidden["key"]), keys)
    for cat in (ana, guest, admin):
        cat.close()


def test_favorites_by_tuple_key_and_frame_row(world: World) -> None:
    ana = world.ana
    empty = ana.favorites()
    assert list(empty.columns) == [c.name for c in FAVORITE_COLUMNS] and empty.empty
    assert ana.add_favorite((world.source, "a.csv"))["entityKey"] == world.keys["a.csv"]
    row = ana.resources(world.source).set_index("path").loc["b.csv"]  # a frame row
    assert ana.add_favorite(row)["entityKey"] == world.keys["b.csv"]
    ana.add_favorite(world.keys["a.csv"])  # again: still one favorite
    frame = ana.favorites()
    assert list(frame["path"]) == ["b.csv", "a.csv"]
    assert str(frame["favorite_time"].dtype) == "datetime64[ns, UTC]"
    assert str(frame["rating_count"].dtype) == "Int64"
    assert world.admin.favorites().empty  # favorites are the caller's
    ana.remove_favorite((world.source, "b.csv"))
    assert list(ana.favorites()["path"]) == ["a.csv"]
    with pytest.raises(NotFoundError) as missing:
        ana.remove_favorite(world.keys["b.csv"])
    assert missing.value.error_code == ErrorCode.FAVORITE_NOT_FOUND.value
    ana.remove_favorite(world.keys["a.csv"])


def test_favoriting_what_one_cannot_see_or_as_a_guest_is_refused(world: World) -> None:
    with pytest.raises(NotFoundError) as hidden:
        world.ana.add_favorite(world.hidden_key)
    assert hidden.value.error_code == ErrorCode.RESOURCE_NOT_FOUND.value
    with pytest.raises(PermissionDeniedError):
        world.guest.add_favorite(world.keys["a.csv"])
    assert world.guest.favorites().empty


def test_review_creates_then_updates_and_the_resource_keeps_the_average(world: World) -> None:
    ana, admin = world.ana, world.admin
    first = ana.review((world.source, "a.csv"), 5, title="Tidy", text="Emails are real.")
    again = ana.review(world.keys["a.csv"], np.int64(3))  # updates: one review per user
    assert again["key"] == first["key"] and again["rating"] == 3
    assert again["title"] == "Tidy" and again["text"] == "Emails are real."
    admin.review(world.keys["a.csv"], 4)
    frame = ana.reviews((world.source, "a.csv"))
    assert list(frame.columns) == [c.name for c in REVIEW_COLUMNS]
    assert sorted(frame["user"]) == ["admin", "ana"] and str(frame["rating"].dtype) == "Int64"
    assert frame.attrs == {"average_rating": 3.5, "rating_count": 2}
    resource = ana.api.get_resource(world.keys["a.csv"])
    assert resource["averageRating"] == 3.5 and resource["ratingCount"] == 2
    mine = ana.reviews()
    assert list(mine["key"]) == [first["key"]] and list(mine["path"]) == ["a.csv"]
    raw = ana.reviews(world.keys["a.csv"], as_frame=False)
    assert raw["totalCount"] == 2

    with pytest.raises(BadRequestError) as bad:
        ana.review(world.keys["b.csv"], 6)
    assert bad.value.error_code == ErrorCode.INVALID_RATING.value
    with pytest.raises(NotFoundError):
        ana.review(world.hidden_key, 3)
    with pytest.raises(PermissionDeniedError):
        world.guest.review(world.keys["a.csv"], 3)

    ana.delete_review(resource=(world.source, "a.csv"))
    admin_review = admin.reviews(world.keys["a.csv"])
    assert list(admin_review["user"]) == ["admin"]
    admin.delete_review(admin_review.iloc[0])
    assert ana.reviews(world.keys["a.csv"]).empty
    with pytest.raises(NotFoundError):
        ana.delete_review(resource=world.keys["a.csv"])
    with pytest.raises(ValueError, match="either"):
        ana.delete_review()


def test_config_is_read_by_anyone_and_set_by_administrators(world: World) -> None:
    admin = world.admin
    frame = world.guest.config()
    assert list(frame.columns) == [c.name for c in CONFIG_COLUMNS]
    assert str(frame["read_only"].dtype) == "boolean" and str(frame["minimum"].dtype) == "Float64"
    values = dict(zip(frame["name"], frame["value"], strict=True))
    assert values["search.pageMax"] == 100 and values["discovery.afterProfile"] is True
    assert world.ana.config_value("session.idleTimeoutMinutes") == 120.0

    changed = admin.set_config("search.pageMax", np.int64(400))
    assert changed["value"] == 400 and changed["changedBy"] == "admin"
    assert admin.config_value("search.pageMax") == 400
    assert admin.api.search_new({"pagingCriteria": {"start": 0, "size": 300}}) is not None
    row = admin.config().set_index("name").loc["search.pageMax"]
    assert row["default"] == 100 and isinstance(row["changed"], pd.Timestamp)
    admin.set_config("search.pageMax", None)
    assert admin.config_value("search.pageMax") == 100

    with pytest.raises(BadRequestError) as wrong:
        admin.set_config("search.pageMax", "500")
    assert wrong.value.error_code == ErrorCode.INVALID_CONFIG_VALUE.value
    with pytest.raises(BadRequestError) as low:
        admin.set_config("joins.minContainment", 2)
    assert "between 0 and 1" in low.value.message
    with pytest.raises(BadRequestError) as fixed:
        admin.set_config("service.jobWorkers", 4)
    assert fixed.value.error_code == ErrorCode.READ_ONLY_CONFIG.value
    with pytest.raises(NotFoundError):
        admin.config_value("no.such.property")
    with pytest.raises(PermissionDeniedError):
        world.ana.set_config("search.pageMax", 200)
    assert admin.config_value("search.pageMax") == 100
