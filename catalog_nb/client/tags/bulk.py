"""Bulk tagging from DataFrames: plan first, then apply in batches; a failing row never stops
the rest.

* :meth:`BulkMixin.apply_associations` takes a frame of (resource, field, tag, state) rows and
  returns the plan (``dry_run=True``, nothing written) or, with ``dry_run=False``, applies it
  and returns a per-row report.
* :meth:`BulkMixin.review_suggestions` accepts or rejects pending suggestions (SUGGESTED
  associations, e.g. from discovery) in bulk, with the same plan / report shape.

The plan's ``action`` per row is create, change state, unchanged or error (with a
``reason``); see :mod:`catalog_nb.client.tags.bulk_plan`. Applying sends the create and change
rows through ``POST /tagassociation/list`` in batches (each item in its own transaction on the
service), with a progress bar; a change away from ACCEPTED goes through
``PUT /tagassociation/tagassociation/{key}``. The report adds ``result``: applied, failed (with
the service's ``status``, ``error_code`` and ``message``), unchanged or error. Applying the
same frame twice is harmless: the second plan says unchanged.

Example::

    frame = pd.DataFrame({
        "source": ["demo_files", "demo_files"],
        "path": ["crm/customers.csv", "crm/customers.csv"],
        "field": ["contact", pd.NA],
        "tag": ["Sensitive.EmailAddress", "Finance.Customers"],
    })
    plan = cat.apply_associations(frame)                 # dry run: what would happen
    plan["action"].value_counts()
    report = cat.apply_associations(frame, dry_run=False)
    report.query("result == 'failed'")[["path", "tag", "error_code", "message"]]

    cat.review_suggestions(min_weight=0.9, tags=["Sensitive.EmailAddress"], dry_run=False)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, overload

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.tags import ASSOCIATION_LIST_MAX
from catalog_nb.client.frames import Column, to_frame
from catalog_nb.client.paging import check_limit, warn_truncated
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.resources.sources import SourceRef, resolve_source
from catalog_nb.client.tags.associations import read_associations
from catalog_nb.client.tags.bulk_apply import apply_plan
from catalog_nb.client.tags.bulk_plan import (
    CHANGE,
    PLAN_COLUMNS,
    REPORT_COLUMNS,
    compute_plan,
    input_rows,
)
from catalog_nb.client.tags.frames import association_tag_name
from catalog_nb.client.tags.refs import TagIndex, TagRef

__all__ = ["DEFAULT_BATCH_SIZE", "BulkMixin"]

#: Rows per ``POST /tagassociation/list`` request.
DEFAULT_BATCH_SIZE = 200

_ACCEPTED = contract.TagAssociationState.ACCEPTED.value
_REJECTED = contract.TagAssociationState.REJECTED.value
_SUGGESTED = contract.TagAssociationState.SUGGESTED.value


def _frame(records: list[dict[str, Any]], columns: tuple[Column, ...], index: Any) -> pd.DataFrame:
    frame = to_frame(records, columns)
    frame.index = pd.Index(index) if len(records) else frame.index
    return frame


def _check_batch_size(batch_size: int) -> None:
    if not 1 <= batch_size <= ASSOCIATION_LIST_MAX:
        raise ValueError(f"batch_size must be between 1 and {ASSOCIATION_LIST_MAX}")


class BulkMixin(CatalogPart):
    """Bulk tagging workflows; mixed into :class:`~catalog_nb.client.catalog.Catalog`."""

    @overload
    def apply_associations(
        self,
        frame: pd.DataFrame | Iterable[Mapping[str, Any]],
        dry_run: bool = ...,
        batch_size: int = ...,
        progress: bool | None = ...,
        *,
        as_frame: Literal[True] = ...,
    ) -> pd.DataFrame: ...
    @overload
    def apply_associations(
        self,
        frame: pd.DataFrame | Iterable[Mapping[str, Any]],
        dry_run: bool = ...,
        batch_size: int = ...,
        progress: bool | None = ...,
        *,
        as_frame: Literal[False],
    ) -> list[dict[str, Any]]: ...
    def apply_associations(
        self,
        frame: pd.DataFrame | Iterable[Mapping[str, Any]],
        dry_run: bool = True,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: bool | None = None,
        *,
        as_frame: bool = True,
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Plan, and with ``dry_run=False`` apply, tag associations given as a DataFrame.

        Each row names a resource (a ``resource_key`` column, or ``source`` and ``path``
        columns; source by name or key), an optional ``field`` (missing: the resource itself),
        a tag (``tag``: full name, or ``tag_key``) and an optional ``state`` (ACCEPTED when
        missing; REJECTED and SUGGESTED too). Other columns are ignored, so an edited frame of
        :meth:`~catalog_nb.client.tags.associations.AssociationsMixin.associations` works.

        Returns a frame indexed like ``frame``, with one row per input row and the columns
        source, path, resource_key, field, tag (full name), tag_key, action (create, change
        state, unchanged, error), reason (why a row is an error: unknown data source,
        resource, field or tag, invalid state, duplicate row in input...), current_state,
        new_state, weight (of the existing association) and association_key. Nothing is
        written while ``dry_run`` is true.

        With ``dry_run=False`` the plan is computed afresh, its create and change rows are
        sent in batches of ``batch_size`` (at most 1,000) with a progress bar (``progress``
        overrides the catalog's setting), and the frame gains result (applied, failed,
        unchanged, error), status, error_code and message (the service's answer to a failed
        row). A failing row, or batch, never stops the rest.

        Example::

            plan = cat.apply_associations(frame)
            plan[plan["action"] == "error"][["path", "field", "tag", "reason"]]
            report = cat.apply_associations(frame, dry_run=False, batch_size=500)
        """
        _check_batch_size(batch_size)
        show = self.progress if progress is None else progress
        data = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(list(frame))
        rows = input_rows(data)
        plans = compute_plan(self.api, rows, progress=show)
        index = [row["index"] for row in rows]
        if not dry_run:
            apply_plan(self.api, plans, batch_size=batch_size, progress=show)
        if not as_frame:
            return plans
        return _frame(plans, PLAN_COLUMNS if dry_run else REPORT_COLUMNS, index)

    @overload
    def review_suggestions(
        self,
        min_weight: float = ...,
        accept: bool = ...,
        tags: TagRef | Iterable[TagRef] | None = ...,
        source: SourceRef | None = ...,
        dry_run: bool = ...,
        *,
        limit: int | None = ...,
        batch_size: int = ...,
        progress: bool | None = ...,
        as_frame: Literal[True] = ...,
    ) -> pd.DataFrame: ...
    @overload
    def review_suggestions(
        self,
        min_weight: float = ...,
        accept: bool = ...,
        tags: TagRef | Iterable[TagRef] | None = ...,
        source: SourceRef | None = ...,
        dry_run: bool = ...,
        *,
        limit: int | None = ...,
        batch_size: int = ...,
        progress: bool | None = ...,
        as_frame: Literal[False],
    ) -> list[dict[str, Any]]: ...
    def review_suggestions(
        self,
        min_weight: float = 0.0,
        accept: bool = True,
        tags: TagRef | Iterable[TagRef] | None = None,
        source: SourceRef | None = None,
        dry_run: bool = True,
        *,
        limit: int | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        progress: bool | None = None,
        as_frame: bool = True,
    ) -> pd.DataFrame | list[dict[str, Any]]:
        """Accept (or, ``accept=False``, reject) pending suggestions in bulk.

        Selects the SUGGESTED associations whose ``weight`` is at least ``min_weight``
        (suggestions without a weight pass only ``min_weight <= 0``), of the given ``tags``
        (full names, keys or records; one or several) and data ``source``, at most ``limit``
        of them (a :class:`TruncatedResultWarning` says when more matched). Returns the plan
        of :meth:`apply_associations` (every row a change of state to ACCEPTED or REJECTED,
        ``weight`` is the suggestion's), or with ``dry_run=False`` applies it and returns the
        report (``as_frame=False``: as dicts). Rejected suggestions are remembered: discovery
        never suggests them again.

        Example::

            cat.review_suggestions(min_weight=0.95)                       # what would happen
            cat.review_suggestions(min_weight=0.95, dry_run=False)        # accept them
            cat.review_suggestions(tags="Sensitive.PostalCode", accept=False, dry_run=False)
        """
        _check_batch_size(batch_size)
        check_limit(limit, "every suggestion")
        show = self.progress if progress is None else progress
        source_key = None
        if source is not None:
            source_key = str(resolve_source(self.api, source)["key"])
        tag_keys: list[str | None] = [None]
        if tags is not None:
            refs = [tags] if isinstance(tags, str | Mapping | pd.Series) else list(tags)
            index = TagIndex(self.api.list_tags())
            tag_keys = []
            for ref in refs:
                found, reason = index.find(ref)
                if found is None:
                    raise ValueError(f"review_suggestions: {reason}")
                tag_keys.append(str(found["key"]))
        records: list[dict[str, Any]] = []
        total = 0
        seen: set[Any] = set()
        for tag_key in dict.fromkeys(tag_keys):
            found_records, matched = read_associations(
                self.api,
                state=_SUGGESTED,
                tag_key=tag_key,
                source_key=source_key,
                min_weight=min_weight if min_weight > 0 else None,
                limit=limit,
                progress=show,
                caller="suggestions",
            )
            total += matched
            for record in found_records:
                weight = record.get("weight")
                passes = min_weight <= 0 or (weight is not None and float(weight) >= min_weight)
                if record.get("key") not in seen and record.get("state") == _SUGGESTED and passes:
                    seen.add(record.get("key"))
                    records.append(record)
        if limit is not None and max(total, len(records)) > limit:
            records = records[:limit]
            warn_truncated("review_suggestions", shown=len(records), total=total,
                           noun="suggestions", because=f"limit={limit}")
        new_state = _ACCEPTED if accept else _REJECTED
        plans = [_suggestion_plan(record, new_state) for record in records]
        if not dry_run:
            apply_plan(self.api, plans, batch_size=batch_size, progress=show)
        if not as_frame:
            return plans
        return to_frame(plans, PLAN_COLUMNS if dry_run else REPORT_COLUMNS)


def _suggestion_plan(record: Mapping[str, Any], new_state: str) -> dict[str, Any]:
    return {
        "index": None,
        "source": record.get("dataSourceName"),
        "path": record.get("resourcePath"),
        "resource_key": record.get("resourceKey"),
        "field": record.get("field") or None,
        "tag": association_tag_name(record),
        "tag_key": record.get("tagKey"),
        "action": CHANGE,
        "reason": None,
        "current_state": record.get("state"),
        "new_state": new_state,
        "weight": record.get("weight"),
        "association_key": record.get("key"),
    }
