"""The ``catalog-nb`` command: serve the catalog, manage users, run the demo.

Examples::

    catalog-nb serve --port 8765 --data-dir ~/.catalog_nb
    catalog-nb serve --workers 2                # one process per core
    catalog-nb serve --no-jobs --db-url URL     # a replica that only answers requests
    catalog-nb worker --db-url URL --jobs 2     # runs the jobs queued in that store
    catalog-nb user create ana --role Analyst --email ana@example.org
    echo 'a-long-password' | catalog-nb user set-password ana --password-stdin
    catalog-nb user list
    catalog-nb profile demo_files              # browse + profile a data source, with progress
    catalog-nb profile demo_sql sales --browse-only
    catalog-nb demo                            # the demo catalog, the tour notebook, then serve
    catalog-nb demo --once --no-tour --scale 0.2
"""

from __future__ import annotations

import argparse
import functools
import getpass
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from catalog_nb.contract import MIN_PASSWORD_LENGTH

DEMO_DIR = Path(".catalog-demo")
DEMO_PASSWORD = "catalog-demo"


def _settings(args: argparse.Namespace) -> Any:
    from catalog_nb.server.settings import Settings

    values: dict[str, Any] = {}
    if getattr(args, "db_url", None):
        values["db_url"] = args.db_url
    if getattr(args, "data_dir", None):
        values["data_dir"] = Path(args.data_dir)
    return Settings(**values)


def _open_store(args: argparse.Namespace) -> Any:
    from catalog_nb.server.bootstrap import bootstrap
    from catalog_nb.server.store import Store

    settings = _settings(args)
    # A command uses one connection at a time, `profile` one more for its heartbeat; the
    # overflow covers a nested one each.
    store = Store(settings.store_url, pool_size=2, max_overflow=2,
                  application_name="catalog-nb cli")
    try:
        store.migrate()
        with store.write() as conn:
            bootstrap(conn, settings)
    except BaseException:
        store.dispose()
        raise
    return store


def _with_store(command: Callable[[argparse.Namespace, Any], int]
                ) -> Callable[[argparse.Namespace], int]:
    """Run ``command(args, store)`` on the opened store, and close the store's connections when
    it ends: ``main()`` also runs in-process (tests, notebooks), where an open pool outlives the
    command."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        with _open_store(args) as store:
            return command(args, store)

    return run


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


def cmd_serve(args: argparse.Namespace) -> int:
    settings = _settings(args)
    if args.workers < 1:
        raise SystemExit("error: --workers takes a number of processes, 1 or more.")
    print(f"Serving the catalog on http://{args.host}:{args.port}/api/v2 "
          f"(store: {settings.store_url.split('@')[-1]}"
          f"{f', {args.workers} worker processes' if args.workers > 1 else ''}"
          f"{'; no jobs: catalog-nb worker runs them' if args.no_jobs else ''})", flush=True)
    if args.workers > 1:
        from catalog_nb.server.serving import serve

        try:
            serve(settings, host=args.host, port=args.port, workers=args.workers,
                  log_level=args.log_level, run_jobs=not args.no_jobs)
        except ValueError as exc:
            raise SystemExit(f"error: {exc}") from exc
        return 0
    import uvicorn

    from catalog_nb.server.app import create_app

    uvicorn.run(create_app(settings, run_jobs=not args.no_jobs), host=args.host, port=args.port,
                log_level=args.log_level)
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """Run jobs from the store beside the service (``server/worker.py``) until stopped."""
    import logging

    # Not the job runner's module: a store that cannot be used is refused before the profiling
    # libraries load.
    from catalog_nb.server.jobs import default_worker_name
    from catalog_nb.server.worker import WorkerError, run_worker

    settings = _settings(args)
    jobs = settings.job_workers if args.jobs is None else args.jobs
    if not 1 <= jobs <= 32:
        raise SystemExit("error: --jobs takes a number of jobs at once, 1 to 32.")
    if args.poll_seconds <= 0:
        raise SystemExit("error: --poll-seconds takes a positive number of seconds.")
    name = args.name or default_worker_name()
    logging.basicConfig(level=getattr(logging, args.log_level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s [%(process)d] %(message)s")
    try:
        run_worker(settings, jobs=jobs, name=name, poll_seconds=args.poll_seconds)
    except WorkerError as exc:
        raise SystemExit(f"error: {exc}") from exc
    return 0


@_with_store
def cmd_user_create(args: argparse.Namespace, store: Any) -> int:
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


@_with_store
def cmd_user_set_password(args: argparse.Namespace, store: Any) -> int:
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


@_with_store
def cmd_user_list(args: argparse.Namespace, store: Any) -> int:
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


@_with_store
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

    settings = _settings(args)
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


def cmd_export(args: argparse.Namespace) -> int:
    """Export a catalog (or a snapshot) as a workbook, CSV files and/or the HTML report."""
    if not (args.xlsx or args.html or args.csv):
        raise SystemExit("error: nothing to export; give --xlsx FILE, --html FILE and/or "
                         "--csv DIR.")
    from catalog_nb.client import CatalogError, connect
    from catalog_nb.notebook.export import ExportError, export_all
    from catalog_nb.snapshot import SnapshotError, open_snapshot

    source: Any = None
    try:
        if args.snapshot:
            source = open_snapshot(args.snapshot)
        else:
            password = sys.stdin.readline().rstrip("\n") if args.password_stdin else None
            source = connect(args.url, args.user, password, progress=False)
        written = export_all(source, xlsx=args.xlsx, html=args.html, csv=args.csv,
                             title=args.title)
    except (CatalogError, ExportError, SnapshotError, ImportError) as exc:
        raise SystemExit(f"error: {exc}") from exc
    finally:
        if source is not None and hasattr(source, "close"):
            source.close()
    for kind in ("xlsx", "csv", "html"):
        if kind in written:
            paths = written[kind] if isinstance(written[kind], list) else [written[kind]]
            for path in paths:
                print(f"{kind}: {path}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from catalog_nb.demo.run import run_demo

    return run_demo(Path(args.data_dir), port=args.port, serve=not args.once, scale=args.scale,
                    tour=args.tour, stop_with_pid=args.stop_with_pid)


def _store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db-url", default=os.environ.get("CATALOG_DB_URL"),
                        help="SQLAlchemy URL of the store (default: SQLite in --data-dir)")
    parser.add_argument("--data-dir", default=os.environ.get("CATALOG_DATA_DIR"),
                        help="folder of the embedded store (default: ~/.catalog_nb)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``catalog-nb``."""
    parser = argparse.ArgumentParser(prog="catalog-nb", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the catalog service")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="port to listen on (default 8765)")
    serve.add_argument("--log-level", default="info",
                       help="uvicorn's log level: debug, info, warning... (default info)")
    serve.add_argument("--workers", type=int, default=1, metavar="N",
                       help="worker processes answering requests (default 1); the job runner "
                       "then runs once, in the supervising process")
    serve.add_argument("--no-jobs", action="store_true",
                       help="run no jobs in this service (default: jobs run in it, "
                       "CATALOG_JOB_WORKERS at once): POST /job leaves each job QUEUED in the "
                       "store for a 'catalog-nb worker'; for replicas sharing one PostgreSQL")
    _store_options(serve)
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser(
        "worker", help="run queued jobs beside the service, in this process",
        description="Run the jobs queued in the store of a catalog service (on this machine or "
        "another), beside 'catalog-nb serve' (or its '--no-jobs' replicas): each job is claimed "
        "once by one worker, its name is recorded in the job, and its heartbeat lets any live "
        "worker (or service running jobs) fail the jobs of a worker that died. SIGTERM or "
        "SIGINT stops it; its running jobs go back to QUEUED. Never creates a store.",
    )
    worker.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="jobs run at once, each in a process of its own (default: "
                        "CATALOG_JOB_WORKERS, 2)")
    worker.add_argument("--name", default=None,
                        help="name recorded in the 'worker' of each job it runs (default: "
                        "hostname:pid)")
    worker.add_argument("--poll-seconds", type=float, default=0.5, metavar="S",
                        help="how often an idle worker looks for a queued job (default 0.5)")
    worker.add_argument("--log-level", default="info",
                        help="log level: debug, info, warning... (default info: a line per "
                        "job)")
    _store_options(worker)
    worker.set_defaults(func=cmd_worker)

    user = sub.add_parser("user", help="manage users directly in the store")
    user_sub = user.add_subparsers(dest="user_command", required=True)
    create = user_sub.add_parser("create", help="create a user")
    create.add_argument("name")
    create.add_argument("--role", action="append", help="role name (repeatable); "
                        "default: the default roles")
    create.add_argument("--email")
    create.add_argument("--first-name")
    create.add_argument("--last-name")
    create.add_argument("--password", action="store_true", help="prompt for a password")
    create.add_argument("--password-stdin", action="store_true",
                        help="read the password from the first line of standard input")
    _store_options(create)
    create.set_defaults(func=cmd_user_create)
    setpw = user_sub.add_parser("set-password", help="set a user's password")
    setpw.add_argument("name")
    setpw.add_argument("--password-stdin", action="store_true")
    _store_options(setpw)
    setpw.set_defaults(func=cmd_user_set_password)
    listing = user_sub.add_parser("list", help="list users")
    _store_options(listing)
    listing.set_defaults(func=cmd_user_list)

    profile = sub.add_parser(
        "profile", help="browse and profile a data source now, in this process",
        description="Browse a data source (by name or key) and profile its resources, or only "
        "those at/under PATH, with the service's own job code; the job is recorded in the store "
        "like one started through POST /job. Exits 1 when the job fails.",
    )
    profile.add_argument("source", help="data source name (or key)")
    profile.add_argument("path", nargs="?", help="profile only the resource at or under PATH")
    profile.add_argument("--browse-only", action="store_true",
                         help="find resources and record cheap facts, do not read the data")
    profile.add_argument("--sample-rows", type=int, default=None,
                         help="rows per resource for the sample-based statistics")
    profile.add_argument("--quiet", action="store_true", help="no progress bar")
    _store_options(profile)
    profile.set_defaults(func=cmd_profile)

    export = sub.add_parser(
        "export", help="export the catalog as a workbook, CSV files and/or an HTML report",
        description="Connect to a catalog service (URL and credentials from --url/--user, "
        "CATALOG_URL/CATALOG_USER/CATALOG_PASSWORD or the netrc file) or open a snapshot, and "
        "write what is asked. Prints the paths written.",
    )
    export.add_argument("--xlsx", metavar="FILE", help="Excel workbook, one sheet per frame")
    export.add_argument("--html", metavar="FILE", help="self-contained HTML report")
    export.add_argument("--csv", metavar="DIR", help="folder of CSV files, one per frame")
    export.add_argument("--url", help="service root (default: CATALOG_URL)")
    export.add_argument("--user", help="user name (default: CATALOG_USER or netrc)")
    export.add_argument("--password-stdin", action="store_true",
                        help="read the password from the first line of standard input")
    export.add_argument("--snapshot", metavar="DIR",
                        help="export this snapshot folder instead of a live catalog")
    export.add_argument("--title", help="title of the HTML report")
    export.set_defaults(func=cmd_export)

    demo = sub.add_parser("demo", help="start the embedded demo catalog and show it working")
    demo.add_argument("--data-dir", default=str(DEMO_DIR))
    demo.add_argument("--port", type=int, default=8765)
    demo.add_argument("--once", action="store_true", help="run the demo job, then stop")
    demo.add_argument("--scale", type=float, default=1.0,
                      help="size of the generated demo lake (1.0: a few thousand customers)")
    demo.add_argument("--tour", action=argparse.BooleanOptionalAction, default=True,
                      help="execute notebooks/01-tour.ipynb against the demo and write the "
                      "executed notebook, the HTML report and the Excel workbook to "
                      "DATA_DIR/reports (default: on)")
    demo.add_argument("--stop-with-pid", type=int, default=None, metavar="PID",
                      help="serve only while process PID lives (notebooks that start the demo "
                      "use it)")
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``catalog-nb`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
