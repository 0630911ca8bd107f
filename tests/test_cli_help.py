"""``catalog-nb COMMAND --help``: every option of every command explains itself and says its
default, read from the help a person sees."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from catalog_nb.cli import build_parser, main


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
              ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every command that takes options (``serve``, ``user list``, ...) with its parser."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                nested = _commands(child, (*path, name))
                found.extend(nested or [((*path, name), child)])
    return found


def _help_entries(text: str) -> dict[str, str]:
    """The options and arguments of a ``--help`` text: ``{invocation: help}``, the help's
    wrapped lines joined."""
    entries: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        start = re.match(r"^  (\S.*?)(?:\s{2,}(\S.*))?$", line)
        if start and not line.startswith("   "):
            current = start.group(1)
            entries[current] = start.group(2) or ""
        elif current is not None and line.startswith("   ") and line.strip():
            entries[current] = f"{entries[current]} {line.strip()}".strip()
        elif not line.strip():
            current = None
    return entries


COMMANDS = _commands(build_parser())


def test_every_command_is_checked() -> None:
    assert {" ".join(path) for path, _ in COMMANDS} == {
        "serve", "worker", "user create", "user set-password", "user list", "profile",
        "export", "demo"}


@pytest.mark.parametrize(("path", "parser"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_has_help_with_its_default(
    path: tuple[str, ...], parser: argparse.ArgumentParser,
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    # A description of what the command does, above the options.
    assert text.split("\n\n")[1].strip() and not text.split("\n\n")[1].startswith("options:")
    entries = _help_entries(text)
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        name = action.option_strings[0] if action.option_strings else action.metavar or action.dest
        shown = [help for invocation, help in entries.items()
                 if invocation.split()[0].rstrip(",") == name]
        assert len(shown) == 1, f"{' '.join(path)} {name}: not in the help:\n{text}"
        assert len(shown[0].split()) >= 3, f"{' '.join(path)} {name} explains nothing: {shown[0]!r}"
        if action.option_strings or action.nargs == "?":
            assert re.search(r"\(default: [^)]+\)", shown[0]), (
                f"{' '.join(path)} {name} does not say its default: {shown[0]!r}")


def test_the_console_command_shows_the_help() -> None:
    done = subprocess.run([sys.executable, "-m", "catalog_nb.cli", "serve", "--help"],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"COLUMNS": "100", "PATH": ""})
    assert done.returncode == 0, done.stderr
    entries = _help_entries(done.stdout)
    assert "(default: 8765)" in entries["--port PORT"]
    assert "(default: $CATALOG_DATA_DIR, else ~/.catalog_nb)" in entries["--data-dir DIR"]
