"""The dependency direction of DESIGN.md: ``notebook -> client -> contract <- server``, with
the offline ``snapshot`` package beside the client (the client writes snapshots, the notebook
reads them).

Every module is parsed with ``ast`` (nothing is imported), and every import, absolute or
relative, is resolved to the module it names. ``demo`` and ``cli`` may use both halves.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "catalog_nb"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_statements(
    source: str, module: str, is_package: bool = False, *, typing_only: bool = True
) -> Iterator[tuple[str, list[str]]]:
    """``(module, names)`` for every import statement of ``source``, relative imports resolved.

    ``import a.b`` gives ``("a.b", [])``; ``from a import b, c`` gives ``("a", ["b", "c"])``.
    Statements at any depth count (inside functions too); with ``typing_only=False`` those under
    ``if TYPE_CHECKING:`` are left out, since they never run.
    """
    package = module if is_package else module.rpartition(".")[0]
    skipped: set[int] = set()
    tree = _parsed(source)
    if not typing_only:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                keep = len(parts) - (node.level - 1)
                assert keep > 0, f"relative import above the top package in {module}"
                base = ".".join(parts[:keep])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            yield target, [alias.name for alias in node.names]


@cache
def _parsed(source: str) -> ast.Module:
    """``source``'s syntax tree, parsed once per process: the checks read every module of the
    package, most of them several times."""
    return ast.parse(source)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def imported_modules(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every module an import statement of ``source`` names, relative imports resolved.

    ``from a import b`` yields both ``a`` and ``a.b`` (``b`` may be a submodule).
    """
    found: set[str] = set()
    for target, names in import_statements(source, module, is_package):
        found.add(target)
        found.update(f"{target}.{name}" for name in names)
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


def import_graph() -> dict[str, set[str]]:
    """Which modules of the package each module of the package imports when it runs.

    An import of a package means its ``__init__``; ``from a import b`` means the submodule
    ``a.b`` when there is one, else ``a`` (``b`` is a name defined there). Imports inside
    functions count (they run sooner or later); ``if TYPE_CHECKING:`` blocks do not.
    """
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        edges: set[str] = set()
        statements = import_statements(
            path.read_text(), name, path.name == "__init__.py", typing_only=False
        )
        for target, names in statements:
            if not names:
                edges.add(target)
            for imported in names:
                edges.add(f"{target}.{imported}" if f"{target}.{imported}" in paths else target)
        graph[name] = {e for e in edges if e in paths and e != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One shortest cycle through each strongly connected group of ``graph`` (Tarjan), then one
    through every further edge inside the group, so each import that closes a loop is named."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 10 * len(graph)))
    try:
        for node in sorted(graph):
            if node not in index:
                connect(node)
    finally:
        sys.setrecursionlimit(old_limit)

    cycles: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for group in groups:
        for start in sorted(group):
            for nxt in sorted(graph[start] & group):
                path = _shortest_path(graph, nxt, start, group)
                cycle = [start, *path[:-1]]
                turn = cycle.index(min(cycle))
                key = tuple(cycle[turn:] + cycle[:turn])
                if key not in seen:
                    seen.add(key)
                    cycles.append([*key, key[0]])
    return cycles


def _shortest_path(
    graph: dict[str, set[str]], start: str, goal: str, within: set[str]
) -> list[str]:
    previous: dict[str, str | None] = {start: None}
    queue = [start]
    for node in queue:
        if node == goal:
            break
        for nxt in sorted(graph[node] & within):
            if nxt not in previous:
                previous[nxt] = node
                queue.append(nxt)
    path: list[str] = []
    step: str | None = goal
    while step is not None:
        path.append(step)
        step = previous[step]
    return path[::-1]


def test_the_package_has_no_import_cycle() -> None:
    """No module imports, directly or through others, a module that imports it back: a cycle
    makes the import order matter and hides which of the two is the lower layer."""
    graph = import_graph()
    assert len(graph) >= 100
    chains = [" -> ".join(m.removeprefix("catalog_nb.") for m in c) for c in import_cycles(graph)]
    assert chains == [], "import cycles:\n" + "\n".join(chains)


def test_the_cycle_finder_names_each_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"f"}, "f": {"e"}}
    assert import_cycles(graph) == [["a", "b", "c", "a"], ["e", "f", "e"]]
    assert import_cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import catalog_nb.x\n", set()),
        ("import typing\nif typing.TYPE_CHECKING:\n    from catalog_nb import x\n", set()),
        ("def f():\n    from catalog_nb import x\n", {"catalog_nb"}),
    ],
)
def test_the_graph_skips_type_checking_blocks_only(source: str, expected: set[str]) -> None:
    found = {t for t, _ in import_statements(source, "catalog_nb.y", typing_only=False)}
    assert found - {"typing"} == expected


def test_no_route_imports_another_route() -> None:
    """Routes are thin: what two routes share is a service (``server.services``) or a schema,
    never one route calling into another."""
    routes = [p for p in modules_under("server/routes") if p.name != "__init__.py"]
    assert len(routes) >= 10
    found = []
    for path in routes:
        name = module_name(path)
        for target in sorted(imported_modules(path.read_text(), name)):
            if target.startswith("catalog_nb.server.routes.") and target != name:
                found.append(f"{path.relative_to(PACKAGE.parent)} imports {target}")
    assert found == []


def test_services_never_import_routes_or_raise_http_errors() -> None:
    """Services sit between routes and store: they raise ``server.errors``, not FastAPI's."""
    assert len(modules_under("server/services")) >= 3
    forbidden = ("catalog_nb.server.routes", "fastapi", "starlette")
    assert violations("server/services", forbidden) == []


def test_the_notebook_session_alone_loads_no_picture_or_widget_library() -> None:
    # The demo server imports the session module; matplotlib and ipywidgets cost it seconds.
    probe = ("import sys, catalog_nb.notebook.session, catalog_nb.demo.run; "
             "print(sorted({'matplotlib', 'ipywidgets'} & set(sys.modules)))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, timeout=120).stdout.strip()
    assert loaded == "[]"
    names = ("import catalog_nb.notebook as nb; from catalog_nb.notebook import *; "
             "print(callable(draw_lineage), nb.FacetSearch.__name__, "
             "set(nb.__all__) <= set(dir(nb)))")
    assert subprocess.run([sys.executable, "-c", names], capture_output=True, text=True,
                          check=True, timeout=120).stdout.split() == ["True", "FacetSearch", "True"]


def test_only_the_spark_modules_import_pyspark() -> None:
    """pyspark (and its JVM) serves PROFILE jobs on Spark only: the client, the service and
    the local engine never load it, not even the job code that hands a job to Spark."""
    allowed = {"catalog_nb/server/spark_session.py", "catalog_nb/server/profiling/spark.py"}
    found = [v for v in violations(".", ("pyspark", "py4j"))
             if v.split(" imports ")[0] not in allowed]
    assert found == []
    probe = ("import sys, catalog_nb, catalog_nb.client, catalog_nb.server.app, "
             "catalog_nb.server.job_work; print(sorted(m for m in sys.modules "
             "if m.split('.')[0] in ('pyspark', 'py4j')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, timeout=120).stdout.strip()
    assert loaded == "[]"
