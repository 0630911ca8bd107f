"""The canned JSON of ``tests/client/*_mocks.py`` against the service's own response models.

The offline client tests answer from hand-written JSON. Each record here is checked against the
pydantic model the service answers with (``catalog_nb.server.schemas``): it validates, and it
holds no member the service never sends (nested models included), so a mock cannot drift from
the wire while the tests that use it keep passing.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

import pytest
import requests
import responses
from pydantic import BaseModel

from catalog_nb.server.schemas.associations import AssociationPage, AssociationView, BulkItem
from catalog_nb.server.schemas.custom_properties import CustomPropertyOut
from catalog_nb.server.schemas.folders import FolderOut
from catalog_nb.server.schemas.jobs import JobOut
from catalog_nb.server.schemas.lineage import LineageOut
from catalog_nb.server.schemas.sources import SourceOut
from catalog_nb.server.schemas.tags import DomainOut, TagOut
from catalog_nb.server.schemas.users import LoginResult
from tests.client import mocks, relation_mocks, resource_mocks, tag_mocks
from tests.client.mocks import API
from tests.client.tag_mocks import CUSTOMERS, TagWorld
from tests.client.test_resources_jobs import job_json


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic models an annotation names (``Model``, ``list[Model]``, ``Model | None``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]
    return []


def stray_members(model: type[BaseModel], record: Mapping[str, Any], where: str) -> list[str]:
    """Members of ``record`` (and of the records nested in it) that ``model`` does not have."""
    fields = {(info.alias or name): info for name, info in model.model_fields.items()}
    found = [f"{where}.{name}" for name in record if name not in fields]
    for name, info in fields.items():
        value = record.get(name)
        for inner in _models_in(info.annotation)[:1]:
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                if isinstance(item, Mapping):
                    found += stray_members(inner, item, f"{where}.{name}[{i}]")
    return found


CASES: list[tuple[str, type[BaseModel], Any]] = [
    *[(f"domain {d['key']}", DomainOut, d) for d in tag_mocks.DOMAINS],
    *[(f"tag {t['key']}", TagOut, t) for t in tag_mocks.TAGS],
    *[(f"association {a['key']}", AssociationView, a) for a in tag_mocks.ASSOCIATIONS],
    *[(f"source {s['key']}", SourceOut, s) for s in resource_mocks.SOURCES],
    *[(f"folder {f['key']}", FolderOut, f) for f in resource_mocks.FOLDERS],
    ("lineage upstream", LineageOut, relation_mocks.TOP_UPSTREAM),
    ("lineage downstream", LineageOut, relation_mocks.CUSTOMERS_DOWNSTREAM),
    ("login", LoginResult, mocks.LOGIN_OK),
    *[(f"job {state}", JobOut, job_json(state)) for state in ("QUEUED", "RUNNING", "FAILED")],
]


@pytest.mark.parametrize(("what", "model", "record"), CASES, ids=[c[0] for c in CASES])
def test_a_mock_is_what_the_service_answers(
    what: str, model: type[BaseModel], record: Mapping[str, Any]
) -> None:
    model.model_validate(record)
    assert stray_members(model, record, what) == []


@pytest.mark.parametrize("record", resource_mocks.DEFINITIONS, ids=lambda r: str(r["key"]))
def test_custom_property_mocks_name_only_members_the_service_sends(
    record: Mapping[str, Any],
) -> None:
    """The definitions are cut down to what the frames read; what they hold must exist."""
    assert stray_members(CustomPropertyOut, record, str(record["key"])) == []


def test_the_checker_sees_a_stray_member_deep_inside() -> None:
    node = {**relation_mocks.TOP_UPSTREAM["nodes"][0], "rowcount": 3}
    answer = {**relation_mocks.TOP_UPSTREAM, "nodes": [node]}
    assert stray_members(LineageOut, answer, "a") == ["a.nodes[0].rowcount"]
    assert stray_members(TagOut, {**tag_mocks.TAGS[0], "fullname": "x"}, "t") == ["t.fullname"]


def test_the_tag_world_pages_and_bulk_answers_are_the_services(
    mock: responses.RequestsMock,
) -> None:
    """:class:`~tests.client.tag_mocks.TagWorld` builds its answers itself: their shape too."""
    TagWorld(mock)
    page = requests.get(API + "/tagassociation?state=ACCEPTED&pageSize=2", timeout=5).json()
    AssociationPage.model_validate(page)
    assert stray_members(AssociationPage, page, "page") == []
    body = [{"resourceKey": CUSTOMERS["key"], "tagKey": "t-rev", "state": "ACCEPTED"}]
    answered = requests.post(API + "/tagassociation/list", json=body, timeout=5).json()
    for item in answered:
        BulkItem.model_validate(item)
        assert stray_members(BulkItem, item, "item") == []
