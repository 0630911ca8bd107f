"""Applying a bulk plan: batched ``POST /tagassociation/list``, per-row results.

:func:`apply_plan` takes the plan records of :mod:`catalog_nb.client.tags.bulk_plan` and sets each
row's ``result``: applied, failed (with the service's ``status``, ``error_code`` and
``message``), unchanged or error. Create rows, and changes of SUGGESTED or REJECTED
associations, go in batches through ``POST /tagassociation/list`` (each item in its own
transaction on the service); a change of an ACCEPTED association goes through
``PUT /tagassociation/tagassociation/{key}`` (creating it again would never downgrade it to
SUGGESTED). A batch the service refuses as a whole, or that gets no answer, fails its rows
with that error; the other batches go on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from catalog_nb import contract
from catalog_nb.client.api.core import CatalogApi
from catalog_nb.client.errors import CatalogError
from catalog_nb.client.paging import progress_bar
from catalog_nb.client.tags.bulk_plan import CHANGE, CREATE, ERROR, UNCHANGED

__all__ = ["APPLIED", "FAILED", "apply_plan"]

APPLIED, FAILED = "applied", "failed"
_ACCEPTED = contract.TagAssociationState.ACCEPTED.value


def _item(plan: Mapping[str, Any]) -> dict[str, Any]:
    item = {"resourceKey": plan["resource_key"], "tagKey": plan["tag_key"]}
    if plan["field"] is not None:
        item["field"] = plan["field"]
    item["state"] = plan["new_state"]
    return item


def _fail(plan: dict[str, Any], status: Any, code: Any, message: Any) -> None:
    plan.update(result=FAILED, status=status, error_code=code, message=message)


def _applied(plan: dict[str, Any], association: Mapping[str, Any] | None) -> None:
    plan["result"] = APPLIED
    if association:
        plan["association_key"] = association.get("key") or plan["association_key"]
        plan["new_state"] = association.get("state") or plan["new_state"]


def apply_plan(
    api: CatalogApi, plans: list[dict[str, Any]], *, batch_size: int, progress: bool
) -> list[dict[str, Any]]:
    """Apply the create / change rows of ``plans`` (see the module docstring) and set each
    row's ``result``; returns ``plans``."""
    for plan in plans:
        plan.setdefault("status", None)
        plan.setdefault("error_code", None)
        plan.setdefault("message", None)
        if plan["action"] == ERROR:
            plan.update(result=ERROR, message=plan["reason"])
        elif plan["action"] == UNCHANGED:
            plan["result"] = UNCHANGED
    listed = [
        p
        for p in plans
        if p["action"] == CREATE or (p["action"] == CHANGE and p["current_state"] != _ACCEPTED)
    ]
    put = [p for p in plans if p["action"] == CHANGE and p["current_state"] == _ACCEPTED]
    bar: Any = None
    if progress and (listed or put):
        bar = progress_bar(len(listed) + len(put), "applying associations", leave=True)
    try:
        for start in range(0, len(listed), batch_size):
            batch = listed[start : start + batch_size]
            _send_batch(api, batch)
            if bar is not None:
                bar.update(len(batch))
        for plan in put:
            try:
                answer = api.update_association(
                    str(plan["association_key"]), {"state": plan["new_state"]}
                )
            except CatalogError as exc:
                _fail(plan, exc.status, exc.error_code, exc.message)
            else:
                _applied(plan, answer if isinstance(answer, Mapping) else None)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return plans


def _send_batch(api: CatalogApi, batch: list[dict[str, Any]]) -> None:
    try:
        answers = api.create_associations([_item(plan) for plan in batch])
    except CatalogError as exc:
        for plan in batch:
            _fail(plan, exc.status, exc.error_code, f"the whole batch failed: {exc.message}")
        return
    by_index: dict[int, Mapping[str, Any]] = {}
    for position, answer in enumerate(answers or []):
        if isinstance(answer, Mapping):
            index = answer.get("index")
            by_index[int(index) if index is not None else position] = answer
    for position, plan in enumerate(batch):
        answer = by_index.get(position)
        if answer is None:
            _fail(plan, None, None, "the service answered no result for this row")
        elif answer.get("ok") and answer.get("outcome") == UNCHANGED:
            plan["result"] = UNCHANGED  # e.g. someone else made the change meanwhile
        elif answer.get("ok"):
            _applied(plan, answer.get("association"))
        else:
            error = answer.get("error") or {}
            _fail(plan, error.get("status"), error.get("errorCode"), error.get("message"))
