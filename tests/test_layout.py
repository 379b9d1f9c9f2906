"""The package layout the design asks for: the library never imports the HTTP service, neither
package has an import cycle between its modules (at module level, nor once the imports inside
functions are counted), and the service, the benchmarks and the tools use the library's public
names only.

A registry's built-in entry (``"leakage.backends.embedding:_embedding"``) is not counted as an
import: it is a plug-in looked up by name, as an entry point is, and the module that holds a
protocol and its registry (``backends/base.py``) is imported by every implementation by design.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from .conftest import REPO

PACKAGES = {"leakage": REPO / "leakage", "leakage_service": REPO / "service" / "leakage_service"}


def _module_name(package: str, root: Path, path: Path) -> str:
    parts = [package, *path.relative_to(root).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.Module, *, functions: bool) -> list[ast.AST]:
    """The statements whose imports run: at import time (top level, ``try`` and ``if``
    bodies, class bodies), and with ``functions`` those inside functions too; never those
    under ``if TYPE_CHECKING``."""
    out: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        out.append(node)
        if not functions and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return out


def _reexports(package: str) -> dict[str, dict[str, str]]:
    """Package -> name -> the module its ``__init__`` imports the name from (``from
    leakage.transcripts import loads`` depends on ``leakage.transcripts._json``)."""
    root = PACKAGES[package]
    out: dict[str, dict[str, str]] = {}
    for path in sorted(root.rglob("__init__.py")):
        name = _module_name(package, root, path)
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    out.setdefault(name, {})[a.asname or a.name] = node.module
    return out


def _imports(package: str, *, functions: bool = False) -> dict[str, set[str]]:
    """Module -> the modules it imports at import time (top level, not inside functions or
    ``if TYPE_CHECKING``), resolved to modules of any package; with ``functions``, also those
    imported inside functions and, for a name imported from a package, the module the
    package re-exports it from."""
    root = PACKAGES[package]
    reexports = _reexports(package) if functions else {}
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        name = _module_name(package, root, path)
        is_pkg = path.name == "__init__.py"
        found: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _nodes(tree, functions=functions) if functions else tree.body:
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
                if mod != name:
                    found |= {
                        reexports[mod][a.name]
                        for a in node.names
                        if a.name in reexports.get(mod, {})
                    }
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


@pytest.mark.parametrize("package", ["leakage", "leakage_service"])
@pytest.mark.parametrize("functions", [False, True], ids=["module-level", "function-level"])
def test_no_import_cycles(package: str, functions: bool):
    assert _cycle(_imports(package, functions=functions)) is None


def test_function_level_imports_and_reexports_are_read(tmp_path: Path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg._impl import thing\n")
    (pkg / "_impl.py").write_text("def f():\n    from pkg.b import g\n")
    (pkg / "b.py").write_text("from pkg import thing\n")
    monkeypatch.setitem(PACKAGES, "pkg", pkg)
    assert _cycle(_imports("pkg")) is None
    graph = _imports("pkg", functions=True)
    assert "pkg._impl" in graph["pkg.b"]  # through the package's re-export
    assert _cycle(graph) == ["pkg._impl", "pkg.b", "pkg._impl"]


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


BOUNDARY = {"service": REPO / "service", "benchmarks": REPO / "benchmarks", "tools": REPO / "tools"}
"""Code across the library's boundary: it may use what a package exports, nothing private."""
CODE_STRING = re.compile(r"^\s*(?:from|import)\s+([\w.]+)(?:\s+import\s+([\w\s,()]+))?")
"""Python source in a string (``python -c "from leakage.x import y"``)."""


def _private(module: str, names: list[str]) -> bool:
    """Whether importing ``names`` from ``module`` (``[]``: the module itself) reaches a private
    module (a part after the package's name starting with ``_``) or a private name."""
    parts = module.split(".")
    return any(p.startswith("_") and p != "__main__" for p in parts[1:]) or any(
        n.startswith("_") and not n.startswith("__") for n in names
    )


def _boundary_imports(path: Path) -> list[tuple[str, list[str], int]]:
    """``(module, names, line)`` of every import in the file, at module or function level,
    ``if TYPE_CHECKING`` included, and of ``importlib.import_module("...")`` calls and code
    strings (``"from leakage._x import y"``)."""
    found: list[tuple[str, list[str], int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            found.append((node.module or "", [a.name for a in node.names], node.lineno))
        elif isinstance(node, ast.Call) and node.args:
            func, arg = node.func, node.args[0]
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "import_module" and isinstance(arg, ast.Constant):
                found.append((str(arg.value), [], node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for line in node.value.splitlines():
                if m := CODE_STRING.match(line):
                    names = re.findall(r"\w+", m[2] or "")
                    found.append((m[1], names, node.lineno))
    return found


def _boundary_offenders(paths: list[Path], root: Path = REPO) -> list[str]:
    """``file:line: module (names)`` for each import from outside the library of a private
    ``leakage`` module or name, and of a private benchmark module or name from outside the
    package that holds it (``benchmarks.studies`` may use ``benchmarks.studies._wordnet``;
    no module may take another's private name)."""
    bad = []
    for path in paths:
        where = path.relative_to(root)
        own = ".".join(where.parent.parts)  # benchmarks/studies/x.py: benchmarks.studies
        for module, names, line in sorted(_boundary_imports(path), key=lambda f: f[2]):
            top = module.split(".")[0]
            if top == "leakage" and _private(module, names):
                bad.append(f"{where}:{line}: {module} ({', '.join(names)})")
            elif top == "benchmarks":
                package, _, last = module.rpartition(".")
                inside = (
                    package == own
                    and last.startswith("_")
                    and not any(n.startswith("_") and not n.startswith("__") for n in names)
                )
                if _private(module, names) and not inside:
                    bad.append(f"{where}:{line}: {module} ({', '.join(names)})")
    return bad


@pytest.mark.parametrize("part", sorted(BOUNDARY))
def test_across_the_boundary_only_public_names(part: str):
    assert _boundary_offenders(sorted(BOUNDARY[part].rglob("*.py"))) == []


def test_the_boundary_check_finds_private_imports(tmp_path: Path):
    probe = tmp_path / "benchmarks" / "studies" / "_boundary_probe.py"
    source = (
        "import importlib\n"
        "from leakage.transcripts import loads\n"
        "from leakage.batch import run_batch as _run\n"
        "from benchmarks.studies._wordnet import WordNet\n"
        "from benchmarks.common import write_result\n"
        "def f():\n"
        "    from leakage.batch._rows import row_context\n"
        "    from leakage.curves import _colours\n"
        "    from benchmarks._games import generate_games\n"
        "    from benchmarks.studies.chameleon_cards import _fold\n"
        "    importlib.import_module('leakage._runtime')\n"
        "CODE = 'import sys\\nfrom leakage.llm._gguf import resolve_source'\n"
    )
    probe.parent.mkdir(parents=True)
    probe.write_text(source, encoding="utf-8")
    assert _boundary_offenders([probe], tmp_path) == [
        "benchmarks/studies/_boundary_probe.py:7: leakage.batch._rows (row_context)",
        "benchmarks/studies/_boundary_probe.py:8: leakage.curves (_colours)",
        "benchmarks/studies/_boundary_probe.py:9: benchmarks._games (generate_games)",
        "benchmarks/studies/_boundary_probe.py:10: benchmarks.studies.chameleon_cards (_fold)",
        "benchmarks/studies/_boundary_probe.py:11: leakage._runtime ()",
        "benchmarks/studies/_boundary_probe.py:12: leakage.llm._gguf (resolve_source)",
    ]
