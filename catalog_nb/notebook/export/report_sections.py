"""The text sections of the HTML report, worked out from the frames: tag coverage accepted
beside suggested (and why they differ), findings grouped by audit, the resource and field
inventory. :mod:`.report` renders them with the pictures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from catalog_nb.client.frame_display import human_size

__all__ = [
    "AUDIT_TITLES",
    "FindingGroup",
    "InventoryResource",
    "coverage_note",
    "coverage_table",
    "finding_groups",
    "inventory",
]

#: What each audit's findings are about, as a heading people read.
AUDIT_TITLES: dict[str, str] = {
    "unreviewed_sensitive": "Possibly sensitive data nobody has reviewed",
    "sensitive_exposure": "Who can see sensitive data",
    "undocumented": "Resources without a description or owner",
    "stale_profiles": "Profiles missing, failed or out of date",
    "pending_suggestions": "Suggested tags waiting for review",
    "orphan_tags": "Unused tags and empty tag domains",
    "user_role_hygiene": "Users and roles to check",
}
_SEVERITIES = ("high", "medium", "low", "info")
#: Most resources the inventory lists (the workbook export has them all).
MAX_INVENTORY = 300


def _text(value: Any) -> str:
    if value is None or (not isinstance(value, list | dict) and pd.isna(value)):
        return ""
    return str(value)


@dataclass
class FindingGroup:
    """The findings of one audit: a title, counts by severity and the rows listed."""

    audit: str
    title: str
    total: int
    severities: list[tuple[str, int]]
    rows: list[tuple[str, str, str, str]] = field(default_factory=list)

    @property
    def counts(self) -> str:
        """``3 high, 12 low``."""
        return ", ".join(f"{count} {severity}" for severity, count in self.severities)

    @property
    def most_severe(self) -> str:
        """The severity of the group's most severe finding."""
        return self.severities[0][0] if self.severities else "info"


def finding_groups(findings: pd.DataFrame, listed: int) -> list[FindingGroup]:
    """The findings grouped by audit, the groups with the most severe findings first; at most
    ``listed`` rows in all are kept (every finding is counted)."""
    groups: dict[str, FindingGroup] = {}
    budget = listed
    for row in findings.to_dict("records"):
        audit = _text(row["audit"])
        group = groups.get(audit)
        if group is None:
            group = groups[audit] = FindingGroup(
                audit, AUDIT_TITLES.get(audit, audit.replace("_", " ").capitalize()), 0, [])
        group.total += 1
        if budget > 0:
            budget -= 1
            thing, detail = _text(row["object"]), _text(row["detail"])
            # the detail starts with the object it is about, which its own column shows
            if thing and detail.startswith(thing + " "):
                detail = detail[len(thing) + 1:]
                detail = detail[:1].upper() + detail[1:]
            group.rows.append((_text(row["severity"]), _text(row["object_type"]), thing,
                               detail))
    for audit, group in groups.items():
        severities = findings.loc[findings["audit"] == audit, "severity"].value_counts()
        group.severities = [(s, int(severities[s])) for s in _SEVERITIES if s in severities]
    rank = {severity: i for i, severity in enumerate(_SEVERITIES)}
    return sorted(groups.values(), key=lambda g: (rank.get(g.most_severe, 9), -g.total))


def _share(part: Any, whole: Any) -> str:
    return f"{part / whole:.0%}" if whole else "—"


def coverage_table(accepted: pd.DataFrame, suggested: pd.DataFrame) -> list[list[str]]:
    """One row per data source: fields, then the fields tagged counting accepted tags only and
    counting suggestions too; the same for resources."""
    def by_source(frame: pd.DataFrame) -> dict[str, Mapping[Any, Any]]:
        rows = frame[frame["level"] == "source"].to_dict("records")
        return {str(row["name"]): row for row in rows}

    counted, with_suggested = by_source(accepted), by_source(suggested)
    table = []
    for name, row in counted.items():
        more = with_suggested.get(name, row)
        fields, resources = int(row["fields"] or 0), int(row["resources"] or 0)
        table.append([
            name, f"{fields:,}",
            f"{int(row['tagged_fields'] or 0):,} ({_share(row['tagged_fields'], fields)})",
            f"{int(more['tagged_fields'] or 0):,} ({_share(more['tagged_fields'], fields)})",
            f"{resources:,}",
            f"{int(row['tagged_resources'] or 0):,} "
            f"({_share(row['tagged_resources'], resources)})",
            f"{int(more['tagged_resources'] or 0):,} "
            f"({_share(more['tagged_resources'], resources)})",
        ])
    return table


def coverage_note(associations: pd.DataFrame, accepted: pd.DataFrame,
                  suggested: pd.DataFrame) -> str:
    """The sentence under the coverage table: why accepted and suggested coverage differ."""
    def tagged(frame: pd.DataFrame) -> tuple[int, int]:
        rows = frame[frame["level"] == "source"]
        return int(rows["tagged_fields"].fillna(0).sum()), int(rows["fields"].fillna(0).sum())

    states = associations["state"].value_counts()
    n_accepted, n_suggested = int(states.get("ACCEPTED", 0)), int(states.get("SUGGESTED", 0))
    (done, fields), (could, _) = tagged(accepted), tagged(suggested)
    text = "Coverage counts a field as tagged once a person has accepted a tag on it: "
    if n_accepted:
        text += (f"{done:,} of {fields:,} fields ({_share(done, fields)}) carry one of the "
                 f"{n_accepted:,} accepted tags. ")
    else:
        text += f"no tag has been accepted yet, so none of the {fields:,} fields counts. "
    if n_suggested:
        text += (
            f"Discovery has also suggested {n_suggested:,} tags that nobody has reviewed yet; "
            f"were they all accepted, {could:,} fields ({_share(could, fields)}) would be "
            "tagged. Review them (the \u201cSuggested tags waiting for review\u201d findings, "
            "or the stewardship sheet) to turn suggestions into coverage."
        )
    else:
        text += "No suggestions are waiting for review."
    return text


@dataclass
class InventoryResource:
    """One resource of the inventory: what it is, its fields and its tags."""

    source: str
    path: str
    kind: str
    facts: str
    description: str
    tags: list[tuple[str, str]]
    fields: list[tuple[str, str, str, list[tuple[str, str]]]]
    members: int = 0


def _tags_by_place(associations: pd.DataFrame) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(resource key, field or "") -> [(tag, state)], accepted first, rejected left out."""
    places: dict[tuple[str, str], list[tuple[str, str]]] = {}
    ordered = associations[associations["state"].isin(["ACCEPTED", "SUGGESTED"])]
    ordered = ordered.sort_values(["state", "tag"], na_position="last")
    for row in ordered[["resource_key", "field", "tag", "state"]].itertuples(index=False):
        place = (_text(row.resource_key), _text(row.field))
        entry = (_text(row.tag), str(row.state).lower())
        if entry not in places.setdefault(place, []):
            places[place].append(entry)
    return places


def _facts(resource: Mapping[Any, Any], fields: int) -> str:
    # the kind is shown before the facts: the format only when it says more (csv, parquet)
    form = _text(resource.get("format"))
    parts = [form if form != _text(resource.get("type")) else ""]
    rows, size = resource.get("rows"), resource.get("size")
    if rows is not None and not pd.isna(rows):
        parts.append(f"{int(rows):,} rows")
    parts.append(f"{fields} field{'' if fields == 1 else 's'}")
    if size is not None and not pd.isna(size) and size:
        parts.append(human_size(size))
    return ", ".join(part for part in parts if part)


def inventory(frames: Mapping[str, pd.DataFrame]) -> tuple[list[InventoryResource], int]:
    """The resources (members of a collection folded under it) with their fields, data types
    and tags, by source and path; and how many resources were left out (:data:`MAX_INVENTORY`).
    """
    resources = frames["resources"].sort_values(["source", "path"], na_position="last")
    fields = frames["fields"]
    places = _tags_by_place(frames["associations"])
    by_resource: dict[str, list[tuple[str, str, str, list[tuple[str, str]]]]] = {}
    for row in fields.sort_values(["resource_key", "position"]).to_dict("records"):
        key, filled = _text(row["resource_key"]), row["density"]
        density = "" if pd.isna(filled) else f"{float(filled):.0%} filled"
        by_resource.setdefault(key, []).append(
            (_text(row["name"]), _text(row["data_type"]), density,
             places.get((key, _text(row["name"])), [])))
    records = resources.to_dict("records")
    collections = [(_text(r["source"]), _text(r["path"]).rstrip("/") + "/") for r in records
                   if r["type"] == "collection"]
    members: dict[tuple[str, str], int] = {}
    listed: list[InventoryResource] = []
    for r in records:
        source, path = _text(r["source"]), _text(r["path"])
        home = next((c for c in collections if c[0] == source and path.startswith(c[1])), None)
        if home is not None and r["type"] != "collection":
            members[home] = members.get(home, 0) + 1
            continue
        key = _text(r["key"])
        own = by_resource.get(key, [])
        listed.append(InventoryResource(
            source, path, _text(r["type"]), _facts(r, len(own)), _text(r["description"]),
            places.get((key, ""), []), own))
    for item in listed:
        item.members = members.get((item.source, item.path.rstrip("/") + "/"), 0)
    return listed[:MAX_INVENTORY], max(len(listed) - MAX_INVENTORY, 0)
