"""The package's plan, read from its imports: every folder is a layer that imports only
downward, and nothing imports in a circle (lazy and type-checking imports included).

``LAYERS`` is the plan ARCHITECTURE.md draws, bottom first: a module of ``adk_asgi`` may
import its own folder and the folders (or top-level modules) of lower layers, never a
sibling of its own layer nor anything above. Inside every folder, at every depth, the
imports between its children (modules and sub-folders) form no cycle.
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

from support import ROOT

PACKAGE = ROOT / "adk_asgi"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("wire", "observability"),
    ("options",),
    ("transport", "stores"),
    ("pauses",),
    ("translate", "adk"),
    ("history",),
    ("http", "live"),
    ("app",),
    ("middleware", "mount"),
    ("demo",),
    ("cli", "testing"),
    ("__init__", "__main__", "chunks"),
)


def _modules() -> dict[str, Path]:
    """Dotted module names (``adk_asgi.wire.chunks``; a package as its ``__init__``)."""
    found: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        found[".".join(parts)] = path
    return found


@functools.cache
def _imports() -> dict[str, set[str]]:
    """Each module's imports of the package, as module names (``from x import y``: the
    module ``x.y`` when it is one, else ``x``'s ``__init__``). Parsed once per process:
    every test here reads the same graph."""
    modules = _modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        package = name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - node.level + 1]
                    source = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    source = node.module or ""
                targets = [
                    f"{source}.{alias.name}"
                    if f"{source}.{alias.name}" in modules
                    or f"{source}.{alias.name}.__init__" in modules
                    else source
                    for alias in node.names
                ]
            for target in targets:
                if not target.startswith("adk_asgi"):
                    continue
                if f"{target}.__init__" in modules:
                    target = f"{target}.__init__"
                while target not in modules and "." in target:
                    target = target.rsplit(".", 1)[0]  # an attribute of a module
                if target != name:
                    edges[name].add(target)
    return edges


def _child(module: str, folder: tuple[str, ...]) -> str | None:
    """The child of ``folder`` that ``module`` is or is inside (None: outside it)."""
    parts = tuple(module.split("."))
    if parts[: len(folder)] != folder or len(parts) == len(folder):
        return None
    return parts[len(folder)]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_layers_name_every_top_level_folder_and_module() -> None:
    named = {name for layer in LAYERS for name in layer}
    present = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()
    }
    assert present == named, "LAYERS (and ARCHITECTURE.md) must place every top-level part"


def test_every_import_goes_down_the_layers() -> None:
    rank = {name: i for i, layer in enumerate(LAYERS) for name in layer}
    against: list[str] = []
    for module, targets in sorted(_imports().items()):
        mine = _child(module, ("adk_asgi",))
        assert mine is not None
        for target in sorted(targets):
            theirs = _child(target, ("adk_asgi",))
            if theirs is None or theirs == mine:
                continue
            if rank[theirs] >= rank[mine]:
                against.append(f"{module} -> {target}")
    assert against == [], "imports against the layers:\n" + "\n".join(against)


def _folders() -> list[tuple[str, ...]]:
    return sorted(
        tuple(p.parent.relative_to(PACKAGE.parent).parts) for p in PACKAGE.rglob("__init__.py")
    )


@pytest.mark.parametrize("folder", _folders(), ids=".".join)
def test_no_folder_imports_in_a_circle(folder: tuple[str, ...]) -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, targets in _imports().items():
        mine = _child(module, folder)
        if mine is None:
            continue
        for target in targets:
            theirs = _child(target, folder)
            if theirs is not None and theirs != mine:
                graph[mine].add(theirs)
    assert _cycles(graph) == [], f"import cycles among the children of {'.'.join(folder)}"


# -- sizes: split by concept, and the limits that say when to look for one -------------------

MAX_MODULE_LINES = 450
MAX_CLASS_LINES = 250
MAX_FOLDER_MODULES = 15
MAX_README_LINES = 250


def test_no_module_class_or_folder_outgrows_its_limit() -> None:
    over: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        name = str(path.relative_to(PACKAGE.parent))
        if (lines := len(text.splitlines())) > MAX_MODULE_LINES:
            over.append(f"{name}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    over.append(f"{name}: class {node.name} {size} lines")
    for folder in _folders():
        path = PACKAGE.parent.joinpath(*folder)
        if (count := len(list(path.glob("*.py")))) > MAX_FOLDER_MODULES:
            over.append(f"{'/'.join(folder)}: {count} modules")
    readme = len((PACKAGE.parent / "README.md").read_text().splitlines())
    if readme > MAX_README_LINES:
        over.append(f"README.md: {readme} lines")
    assert over == [], "over the limits (ARCHITECTURE.md):\n" + "\n".join(over)
