"""Request and response models of login, users and user search."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictBool, StringConstraints

from catalog_nb.contract import MAX_NAME_LENGTH, MIN_PASSWORD_LENGTH
from catalog_nb.server.schemas import examples as ex
from catalog_nb.server.schemas.common import EntityOut, Name, Payload, Wire
from catalog_nb.server.schemas.examples import examples
from catalog_nb.server.store.users import UserRecord

Password = Annotated[str, StringConstraints(min_length=MIN_PASSWORD_LENGTH, max_length=1024)]

_USER_READ_ONLY = frozenset(
    {
        "key", "type", "timeOfCreation", "timeOfLastChange", "restricted", "viewAble",
        "updateable", "score", "customProperties", "assignedByMap", "accessLevels", "admin",
        "passwordSet",
    }
)


class LoginRequest(Payload):
    model_config = examples(ex.LOGIN)

    # No user name is longer; a longer one would not fit the audit trail or the throttle.
    username: str = Field(max_length=MAX_NAME_LENGTH)
    password: str = Field(max_length=1024)


class _UserFields(Payload):
    read_only = _USER_READ_ONLY
    read_form = True  # see services.read_back

    description: str | None = None
    rich_description: str | None = None
    attributes: dict[str, Any] | None = None
    roles: list[Name] | None = None
    prefilters_enabled: StrictBool | None = None
    password: Password | None = None


class UserCreate(_UserFields):
    """Body of ``POST /user``: only ``name`` is required."""

    model_config = examples(ex.USER_CREATE)

    name: Name


class UserUpdate(_UserFields):
    """Body of ``PUT /user/{key}``: properties absent from the body stay unchanged."""

    model_config = examples(ex.USER_UPDATE)

    name: Name | None = None


class MeUpdate(Payload):
    """Body of ``PUT /user/_me``: the only supported entry is ``prefiltersEnabled``."""

    model_config = examples({"prefiltersEnabled": True})

    prefilters_enabled: StrictBool


class AssignRole(Payload):
    """Body of ``POST /user/assign/role``."""

    model_config = examples({"userName": "jdoe", "roleName": "Finance Analysts"})

    user_name: Name
    role_name: Name


class UserOut(EntityOut):
    model_config = examples(ex.USER)

    name: str
    prefilters_enabled: bool
    assigned_by_map: dict[str, str | None]
    access_levels: list[str]
    attributes: dict[str, Any]
    roles: list[str]
    admin: bool
    password_set: bool


class UserTO(Wire):
    model_config = examples(ex.USER_FOUND)

    name: str
    key: str
    attributes: dict[str, Any]


class UserInfo(Wire):
    username: str
    display_name: str


class LoginResult(Wire):
    model_config = examples(ex.LOGIN_RESULT)

    login_result: str
    message: str
    user_info: UserInfo | None = None


def display_name(record: UserRecord) -> str:
    """First and last name when known, else the user name."""
    attrs = record.attributes or {}
    parts = [attrs.get("firstName"), attrs.get("lastName")]
    full = " ".join(p for p in parts if isinstance(p, str) and p.strip())
    return full or record.name


def user_out(record: UserRecord) -> UserOut:
    """The wire form of a user; the password hash never leaves the service."""
    return UserOut(
        key=record.key,
        type="user",
        name=record.name,
        description=record.description,
        rich_description=record.rich_description,
        time_of_creation=record.created_ms,
        time_of_last_change=record.changed_ms,
        prefilters_enabled=record.prefilters_enabled,
        assigned_by_map=dict(record.assigned_by),
        access_levels=record.access_levels,
        attributes=dict(record.attributes or {}),
        roles=[r.name for r in record.roles],
        admin=record.admin,
        password_set=record.password_hash is not None,
    )


def user_to(record: UserRecord) -> UserTO:
    return UserTO(name=record.name, key=record.key, attributes=dict(record.attributes or {}))
