"""The ``catalog-nb`` command: serve the catalog, manage users, run the demo.

Every option's ``--help`` says its default. Commands that use a store say on standard error
which one (``Store: URL (from --data-dir)``); only ``serve`` and ``user create`` make a new
one, and say so (``catalog_nb.cli_store``).

Examples::

    catalog-nb serve --port 8765 --data-dir ~/.catalog_nb
    catalog-nb serve --workers 2                # one process per core
    catalog-nb serve --no-jobs --db-url URL     # a replica that only answers requests
    catalog-nb worker --db-url URL --jobs 2     # runs the jobs queued in that store
    catalog-nb user create ana --role Analyst --email ana@example.org
    echo 'a-long-password' | catalog-nb user set-password ana --password-stdin
    catalog-nb user list --data-dir .catalog-demo
    catalog-nb profile demo_files --data-dir .catalog-demo   # browse + profile, with progress
    catalog-nb profile demo_sql sales --browse-only
    catalog-nb export --html report.html       # the running demo's catalog (or --url URL)
    catalog-nb demo                            # the demo catalog, the tour notebook, then serve
    catalog-nb demo --once --no-tour --scale 0.2
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from catalog_nb.cli_store import (
    DEFAULT_DATA_DIR,
    choose_store,
    cmd_profile,
    cmd_user_create,
    cmd_user_list,
    cmd_user_set_password,
)

DEMO_DIR = Path(".catalog-demo")


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the catalog (uvicorn, one process or ``--workers``) until stopped."""
    choice = choose_store(args)
    settings = choice.settings
    if args.workers < 1:
        raise SystemExit("error: --workers takes a number of processes, 1 or more.")
    new = choice.sqlite_file is not None and not choice.sqlite_file.is_file()
    print(f"Serving the catalog on http://{args.host}:{args.port}/api/v2 "
          f"(store: {choice.describe()}{'; new, created now' if new else ''}"
          f"{f'; {args.workers} worker processes' if args.workers > 1 else ''}"
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

    settings = choose_store(args).settings
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


def _export_source(args: argparse.Namespace) -> Any:
    """What ``export`` reads: the snapshot, the named service, or the running demo."""
    from catalog_nb.client import connect
    from catalog_nb.client.credentials import ENV_URL
    from catalog_nb.notebook.session import attach_demo, demo_dir
    from catalog_nb.snapshot import open_snapshot

    if args.snapshot:
        return open_snapshot(args.snapshot)
    password = sys.stdin.readline().rstrip("\n") if args.password_stdin else None
    if args.url or os.environ.get(ENV_URL):
        return connect(args.url, args.user, password, progress=False)
    # As the notebooks do (catalog_nb.notebook.session): the demo serving its data folder.
    try:
        attached = attach_demo(args.user, password, progress=False)
    except ValueError as exc:  # a user other than the demo's, without a password
        raise SystemExit(f"error: {exc} (or --password-stdin)") from exc
    if attached is None:
        raise SystemExit(
            f"error: no catalog to export: give --url URL (or set {ENV_URL}), or --snapshot "
            f"DIR; no demo is serving {demo_dir()} (start one with 'make demo' or "
            "'catalog-nb demo', or name its folder in CATALOG_DEMO_DIR).")
    print(f"Catalog: {attached.url} (the demo serving {demo_dir()})", file=sys.stderr,
          flush=True)
    return attached


def cmd_export(args: argparse.Namespace) -> int:
    """Export a catalog (or a snapshot) as a workbook, CSV files and/or the HTML report."""
    if not (args.xlsx or args.html or args.csv):
        raise SystemExit("error: nothing to export; give --xlsx FILE, --html FILE and/or "
                         "--csv DIR.")
    from catalog_nb.client import CatalogError
    from catalog_nb.notebook.export import ExportError, export_all
    from catalog_nb.snapshot import SnapshotError

    source: Any = None
    try:
        source = _export_source(args)
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


#: Store options of the commands that use one (``serve``, ``worker``, ``user``, ``profile``).
_DB_URL_HELP = ("SQLAlchemy URL of the store, e.g. postgresql+psycopg://catalog@db/catalog "
                "(default: $CATALOG_DB_URL, else the SQLite file catalog.sqlite3 in --data-dir)")
_DATA_DIR_HELP = ("folder of the embedded SQLite store (default: $CATALOG_DATA_DIR, else "
                  f"{DEFAULT_DATA_DIR})")


def _store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db-url", default=None, metavar="URL", help=_DB_URL_HELP)
    parser.add_argument("--data-dir", default=None, metavar="DIR", help=_DATA_DIR_HELP)


def _log_level(parser: argparse.ArgumentParser, default_says: str) -> None:
    parser.add_argument("--log-level", default="info", metavar="LEVEL",
                        choices=["critical", "error", "warning", "info", "debug", "trace"],
                        help=f"critical, error, warning, info, debug or trace (default: info"
                        f"{default_says})")


def _add_serve(sub: Any) -> None:
    serve = sub.add_parser(
        "serve", help="run the catalog service (creates its store when there is none)",
        description="Serve the catalog's REST interface under /api/v2 (interactive docs at "
        "/api/v2/docs) until Ctrl-C. Creates the store when there is none, and says which it "
        "uses; on the first start of an empty store it creates the administrator "
        "CATALOG_ADMIN_USER with CATALOG_ADMIN_PASSWORD.")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on; 0.0.0.0 for every interface (default: "
                       "127.0.0.1, this machine only)")
    serve.add_argument("--port", type=int, default=8765,
                       help="port to listen on; 0 picks a free one (default: 8765)")
    _log_level(serve, ": a line per request")
    serve.add_argument("--workers", type=int, default=1, metavar="N",
                       help="processes answering requests; with more than one the job runner "
                       "runs once, in the supervising process (default: 1)")
    serve.add_argument("--no-jobs", action="store_true",
                       help="run no jobs in this service: POST /job leaves each job QUEUED in "
                       "the store for a 'catalog-nb worker'; for replicas sharing one "
                       "PostgreSQL (default: off, jobs run in the service, CATALOG_JOB_WORKERS "
                       "at once)")
    _store_options(serve)
    serve.set_defaults(func=cmd_serve, command_name="serve")


def _add_worker(sub: Any) -> None:
    worker = sub.add_parser(
        "worker", help="run queued jobs beside the service, in this process",
        description="Run the jobs queued in the store of a catalog service (on this machine or "
        "another), beside 'catalog-nb serve' (or its '--no-jobs' replicas): each job is claimed "
        "once by one worker, its name is recorded in the job, and its heartbeat lets any live "
        "worker (or service running jobs) fail the jobs of a worker that died. SIGTERM or "
        "SIGINT stops it; its running jobs go back to QUEUED. Never creates a store.",
    )
    worker.add_argument("--jobs", type=int, default=None, metavar="N",
                        help="jobs run at once, 1 to 32, each in a process of its own (default: "
                        "$CATALOG_JOB_WORKERS, else 2)")
    worker.add_argument("--name", default=None,
                        help="name recorded in the 'worker' of each job it runs (default: "
                        "hostname:pid)")
    worker.add_argument("--poll-seconds", type=float, default=0.5, metavar="S",
                        help="how often an idle worker looks for a queued job (default: 0.5)")
    _log_level(worker, ": a line per job")
    _store_options(worker)
    worker.set_defaults(func=cmd_worker, command_name="worker")


def _add_user(sub: Any) -> None:
    user = sub.add_parser(
        "user", help="manage users directly in the store",
        description="Create users, set passwords and list users in the store itself (no "
        "running service needed). Each command says on standard error which store it uses.")
    user_sub = user.add_subparsers(dest="user_command", required=True, metavar="COMMAND")
    create = user_sub.add_parser(
        "create", help="create a user (and the store, when there is none)",
        description="Create a user; the change is audited as done by cli:<your login>. Makes a "
        "new store when there is none, and says where.")
    create.add_argument("name", help="the user's name (unique)")
    create.add_argument("--role", action="append", metavar="ROLE",
                        help="a role name, e.g. Administrator, Steward, Analyst or Guest; "
                        "repeatable (default: the roles marked as default roles)")
    create.add_argument("--email", help="email address (default: none)")
    create.add_argument("--first-name", help="first name (default: none)")
    create.add_argument("--last-name", help="last name (default: none)")
    create.add_argument("--password", action="store_true",
                        help="prompt for a password, twice (default: off, no password: the "
                        "user cannot log in until one is set)")
    create.add_argument("--password-stdin", action="store_true",
                        help="read the password from the first line of standard input "
                        "(default: off)")
    _store_options(create)
    create.set_defaults(func=cmd_user_create, command_name="user create")
    setpw = user_sub.add_parser(
        "set-password", help="set a user's password and end their sessions",
        description="Set the password of an existing user in an existing store and end the "
        "user's sessions. Creates no store.")
    setpw.add_argument("name", help="the name of the user whose password is set")
    setpw.add_argument("--password-stdin", action="store_true",
                       help="read the password from the first line of standard input "
                       "(default: off, prompt for it twice)")
    _store_options(setpw)
    setpw.set_defaults(func=cmd_user_set_password, command_name="user set-password")
    listing = user_sub.add_parser(
        "list", help="list users: name, roles, password set, email",
        description="List the users of an existing store. Creates no store: without --data-dir, "
        "--db-url, CATALOG_DATA_DIR or CATALOG_DB_URL it reads the default one, and says so.")
    _store_options(listing)
    listing.set_defaults(func=cmd_user_list, command_name="user list")


def _add_profile(sub: Any) -> None:
    profile = sub.add_parser(
        "profile", help="browse and profile a data source now, in this process",
        description="Browse a data source (by name or key) and profile its resources, or only "
        "those at/under PATH, with the service's own job code; the job is recorded in the store "
        "like one started through POST /job. Exits 1 when the job fails. Creates no store.",
    )
    profile.add_argument("source", help="data source name (or key)")
    profile.add_argument("path", nargs="?", default=None,
                         help="profile only the resource at or under PATH (default: every "
                         "resource of the source)")
    profile.add_argument("--browse-only", action="store_true",
                         help="find resources and record cheap facts, do not read the data "
                         "(default: off, browse then profile)")
    profile.add_argument("--sample-rows", type=int, default=None, metavar="N",
                         help="rows per resource for the sample-based statistics (default: the "
                         "store's profiling.sampleRows set through /config, else "
                         "$CATALOG_PROFILE_SAMPLE_ROWS, else 100000)")
    profile.add_argument("--quiet", action="store_true",
                         help="no progress bar (default: off; the bar shows on a terminal "
                         "only)")
    _store_options(profile)
    profile.set_defaults(func=cmd_profile, command_name="profile")


def _add_export(sub: Any) -> None:
    export = sub.add_parser(
        "export", help="export the catalog as a workbook, CSV files and/or an HTML report",
        description="Connect to a catalog service (--url, else CATALOG_URL, else the demo "
        "'make demo' is serving, as the notebooks attach to it) or open a snapshot, and write "
        "what is asked (at least one of --xlsx, --html, --csv). Prints the paths written.",
    )
    export.add_argument("--xlsx", metavar="FILE",
                        help="Excel workbook, one sheet per frame (default: none)")
    export.add_argument("--html", metavar="FILE",
                        help="self-contained HTML report (default: none)")
    export.add_argument("--csv", metavar="DIR",
                        help="folder of CSV files, one per frame (default: none)")
    export.add_argument("--url", help="service root, e.g. http://127.0.0.1:8765 (default: "
                        "$CATALOG_URL, else the running demo of $CATALOG_DEMO_DIR or "
                        ".catalog-demo)")
    export.add_argument("--user", help="user name (default: $CATALOG_USER, else the netrc "
                        "entry of the URL's host; the demo's administrator for the demo)")
    export.add_argument("--password-stdin", action="store_true",
                        help="read the password from the first line of standard input "
                        "(default: off: $CATALOG_PASSWORD, netrc, or the demo's)")
    export.add_argument("--snapshot", metavar="DIR",
                        help="export this snapshot folder instead of a live catalog (default: "
                        "none)")
    export.add_argument("--title", help="title of the HTML report (default: 'Catalog report')")
    export.set_defaults(func=cmd_export, command_name="export")


def _add_demo(sub: Any) -> None:
    demo = sub.add_parser(
        "demo", help="start the embedded demo catalog and show it working",
        description="Build the demo lake in DATA_DIR/lake (once), start the embedded catalog "
        "on it, register and profile its two data sources, print what the catalog knows, run "
        "the tour notebook (reports in DATA_DIR/reports), then serve until Ctrl-C. The store "
        "is DATA_DIR's own.")
    demo.add_argument("--data-dir", default=str(DEMO_DIR), metavar="DIR",
                      help=f"folder of the demo's lake, store and reports (default: {DEMO_DIR}"
                      ", in the working directory)")
    demo.add_argument("--port", type=int, default=8765,
                      help="port to serve on; 0 picks a free one (default: 8765)")
    demo.add_argument("--once", action="store_true",
                      help="stop once the catalog is shown and the tour ran, instead of serving "
                      "(default: off, serve until Ctrl-C)")
    demo.add_argument("--scale", type=float, default=1.0,
                      help="size of the demo lake when it is built; 1.0 is a few thousand "
                      "customers (default: 1.0)")
    demo.add_argument("--tour", dest="tour", action="store_true", default=True,
                      help="execute notebooks/01-tour.ipynb against the demo and write the "
                      "executed notebook, the HTML report and the Excel workbook to "
                      "DATA_DIR/reports (default: on)")
    demo.add_argument("--no-tour", dest="tour", action="store_false",
                      help="skip the tour notebook (default: off, the tour runs)")
    demo.add_argument("--stop-with-pid", type=int, default=None, metavar="PID",
                      help="serve only while process PID lives; notebooks that start the demo "
                      "use it (default: none, serve until Ctrl-C)")
    demo.set_defaults(func=cmd_demo, command_name="demo")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``catalog-nb``: every option's help says its default."""
    parser = argparse.ArgumentParser(prog="catalog-nb", description="The data catalog's "
                                     "command line: serve the catalog, run jobs, manage users, "
                                     "profile and export, run the demo.",
                                     epilog="Run 'catalog-nb COMMAND --help' for a command's "
                                     "options.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_add_serve, _add_worker, _add_user, _add_profile, _add_export, _add_demo):
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``catalog-nb`` console script."""
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
