"""The README's first command, run the way a newcomer runs it (one-shot, as a real process):
the run ``made_demo`` (``tests/e2e/conftest.py``) made, which ``test_tour`` checks too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import catalog_nb
from catalog_nb.demo.embedded import EmbeddedServer
from catalog_nb.demo.run import ANALYST_PASSWORD, ANALYST_USER, DEMO_PASSWORD, DEMO_USER
from tests.e2e.conftest import SCALE, DemoRun

#: What a tqdm bar prints (``42%|███ | 1.2k/3k [00:01<00:02, 1.1k rows/s]``).
BAR = re.compile(r"\d+%\||\[\d\d:\d\d[<,]|(resources|rows|B)/s\]")


def _demo_command(data_dir: Path) -> list[str]:
    return [sys.executable, "-m", "catalog_nb.cli", "demo", "--once", "--no-tour", "--port",
            "0", "--scale", SCALE, "--data-dir", str(data_dir)]


def _in_a_terminal(command: list[str], timeout: float = 300) -> str:
    """Everything ``command`` writes to a 200-column terminal (stdout and stderr), raw."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks: list[bytes] = []
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(master)
        code = process.wait(timeout)
    raw = b"".join(chunks).decode(errors="replace")
    assert code == 0, raw[-5000:]
    return raw


def _screen(raw: str) -> list[str]:
    """The lines a terminal shows after ``raw``: a carriage return moves back to the start of
    the line, later characters overwrite earlier ones (tqdm's one-line bars use nothing else)."""
    lines: list[list[str]] = [[]]
    column = 0
    for char in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw):
        if char == "\n":
            lines.append([])
            column = 0
        elif char == "\r":
            column = 0
        else:
            line = lines[-1]
            if column < len(line):
                line[column] = char
            else:
                line.append(char)
            column += 1
    return ["".join(line).rstrip() for line in lines]


def _section(out: str, title: str) -> tuple[str, list[str]]:
    """The title line starting with ``title`` and the table rows under it (header dropped)."""
    lines = out.split("\n" + title, 1)[1].split("\n\n", 1)[0].splitlines()
    return title + lines[0], lines[2:]


@pytest.mark.slow(seconds=25)
def test_demo_builds_profiles_and_shows_the_catalog(made_demo: DemoRun) -> None:
    out = made_demo.stdout
    assert "Connected: <Catalog http://127.0.0.1:" in out and "as admin>" in out
    assert "Profiled 8 resources of data source 'demo_files': 8 new" in out
    assert "Profiled 11 resources of data source 'demo_sql': 11 new" in out
    listing = out.split("Data resources")[1].split("Fields of")[0]
    for path in ("crm/customers.csv", "sales/orders", "web/access_log.jsonl",
                 "finance/payments.parquet", "sales.customer_revenue", "hr.employees"):
        assert path in listing
    assert "sales/orders/2024-01.csv" not in listing  # partitions show through their collection
    assert "catalog_nb.connect(" in out
    suggested = out.split("Sensitive fields suggested by discovery")[1].split("Fields of")[0]
    pan = [line for line in suggested.splitlines() if line.split()[-2:-1] == ["pan_ref"]]
    assert pan and all("Sensitive.PaymentCard" in line for line in pan)
    # Printed for people: no Python lists or pandas' <NA> in the tables.
    assert "[Administrator]" not in out and "<NA>" not in out


@pytest.mark.slow(seconds=5)
def test_every_printed_count_adds_up(made_demo: DemoRun) -> None:
    out = made_demo.stdout
    title, rows = _section(out, "Users")
    assert title == f"Users ({len(rows)}):"

    title, rows = _section(out, "Data sources")
    sources = {row.split()[0]: int(row.split()[2]) for row in rows}
    counted = re.fullmatch(r"Data sources \((\d+); (\d+) resources, partition files "
                           r"included\):", title)
    assert counted is not None, title
    total = int(counted.group(2))
    assert int(counted.group(1)) == len(rows)
    assert sum(sources.values()) == total
    # Each source's count is what its profiling job said it found.
    for name, count in sources.items():
        said = re.search(rf"Profiled (\d+) resources of data source '{name}'.*?"
                         r"(?:(\d+) collection members|\. Tag discovery)", out)
        assert said is not None
        assert int(said.group(1)) + int(said.group(2) or 0) == count

    title, rows = _section(out, "Data resources")
    shown = re.fullmatch(r"Data resources \((\d+) = (\d+) rows below \+ (\d+) partition files "
                         r"counted in their collection's 'files'\):", title)
    assert shown is not None, title
    everything, listed, folded = (int(g) for g in shown.groups())
    assert everything == total == listed + folded and listed == len(rows)
    files = [int(row.split()[3]) for row in rows if row.split()[2] == "collection"]
    assert files and sum(files) == folded

    title, rows = _section(out, "Sensitive fields suggested by discovery")
    assert title.startswith(f"Sensitive fields suggested by discovery ({len(rows)}; ")
    created = re.findall(r"(\d+) suggestions created", out)
    assert sum(map(int, created)) == len(rows)

    title, rows = _section(out, "Fields of demo_files crm/customers.csv")
    assert title == f"Fields of demo_files crm/customers.csv ({len(rows)}):"


@pytest.mark.slow(seconds=60)
def test_progress_bars_never_glue_and_export_attaches_to_the_demo(
    made_demo: DemoRun, tmp_path: Path
) -> None:
    # In a terminal the bars show, and each is erased before the line after it is printed.
    raw = _in_a_terminal(_demo_command(made_demo.data_dir))
    assert "profile demo_files" in raw and BAR.search(raw)
    screen = _screen(raw)
    assert not [line for line in screen if BAR.search(line)]
    assert [line for line in screen
            if line.startswith("  Profiled 8 resources of data source 'demo_files': 0 new")]
    assert "8 unchanged (not read again)" in raw  # a second run re-uses lake and catalog
    assert "Profiling the demo sources:" in screen and "  demo_sql ..." in screen

    # In a log (stdout and stderr to one pipe), no bar at all: nothing but whole lines. This
    # run serves, and 'catalog-nb export' without a URL attaches to it as the notebooks do.
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CATALOG_")}
    serving = subprocess.Popen(
        [arg for arg in _demo_command(made_demo.data_dir) if arg != "--once"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=clean)
    try:
        assert serving.stdout is not None
        logged = ""
        for line in serving.stdout:
            logged += line
            if line.startswith("Serving until Ctrl-C."):
                break
        report = tmp_path / "report.html"
        export = subprocess.run(
            [sys.executable, "-m", "catalog_nb.cli", "export", "--html", str(report)],
            capture_output=True, text=True, timeout=300, check=False,
            env={**clean, "CATALOG_DEMO_DIR": str(made_demo.data_dir)})
    finally:
        serving.terminate()
        rest, _ = serving.communicate(timeout=60)
    logged += rest
    assert serving.returncode == 0 and "Stopped." in rest, logged[-5000:]
    assert "\r" not in logged and not BAR.search(logged)
    assert "\n  Profiled 11 resources of data source 'demo_sql'" in logged

    assert export.returncode == 0, export.stderr
    url = re.search(r"The catalog is at (http://127.0.0.1:\d+)/api/v2", logged)
    assert url is not None
    assert export.stderr.strip() == (
        f"Catalog: {url.group(1)} (the demo serving {made_demo.data_dir.resolve()})")
    assert export.stdout.strip() == f"html: {report}"
    assert "crm/customers.csv" in report.read_text(encoding="utf-8")


@pytest.mark.slow(seconds=20)
def test_the_demo_catalog_is_browsable_by_the_analyst(made_demo: DemoRun) -> None:
    server = EmbeddedServer(made_demo.data_dir, admin_user=DEMO_USER,
                            admin_password=DEMO_PASSWORD)
    with server, catalog_nb.connect(server.url, ANALYST_USER, ANALYST_PASSWORD) as cat:
        frame = cat.resources(progress=False)
        # The Analyst role is granted the files only: the SQL source stays invisible.
        assert set(frame["source"]) == {"demo_files"}
        fields = cat.fields("demo_files", "crm/customers.csv")
        assert {"customer_id", "contact", "ident"} <= set(fields["name"])
