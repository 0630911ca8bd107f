"""Request and response models of virtual folders (``/virtualfolder``) and data sets."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import Name, Payload, Wire
from catalog_nb.server.schemas.examples import examples
from catalog_nb.server.visibility import Visibility

_PATTERN = 1024
_TEXT = 10_000
_KEY = 64
_SPECS = 200


class PathSpecIn(Payload):
    """A PathSpecification: a folder prefix and optional glob patterns (see visibility.PathSpec)."""

    source_path: str | None = Field(default=None, max_length=_PATTERN)
    include_pattern: str | None = Field(default=None, max_length=_PATTERN)
    exclude_pattern: str | None = Field(default=None, max_length=_PATTERN)

    def stored(self) -> dict[str, Any]:
        """The stored (and wire) form: all three keys, empty strings as null."""
        return {
            "sourcePath": self.source_path or None,
            "includePattern": self.include_pattern or None,
            "excludePattern": self.exclude_pattern or None,
        }


SpecList = list[PathSpecIn]


class _ItemFields(Payload):
    read_only = frozenset(
        {"key", "type", "resourceCount", "dataSourceName", "timeOfCreation", "timeOfLastChange"}
    )
    read_form = True  # see services.read_back

    description: str | None = Field(default=None, max_length=_TEXT)

    def values(self) -> dict[str, Any]:
        """Store column values of the fields that were sent."""
        sent = self.changes()
        if "path_specs" in sent:
            sent["path_specs"] = [s.stored() for s in sent["path_specs"] or []]
        if "data_set_path_specs" in sent:
            listed = sent.pop("data_set_path_specs") or {}
            sent["path_specs"] = {k: [s.stored() for s in v] for k, v in listed.items()}
        return sent

    def nulls(self, *wire_names: str) -> list[str]:
        """Which of these required wire properties the body sets to null."""
        sent = self.changes()
        by_wire = {name: field.alias or name for name, field in type(self).model_fields.items()}
        return sorted(by_wire[k] for k in sent if sent[k] is None and by_wire[k] in wire_names)


class FolderCreate(_ItemFields):
    """Body of ``POST /virtualfolder``."""

    model_config = examples(ex.FOLDER_CREATE)

    name: Name
    data_source_key: str = Field(max_length=_KEY)
    parent_key: str | None = Field(default=None, max_length=_KEY)
    path_specs: SpecList = Field(default_factory=list, max_length=_SPECS)


class FolderUpdate(_ItemFields):
    """Body of ``PUT /virtualfolder/{key}``: absent properties stay unchanged."""

    model_config = examples(ex.FOLDER_UPDATE)

    name: Name | None = None
    data_source_key: str | None = Field(default=None, max_length=_KEY)
    parent_key: str | None = Field(default=None, max_length=_KEY)
    path_specs: SpecList | None = Field(default=None, max_length=_SPECS)


class DatasetCreate(_ItemFields):
    """Body of ``POST /dataset``: ``dataSetPathSpecs`` maps data source keys to specs."""

    model_config = examples(ex.DATASET_CREATE)

    name: Name
    data_set_path_specs: dict[str, SpecList] = Field(default_factory=dict, max_length=_SPECS)


class DatasetUpdate(_ItemFields):
    """Body of ``PUT /dataset/{key}``: absent properties stay unchanged."""

    model_config = examples(ex.DATASET_UPDATE)

    name: Name | None = None
    data_set_path_specs: dict[str, SpecList] | None = Field(default=None, max_length=_SPECS)


class PathSpecOut(Wire):
    source_path: str | None = None
    include_pattern: str | None = None
    exclude_pattern: str | None = None


class FolderOut(Wire):
    model_config = examples(ex.FOLDER)

    key: str
    type: str = "virtualfolder"
    name: str
    description: str | None
    data_source_key: str
    data_source_name: str | None
    parent_key: str | None
    path_specs: list[PathSpecOut]
    resource_count: int
    time_of_creation: int
    time_of_last_change: int


class DatasetOut(Wire):
    model_config = examples(ex.DATASET)

    key: str
    type: str = "dataset"
    name: str
    description: str | None
    data_set_path_specs: dict[str, list[PathSpecOut]]
    resource_count: int
    time_of_creation: int
    time_of_last_change: int


def _specs(listed: Any) -> list[PathSpecOut]:
    return [PathSpecOut.model_validate(s) for s in listed or []]


def folder_out(row: dict[str, Any], count: int) -> FolderOut:
    """The wire form of a stored folder (``count``: the resources the caller sees in it)."""
    return FolderOut(
        key=row["key"], name=row["name"], description=row["description"],
        data_source_key=row["data_source_key"], data_source_name=row.get("data_source_name"),
        parent_key=row["parent_key"], path_specs=_specs(row["path_specs"]),
        resource_count=count, time_of_creation=row["created_ms"],
        time_of_last_change=row["changed_ms"],
    )


def dataset_out(row: dict[str, Any], count: int, vis: Visibility) -> DatasetOut:
    """The wire form of a stored data set; specs of sources the caller cannot reach are left out."""
    specs = {k: _specs(v) for k, v in (row["path_specs"] or {}).items() if vis.touches(k)}
    return DatasetOut(
        key=row["key"], name=row["name"], description=row["description"],
        data_set_path_specs=specs, resource_count=count,
        time_of_creation=row["created_ms"], time_of_last_change=row["changed_ms"],
    )
