"""The layering docs/architecture.md states, checked on the source with ``ast``.

Every subpackage and top-level module of ``leakage`` sits in one layer; an import (at module
level or inside a function) may reach its own layer or a lower one, never a higher one.
Among the subpackages no module-level import cycle is allowed (a function-level import is
allowed sideways, never upwards). The library never imports the service, and the LLM layer
never imports the backends that use it.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from .conftest import REPO
from .test_layout import _cycle

LIBRARY = REPO / "leakage"

LAYERS: dict[str, int] = {
    # 0: foundations (standard library, numpy and pydantic beneath them)
    "errors": 0,
    "paths": 0,
    "variables": 0,
    "_registry": 0,
    "_sqlite": 0,
    "_http": 0,
    "_runtime": 0,
    "runtime": 0,
    "_stats": 0,
    "_split": 0,
    # 1: data and maths: what a game is, what a report is, the posterior engine
    "transcripts": 1,
    "reports": 1,
    "posterior": 1,
    "metrics": 1,
    "corpus": 1,
    "_seats": 1,
    # 2: clients of models: LLMs (local, GGUF, remote), sentence encoders
    "llm": 2,
    "encoders": 2,
    # 3: likelihood backends, behind the protocols and the registry of backends/base.py
    "backends": 3,
    # 4: the scoring spine: transcript -> backend matrix -> posterior -> report, and the
    # seats it scores from (a seat is an input of the posterior, with its open vocabulary)
    "scoring": 4,
    "seats": 4,
    "vocab": 4,
    # 5: what is built on scoring and the backends
    "batch": 5,
    "calibration": 5,
    "curves": 5,
    "reader": 5,
    "games": 5,
    "splits": 5,
    # 6: the command line (the service is a distribution of its own, above it)
    "cli": 6,
    "inspect": 6,
    "textarena": 6,
    "__main__": 6,
}
ROOT = "leakage"  # the package itself: its __init__ is a lazy facade, and __version__


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def _module_name(path: Path) -> str:
    parts = ["leakage", *path.relative_to(LIBRARY).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, name: str | None = None) -> list[tuple[str, int, bool]]:
    """``(module, line, at_import_time)`` for each import in the file (module ``name``);
    ``at_import_time`` is False inside a function. Imports under ``if TYPE_CHECKING`` never
    run: left out. ``from leakage import scoring`` is an import of ``leakage.scoring``."""
    name = name or _module_name(path)
    is_pkg = path.name == "__init__.py"
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, at_import_time: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child, at_import_time)
            return
        if isinstance(node, ast.Import):
            found.extend((a.name, node.lineno, at_import_time) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_pkg else 0)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            subs = [a.name for a in node.names if (LIBRARY / a.name).exists()]
            subs += [a.name for a in node.names if (LIBRARY / f"{a.name}.py").exists()]
            if module == ROOT and subs:
                found.extend((f"{ROOT}.{sub}", node.lineno, at_import_time) for sub in subs)
            else:
                found.append((module, node.lineno, at_import_time))
        inside = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, at_import_time and not inside)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), True)
    return found


def _edges() -> list[tuple[str, str, str, bool]]:
    """``(from unit, to module, "file:line", at import time)`` for every import of a
    leakage or leakage_service module by the library."""
    out = []
    for path in sorted(LIBRARY.rglob("*.py")):
        src = _unit(_module_name(path))
        for module, line, at_import_time in _imports(path):
            if module.split(".")[0] in ("leakage", "leakage_service"):
                where = f"{path.relative_to(REPO)}:{line}"
                out.append((src, module, where, at_import_time))
    return out


def _upward(edges: list[tuple[str, str, str, bool]], layers: dict[str, int]) -> list[str]:
    bad = []
    for src, module, where, _ in edges:
        dst = _unit(module)
        if ROOT in (src, dst) or module.startswith("leakage_service"):
            continue
        if layers[dst] > layers[src]:
            bad.append(
                f"{where}: {src} (layer {layers[src]}) imports {module} (layer {layers[dst]})"
            )
    return bad


def _unit_graph(edges: list[tuple[str, str, str, bool]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for src, module, _, at_import_time in edges:
        graph[src]
        dst = _unit(module)
        if at_import_time and dst != src and not module.startswith("leakage_service"):
            graph[src].add(dst)
    return dict(graph)


def test_every_subpackage_and_module_has_a_layer():
    units = {_unit(_module_name(p)) for p in LIBRARY.rglob("*.py")} - {ROOT}
    assert sorted(units - LAYERS.keys()) == [], "place it in LAYERS and docs/architecture.md"
    assert sorted(LAYERS.keys() - units) == []


def test_imports_never_reach_a_higher_layer():
    assert _upward(_edges(), LAYERS) == []


def test_the_llm_layer_never_imports_the_backends():
    offenders = [
        w for src, module, w, _ in _edges() if src == "llm" and _unit(module) == "backends"
    ]
    assert offenders == []


def test_the_library_never_imports_the_service_not_even_lazily():
    offenders = [w for _, module, w, _ in _edges() if module.split(".")[0] == "leakage_service"]
    assert offenders == []


def test_no_module_level_cycle_between_subpackages():
    assert _cycle(_unit_graph(_edges())) is None


def test_the_checks_find_what_they_look_for():
    # an upward import, a function-level one included, is reported with its place
    edges = [
        ("llm", "leakage.backends.judge", "x.py:3", False),
        ("scoring", "leakage.posterior", "y.py:1", True),
    ]
    assert _upward(edges, LAYERS) == [
        "x.py:3: llm (layer 2) imports leakage.backends.judge (layer 3)"
    ]
    # a sideways pair of module-level imports is a cycle; a function-level one is not
    sideways = [
        ("batch", "leakage.curves", "a.py:1", True),
        ("curves", "leakage.batch._rows", "b.py:9", True),
    ]
    assert _cycle(_unit_graph(sideways)) == ["batch", "curves", "batch"]
    lazy = [sideways[0], (*sideways[1][:3], False)]
    assert _cycle(_unit_graph(lazy)) is None


def test_the_scanner_tells_module_level_from_function_level(tmp_path: Path):
    source = (
        "from typing import TYPE_CHECKING\n"
        "import leakage.errors\n"
        "try:\n    from leakage import posterior\nexcept ImportError:\n    pass\n"
        "if TYPE_CHECKING:\n    from leakage.scoring import Trace\n"
        "class A:\n    from leakage.reports import Report\n"
        "def f():\n    from leakage.backends import base\n"
    )
    path = tmp_path / "_scan_probe.py"
    path.write_text(source, encoding="utf-8")
    assert _imports(path, "leakage.metrics._scan_probe") == [
        ("typing", 1, True),
        ("leakage.errors", 2, True),
        ("leakage.posterior", 4, True),
        ("leakage.reports", 10, True),
        ("leakage.backends", 12, False),
    ]


def test_the_document_shows_each_package_in_its_layer():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    picture = text.split("```")[1]
    lines = {int(m[1]): m[2] for m in re.finditer(r"^\s+(\d)\s+(.*)$", picture, re.M)}
    assert sorted(lines) == sorted(set(LAYERS.values()))
    misplaced = [
        u for u, n in LAYERS.items() if not re.search(rf"(?<![\w.]){re.escape(u)}\b", lines[n])
    ]
    assert misplaced == []
    graph = text.split("## The package graph")[1].split("\n## ")[0]
    assert [u for u in LAYERS if u != "__main__" and f"`{u}`" not in graph] == []
