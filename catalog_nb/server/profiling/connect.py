"""Opening SQL data sources: engines for any SQLAlchemy URL, SQLite schemas, masked URLs.

SQLite has one schema per database file, and a connection gains more by ``ATTACH``. A data
source URL names the attachments in its query::

    sqlite:////abs/lake/sql/company.sqlite3?attach=sales:sales.sqlite3&attach=hr:hr.sqlite3

``attach=<schema>:<file>`` may repeat; a relative file resolves against the main database's
folder. pysqlite would reject the unknown ``attach`` argument, so :func:`source_engine` strips it
and ATTACHes each file on every new connection; SQLAlchemy's inspector then lists ``main``,
``sales`` and ``hr``.

:func:`source_engine` opens data sources the way the catalog reads them: SQLite files read-only
(``mode=ro``: the catalog never writes to a source, and a missing file is an error instead of a
new empty database), PostgreSQL with a connection timeout, and ``postgresql://`` without a driver
served by psycopg 3 when psycopg2 is not installed; a ``guard`` given to it checks each SQLite
file right before every connection opens it. :func:`check_url` validates a URL without
connecting; :func:`mask_url` and :func:`redact` keep passwords out of everything shown.

Example::

    engine = source_engine("sqlite:////data/main.db?attach=sales:sales.db")
    with engine.connect() as conn:
        ...
    engine.dispose()
"""

from __future__ import annotations

import importlib.util
import re
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

__all__ = [
    "ATTACH_PARAM",
    "MASK",
    "check_url",
    "mask_url",
    "redact",
    "restore_secrets",
    "source_engine",
    "split_attachments",
    "sqlite_engine_with_schemas",
    "sqlite_url",
]

ATTACH_PARAM = "attach"
#: What a password looks like in every URL the catalog shows.
MASK = "***"
#: Query parameters that carry secrets in some drivers' URLs (masked like the password).
SECRET_PARAMS = frozenset({"password", "passwd", "pwd", "sslpassword", "secret", "token"})
#: Seconds to wait for a database server before giving up (where the driver supports it).
CONNECT_TIMEOUT = 10
_SCHEMA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def sqlite_url(main: Path, schemas: Mapping[str, str | Path]) -> str:
    """The data source URL of ``main`` with ``schemas`` attached (schema name -> file)."""
    url = URL.create("sqlite", database=str(main)).update_query_pairs(
        [(ATTACH_PARAM, f"{name}:{path}") for name, path in schemas.items()])
    return url.render_as_string(hide_password=False)


def split_attachments(url: str | URL) -> tuple[URL, dict[str, Path]]:
    """The URL without its ``attach`` parameters, and the schema -> file mapping they named.

    Raises ValueError for a malformed ``attach`` (or one on a URL that is not SQLite).
    """
    parsed = make_url(url)
    raw = parsed.query.get(ATTACH_PARAM, ())
    specs = (raw,) if isinstance(raw, str) else tuple(raw)
    if specs and parsed.get_backend_name() != "sqlite":
        raise ValueError("the attach parameter is only understood for sqlite URLs")
    database = parsed.database
    base = Path(database).parent if database and database != ":memory:" else Path.cwd()
    attached: dict[str, Path] = {}
    for spec in specs:
        name, sep, file = spec.partition(":")
        if not sep or not file or not _SCHEMA_NAME.match(name):
            raise ValueError(f"attach={spec!r}: expected <schema>:<file>")
        if name.lower() in ("main", "temp") or name in attached:
            raise ValueError(f"attach={spec!r}: schema name {name!r} is reserved or repeated")
        attached[name] = (base / file) if not Path(file).is_absolute() else Path(file)
    return parsed.difference_update_query([ATTACH_PARAM]), attached


def _sqlite_file(url: URL) -> Path | None:
    """The database file of a SQLite URL (None for in-memory or URI-style databases)."""
    database = url.database
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    return Path(database)


def _with_driver(url: URL) -> URL:
    """``postgresql://`` means psycopg2; use psycopg 3 when only that one is installed."""
    if (
        url.drivername == "postgresql"
        and importlib.util.find_spec("psycopg2") is None
        and importlib.util.find_spec("psycopg") is not None
    ):
        return url.set(drivername="postgresql+psycopg")
    return url


def check_url(url: str) -> URL:
    """Parse and check a data source URL without connecting; returns the parsed URL.

    Raises ValueError with a message that never contains the password: not an SQLAlchemy URL,
    an unknown dialect, a driver that is not installed, or a malformed ``attach``.
    """
    try:
        parsed = make_url(url.strip())
    except (ArgumentError, ValueError, TypeError):
        raise ValueError(
            "it is not an SQLAlchemy URL (expected dialect+driver://user:password@host:port/"
            "database, e.g. postgresql+psycopg://reader@db.example.org/sales or "
            "sqlite:////data/sales.sqlite3)"
        ) from None
    try:
        dialect = _with_driver(parsed).get_dialect()
    except NoSuchModuleError:
        raise ValueError(f"the database dialect {parsed.drivername!r} is unknown") from None
    try:
        dialect.import_dbapi()
    except ImportError:
        raise ValueError(
            f"the database driver of {parsed.drivername!r} is not installed in the service"
        ) from None
    split_attachments(parsed)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if not database or database == ":memory:":
            raise ValueError("an in-memory SQLite database holds nothing to catalog; name a file")
        if database.startswith("file:"):
            raise ValueError("SQLite URI file names (file:...) are not supported; name the file")
        if not Path(database).is_absolute():
            raise ValueError(
                "the SQLite database must be an absolute path (sqlite:////abs/path.sqlite3)"
            )
    return parsed


#: Checks a SQLite file right before it is opened and returns the path to open (or raises).
Guard = Callable[[Path], Path]


def _read_only_sqlite(main: Path, attached: Mapping[str, Path], guard: Guard | None) -> Any:
    """A DBAPI connection factory opening ``main`` and the attachments read-only."""

    def connect() -> sqlite3.Connection:
        opened: dict[str, Path] = {}
        for name, path in {"main": main, **attached}.items():
            # Checked on every new connection, and the checked (resolved) path is what is
            # opened: a link swapped in after registration cannot redirect the read.
            target = guard(path) if guard is not None else path.resolve()
            if not target.is_file():
                raise FileNotFoundError(f"schema {name!r}: no SQLite database at {path}")
            opened[name] = target
        conn = sqlite3.connect(
            f"{opened.pop('main').as_uri()}?mode=ro", uri=True, check_same_thread=False
        )
        for name, path in opened.items():
            conn.execute(f'ATTACH DATABASE ? AS "{name}"', (f"{path.as_uri()}?mode=ro",))
        return conn

    return connect


def source_engine(url: str | URL, *, read_only: bool = True, guard: Guard | None = None,
                  **engine_options: Any) -> Engine:
    """An engine for a data source URL (any dialect), ATTACHing a SQLite URL's schemas.

    ``read_only`` (the default) opens SQLite files read-only and refuses missing ones; other
    databases are only ever read by the catalog, whatever their permissions say. ``guard``
    (read-only SQLite only) checks each file right before every connection opens it, and
    returns the path to open; whatever it raises fails the connection. Raises ValueError for a
    malformed ``attach``.
    """
    clean, attached = split_attachments(url)
    clean = _with_driver(clean)
    backend = clean.get_backend_name()
    if backend == "postgresql" and "connect_timeout" not in clean.query:
        engine_options.setdefault("connect_args", {}).setdefault(
            "connect_timeout", CONNECT_TIMEOUT
        )
    main = _sqlite_file(clean) if backend == "sqlite" else None
    if main is not None and read_only:
        return create_engine(
            clean, creator=_read_only_sqlite(main, attached, guard), **engine_options
        )
    engine = create_engine(clean, **engine_options)
    if not attached:
        return engine

    @event.listens_for(engine, "connect")
    def _attach(dbapi_connection: Any, _record: Any) -> None:
        for name, path in attached.items():
            if not path.is_file():
                raise FileNotFoundError(f"schema {name!r}: no SQLite database at {path}")
            dbapi_connection.execute(f'ATTACH DATABASE ? AS "{name}"', (str(path),))

    return engine


def sqlite_engine_with_schemas(url: str | URL, schemas: Mapping[str, str | Path] | None = None,
                               **engine_options: Any) -> Engine:
    """A read-write engine for ``url`` that ATTACHes the URL's ``attach`` files (and ``schemas``).

    Any URL without ``attach`` works too (it is just ``create_engine``). A missing schema file
    raises ``FileNotFoundError`` on connect instead of letting SQLite create an empty one.
    """
    parsed = make_url(url)
    if schemas:
        parsed = parsed.update_query_pairs(
            [(ATTACH_PARAM, f"{name}:{Path(path)}") for name, path in schemas.items()]
        )
    return source_engine(parsed, read_only=False, **engine_options)


def mask_url(url: str | URL) -> str:
    """The URL as shown to people: the password (and secret query values) as ``***``.

    A string that does not parse is returned with anything between ``:`` and ``@`` masked.
    """
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError, TypeError):
        return re.sub(r"(//[^/:@]*:)[^@/]*@", rf"\g<1>{MASK}@", str(url))
    secret = {k: MASK for k in parsed.query if k.lower() in SECRET_PARAMS}
    if secret:
        parsed = parsed.update_query_dict(secret)
    return parsed.render_as_string(hide_password=True).replace("=%2A%2A%2A", f"={MASK}")


def _secrets(url: str | URL) -> list[str]:
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError, TypeError):
        return []
    found = [str(parsed.password)] if parsed.password else []
    for key, value in parsed.query.items():
        if key.lower() in SECRET_PARAMS:
            found.extend([value] if isinstance(value, str) else list(value))
    return [s for s in found if s and s != MASK]


def redact(text: str, url: str | URL | None) -> str:
    """``text`` with every secret of ``url`` (password, secret query values) replaced by ``***``."""
    if not url:
        return text
    for secret in sorted(_secrets(url), key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def shows_masked_secret(url: str) -> bool:
    """Whether ``url`` holds a password or secret query value as ``***``, as data sources are
    answered: a copy of a source read back has no secret to restore it from.

    >>> shows_masked_secret("postgresql://reader:***@db/sales"), shows_masked_secret("x.db")
    (True, False)
    """
    try:
        parsed = make_url(url.strip())
    except (ArgumentError, ValueError, TypeError):
        return False
    return parsed.password == MASK or any(
        key.lower() in SECRET_PARAMS and value == MASK for key, value in parsed.query.items())


def restore_secrets(new: str, old: str) -> str:
    """``new`` with the secrets it shows as ``***`` taken from ``old``.

    A client that reads a data source gets its URL masked; sending that URL back unchanged (or
    with another host) must keep the stored password rather than set it to ``***``.
    """
    try:
        parsed, previous = make_url(new.strip()), make_url(old)
    except (ArgumentError, ValueError, TypeError):
        return new
    changed = False
    if parsed.password == MASK and previous.password is not None:
        parsed = parsed.set(password=previous.password)
        changed = True
    restored = {
        k: previous.query[k]
        for k, v in parsed.query.items()
        if v == MASK and k in previous.query
    }
    if restored:
        parsed = parsed.update_query_dict(restored)
        changed = True
    return parsed.render_as_string(hide_password=False) if changed else new.strip()
