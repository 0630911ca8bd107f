"""Object-store source URIs: ``s3://`` locations with the store's settings (pyarrow-free, so
that the service checks them without loading the profiler).

A FILE source whose uri starts with ``s3://`` reads an S3-compatible object store (AWS, MinIO,
Ceph). Its uri carries the store's settings, a catalog_nb extra over the spec's DataSource,
which has no field for them::

    s3://[ACCESS_KEY_ID:SECRET_ACCESS_KEY@]bucket[/prefix][?endpoint=URL&region=REGION]

Key id and secret are percent-encoded; without them the standard AWS environment variables and
configuration files are used. ``endpoint`` (e.g. ``http://minio.local:9000``) defaults to
``AWS_ENDPOINT_URL_S3``, then ``AWS_ENDPOINT_URL``, then AWS itself. The URI is parsed by the
SQLAlchemy URL parser the SQL sources use, so their machinery keeps the secret hidden here too:
:func:`~.connect.mask_url` shows it as ``***``, :func:`~.connect.restore_secrets` keeps the
stored one when a client sends ``***`` back, :func:`~.connect.redact` removes it from messages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

__all__ = ["URI_SETTINGS", "ObjectUri", "is_object_uri", "parse_object_uri"]

#: Query parameters a source URI may carry.
URI_SETTINGS = frozenset({"endpoint", "region"})
_BUCKET = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,254}\Z")


def is_object_uri(text: str) -> bool:
    """Whether a FILE source's uri names an object store (``s3://``) rather than a folder."""
    return text.strip().lower().startswith("s3://")


@dataclass(frozen=True)
class ObjectUri:
    """A parsed ``s3://`` source URI (see the module docstring)."""

    bucket: str
    prefix: str = ""  # no leading or trailing "/"; "" is the whole bucket
    endpoint: str | None = None
    region: str | None = None
    access_key: str | None = None
    secret_key: str | None = field(default=None, repr=False)

    @property
    def location(self) -> str:
        """``s3://bucket/prefix``: where the data lies, without settings (safe to show)."""
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def render(self) -> str:
        """The URI with its settings and secret, in the one canonical spelling stored."""
        url = make_url(f"s3://{self.bucket}").set(
            username=self.access_key, password=self.secret_key, database=self.prefix or None,
            query={k: v for k, v in (("endpoint", self.endpoint), ("region", self.region)) if v},
        )
        return url.render_as_string(hide_password=False)

    def within(self, root: ObjectUri) -> bool:
        """Whether this location is ``root``'s or lies under it (same bucket, prefix below)."""
        return self.bucket == root.bucket and (
            not root.prefix or self.prefix == root.prefix
            or self.prefix.startswith(root.prefix + "/")
        )


def parse_object_uri(text: str) -> ObjectUri:
    """Parse an ``s3://`` URI; ValueError (never holding the secret) names what is wrong."""
    try:
        url = make_url(text.strip())
    except (ArgumentError, ValueError, TypeError):
        raise ValueError(
            "it is not an object store URI (expected s3://bucket/prefix)") from None
    if url.drivername.lower() != "s3":
        raise ValueError("an object store URI starts with s3://")
    bucket = url.host or ""
    if url.port is not None or not _BUCKET.match(bucket):
        raise ValueError(f"{bucket or '(none)'!r} is not a bucket name (s3://bucket/prefix; "
                         "the endpoint goes in ?endpoint=)")
    prefix = (url.database or "").strip("/")
    if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
        raise ValueError("the prefix must not hold empty, '.' or '..' segments")
    unknown = sorted(set(url.query) - URI_SETTINGS)
    if unknown:
        raise ValueError(f"unknown setting(s) {', '.join(unknown)}; an object store URI takes "
                         f"{' and '.join(sorted(URI_SETTINGS))}")
    settings: dict[str, str] = {}
    for key in URI_SETTINGS & set(url.query):
        value = url.query[key]
        if not isinstance(value, str):
            raise ValueError(f"the setting {key} may be given once")
        settings[key] = value
    if url.password is not None and url.username is None:
        raise ValueError("a secret access key needs its access key id (KEY_ID:SECRET@bucket)")
    if url.username is not None and url.password is None:
        raise ValueError("an access key id needs its secret access key (KEY_ID:SECRET@bucket)")
    endpoint = settings.get("endpoint")
    if endpoint is not None and urlsplit(endpoint).scheme not in ("http", "https"):
        raise ValueError("the endpoint must be an http:// or https:// URL")
    return ObjectUri(bucket, prefix, endpoint, settings.get("region"), url.username,
                     url.password)
