"""The package layout the design asks for: the library never imports the HTTP service, and
neither package has an import cycle between its modules."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .conftest import REPO

PACKAGES = {"leakage": REPO / "leakage", "leakage_service": REPO / "service" / "leakage_service"}


def _module_name(package: str, root: Path, path: Path) -> str:
    parts = [package, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(package: str) -> dict[str, set[str]]:
    """Module -> the modules it imports at import time (top level, not inside functions or
    ``if TYPE_CHECKING``), resolved to modules of any package."""
    root = PACKAGES[package]
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        name = _module_name(package, root, path)
        is_pkg = path.name == "__init__.py"
        found: set[str] = set()
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".")
                    base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                    mod = ".".join([*base, node.module] if node.module else base)
                else:
                    mod = node.module or ""
                found.add(mod)
                found |= {f"{mod}.{a.name}" for a in node.names}
        graph[name] = found
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    edges = {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}
    # a package's __init__ importing its own submodules is how packages re-export: only
    # module -> module edges between siblings and across subpackages count
    edges = {m: {d for d in deps if not d.startswith(m + ".")} for m, deps in edges.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(edges[m]):
            if state.get(d) == 1:
                return [*stack[stack.index(d) :], d]
            if d not in state and (found := visit(d)):
                return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(edges):
        if m not in state and (found := visit(m)):
            return found
    return None


def test_the_library_never_imports_the_service():
    offenders = [
        (module, dep)
        for module, deps in _imports("leakage").items()
        for dep in deps
        if dep == "leakage_service" or dep.startswith("leakage_service.")
    ]
    assert offenders == []


@pytest.mark.parametrize("package", ["leakage_service"])
def test_no_import_cycles(package: str):
    assert _cycle(_imports(package)) is None


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
