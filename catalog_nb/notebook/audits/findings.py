"""What every audit shares: the findings frame, the :class:`Frames` cache, the helpers.

Each finding is one row of :data:`FINDING_COLUMNS`; :func:`findings_frame` orders rows most
severe first. :class:`Frames` reads each frame of a source (a live catalog or a snapshot) once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import pandas as pd

from catalog_nb.client.frames import Column, to_frame

__all__ = [
    "FINDING_COLUMNS",
    "SENSITIVE",
    "SEVERITIES",
    "SEVERITY_BY_SENSITIVITY",
    "TABLES",
    "Frames",
    "ago",
    "as_utc",
    "clean_row",
    "confidence",
    "days_since",
    "findings_frame",
    "frames_of",
    "place_of",
    "present",
    "role_holders",
    "rows_of",
    "sensitive_tags",
    "sensitivity_rank",
]


def rows_of(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as dicts keyed by column name."""
    return cast(list[dict[str, Any]], frame.to_dict("records"))


#: Severities from most to least urgent.
SEVERITIES: tuple[str, ...] = ("high", "medium", "low", "info")
#: Tag sensitivities an audit treats as sensitive by default.
SENSITIVE: tuple[str, ...] = ("CONFIDENTIAL", "RESTRICTED")
SEVERITY_BY_SENSITIVITY = {"RESTRICTED": "high", "CONFIDENTIAL": "medium"}

#: Columns of every findings frame.
FINDING_COLUMNS: tuple[Column, ...] = (
    Column("audit", "string"),
    Column("severity", "string"),
    Column("object_type", "string"),
    Column("object", "string"),
    Column("detail", "string"),
    Column("key", "string"),
    Column("source", "string"),
    Column("path", "string"),
    Column("field", "string"),
    Column("tag", "string"),
    Column("sensitivity", "string"),
    Column("role", "string"),
    Column("users", "list"),
    Column("count", "int"),
    Column("age_days", "float"),
    Column("when", "time"),
)

TABLES = ("users", "roles", "sources", "tag_domains", "tags", "associations", "resources",
           "fields")


class Frames:
    """The frames of one source, each read once: what :func:`run_all` hands every audit.

    Example::

        frames = Frames(cat)
        audit.undocumented(frames), audit.stale_profiles(frames)   # one read of resources
    """

    def __init__(
        self, source: Any, now: Any = None, frames: Mapping[str, pd.DataFrame] | None = None
    ) -> None:
        self.source = source
        # frames already read (e.g. by an export) are used instead of reading them again
        self._cache: dict[str, pd.DataFrame] = dict(frames or {})
        if now is not None:
            self.now = as_utc(now)
        elif getattr(source, "taken_at", None) is not None:
            self.now = as_utc(source.taken_at)
        else:
            self.now = pd.Timestamp.now(tz="UTC")

    def get(self, name: str) -> pd.DataFrame:
        """The frame ``name`` (users, roles, sources, tag_domains, tags, associations,
        resources, fields) of the source, read on first use."""
        if name not in TABLES:
            raise KeyError(f"no frame {name!r}; expected one of {', '.join(TABLES)}")
        if name not in self._cache:
            self._cache[name] = getattr(self.source, name)()
        return self._cache[name]


def as_utc(value: Any) -> pd.Timestamp:
    """``value`` as a UTC timestamp (naive means UTC)."""
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def frames_of(source: Any, now: Any = None) -> Frames:
    """``source`` as :class:`Frames` (a Frames is returned as is unless ``now`` is given)."""
    if isinstance(source, Frames):
        return source if now is None else Frames(source.source, now)
    return Frames(source, now)


def present(value: Any) -> bool:
    """Whether a cell holds something: not None, NA, NaN or blank text."""
    if value is None:
        return False
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list | dict):
        return True
    return not pd.isna(value)


def clean_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row with pandas' missing values (NA, NaT, NaN) as ``None``, as frames expect."""
    return {
        key: None if not isinstance(value, list | dict) and not present(value) else value
        for key, value in row.items()
    }


def findings_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Finding rows as a frame of :data:`FINDING_COLUMNS`, most severe first."""
    rank = {name: i for i, name in enumerate(SEVERITIES)}
    ordered = sorted(rows, key=lambda r: rank.get(str(r.get("severity")), len(rank)))
    return to_frame([clean_row(row) for row in ordered], FINDING_COLUMNS)


def place_of(row: Mapping[str, Any], path: str = "path") -> str:
    """Where a row points: ``source:path``, with `` [field]`` when it names a field."""
    text = f"{row.get('source')}:{row.get(path)}"
    field = row.get("field")
    return f"{text} [{field}]" if present(field) else text


def sensitive_tags(frames: Frames, sensitivities: Iterable[str]) -> dict[str, str]:
    """tag key -> sensitivity of the tags whose sensitivity is one of ``sensitivities``."""
    wanted = {str(s).upper() for s in sensitivities}
    tags = frames.get("tags")
    return {
        str(row["key"]): str(row["sensitivity"])
        for row in rows_of(tags)
        if present(row["sensitivity"]) and str(row["sensitivity"]).upper() in wanted
    }


def sensitivity_rank(sensitivity: str) -> int:
    """PUBLIC < INTERNAL < CONFIDENTIAL < RESTRICTED as 0..3 (-1 for anything else)."""
    order = ("PUBLIC", "INTERNAL", "CONFIDENTIAL", "RESTRICTED")
    return order.index(sensitivity) if sensitivity in order else -1


def days_since(now: pd.Timestamp, then: Any) -> float | None:
    """Days from ``then`` to ``now`` (two decimals), None when ``then`` is missing."""
    if not present(then):
        return None
    return round((now - as_utc(then)).total_seconds() / 86400, 2)


def ago(days: float | None) -> str:
    """How long ago, as people say it: ``today``, ``yesterday``, ``3 days ago``, ``5 weeks ago``.

    >>> ago(0.4), ago(1.2), ago(12), ago(40), ago(400)
    ('today', 'yesterday', '12 days ago', '5 weeks ago', '13 months ago')
    """
    if days is None:
        return "at an unknown time"
    whole = int(days)
    if whole < 1:
        return "today"
    if whole == 1:
        return "yesterday"
    if whole < 28:
        return f"{whole} days ago"
    if whole < 60:
        return f"{whole // 7} weeks ago"
    return f"{whole // 30} months ago"


def confidence(weight: Any) -> str | None:
    """Discovery's weight (0-1) as people read it: ``confidence 85%`` (None when missing).

    >>> confidence(0.854)
    'confidence 85%'
    """
    return f"confidence {float(weight):.0%}" if present(weight) else None


def role_holders(frames: Frames) -> dict[str, list[str]]:
    """role name -> names of the users who hold it."""
    holders: dict[str, list[str]] = {}
    for user in rows_of(frames.get("users")):
        for role in user["roles"] or []:
            holders.setdefault(str(role), []).append(str(user["name"]))
    return {role: sorted(names) for role, names in holders.items()}
