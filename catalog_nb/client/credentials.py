"""Where :func:`~catalog_nb.client.catalog.connect` finds the URL and the credentials.

In this order, first found wins for each value:

1. the arguments of ``connect(url, username, password)``;
2. the environment: ``CATALOG_URL``, ``CATALOG_USER``, ``CATALOG_PASSWORD``;
3. for username and password only: the netrc file (``$NETRC`` when set, else ``~/.netrc``),
   entry ``machine <host>:<port>`` or ``machine <host>`` of the URL (or ``default``).

A netrc password is only used together with its own login: when the username came from
arguments or the environment and the netrc entry names another login, it is ignored.
"""

from __future__ import annotations

import netrc
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from catalog_nb.client.errors import ConfigurationError
from catalog_nb.client.http import normalize_url

__all__ = ["ENV_PASSWORD", "ENV_URL", "ENV_USER", "Settings", "netrc_credentials", "resolve"]

ENV_URL = "CATALOG_URL"
ENV_USER = "CATALOG_USER"
ENV_PASSWORD = "CATALOG_PASSWORD"


@dataclass(frozen=True)
class Settings:
    """A resolved URL and credentials (the password is left out of ``repr``)."""

    url: str
    username: str
    password: str = field(repr=False)


def _netrc_path() -> tuple[Path, bool]:
    """The netrc file to read and whether it is the default ``~/.netrc``."""
    override = os.environ.get("NETRC")
    if override:
        return Path(override).expanduser(), False
    return Path.home() / ".netrc", True


def netrc_credentials(url: str) -> tuple[str | None, str | None]:
    """``(login, password)`` for the host of ``url`` from the netrc file, or ``(None, None)``.

    Example::

        netrc_credentials("http://catalog.example.org:8765")
    """
    path, is_default = _netrc_path()
    if not path.is_file():
        return None, None
    try:
        # Passing no file lets the stdlib check the default file's permissions.
        parsed = netrc.netrc(None if is_default else str(path))
    except (netrc.NetrcParseError, OSError) as exc:
        raise ConfigurationError(f"Cannot read the netrc file {path}: {exc}") from exc
    parts = urlsplit(url)
    host = parts.hostname or ""
    candidates = [f"{host}:{parts.port}", host] if parts.port else [host]
    for machine in candidates:
        entry = parsed.authenticators(machine)
        if entry is not None:
            login, _account, password = entry
            return (login or None), (password or None)
    return None, None


def resolve(url: str | None, username: str | None, password: str | None) -> Settings:
    """Complete ``url``, ``username`` and ``password`` from the environment and netrc.

    Raises :class:`ConfigurationError` naming every place looked at when something is missing.
    """
    url = url or os.environ.get(ENV_URL) or None
    if not url:
        raise ConfigurationError(
            f"No catalog URL: pass connect(url=...) or set {ENV_URL} (e.g. http://127.0.0.1:8765)."
        )
    root = normalize_url(url)
    username = username or os.environ.get(ENV_USER) or None
    if password is None:
        password = os.environ.get(ENV_PASSWORD) or None
    if username is None or password is None:
        net_login, net_password = netrc_credentials(root)
        if username is None:
            username = net_login
        if password is None and net_password is not None and net_login in (None, username):
            password = net_password
    if not username or password is None:
        missing = "username" if not username else "password"
        path, _ = _netrc_path()
        raise ConfigurationError(
            f"No {missing} for {root}: pass connect(username=..., password=...), set "
            f"{ENV_USER} and {ENV_PASSWORD}, or add 'machine {urlsplit(root).hostname} "
            f"login ... password ...' to {path}."
        )
    return Settings(url=root, username=username, password=password)
