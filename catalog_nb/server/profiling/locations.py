"""Where the profiler reads: local files, or objects of an S3-compatible store (AWS, MinIO, Ceph).

The readers (:mod:`.formats`, :mod:`.readers`, :mod:`.feed`, :mod:`.files`) take a
:data:`DataFile`: a :class:`pathlib.Path`, read exactly as it always was (no wrapper, no extra
call), or an :class:`ObjectFile`, which offers the part of ``Path`` they use (``name``,
``suffix``, ``stat()``, ``open("rb")``, ``relative_to``, ordering) over pyarrow's S3
filesystem. A folder is a :data:`Folder`: a ``Path`` or an :class:`ObjectFolder` (a bucket and a
key prefix), listed in one paged ``ListObjectsV2`` walk by :meth:`ObjectFolder.files`.

Reading objects:

* whole reads (CSV, JSON) stream in ranged GETs of :data:`STREAM_BYTES` (:func:`open_stream`),
  heads in one small GET each; an object of at most :data:`WHOLE_BYTES` that is being profiled is
  fetched once and served from memory (its format, encoding and dialect are sniffed from the
  same bytes);
* Parquet reads through a random-access file (:meth:`ObjectFile.random_access`): the footer
  first, then only the column chunks wanted, with Arrow coalescing nearby ranges
  (``pre_buffer``).

Why pyarrow and not fsspec/s3fs: pyarrow is already the profiler's reader, its S3 filesystem is
native (no Python in the read path, no aiobotocore pinning botocore), and its files are what
Arrow's CSV and Parquet readers read fastest. It reports no ETag, so "unchanged" is decided by
size and modification time, as for local files. It does not honour ``AWS_ENDPOINT_URL``
(apache/arrow#49643), so :func:`object_filesystem` passes that endpoint itself.

A source's URI and settings are parsed by :mod:`.object_uri` (no pyarrow there: the service
checks URIs without loading it).
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from catalog_nb.server.profiling.connect import MASK, redact
from catalog_nb.server.profiling.object_uri import ObjectUri, parse_object_uri

__all__ = [
    "WHOLE_BYTES",
    "DataFile",
    "Folder",
    "ObjectFile",
    "ObjectFolder",
    "ObjectStat",
    "Stat",
    "describe_store_error",
    "object_filesystem",
    "open_object_folder",
    "open_stream",
]

#: Objects at most this large are fetched whole, once, when profiled (one GET instead of one
#: per sniffing step); larger ones stream.
WHOLE_BYTES = 1024 * 1024
#: Bytes one request of a sequential stream fetches: Arrow's S3 files make one ranged GET per
#: read, and the readers read 1-4 MB at a time; fewer, larger requests stream faster from any
#: store (and a store that reads a whole object to answer a range, as moto does, is not asked
#: hundreds of times).
STREAM_BYTES = 16 * 1024 * 1024
#: Seconds to wait for the store to accept a connection / to answer one request.
CONNECT_TIMEOUT = 10.0
REQUEST_TIMEOUT = 60.0
_AWS_ERROR = re.compile(r"AWS Error ([A-Z_]+)")
_CREDENTIAL_ERRORS = frozenset({
    "ACCESS_DENIED", "INVALID_ACCESS_KEY_ID", "SIGNATURE_DOES_NOT_MATCH", "INVALID_CLIENT_TOKEN_ID",
    "EXPIRED_TOKEN", "INVALID_TOKEN", "MISSING_AUTHENTICATION_TOKEN", "UNRECOGNIZED_CLIENT",
})


def object_filesystem(uri: ObjectUri) -> pafs.S3FileSystem:
    """pyarrow's S3 filesystem for ``uri``: its own settings, else the AWS environment and
    configuration files (credentials, region) and ``AWS_ENDPOINT_URL_S3``/``AWS_ENDPOINT_URL``
    (which pyarrow itself ignores)."""
    endpoint = (uri.endpoint or os.environ.get("AWS_ENDPOINT_URL_S3")
                or os.environ.get("AWS_ENDPOINT_URL"))
    options: dict[str, Any] = {
        "connect_timeout": CONNECT_TIMEOUT, "request_timeout": REQUEST_TIMEOUT,
        "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=3),
    }
    if endpoint:
        parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        options["endpoint_override"] = parts.netloc + parts.path.rstrip("/")
        options["scheme"] = parts.scheme
    if uri.region:
        options["region"] = uri.region
    if uri.access_key is not None:
        options["access_key"], options["secret_key"] = uri.access_key, uri.secret_key
    return pafs.S3FileSystem(**options)


def describe_store_error(exc: BaseException, uri: ObjectUri, raw_uri: str | None = None) -> str:
    """A sentence for a job message about a failed store request (the secret never in it)."""
    text = str(exc)
    code = _AWS_ERROR.search(text)
    name = code.group(1) if code else ""
    where = uri.endpoint or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get(
        "AWS_ENDPOINT_URL") or "AWS S3"
    if name == "NO_SUCH_BUCKET":
        message = f"The bucket '{uri.bucket}' does not exist at {where}."
    elif name in _CREDENTIAL_ERRORS:
        message = (f"The object store at {where} refused the credentials ({name}): check the "
                   "access key id and secret access key (in the source's uri or the AWS "
                   "environment) and that they may read the bucket.")
    elif name == "NETWORK_CONNECTION":
        message = f"The object store at {where} cannot be reached: {text}"
    elif isinstance(exc, FileNotFoundError):
        message = f"There are no objects under {uri.location}."
    else:
        message = f"The object store at {where} failed: {text}"
    if uri.secret_key and uri.secret_key != MASK:
        message = message.replace(uri.secret_key, MASK)
    return redact(message, raw_uri) if raw_uri else message


@dataclass(frozen=True)
class ObjectStat:
    """What ``os.stat`` would tell of an object: size and times (S3 keeps no creation time,
    so ``st_ctime`` is the last modification, as Linux reports for local files)."""

    st_size: int
    st_mtime_ns: int

    @property
    def st_mtime(self) -> float:
        return self.st_mtime_ns / 1e9

    @property
    def st_ctime(self) -> float:
        return self.st_mtime_ns / 1e9


class ObjectFolder:
    """A bucket and key prefix: the object-store counterpart of a local folder."""

    def __init__(self, fs: pafs.FileSystem, bucket: str, prefix: str = "") -> None:
        self.fs = fs
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    @property
    def path(self) -> str:
        """The filesystem path: ``bucket/prefix``."""
        return f"{self.bucket}/{self.prefix}".rstrip("/")

    @property
    def name(self) -> str:
        return self.prefix.rsplit("/", 1)[-1] if self.prefix else self.bucket

    def __truediv__(self, rel: str) -> ObjectFolder:
        return self.folder(rel)

    def __repr__(self) -> str:
        return f"ObjectFolder('s3://{self.path}')"

    def folder(self, rel: str | PurePosixPath) -> ObjectFolder:
        """The folder ``rel`` below this one (FileNotFoundError for ``..`` in it)."""
        rel_text = _rel(rel)
        return ObjectFolder(self.fs, self.bucket, f"{self.prefix}/{rel_text}".strip("/"))

    def file(self, rel: str | PurePosixPath, *, whole: bool = False) -> ObjectFile:
        """The object ``rel`` below this folder (FileNotFoundError for ``..`` in it);
        ``whole``: fetch it at once when small."""
        return ObjectFile(self, _rel(rel), whole=whole)

    def is_dir(self) -> bool:
        """Whether any object lies under this prefix."""
        return bool(self.fs.get_file_info(self.path).type == pafs.FileType.Directory)

    def files(self) -> list[ObjectFile]:
        """Every object under this prefix (recursively), with size and time from the listing.

        Raises OSError (pyarrow's) for a missing bucket, refused credentials or an unreachable
        store, and FileNotFoundError when nothing lies under the prefix.
        """
        selector = pafs.FileSelector(self.path, recursive=True)
        found = []
        for info in self.fs.get_file_info(selector):
            if info.type == pafs.FileType.File:
                rel = info.path[len(self.path) + 1:]
                found.append(ObjectFile(self, rel, info=info))
        return sorted(found)


def _rel(rel: str | PurePosixPath) -> str:
    text = PurePosixPath(rel).as_posix().strip("/")
    if text == ".":
        return ""
    if any(part in ("..", "") for part in text.split("/")) and text:
        raise FileNotFoundError(f"{text!r} is not a path inside the data source")
    return text


class ObjectFile:
    """One object, read like a local file (the part of ``pathlib.Path`` the readers use)."""

    def __init__(self, folder: ObjectFolder, rel: str, *, info: pafs.FileInfo | None = None,
                 whole: bool = False) -> None:
        self.folder = folder
        self.rel = rel
        self._info = info
        self._whole = whole
        self._data: bytes | None = None

    @property
    def key(self) -> str:
        """The filesystem path: ``bucket/prefix/rel``."""
        return f"{self.folder.path}/{self.rel}"

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]

    @property
    def suffix(self) -> str:
        return PurePosixPath(self.rel).suffix

    def __repr__(self) -> str:
        return f"ObjectFile('s3://{self.key}')"

    def __lt__(self, other: ObjectFile) -> bool:
        return self.key < other.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectFile) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    def relative_to(self, base: ObjectFolder) -> PurePosixPath:
        """The object's path below ``base`` (a folder it lies in)."""
        if base.path == self.folder.path:
            return PurePosixPath(self.rel)
        return PurePosixPath(self.key).relative_to(base.path)

    def is_file(self) -> bool:
        try:
            self.stat()
        except FileNotFoundError:
            return False
        return True

    def is_symlink(self) -> bool:
        return False

    def stat(self) -> ObjectStat:
        """Size and modification time (from the listing when it came from one); an object
        that is gone raises FileNotFoundError, like a local file."""
        info = self._info if self._info is not None else self.fs.get_file_info(self.key)
        if info.type != pafs.FileType.File:
            raise FileNotFoundError(f"No such object: s3://{self.key}")
        self._info = info
        # Whole seconds: stores list times in milliseconds but answer HEAD in seconds (HTTP
        # dates), and browsing (listing) and profiling (HEAD) must agree on "unchanged".
        mtime_ns = int(info.mtime_ns or 0) // 1_000_000_000 * 1_000_000_000
        return ObjectStat(int(info.size or 0), mtime_ns)

    @property
    def fs(self) -> pafs.FileSystem:
        return self.folder.fs

    def _bytes(self) -> bytes | None:
        """The whole object when it is small and being profiled (fetched once), else None."""
        if self._data is None and self._whole and self.stat().st_size <= WHOLE_BYTES:
            with self.fs.open_input_stream(self.key) as stream:
                self._data = stream.read()
        return self._data

    def open(self, mode: str = "rb", buffering: int = -1) -> BinaryIO:
        """A binary stream of the object (``mode`` "rb" only) for reading its head: one request
    per read (:meth:`stream` reads a whole object)."""
        if mode != "rb":
            raise ValueError("objects are opened for reading bytes only")
        data = self._bytes()
        if data is not None:
            return io.BytesIO(data)
        stream: BinaryIO = self.fs.open_input_stream(self.key)
        return stream

    def stream(self) -> BinaryIO:
        """A stream of the object read from start to end (in :data:`STREAM_BYTES` requests)."""
        data = self._bytes()
        if data is not None:
            return io.BytesIO(data)
        stream: BinaryIO = self.fs.open_input_stream(self.key, buffer_size=STREAM_BYTES)
        return stream

    def random_access(self) -> pa.NativeFile:
        """A random-access file of the object (Parquet reads its footer first)."""
        data = self._bytes()
        if data is not None:
            return pa.BufferReader(data)
        return self.fs.open_input_file(self.key)


#: A file the readers read, a folder browsing walks, and what ``stat()`` tells of a file.
DataFile = Path | ObjectFile
Folder = Path | ObjectFolder
Stat = os.stat_result | ObjectStat


def open_stream(source: DataFile, buffering: int = -1) -> BinaryIO:
    """A file to read from start to end: a local file opened as it always was, an object in
    large requests (:meth:`ObjectFile.stream`)."""
    if isinstance(source, Path):
        return source.open("rb", buffering=buffering)
    return source.stream()


def open_object_folder(uri: str) -> ObjectFolder:
    """The folder an ``s3://`` source URI names, on a filesystem with its settings (nothing is
    requested yet). ValueError for a malformed URI."""
    parsed = parse_object_uri(uri)
    return ObjectFolder(object_filesystem(parsed), parsed.bucket, parsed.prefix)
