"""Request and response models of roles."""

from __future__ import annotations

from typing import Any

from pydantic import Field, StrictBool

from catalog_nb.contract import AccessLevel, DataAccessOption, MetadataAccessOption
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import EntityOut, Name, Payload
from catalog_nb.server.schemas.examples import examples
from catalog_nb.server.store.roles import GRANT_KINDS, RoleRecord

_ROLE_READ_ONLY = frozenset(
    {"key", "type", "timeOfCreation", "timeOfLastChange", "restricted", "viewAble",
     "updateable", "score", "customProperties"}
)

#: Python field name of each grant kind's key list.
GRANT_FIELDS = {
    "DATA_SOURCE": "data_source_keys",
    "VIRTUAL_FOLDER": "virtual_folder_keys",
    "DATASET": "dataset_keys",
    "DOMAIN": "domain_keys",
}
assert set(GRANT_FIELDS) == set(GRANT_KINDS)


class RoleFields(Payload):
    read_only = _ROLE_READ_ONLY
    read_form = True  # see services.read_back

    description: str | None = None
    rich_description: str | None = None
    default_role: StrictBool | None = None
    metadata_access_option: MetadataAccessOption | None = None
    data_access_option: DataAccessOption | None = None
    resource_read_access_level: str | None = Field(default=None, max_length=64)
    job_template_creation_allowed: StrictBool | None = None
    job_execution_allowed: StrictBool | None = None
    virtual_folder_keys: list[str] | None = None
    domain_keys: list[str] | None = None
    data_source_keys: list[str] | None = None
    dataset_keys: list[str] | None = None

    def split(self) -> tuple[dict[str, Any], dict[str, list[str]]]:
        """(column values, grants by kind) of the fields that were sent."""
        sent = self.changes()
        grants = {
            kind: list(sent.pop(name) or [])
            for kind, name in GRANT_FIELDS.items()
            if name in sent
        }
        values = {k: (v.value if hasattr(v, "value") else v) for k, v in sent.items()}
        return values, grants


class RoleCreate(RoleFields):
    """Body of ``POST /user/role``."""

    model_config = examples(ex.ROLE_CREATE)

    name: Name
    access_level: AccessLevel


class RoleUpdate(RoleFields):
    """Body of ``PUT /user/role/{roleKey}``: absent properties stay unchanged."""

    model_config = examples(ex.ROLE_CREATE)

    name: Name | None = None
    access_level: AccessLevel | None = None


class RoleOut(EntityOut):
    model_config = examples(ex.ROLE)

    name: str
    access_level: str
    default_role: bool
    metadata_access_option: str
    data_access_option: str
    resource_read_access_level: str | None
    job_template_creation_allowed: bool
    job_execution_allowed: bool
    virtual_folder_keys: list[str]
    domain_keys: list[str]
    data_source_keys: list[str]
    dataset_keys: list[str]


def role_out(record: RoleRecord) -> RoleOut:
    """The wire form of a role."""
    grants: dict[str, Any] = {name: record.granted(kind) for kind, name in GRANT_FIELDS.items()}
    return RoleOut(
        key=record.key,
        type="role",
        name=record.name,
        description=record.description,
        rich_description=record.rich_description,
        time_of_creation=record.created_ms,
        time_of_last_change=record.changed_ms,
        access_level=record.access_level,
        default_role=record.default_role,
        metadata_access_option=record.metadata_access_option,
        data_access_option=record.data_access_option,
        resource_read_access_level=record.resource_read_access_level,
        job_template_creation_allowed=record.job_template_creation_allowed,
        job_execution_allowed=record.job_execution_allowed,
        **grants,
    )
