"""The dependency direction of DESIGN.md: ``notebook -> client -> contract <- server``, with
the offline ``snapshot`` package beside the client (the client writes snapshots, the notebook
reads them).

Every module is parsed with ``ast`` (nothing is imported), and every import, absolute or
relative, is resolved to the module it names. ``demo`` and ``cli`` may use both halves.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "catalog_nb"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module an import statement of ``source`` names, relative imports resolved.

    ``from a import b`` yields both ``a`` and ``a.b`` (``b`` may be a submodule).
    """
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                keep = len(parts) - (node.level - 1)
                assert keep > 0, f"relative import above the top package in {module}"
                base = ".".join(parts[:keep])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def modules_under(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def violations(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in modules_under(folder):
        name = module_name(path)
        imports = imported_modules(path.read_text(), name, path.name == "__init__.py")
        for target in sorted(imports):
            if any(target == f or target.startswith(f + ".") for f in forbidden):
                found.append(f"{path.relative_to(PACKAGE.parent)} imports {target}")
    return found


def test_server_never_imports_client_or_notebook() -> None:
    assert len(modules_under("server")) >= 10
    assert violations("server", ("catalog_nb.client", "catalog_nb.notebook")) == []


@pytest.mark.parametrize("half", ["client", "notebook"])
def test_client_and_notebook_never_import_server_demo_or_cli(half: str) -> None:
    if half == "client":
        assert len(modules_under("client")) >= 3
    forbidden = ("catalog_nb.server", "catalog_nb.demo", "catalog_nb.cli")
    assert violations(half, forbidden) == []


def test_client_never_imports_notebook() -> None:
    """The notebook half (audits, exports, drawing) builds on the client, never the reverse."""
    assert violations("client", ("catalog_nb.notebook",)) == []


def test_snapshot_needs_neither_server_nor_notebook() -> None:
    forbidden = ("catalog_nb.server", "catalog_nb.notebook", "catalog_nb.demo", "catalog_nb.cli")
    assert len(modules_under("snapshot")) >= 2
    assert violations("snapshot", forbidden) == []


def test_contract_imports_the_standard_library_only() -> None:
    source = (PACKAGE / "contract.py").read_text()
    imports = imported_modules(source, "catalog_nb.contract")
    tops = {name.split(".")[0] for name in imports}
    assert tops, "contract.py imports nothing at all?"
    outside = sorted(t for t in tops if t not in sys.stdlib_module_names and t != "__future__")
    assert outside == []


@pytest.mark.parametrize(
    ("source", "module", "is_package", "expected"),
    [
        ("import catalog_nb.client.http", "catalog_nb.server.app", False,
         "catalog_nb.client.http"),
        ("from catalog_nb import client", "catalog_nb.server.app", False, "catalog_nb.client"),
        ("from ..client import http", "catalog_nb.server.app", False, "catalog_nb.client"),
        ("from ... import notebook", "catalog_nb.server.routes.users", False,
         "catalog_nb.notebook"),
        ("from .. import server", "catalog_nb.client", True, "catalog_nb.server"),
        ("from .store import users", "catalog_nb.server", True, "catalog_nb.server.store.users"),
        ("def f():\n    from catalog_nb.demo import embedded\n", "catalog_nb.client.x", False,
         "catalog_nb.demo.embedded"),
    ],
)
def test_the_import_resolver_sees_every_form(
    source: str, module: str, is_package: bool, expected: str
) -> None:
    """The checker itself: absolute, ``from`` and relative imports, nested in functions too."""
    assert expected in imported_modules(source, module, is_package)
