"""The ``catalog-nb`` commands that work on the store directly: ``user`` and ``profile``.

Which store a command uses is said on standard error before it starts (``Store: URL (from
--data-dir)``), so a listing on standard output stays a listing. Only the commands meant to make
a catalog create a store (``serve``, ``user create``; they say so when they do); the ones that
read or change what a catalog holds (``user list``, ``user set-password``, ``profile``) refuse a
store that does not exist, instead of answering from an empty one made on the spot.
"""

from __future__ import annotations

import argparse
import functools
import getpass
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog_nb.contract import MIN_PASSWORD_LENGTH

#: The folder of the embedded store when neither ``--data-dir`` nor ``CATALOG_DATA_DIR`` is
#: given (the service's default; resolved when a command runs, so ``HOME`` is honoured).
DEFAULT_DATA_DIR = "~/.catalog_nb"


@dataclass(frozen=True)
class StoreChoice:
    """The store a command uses, and what named it."""

    settings: Any
    #: ``--db-url``, ``CATALOG_DB_URL``, ``--data-dir``, ``CATALOG_DATA_DIR`` or ``default``.
    origin: str

    @property
    def url(self) -> str:
        return str(self.settings.store_url)

    @property
    def shown(self) -> str:
        """The URL as a person may see it (no password)."""
        from sqlalchemy.engine import make_url

        return make_url(self.url).render_as_string(hide_password=True)

    @property
    def sqlite_file(self) -> Path | None:
        """The SQLite file of the store, or None (another database, or SQLite in memory)."""
        from sqlalchemy.engine import make_url

        parsed = make_url(self.url)
        if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
            return None
        return Path(parsed.database)

    @property
    def whence(self) -> str:
        """What named the store, as a person reads it."""
        return ("the default folder; no --data-dir, --db-url, CATALOG_DATA_DIR or "
                "CATALOG_DB_URL given" if self.origin == "default" else self.origin)

    def describe(self) -> str:
        """``URL (from --data-dir)``: the line a command prints before it starts."""
        return f"{self.shown} (from {self.whence})"


def choose_store(args: argparse.Namespace) -> StoreChoice:
    """The store named by ``--db-url`` / ``--data-dir``, else ``CATALOG_DB_URL`` /
    ``CATALOG_DATA_DIR``, else the default folder ``~/.catalog_nb``."""
    from catalog_nb.server.settings import Settings

    db_flag, dir_flag = getattr(args, "db_url", None), getattr(args, "data_dir", None)
    db_env, dir_env = os.environ.get("CATALOG_DB_URL"), os.environ.get("CATALOG_DATA_DIR")
    values: dict[str, Any] = {}
    if db_flag:
        values["db_url"] = db_flag
    if dir_flag:
        values["data_dir"] = Path(dir_flag).expanduser()
    elif not dir_env:
        values["data_dir"] = Path(DEFAULT_DATA_DIR).expanduser()
    # What Settings reads (the environment fills what is not given) and whence, in its order.
    origin = ("--db-url" if db_flag else "CATALOG_DB_URL" if db_env else
              "--data-dir" if dir_flag else "CATALOG_DATA_DIR" if dir_env else "default")
    return StoreChoice(Settings(**values), origin)


def require_existing(choice: StoreChoice, command: str) -> None:
    """Refuse (``SystemExit``) a store that holds no catalog: ``command`` only uses one."""
    from catalog_nb.server.worker import WorkerError, check_store

    how = ("Name the store of your catalog with --data-dir DIR or --db-url URL (or "
           "CATALOG_DATA_DIR / CATALOG_DB_URL); 'catalog-nb serve' or 'catalog-nb user create' "
           "make a new one.")
    if choice.sqlite_file is None and choice.url.startswith("sqlite"):
        raise SystemExit(f"error: an in-memory store is empty in every process; "
                         f"'{command}' needs an existing catalog. {how}")
    if choice.sqlite_file is not None and not choice.sqlite_file.is_file():
        raise SystemExit(f"error: there is no catalog store at {choice.sqlite_file} (from "
                         f"{choice.whence}); '{command}' creates none. {how}")
    try:
        check_store(choice.url)
    except WorkerError as exc:
        raise SystemExit(f"error: {exc}") from exc


def open_store(args: argparse.Namespace, *, create: bool) -> Any:
    """The migrated, bootstrapped store of ``args``, said on standard error; ``create``: may
    make a new one (else a missing store is refused, see :func:`require_existing`)."""
    from catalog_nb.server.bootstrap import bootstrap
    from catalog_nb.server.store import Store

    choice = choose_store(args)
    new = choice.sqlite_file is not None and not choice.sqlite_file.is_file()
    if not create:
        require_existing(choice, args.command_name)
    elif new:
        assert choice.sqlite_file is not None
        choice.sqlite_file.parent.mkdir(parents=True, exist_ok=True)
    print(f"Store: {choice.describe()}{'; new, created now' if new else ''}", file=sys.stderr,
          flush=True)
    # A command uses one connection at a time, `profile` one more for its heartbeat; the
    # overflow covers a nested one each.
    store = Store(choice.url, pool_size=2, max_overflow=2, application_name="catalog-nb cli")
    try:
        store.migrate()
        with store.write() as conn:
            bootstrap(conn, choice.settings)
    except BaseException:
        store.dispose()
        raise
    return store


def with_store(*, create: bool) -> Callable[[Callable[[argparse.Namespace, Any], int]],
                                            Callable[[argparse.Namespace], int]]:
    """Run ``command(args, store)`` on the opened store (see :func:`open_store`), and close the
    store's connections when it ends: ``main()`` also runs in-process (tests, notebooks), where
    an open pool outlives the command."""

    def wrap(command: Callable[[argparse.Namespace, Any], int]
             ) -> Callable[[argparse.Namespace], int]:
        @functools.wraps(command)
        def run(args: argparse.Namespace) -> int:
            with open_store(args, create=create) as store:
                return command(args, store)

        return run

    return wrap


def _read_password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = getpass.getpass("Password: ")
        if getpass.getpass("Again: ") != password:
            raise SystemExit("The passwords differ; nothing was changed.")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise SystemExit(f"A password needs at least {MIN_PASSWORD_LENGTH} characters.")
    return password


def _actor() -> str:
    return f"cli:{getpass.getuser()}"


@with_store(create=True)
def cmd_user_create(args: argparse.Namespace, store: Any) -> int:
    """Create a user in the store (a new store is made when there is none)."""
    from catalog_nb.contract import AuditAction, AuditObjectType
    from catalog_nb.server.auditing import audited
    from catalog_nb.server.errors import ServiceError
    from catalog_nb.server.passwords import hash_password
    from catalog_nb.server.store import users

    hashed = hash_password(_read_password(args)) if args.password or args.password_stdin else None
    attributes = {k: v for k, v in (("email", args.email), ("firstName", args.first_name),
                                     ("lastName", args.last_name)) if v}
    try:
        with audited(store, None, AuditAction.CREATE, AuditObjectType.USER, name=args.name,
                     actor_name=_actor()) as w:
            record = users.create(w.conn, {"name": args.name, "attributes": attributes},
                                  args.role or None, _actor(), hashed)
            w.target(record.key, record.name)
    except ServiceError as exc:
        raise SystemExit(f"error: {exc.message}") from exc
    print(f"Created user {record.name} ({record.key}) with roles "
          f"{', '.join(r.name for r in record.roles)}.")
    return 0


@with_store(create=False)
def cmd_user_set_password(args: argparse.Namespace, store: Any) -> int:
    """Set a user's password and end their sessions."""
    from catalog_nb.contract import AuditAction, AuditObjectType
    from catalog_nb.server.auditing import audited
    from catalog_nb.server.errors import ServiceError
    from catalog_nb.server.passwords import hash_password
    from catalog_nb.server.store import sessions, users

    hashed = hash_password(_read_password(args))
    try:
        with audited(store, None, AuditAction.SET_PASSWORD, AuditObjectType.USER, name=args.name,
                     actor_name=_actor()) as w:
            record = users.get_by_name(w.conn, args.name)
            w.target(record.key, record.name)
            users.set_password_hash(w.conn, record.key, hashed)
            sessions.close_user_sessions(w.conn, record.key)
    except ServiceError as exc:
        raise SystemExit(f"error: {exc.message}") from exc
    print(f"Set the password of {record.name}; their sessions were ended.")
    return 0


@with_store(create=False)
def cmd_user_list(args: argparse.Namespace, store: Any) -> int:
    """Print the users: name, roles, whether a password is set, email."""
    from catalog_nb.server.store import users

    with store.read() as conn:
        found = users.list_all(conn)
    width = max([4, *(len(u.name) for u in found)])
    print(f"{'name':<{width}}  {'roles':<30}  password  email")
    for u in found:
        email = (u.attributes or {}).get("email") or ""
        print(f"{u.name:<{width}}  {', '.join(r.name for r in u.roles):<30}  "
              f"{'yes' if u.password_hash else 'no':<8}  {email}")
    return 0


@with_store(create=False)
def cmd_profile(args: argparse.Namespace, store: Any) -> int:
    """Browse and profile a data source in this process, with the service's job code."""
    from tqdm import tqdm

    from catalog_nb.contract import AuditAction, AuditObjectType, JobState, JobType
    from catalog_nb.server.auditing import audited
    from catalog_nb.server.errors import ServiceError
    from catalog_nb.server.jobs import heartbeat, run_job
    from catalog_nb.server.runtime_config import RuntimeConfig
    from catalog_nb.server.store import config as config_store
    from catalog_nb.server.store import jobs as job_store
    from catalog_nb.server.store import sources as source_store

    settings = choose_store(args).settings
    if args.browse_only and args.path:
        raise SystemExit("error: PATH limits profiling; --browse-only always reads the whole "
                         "data source.")
    # The values administrators set through /config apply here as in the service.
    with store.read() as conn:
        RuntimeConfig(settings).refresh(config_store.stored(conn))
    if args.sample_rows is not None:
        settings = settings.model_copy(update={"profile_sample_rows": args.sample_rows})
    job_type = JobType.BROWSE if args.browse_only else JobType.PROFILE
    try:
        with store.read() as conn:
            source = source_store.find_source(conn, args.source)
            if source is None:
                source = source_store.get_source_by_name(conn, args.source)
        label = f"{job_type.value} {source['name']}"
        with audited(store, None, AuditAction.RUN_JOB, AuditObjectType.JOB, name=label,
                     actor_name=_actor()) as w:
            job = job_store.create(w.conn, job_type.value, source["key"], args.path, _actor())
            w.target(job["key"], label)
    except ServiceError as exc:
        raise SystemExit(f"error: {exc.message}") from exc
    bar = tqdm(desc=str(source["name"]), unit="resource", disable=True if args.quiet else None,
               file=sys.stderr)

    def progress(_key: str, done: int, total: int | None, path: str | None) -> None:
        if total is not None and bar.total != total:
            bar.total = total
        bar.n = done
        bar.set_postfix_str((path or "")[-40:], refresh=False)
        bar.refresh()

    try:
        with heartbeat(store, job["key"], settings.job_heartbeat_seconds):
            final = run_job(store, settings, job["key"], enforce_roots=bool(settings.data_roots),
                            on_progress=progress)
    except KeyboardInterrupt:
        with store.write() as conn:
            job_store.finish(conn, job["key"], JobState.FAILED,
                             "Interrupted from the command line.")
        bar.close()
        print("Interrupted; the job is marked FAILED.", file=sys.stderr)
        return 130
    bar.close()
    if final is None:
        raise SystemExit("error: the job was taken by another worker.")
    print(f"{final['state']}: {final['message']}")
    for error in (final["errors"] or [])[:20]:
        print(f"  {error.get('path')}: {error.get('message')}")
    if len(final["errors"] or []) > 20:
        print(f"  ... and {len(final['errors']) - 20} more")
    print(f"job {final['key']}")
    return 0 if final["state"] == JobState.SUCCEEDED.value else 1
