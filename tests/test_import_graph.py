"""No module of the package imports another that imports it back (issue 14 item 6).

The graph is read from the source with :mod:`ast` (nothing is imported): every ``import`` / ``from ... import`` of an
``hf_bert_tasks`` module, at module level or inside a function, is an edge. ``from pkg import name`` points to the
submodule ``pkg.name`` when there is one, else to ``pkg`` itself (its ``__init__``). Imports under
``if TYPE_CHECKING:`` do not run and are left out. Being a submodule of a package is not an edge: Python runs the
package's ``__init__`` first, but the submodule does not import it unless it says so. Dynamic imports
(``importlib.import_module(f"...")``) cannot be read and are not edges.
"""

from __future__ import annotations

import ast
import itertools
import os
from pathlib import Path

PACKAGE = "hf_bert_tasks"
ROOT = Path(__file__).resolve().parent.parent


def package_modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> source file, for every ``.py`` under ``root/package`` (``__init__.py`` = the package)."""
    modules = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
                continue
            stack.append(child)


def import_edges(modules: dict[str, Path], package: str = PACKAGE) -> dict[str, dict[str, int]]:
    """``{module: {imported module: line of the first such import}}`` within ``package`` (self-imports dropped)."""

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        here = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found: dict[str, int] = {}
        for node in _runtime_nodes(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = here.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                target = known(target)
                if target and target != module and (target == package or target.startswith(package + ".")):
                    found[target] = min(found.get(target, node.lineno), node.lineno)
        edges[module] = found
    return edges


def find_cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """One shortest cycle per strongly connected component with more than one module (Tarjan, then BFS), each as
    ``[a, b, ..., a]``; ``[]`` when the graph has no cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:  # recursive Tarjan; the package's graph is shallow
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    cycles = []
    for component in components:
        start, members = component[0], set(component)
        paths = {start: [start]}
        queue = [start]
        while queue:  # BFS inside the component for the shortest way back to start
            v = queue.pop(0)
            for w in sorted(edges.get(v, {})):
                if w == start:
                    cycles.append(paths[v] + [start])
                    queue = []
                    break
                if w in members and w not in paths:
                    paths[w] = paths[v] + [w]
                    queue.append(w)
    return cycles


def describe(cycle: list[str], edges: dict[str, dict[str, int]], modules: dict[str, Path]) -> str:
    """``a (a.py:12) -> b (b.py:40) -> a``: each module with the line of its import of the next one."""
    steps = [f"{a} ({os.path.relpath(modules[a], ROOT)}:{edges[a][b]})" for a, b in itertools.pairwise(cycle)]
    return " -> ".join(steps + [cycle[-1]])


def test_the_package_has_no_import_cycle():
    modules = package_modules()
    edges = import_edges(modules)
    cycles = find_cycles(edges)
    assert not cycles, (
        "import cycles (break each by moving the shared part into a module both can import):\n"
        + "\n".join(describe(c, edges, modules) for c in cycles)
    )


# ------------------------------------------------------------------ the walker itself, on a literal package
def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_walker_finds_a_cycle_through_a_function_level_import_and_names_the_lines(tmp_path):
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/scripts/__init__.py": "",
            "pkg/scripts/a.py": "import os\nfrom .b import f\n",
            "pkg/scripts/b.py": "def f():\n    from . import a\n    return a\n",
        },
    )
    modules = package_modules(tmp_path, "pkg")
    edges = import_edges(modules, "pkg")
    assert edges["pkg.scripts.a"] == {"pkg.scripts.b": 2}
    assert edges["pkg.scripts.b"] == {"pkg.scripts.a": 2}
    assert find_cycles(edges) == [["pkg.scripts.a", "pkg.scripts.b", "pkg.scripts.a"]]


def test_walker_reads_from_package_import_name_as_the_package_init(tmp_path):
    """``from . import register`` inside ``pkg/tasks/glue.py`` imports ``pkg/tasks/__init__.py`` (which imports glue
    back): the registry pattern that ``hf_bert_tasks/tasks/registry.py`` avoids."""
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/tasks/__init__.py": "def register(t): pass\nfrom . import glue\n",
            "pkg/tasks/glue.py": "from . import register\n",
        },
    )
    edges = import_edges(package_modules(tmp_path, "pkg"), "pkg")
    assert find_cycles(edges) == [["pkg.tasks", "pkg.tasks.glue", "pkg.tasks"]]


def test_walker_ignores_type_checking_imports_other_packages_and_package_membership(tmp_path):
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "from .sub import x\n",
            "pkg/sub/__init__.py": "x = 1\nfrom . import leaf\n",
            "pkg/sub/leaf.py": (
                "from typing import TYPE_CHECKING\nimport json\nfrom ..other import y\n"
                "if TYPE_CHECKING:\n    from pkg.sub import x\n"
            ),
            "pkg/other.py": "y = 2\n",
        },
    )
    edges = import_edges(package_modules(tmp_path, "pkg"), "pkg")
    assert edges == {
        "pkg": {"pkg.sub": 1},
        "pkg.sub": {"pkg.sub.leaf": 2},
        "pkg.sub.leaf": {"pkg.other": 3},
        "pkg.other": {},
    }
    assert find_cycles(edges) == []
