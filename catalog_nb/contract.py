"""Wire constants shared by both halves of catalog_nb.

Standard library only: the client, the notebook toolkit and the service all import this module,
so it must never pull in either side's dependencies. It holds what both ends of the wire must
agree on: the base path, the session cookie, enumerations, error codes and limits.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache
from importlib import metadata

API_PREFIX = "/api/v2"
API_VERSION = "v2"
DISTRIBUTION = "catalog-nb"
SESSION_COOKIE = "catalog_session"

#: Largest request body the service reads; anything larger is answered 413.
MAX_BODY_BYTES = 2 * 1024 * 1024
#: Deepest nesting of arrays and objects in a JSON request body.
MAX_JSON_DEPTH = 32
#: Longest name (user, role, ...) the service stores.
MAX_NAME_LENGTH = 255
#: Shortest password an administrator may set.
MIN_PASSWORD_LENGTH = 8
#: Default and largest `limit` of `GET /search/user`.
USER_SEARCH_DEFAULT_LIMIT = 25
USER_SEARCH_MAX_LIMIT = 1000
#: Largest page of the audit trail (`size`).
AUDIT_PAGE_MAX = 1000
#: Default and largest `limit` of `GET /job`.
JOB_LIST_DEFAULT = 100
JOB_LIST_MAX = 1000
#: Most items `POST /tagassociation/list` takes in one request, and the largest `pageSize` of
#: `GET /tagassociation`.
ASSOCIATION_LIST_MAX = 1000
#: minScore of a tag that has none: discovery's threshold, and what a Tag answers for it.
TAG_DEFAULT_MIN_SCORE = 0.8
#: Default and largest `pageSize` of `GET /dataresource/metadata`; larger values are refused.
METADATA_PAGE_DEFAULT = 100
METADATA_PAGE_MAX = 1000
#: The media type of the Arrow layout of a metadata page (an Arrow IPC stream), asked for with
#: ``Accept``; the page's paging members travel as this key of the stream's schema metadata.
ARROW_STREAM = "application/vnd.apache.arrow.stream"
ARROW_PAGE_METADATA = "catalog_nb.page"
#: Largest `pageSize` of a metadata page in the Arrow layout: a column at a time, a row costs
#: a fraction of its JSON, and the fixed cost of a page weighs more.
ARROW_PAGE_MAX = 10_000
#: Most `propertyFilter` parameters of one metadata query, and most values they name together.
MAX_PROPERTY_FILTERS = 50
MAX_FILTER_VALUES = 1000
#: Deepest nesting (parentheses and NOT) and most terms of an ADVANCED search query.
MAX_QUERY_DEPTH = 32
MAX_QUERY_TERMS = 100


@cache
def distribution_version() -> str:
    """The installed version of catalog-nb, or ``0+unknown`` when run from a bare checkout.

    Read once per process: finding it parses the package metadata on disk, which cost more
    than the rest of a ``GET /version``.
    """
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"


class AccessLevel(StrEnum):
    """Access level of a role, from most to least powerful."""

    ADMINISTRATOR = "Administrator"
    STEWARD = "Steward"
    ANALYST = "Analyst"
    GUEST = "Guest"


class MetadataAccessOption(StrEnum):
    """Whether a role sees every data source (ALL) or only those it is granted (RESTRICTED)."""

    ALL = "ALL"
    RESTRICTED = "RESTRICTED"


class DataAccessOption(StrEnum):
    """Whether a role may read data values (samples, previews) of the resources it sees."""

    ALL = "ALL"
    RESTRICTED = "RESTRICTED"
    NONE = "NONE"


class TagAssociationState(StrEnum):
    ACCEPTED = "ACCEPTED"
    REJECTED = "REJECTED"
    SUGGESTED = "SUGGESTED"


class TagState(StrEnum):
    """How a tag is applied: by people (VALUE) or also by discovery's regular expression."""

    VALUE = "VALUE"
    REGEX = "REGEX"


class Sensitivity(StrEnum):
    """Sensitivity of a tag, least to most sensitive; a resource takes the highest of its
    accepted tags."""

    PUBLIC = "PUBLIC"
    INTERNAL = "INTERNAL"
    CONFIDENTIAL = "CONFIDENTIAL"
    RESTRICTED = "RESTRICTED"


class ResourceType(StrEnum):
    FILE = "resource_type_file"
    HDFS_FILE = "resource_type_hdfs_file"
    COLLECTION = "resource_type_collection"
    TABLE = "resource_type_table"
    VIEW = "resource_type_view"


class SourceType(StrEnum):
    """Kind of data source: a folder of files, or a database reached through SQLAlchemy."""

    FILE = "FILE"
    SQL = "SQL"


class JobType(StrEnum):
    BROWSE = "BROWSE"
    PROFILE = "PROFILE"
    DISCOVER = "DISCOVER"


class JobEngine(StrEnum):
    """What computes a PROFILE job's statistics (catalog_nb extra, issue 16): the service's own
    processes, or Apache Spark (``CATALOG_SPARK_MASTER``). Both give the same profile."""

    LOCAL = "local"
    SPARK = "spark"


class JobState(StrEnum):
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


class CustomPropertyType(StrEnum):
    """Value type of a custom property; values of another type are refused (400)."""

    STRING = "STRING"
    INTEGER = "INTEGER"
    NUMBER = "NUMBER"
    BOOLEAN = "BOOLEAN"
    DATE = "DATE"
    STRING_LIST = "STRING_LIST"


class AuditAction(StrEnum):
    LOGIN = "LOGIN"
    LOGOUT = "LOGOUT"
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    ASSIGN_ROLE = "ASSIGN_ROLE"
    REMOVE_ROLE = "REMOVE_ROLE"
    SET_PASSWORD = "SET_PASSWORD"
    RUN_JOB = "RUN_JOB"


class AuditObjectType(StrEnum):
    SESSION = "SESSION"
    USER = "USER"
    ROLE = "ROLE"
    AUDIT_EVENT = "AUDIT_EVENT"
    DATA_SOURCE = "DATA_SOURCE"
    DATA_RESOURCE = "DATA_RESOURCE"
    CUSTOM_PROPERTY = "CUSTOM_PROPERTY"
    VIRTUAL_FOLDER = "VIRTUAL_FOLDER"
    DATASET = "DATASET"
    JOB = "JOB"
    TAG_DOMAIN = "TAG_DOMAIN"
    TAG = "TAG"
    TAG_ASSOCIATION = "TAG_ASSOCIATION"
    FAVORITE = "FAVORITE"
    REVIEW = "REVIEW"
    CONFIG = "CONFIG"


class AuditOutcome(StrEnum):
    SUCCESS = "SUCCESS"
    FAILURE = "FAILURE"


class ErrorCode(StrEnum):
    """Stable identifiers carried as ``errorCode`` in every error body."""

    # 400
    INVALID_PAYLOAD = "INVALID_PAYLOAD"
    MALFORMED_JSON = "MALFORMED_JSON"
    INVALID_PARAMETER = "INVALID_PARAMETER"
    INVALID_CURSOR = "INVALID_CURSOR"
    UNKNOWN_ROLE = "UNKNOWN_ROLE"
    UNKNOWN_USER = "UNKNOWN_USER"
    UNKNOWN_REFERENCE = "UNKNOWN_REFERENCE"
    WEAK_PASSWORD = "WEAK_PASSWORD"
    READ_ONLY_PROPERTY = "READ_ONLY_PROPERTY"
    SOURCE_OUTSIDE_ROOTS = "SOURCE_OUTSIDE_ROOTS"
    INVALID_SOURCE_URI = "INVALID_SOURCE_URI"
    INVALID_FILTER = "INVALID_FILTER"
    INVALID_PROPERTY_VALUE = "INVALID_PROPERTY_VALUE"
    INVALID_REGEX = "INVALID_REGEX"
    UNKNOWN_FIELD = "UNKNOWN_FIELD"
    TAG_CYCLE = "TAG_CYCLE"
    INVALID_FACET = "INVALID_FACET"
    INVALID_QUERY = "INVALID_QUERY"
    NO_SEARCH = "NO_SEARCH"
    PARENT_CYCLE = "PARENT_CYCLE"
    AMBIGUOUS_TABLE = "AMBIGUOUS_TABLE"
    INVALID_CSV = "INVALID_CSV"
    MISSING_FILE_PART = "MISSING_FILE_PART"
    INVALID_CONFIG_VALUE = "INVALID_CONFIG_VALUE"
    READ_ONLY_CONFIG = "READ_ONLY_CONFIG"
    INVALID_RATING = "INVALID_RATING"
    INVALID_TEXT = "INVALID_TEXT"
    # 401
    AUTHENTICATION_REQUIRED = "AUTHENTICATION_REQUIRED"
    SESSION_EXPIRED = "SESSION_EXPIRED"
    LOGIN_FAILED = "LOGIN_FAILED"
    # 403
    PERMISSION_DENIED = "PERMISSION_DENIED"
    # 404
    ROUTE_NOT_FOUND = "ROUTE_NOT_FOUND"
    USER_NOT_FOUND = "USER_NOT_FOUND"
    ROLE_NOT_FOUND = "ROLE_NOT_FOUND"
    DATA_SOURCE_NOT_FOUND = "DATA_SOURCE_NOT_FOUND"
    RESOURCE_NOT_FOUND = "RESOURCE_NOT_FOUND"
    AUDIT_EVENT_NOT_FOUND = "AUDIT_EVENT_NOT_FOUND"
    JOB_NOT_FOUND = "JOB_NOT_FOUND"
    VIRTUAL_FOLDER_NOT_FOUND = "VIRTUAL_FOLDER_NOT_FOUND"
    DATASET_NOT_FOUND = "DATASET_NOT_FOUND"
    CUSTOM_PROPERTY_NOT_FOUND = "CUSTOM_PROPERTY_NOT_FOUND"
    TAG_DOMAIN_NOT_FOUND = "TAG_DOMAIN_NOT_FOUND"
    TAG_NOT_FOUND = "TAG_NOT_FOUND"
    TAG_ASSOCIATION_NOT_FOUND = "TAG_ASSOCIATION_NOT_FOUND"
    SEARCH_NOT_FOUND = "SEARCH_NOT_FOUND"
    FIELD_NOT_FOUND = "FIELD_NOT_FOUND"
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    CONFIG_NOT_FOUND = "CONFIG_NOT_FOUND"
    REVIEW_NOT_FOUND = "REVIEW_NOT_FOUND"
    FAVORITE_NOT_FOUND = "FAVORITE_NOT_FOUND"
    # 405
    METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
    # 406
    NOT_ACCEPTABLE = "NOT_ACCEPTABLE"
    # 409
    DUPLICATE_NAME = "DUPLICATE_NAME"
    LAST_ROLE = "LAST_ROLE"
    LAST_ADMINISTRATOR = "LAST_ADMINISTRATOR"
    CANNOT_DELETE_SELF = "CANNOT_DELETE_SELF"
    ROLE_IN_USE = "ROLE_IN_USE"
    DOMAIN_NOT_EMPTY = "DOMAIN_NOT_EMPTY"
    TAG_HAS_CHILDREN = "TAG_HAS_CHILDREN"
    IMMUTABLE = "IMMUTABLE"
    FOLDER_HAS_CHILDREN = "FOLDER_HAS_CHILDREN"
    GRANTED_TO_ROLE = "GRANTED_TO_ROLE"
    INCOMPATIBLE_PROPERTY_TYPE = "INCOMPATIBLE_PROPERTY_TYPE"
    CONCURRENT_CHANGE = "CONCURRENT_CHANGE"
    DUPLICATE_REVIEW = "DUPLICATE_REVIEW"
    CONFUSABLE_NAME = "CONFUSABLE_NAME"
    # 413
    PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
    # 415
    UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
    # 429
    LOGIN_THROTTLED = "LOGIN_THROTTLED"
    # 5xx
    INTERNAL_ERROR = "INTERNAL_ERROR"
    STORE_BUSY = "STORE_BUSY"
