"""Print the third-party requirements of pyproject.toml files, one per line, for
``pip install -r``: each project's dependencies plus the chosen extras of the first one,
without the projects themselves (they are installed afterwards with ``--no-deps``).

    python3 docker/requirements.py pyproject.toml service/pyproject.toml --extras embedding,llm

The Dockerfile installs these in a layer of their own, before the code is copied, so that a
code change does not reinstall them. Standard library only (it runs before anything is
installed); an extra that refers to its own project (``leakage[embedding]``) is expanded.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _split(requirement: str) -> tuple[str, list[str]]:
    """The normalised name and the extras of a PEP 508 requirement."""
    match = _NAME.match(requirement)
    if not match:
        raise SystemExit(f"cannot read the requirement {requirement!r}")
    extras = [e.strip() for e in (match.group(2) or "").split(",") if e.strip()]
    return _normalise(match.group(1)), extras


def requirements(paths: list[Path], extras: list[str]) -> list[str]:
    projects = {}
    for path in paths:
        try:
            project = tomllib.loads(path.read_text(encoding="utf-8"))["project"]
        except (OSError, tomllib.TOMLDecodeError, KeyError) as err:
            raise SystemExit(f"{path}: cannot read [project]: {err}") from None
        projects[_normalise(project["name"])] = project
    first = next(iter(projects))
    out: list[str] = []
    seen_extras: set[tuple[str, str]] = set()

    def add(reqs: list[str]) -> None:
        for req in reqs:
            name, req_extras = _split(req)
            if name in projects:  # one of ours: installed from source, but its extras count
                for extra in req_extras:
                    add_extra(name, extra, source=req)
            elif req not in out:
                out.append(req)

    def add_extra(project: str, extra: str, source: str) -> None:
        if (project, extra) in seen_extras:
            return
        seen_extras.add((project, extra))
        optional = projects[project].get("optional-dependencies", {})
        if extra not in optional:
            known = ", ".join(sorted(optional)) or "none"
            raise SystemExit(f"{source}: {project} has no extra {extra!r} (extras: {known})")
        add(optional[extra])

    for project in projects.values():
        add(project.get("dependencies", []))
    for extra in extras:
        add_extra(first, extra, source="--extras")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pyproject", nargs="+", type=Path, help="pyproject.toml files")
    parser.add_argument("--extras", default="", help="comma-separated extras of the first")
    args = parser.parse_args(argv)
    extras = [e.strip() for e in args.extras.split(",") if e.strip()]
    print("\n".join(requirements(args.pyproject, extras)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
