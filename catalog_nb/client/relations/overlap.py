"""Schema overlap of SQL tables: ``overlap(t1, t2)`` and ``overlap_matrix(tables)``.

Tables are named ``schema.table_name`` (``docs/relations-api.md``, "Table overlap"); a virtual
folder (name, key or record) picks the tables of one folder when a name exists in several data
sources. :class:`OverlapMixin` is a base of
:class:`~catalog_nb.client.relations.lineage.LineageMixin`.

Example::

    cat.overlap("sales.customers", "sales.customer_contacts").attrs["overlap_percent"]
    cat.overlap_matrix(cat.resources("demo_sql", type="table")["path"])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from catalog_nb import contract
from catalog_nb.client.api.relations import OVERLAP_BATCH_MAX
from catalog_nb.client.frames import to_frame
from catalog_nb.client.part import CatalogPart
from catalog_nb.client.refs import pick
from catalog_nb.client.relations.frames import OVERLAP_COLUMNS

__all__ = ["OverlapMixin", "table_name"]


def table_name(value: Any, which: str = "table") -> str:
    """``value`` when it names a table as ``schema.table_name``; :class:`ValueError` else.

    >>> table_name("sales.orders")
    'sales.orders'
    """
    if not isinstance(value, str) or value.count(".") != 1 or "" in value.split("."):
        raise ValueError(f"{which} must be named 'schema.table_name', not {value!r}")
    return value


class OverlapMixin(CatalogPart):
    """Table overlap frames; needs ``self.api``."""

    def _folder_name(self, folder: Any) -> str | None:
        if folder is None or isinstance(folder, str):
            return folder
        code = contract.ErrorCode.VIRTUAL_FOLDER_NOT_FOUND.value
        return str(pick(self.api.list_virtual_folders(), folder, "virtual folder", code)["name"])

    def overlap(self, t1: str, t2: str, virtual_folder: Any = None) -> pd.DataFrame:
        """Schema overlap of two SQL tables or views named ``schema.table_name``.

        One row per field of either table: field, in_one, in_two, side (``both``, ``one``,
        ``two``); common fields first (in table one's order and spelling), then those only in
        one, then only in two. ``frame.attrs``: overlap_percent (100 * common / union),
        table_one, table_two. ``virtual_folder`` (name, key or record) picks the tables of
        one folder when a name exists in several sources.

        Raises:
            NotFoundError: ``TABLE_NOT_FOUND``, ``VIRTUAL_FOLDER_NOT_FOUND``.
            BadRequestError: ``AMBIGUOUS_TABLE`` (name a virtual folder).
            ValueError: a name that is not ``schema.table_name``.

        Example::

            cat.overlap("sales.customers", "sales.customer_contacts").query("side == 'both'")
        """
        one, two = table_name(t1, "t1"), table_name(t2, "t2")
        answer = self.api.overlap_table(one, two, self._folder_name(virtual_folder))
        rows = (
            [
                {"field": f, "in_one": True, "in_two": True, "side": "both"}
                for f in answer.get("commonFields") or []
            ]
            + [
                {"field": f, "in_one": True, "in_two": False, "side": "one"}
                for f in answer.get("tableOneUniqueFields") or []
            ]
            + [
                {"field": f, "in_one": False, "in_two": True, "side": "two"}
                for f in answer.get("tableTwoUniqueFields") or []
            ]
        )
        frame = to_frame(rows, OVERLAP_COLUMNS)
        frame.attrs.update(
            overlap_percent=float(answer.get("overlapPercent") or 0.0),
            table_one=one,
            table_two=two,
        )
        return frame

    def overlap_matrix(self, tables: Iterable[str], virtual_folder: Any = None) -> pd.DataFrame:
        """The ``overlapPercent`` of every pair of ``tables``: a square, symmetric DataFrame
        (index and columns the table names, Float64, 0-100; a table against itself is 100,
        or 0 when it has no profiled fields). Sent in batches of 1000 comparisons.

        Raises:
            ValueError: no tables, a name given twice, a name that is not ``schema.table``.
            NotFoundError, BadRequestError: as :meth:`overlap`.

        Example::

            m = cat.overlap_matrix(["sales.customers", "sales.customer_contacts", "hr.employees"])
        """
        names = [
            table_name(t, "each table")
            for t in ([tables] if isinstance(tables, str) else list(tables))
        ]
        if not names:
            raise ValueError("overlap_matrix needs at least one table")
        folded = [n.casefold() for n in names]
        if len(set(folded)) != len(folded):
            twice = sorted({n for n in names if folded.count(n.casefold()) > 1})
            raise ValueError(f"each table may be named once: {', '.join(twice)}")
        folder = self._folder_name(virtual_folder)
        pairs = [(i, j) for i in range(len(names)) for j in range(i, len(names))]
        values: dict[tuple[int, int], float] = {}
        for begin in range(0, len(pairs), OVERLAP_BATCH_MAX):
            chunk = pairs[begin : begin + OVERLAP_BATCH_MAX]
            items = []
            for i, j in chunk:
                item = {"tableOne": names[i], "tableTwo": names[j]}
                if folder is not None:
                    item["virtualFolder"] = folder
                items.append(item)
            for (i, j), answer in zip(chunk, self.api.overlap_tables(items), strict=True):
                values[i, j] = values[j, i] = float(answer.get("overlapPercent") or 0.0)
        matrix = pd.DataFrame(
            [[values[i, j] for j in range(len(names))] for i in range(len(names))],
            index=pd.Index(names, name="table_one"),
            columns=pd.Index(names, name="table_two"),
            dtype="Float64",
        )
        return matrix
