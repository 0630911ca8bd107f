"""The stewards' round trip: a descriptions-and-tags sheet out, edited, and read back as a plan.

:func:`write_sheet` writes one row per data resource and one per field: description, owner
(resource rows), accepted tags (``a; b``) and, for reading only, the pending suggestions. Hidden
``exported_*`` columns keep the values as exported, so reading back knows what the steward
changed, not merely what differs from the catalog now.

:func:`read_sheet` turns the edits into a :class:`StewardshipPlan`:

* tags added to a row become ACCEPTED associations, tags removed become REJECTED (remembered,
  so discovery never suggests them again) -- planned by ``apply_associations`` (dry run);
* changed descriptions and owners become resource updates with an action per row: update,
  unchanged (the catalog already says so), conflict (someone changed it in the catalog since
  the export; applied only with ``force=True``) or error (unknown resource or field, an owner
  on a field row).

Nothing is written until :meth:`StewardshipPlan.apply`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from catalog_nb.notebook.export.cells import ExportError, restore
from catalog_nb.snapshot.files import reports_import

__all__ = [
    "SHEET_COLUMNS",
    "UPDATE_COLUMNS",
    "StewardshipPlan",
    "read_sheet",
    "sheet_frame",
    "write_sheet",
]

SHEET = "stewardship"
#: Columns of the stewardship sheet; the ``exported_*`` ones are hidden.
SHEET_COLUMNS: tuple[str, ...] = (
    "source", "path", "field", "kind", "description", "owner", "tags", "suggested_tags",
    "resource_key", "exported_description", "exported_owner", "exported_tags",
)
_HIDDEN = ("exported_description", "exported_owner", "exported_tags")
_EDITABLE = {"description": "exported_description", "owner": "exported_owner"}
#: Columns of :attr:`StewardshipPlan.updates` (plus result and message once applied).
UPDATE_COLUMNS: tuple[str, ...] = (
    "sheet_row", "source", "path", "field", "resource_key", "property", "exported", "current",
    "new", "action", "reason",
)
_INSTRUCTIONS = [
    ["How to use this sheet"],
    ["Edit description, owner (resource rows only) and tags (full names separated by ';')."],
    ["suggested_tags lists discovery's pending suggestions; copy one into tags to accept it."],
    ["Removing a tag from tags rejects it. Leave the other columns and the hidden ones as "
     "they are."],
    ["Read it back with read_stewardship_sheet(cat, path): a dry-run plan; plan.apply() writes."],
]


def _names(views: Iterable[Mapping[str, Any]], state: str, field_name: str | None) -> str:
    names = sorted(
        str(v.get("tagFullName") or v.get("tagName"))
        for v in views
        if v.get("state") == state and (v.get("field") or None) == field_name
    )
    return "; ".join(names)


def sheet_frame(records: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """The stewardship rows of resource JSON records (read with fields and tags)."""
    rows: list[dict[str, Any]] = []
    for r in sorted(records, key=lambda r: (str(r.get("dataSourceName")),
                                            str(r.get("resourcePath")))):
        views = r.get("tagAssociationViewList") or []
        base = {"source": r.get("dataSourceName"), "path": r.get("resourcePath"),
                "resource_key": r.get("key")}
        tags = _names(views, "ACCEPTED", None)
        rows.append({**base, "field": None, "kind": "resource",
                     "description": r.get("description"), "owner": r.get("owner"),
                     "tags": tags, "suggested_tags": _names(views, "SUGGESTED", None),
                     "exported_description": r.get("description"),
                     "exported_owner": r.get("owner"), "exported_tags": tags})
        fields = sorted(r.get("fields") or [], key=lambda f: f.get("position") or 0)
        for f in fields:
            name = f.get("name")
            tags = _names(views, "ACCEPTED", name)
            rows.append({**base, "field": name, "kind": "field",
                         "description": f.get("description"), "owner": None, "tags": tags,
                         "suggested_tags": _names(views, "SUGGESTED", name),
                         "exported_description": f.get("description"), "exported_owner": None,
                         "exported_tags": tags})
    frame = pd.DataFrame(rows, columns=list(SHEET_COLUMNS))
    return frame.astype("string")


def write_sheet(path: str | os.PathLike[str], frame: pd.DataFrame) -> Path:
    """Write the stewardship ``frame`` (from :func:`sheet_frame`) as a workbook."""
    from catalog_nb.notebook.export.xlsx import write_workbook

    instructions = pd.DataFrame(_INSTRUCTIONS[1:], columns=_INSTRUCTIONS[0], dtype="string")
    return write_workbook(path, {SHEET: frame, "how to": instructions},
                          hidden={SHEET: _HIDDEN})


def _cell(value: Any) -> str:
    if value is None:
        return ""
    text = str(value) if not isinstance(value, float) or not value.is_integer() else str(
        int(value))
    return restore(text).strip()


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(";") if part.strip()]


def _read_rows(path: Path) -> list[dict[str, Any]]:
    openpyxl = reports_import("openpyxl")
    if not path.is_file():
        raise ExportError(f"cannot read the stewardship sheet {str(path)!r}: no such file")
    try:
        # data_only=False: a formula someone typed is read as its text, never evaluated
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=False)
    except Exception as exc:  # openpyxl raises many kinds of errors for a bad file
        raise ExportError(
            f"cannot read the stewardship sheet {str(path)!r}: not an Excel workbook ({exc})"
        ) from exc
    try:
        if SHEET not in workbook.sheetnames:
            raise ExportError(
                f"{str(path)!r} has no {SHEET!r} sheet; write one with stewardship_sheet(cat, path)"
            )
        values = list(workbook[SHEET].iter_rows(values_only=True))
    finally:
        workbook.close()
    header = [_cell(v) for v in values[0]] if values else []
    missing = [c for c in SHEET_COLUMNS if c not in header]
    if missing:
        raise ExportError(
            f"the {SHEET!r} sheet of {str(path)!r} lacks the column(s) {', '.join(missing)}; "
            "keep the columns of the exported sheet (hidden ones included)"
        )
    where = {name: header.index(name) for name in SHEET_COLUMNS}
    rows = []
    for number, row in enumerate(values[1:], start=2):
        cells = {name: _cell(row[i]) if i < len(row) else "" for name, i in where.items()}
        if any(cells.values()):
            rows.append({"sheet_row": number, **cells})
    return rows


@dataclass
class StewardshipPlan:
    """What reading back an edited stewardship sheet would change; :meth:`apply` does it.

    Attributes:
        tags: the plan (or, once applied, the report) of ``apply_associations`` for the tag
            edits, indexed by sheet row: action create / change state / unchanged / error.
        updates: one row per edited description or owner (:data:`UPDATE_COLUMNS`), with
            ``result`` and ``message`` once applied.
        applied: whether this is the outcome of :meth:`apply`.
    """

    catalog: Any
    tags: pd.DataFrame
    updates: pd.DataFrame
    tag_input: pd.DataFrame = field(repr=False)
    applied: bool = False

    def __repr__(self) -> str:
        tags = self.tags["action"].value_counts().to_dict() if len(self.tags) else {}
        updates = self.updates["action"].value_counts().to_dict() if len(self.updates) else {}
        state = "applied" if self.applied else "dry run"
        return f"<StewardshipPlan ({state}) tags: {tags or 'none'}; updates: {updates or 'none'}>"

    def apply(self, *, force: bool = False) -> StewardshipPlan:
        """Write the plan: tag edits through ``apply_associations(dry_run=False)`` (planned
        afresh), description and owner updates with one request per resource. Conflicts are
        skipped unless ``force``. A failing row never stops the rest; returns the report."""
        from catalog_nb.client.errors import CatalogError

        tags = (self.catalog.apply_associations(self.tag_input, dry_run=False)
                if len(self.tag_input) else self.tags.copy())
        updates = self.updates.copy()
        updates["result"] = pd.Series(pd.NA, index=updates.index, dtype="string")
        updates["message"] = pd.Series(pd.NA, index=updates.index, dtype="string")
        go = updates["action"].isin(["update", "conflict"] if force else ["update"])
        for key, group in updates[go].groupby("resource_key"):
            change: dict[str, Any] = {}
            for row in group.to_dict("records"):
                if row["field"] is None or row["field"] is pd.NA:
                    change[str(row["property"])] = str(row["new"])
                else:
                    change.setdefault("field_descriptions", {})[str(row["field"])] = str(
                        row["new"])
            try:
                self.catalog.update_resource(str(key), **change)
            except CatalogError as exc:
                updates.loc[group.index, ["result", "message"]] = ["failed", exc.message]
            else:
                updates.loc[group.index, "result"] = "applied"
        skipped = ~go & updates["result"].isna()
        updates.loc[skipped, "result"] = updates.loc[skipped, "action"].map(
            {"unchanged": "unchanged", "conflict": "skipped", "error": "error"})
        return StewardshipPlan(self.catalog, tags, updates, self.tag_input, applied=True)


def _current(catalog: Any, key: str, cache: dict[str, Any]) -> dict[str, Any] | None:
    from catalog_nb.client.errors import NotFoundError

    if key not in cache:
        try:
            cache[key] = catalog.api.get_resource(key)
        except NotFoundError:
            cache[key] = None
    found: dict[str, Any] | None = cache[key]
    return found


def _update_row(catalog: Any, row: Mapping[str, Any], prop: str,
                cache: dict[str, Any]) -> dict[str, Any]:
    out = {"sheet_row": row["sheet_row"], "source": row["source"], "path": row["path"],
           "field": row["field"] or None, "resource_key": row["resource_key"], "property": prop,
           "exported": row[_EDITABLE[prop]], "current": None, "new": row[prop],
           "action": "update", "reason": None}
    resource = _current(catalog, row["resource_key"], cache) if row["resource_key"] else None
    if resource is None:
        out.update(action="error", reason=f"unknown resource {row['resource_key']!r}")
        return out
    if row["field"]:
        if prop == "owner":
            out.update(action="error", reason="an owner belongs to the resource row, not a field")
            return out
        match = [f for f in resource.get("fields") or [] if f.get("name") == row["field"]]
        if not match:
            out.update(action="error", reason=f"unknown field {row['field']!r}")
            return out
        current = match[0].get("description")
    else:
        current = resource.get(prop)
    out["current"] = current or ""
    if out["current"] == row[prop]:
        out["action"] = "unchanged"
    elif out["current"] != row[_EDITABLE[prop]]:
        out.update(action="conflict", reason=f"changed in the catalog since the export: now "
                   f"{out['current']!r}")
    return out


def read_sheet(catalog: Any, path: str | os.PathLike[str]) -> StewardshipPlan:
    """The :class:`StewardshipPlan` of an edited stewardship sheet (nothing is written).

    Raises:
        ExportError: the file is missing, not a workbook, or lacks the sheet's columns.
    """
    from catalog_nb.client.frames import empty_frame
    from catalog_nb.client.tags.bulk_plan import PLAN_COLUMNS

    rows = _read_rows(Path(path).expanduser())
    tag_rows: list[dict[str, Any]] = []
    updates: list[dict[str, Any]] = []
    cache: dict[str, Any] = {}
    for row in rows:
        before, after = _split(row["exported_tags"]), _split(row["tags"])
        where = {"resource_key": row["resource_key"] or None, "source": row["source"],
                 "path": row["path"], "field": row["field"] or None}
        for tag in [t for t in after if t not in before]:
            tag_rows.append({"sheet_row": row["sheet_row"], **where, "tag": tag,
                             "state": "ACCEPTED"})
        for tag in [t for t in before if t not in after]:
            tag_rows.append({"sheet_row": row["sheet_row"], **where, "tag": tag,
                             "state": "REJECTED"})
        for prop, exported in _EDITABLE.items():
            if row[prop] != row[exported]:
                updates.append(_update_row(catalog, row, prop, cache))
    tag_input = pd.DataFrame(tag_rows, columns=["sheet_row", "resource_key", "source", "path",
                                                "field", "tag", "state"])
    tag_input.index = pd.Index(tag_input["sheet_row"], name="sheet_row")
    plan = (catalog.apply_associations(tag_input, dry_run=True) if len(tag_input)
            else empty_frame(PLAN_COLUMNS))
    update_frame = pd.DataFrame(updates, columns=list(UPDATE_COLUMNS)).astype(
        {c: "string" for c in UPDATE_COLUMNS if c != "sheet_row"} | {"sheet_row": "Int64"})
    return StewardshipPlan(catalog, plan, update_frame, tag_input)


Scope = str | Iterable[str] | pd.DataFrame | None


def stewardship_sheet(cat: Any, path: str | os.PathLike[str], scope: Scope = None) -> Path:
    """Write a descriptions-and-tags workbook for stewards to edit; returns its path.

    One row per data resource (description, owner, accepted tags) and one per field
    (description, tags), with discovery's pending suggestions for reference. ``scope``:
    ``None`` (everything ``cat`` may see), a data source name, resource keys, or a resources
    frame with a ``key`` column.

    Raises:
        ExportError: the path cannot be written.

    Example::

        stewardship_sheet(cat, "crm.xlsx", scope=cat.resources("demo_files", path="crm"))
    """
    from catalog_nb.notebook.export.cells import check_writable

    target = Path(path).expanduser()
    check_writable(target, "stewardship sheet")
    source = scope if isinstance(scope, str) else None
    records = cat.resources(source, fields=True, tags=True, as_frame=False, progress=False)
    if scope is not None and not isinstance(scope, str):
        keys = set(scope["key"].astype(str) if isinstance(scope, pd.DataFrame) else scope)
        records = [r for r in records if str(r.get("key")) in keys]
    return write_sheet(target, sheet_frame(records))


def read_stewardship_sheet(cat: Any, path: str | os.PathLike[str]) -> StewardshipPlan:
    """Read an edited stewardship sheet back as a dry-run plan; nothing is written.

    Tags added to a row become ACCEPTED associations, tags removed become REJECTED
    (``plan.tags``: the plan of :meth:`Catalog.apply_associations`); changed descriptions and
    owners become updates (``plan.updates``: action update, unchanged, conflict when the
    catalog changed since the export, or error). ``plan.apply()`` writes it (``force=True``
    also overwrites conflicts) and returns the report.

    Raises:
        ExportError: the file is missing, not a workbook, or lacks the sheet's columns.

    Example::

        plan = read_stewardship_sheet(cat, "crm.xlsx")
        plan.updates.query("action == 'conflict'")
        plan.apply().tags["result"].value_counts()
    """
    return read_sheet(cat, path)
