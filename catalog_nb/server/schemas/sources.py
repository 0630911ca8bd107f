"""Request and response models of data sources (``/datasource``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, Field

from catalog_nb.contract import JobEngine, SourceType
from catalog_nb.server.profiling.connect import mask_url
from catalog_nb.server.profiling.object_uri import is_object_uri
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Name, Payload, Wire
from catalog_nb.server.schemas.examples import examples
from catalog_nb.server.schemas.jobs import JobOut, job_out

#: Most include or exclude patterns one source may carry.
MAX_PATTERNS = 100


def _pattern(value: str) -> str:
    value = value.strip()
    if not value:
        raise ValueError("a pattern must not be empty")
    if len(value) > 1000:
        raise ValueError("a pattern must be at most 1000 characters")
    return value


Pattern = Annotated[str, AfterValidator(_pattern)]
Patterns = Annotated[list[Pattern], Field(max_length=MAX_PATTERNS)]


class SourceFields(Payload):
    read_only = frozenset(
        {"key", "type", "timeOfCreation", "timeOfLastChange", "resourceCount", "lastJob"}
    )
    read_form = True  # a DataSource sent back: see services.read_back

    description: str | None = None
    uri: str | None = Field(default=None, min_length=1, max_length=4096)
    include_patterns: Patterns | None = None
    exclude_patterns: Patterns | None = None
    #: catalog_nb extra: what computes the source's PROFILE jobs when a job names no engine
    #: (``local``, the default, or ``spark``: FILE sources only).
    engine: JobEngine | None = None


class SourceCreate(SourceFields):
    """Body of ``POST /datasource``."""

    model_config = examples(ex.SOURCE_CREATE)

    name: Name
    source_type: SourceType
    uri: str = Field(min_length=1, max_length=4096)


class SourceUpdate(SourceFields):
    """Body of ``PUT /datasource/{key}``: absent properties stay unchanged."""

    model_config = examples(ex.SOURCE_UPDATE)

    name: Name | None = None
    source_type: SourceType | None = None


class SourceOut(Wire):
    """A data source. ``uri`` is a folder path, an SQLAlchemy URL (password as ``***``) or an
    object store's ``s3://[KEY_ID:***@]bucket/prefix[?endpoint=&region=]`` (a catalog_nb extra:
    the spec's DataSource has no field for the store's settings, so the uri carries them; see
    :mod:`catalog_nb.server.profiling.object_uri`)."""

    model_config = examples(ex.SOURCE)

    key: str
    type: str = "datasource"
    name: str
    description: str | None
    source_type: str
    uri: str
    include_patterns: list[str]
    exclude_patterns: list[str]
    #: catalog_nb extra: the engine of its PROFILE jobs when a job names none
    engine: str
    time_of_creation: int
    time_of_last_change: int
    resource_count: int
    last_job: JobOut | None


def has_secrets(row: dict[str, Any]) -> bool:
    """Whether a stored source's uri may hold a secret: an SQL URL's password, an object-store
    URI's secret access key (both parsed, masked and restored by the same code)."""
    return bool(row["source_type"] == SourceType.SQL.value or is_object_uri(str(row["uri"])))


def shown_uri(row: dict[str, Any]) -> str:
    """The uri of a stored source as people see it (an SQL password, an object store's secret
    access key as ``***``)."""
    uri = str(row["uri"])
    return mask_url(uri) if has_secrets(row) else uri


def source_out(
    row: dict[str, Any], resource_count: int = 0, last_job: dict[str, Any] | None = None
) -> SourceOut:
    """The wire form of a stored data source."""
    return SourceOut(
        key=row["key"],
        name=row["name"],
        description=row["description"],
        source_type=row["source_type"],
        uri=shown_uri(row),
        include_patterns=list(row["include_patterns"] or []),
        exclude_patterns=list(row["exclude_patterns"] or []),
        engine=row.get("engine") or JobEngine.LOCAL.value,
        time_of_creation=row["created_ms"],
        time_of_last_change=row["changed_ms"],
        resource_count=resource_count,
        last_job=job_out(last_job) if last_job else None,
    )
