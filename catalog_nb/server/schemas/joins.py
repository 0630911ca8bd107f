"""The wire form of a join condition (the spec's JoinConditionTO) and of ``GET /joincondition``.

Plain dicts, like the resources they are part of (see ``schemas.resources``);
:class:`JoinCondition` describes them for the OpenAPI document only. A condition is stored once
with its unique side on the left; a resource's ``joinConditions`` show each one from that
resource's side, so the stored condition is flipped (sides swapped, cardinality ``1:N`` read as
``N:1``) when the resource is on the right.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import Field

from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Wire
from catalog_nb.server.schemas.examples import examples
from catalog_nb.server.schemas.tags import TagOut, tag_out
from catalog_nb.server.store.joins import Loaded

_FLIPPED = {"1:N": "N:1", "N:1": "1:N"}


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}".rstrip("0").rstrip(".")


def _tags(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Whole Tag objects, as the spec types JoinConditionTO's tag arrays (without children, and
    with no association count: those are the tag's own endpoints' to answer)."""
    return [tag_out(r, {}).model_dump(by_alias=True) for r in rows]


def _side(prefix: str, resource: Mapping[str, Any], tags: list[dict[str, Any]]) -> dict[str, Any]:
    # The spec types these as strings and numbers, not "or null" (issue 17): what is not known
    # (a table's file format, an owner never set, a table's change time) answers "" and 0.
    return {
        f"{prefix}ResourceId": resource["key"],
        f"{prefix}ResourceName": resource["name"],
        f"{prefix}Path": resource["path"],
        f"{prefix}SourceId": resource["data_source_key"],
        f"{prefix}SourceName": resource["source_name"],
        f"{prefix}FileFormat": resource["file_format"] or "",
        f"{prefix}Owner": resource["owner"] or "",
        f"{prefix}Size": resource["resource_size"] or 0,
        f"{prefix}TimeOfLastChange": resource["changed_ms"],
        f"{prefix}TimeOfResourceChange": resource["time_of_resource_change"] or 0,
        f"{prefix}Tags": _tags(tags),
    }


def condition_out(row: Mapping[str, Any], loaded: Loaded, flip: bool = False) -> dict[str, Any]:
    """The JoinConditionTO of a stored condition; ``flip`` shows it from its right side."""
    left, right = row["left_key"], row["right_key"]
    left_cols, right_cols = list(row["left_cols"]), list(row["right_cols"])
    left_in_right, right_in_left = row["left_in_right"], row["right_in_left"]
    cardinality = row["cardinality"]
    stats = dict(row["stats"] or {})
    if flip:
        left, right, left_cols, right_cols = right, left, right_cols, left_cols
        left_in_right, right_in_left = right_in_left, left_in_right
        cardinality = _FLIPPED.get(cardinality, cardinality)
        stats["leftDistinct"], stats["rightDistinct"] = (
            stats.get("rightDistinct"), stats.get("leftDistinct"))
    field_tags: list[dict[str, Any]] = []
    seen: set[str] = set()
    for key, cols in ((left, left_cols), (right, right_cols)):
        for col in cols:
            for tag in loaded.field_tags.get((key, col), []):
                if tag["key"] not in seen:
                    seen.add(tag["key"])
                    field_tags.append(tag)
    origin = [row["origin"]]
    return {
        "key": row["key"],
        **_side("left", loaded.resources[left], loaded.resource_tags.get(left, [])),
        **_side("right", loaded.resources[right], loaded.resource_tags.get(right, [])),
        "leftCols": left_cols,
        "rightCols": right_cols,
        "leftOrigin": origin,
        "rightOrigin": origin,
        "joinOp": "=",
        "joinOrder": "LEFT_TO_RIGHT",
        "joinCardinality": cardinality,
        "joinStatState": row["origin"],
        "tags": _tags(field_tags),
        "score": row["score"],
        "stats": {
            "score": _number(row["score"]),
            "leftInRight": _number(left_in_right),
            "rightInLeft": _number(right_in_left),
            "leftDistinct": _number(stats.get("leftDistinct")),
            "rightDistinct": _number(stats.get("rightDistinct")),
            "sampleSize": _number(stats.get("sampleSize")),
            "nameSimilarity": _number(stats.get("nameSimilarity")),
            # the evidence class the score was measured for (join_scores.CALIBRATION)
            "evidence": str(stats.get("evidence") or ""),
        },
    }


def by_resource(loaded: Loaded, keys: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """Each resource's ``joinConditions``: its conditions from its side, best score first.

    A self-join (both sides one resource) is shown once, as stored.
    """
    wanted = set(keys)
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in loaded.conditions:  # already best first
        if row["left_key"] in wanted:
            found[row["left_key"]].append(condition_out(row, loaded))
        if row["right_key"] in wanted and row["right_key"] != row["left_key"]:
            found[row["right_key"]].append(condition_out(row, loaded, flip=True))
    return found


def page_out(loaded: Loaded, total: int, start: int, size: int) -> dict[str, Any]:
    """The ``GET /joincondition`` answer: every condition once, as stored."""
    return {
        "list": [condition_out(row, loaded) for row in loaded.conditions],
        "totalCount": total, "start": start, "size": size,
    }


class JoinCondition(Wire):
    """JoinConditionTO: two resources' columns that join, with their evidence. What is not
    known about a side (a table's file format, an owner never set) is ``""`` or 0."""

    model_config = examples(ex.JOIN)

    key: str
    left_resource_id: str
    left_resource_name: str
    left_path: str
    left_source_id: str
    left_source_name: str
    left_file_format: str
    left_owner: str
    left_size: int
    left_time_of_last_change: int
    left_time_of_resource_change: int
    left_tags: list[TagOut]
    right_resource_id: str
    right_resource_name: str
    right_path: str
    right_source_id: str
    right_source_name: str
    right_file_format: str
    right_owner: str
    right_size: int
    right_time_of_last_change: int
    right_time_of_resource_change: int
    right_tags: list[TagOut]
    left_cols: list[str]
    right_cols: list[str]
    left_origin: list[str]
    right_origin: list[str]
    join_op: str
    join_order: str
    join_cardinality: str
    join_stat_state: str
    tags: list[TagOut]
    score: float
    stats: dict[str, str] = Field(description="Evidence figures as text (score, leftInRight, "
                                  "rightInLeft, leftDistinct, rightDistinct, sampleSize, "
                                  "nameSimilarity, evidence).")
