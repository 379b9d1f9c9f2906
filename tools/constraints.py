"""The pinned versions a fresh set-up installs (``constraints.txt``), and how the newest ones
differ from them. Standard library only.

    python3 tools/constraints.py diff .venv-latest/bin/python   # what the newest versions change
    python3 tools/constraints.py write .venv-latest/bin/python  # pin them (after a green suite)

``make demo``, ``make test`` and the Docker image install with ``pip install -c
constraints.txt``: the package metadata keeps honest ranges (``transformers>=4.57,<6``), and the
constraints file says which release of each package the suite last passed with, so that a
release published after a landing cannot turn a fresh machine red. ``make test-latest``
installs the newest versions the ranges allow into ``.venv-latest``, prints ``diff`` and runs
the suite there; ``make lock`` writes the file from that environment once it passed.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

CONSTRAINTS = Path(__file__).resolve().parent.parent / "constraints.txt"

HEADER = """\
# The versions `make demo`, `make test` and the Docker image install (pip install -c): the
# newest releases the pyproject ranges allowed when the whole suite last passed with them.
# Written by `make lock` after `make test-latest` (tools/constraints.py); never by hand.
# Python {python}, {platform}.
"""

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
_OWN = {"leakage", "leakage-service"}


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lines: list[str]) -> dict[str, str]:
    """``name -> version`` of the ``name==version`` lines (comments and the project's own
    distributions left out)."""
    out: dict[str, str] = {}
    for line in lines:
        match = _PIN.match(line.strip())
        if match and _normalise(match.group(1)) not in _OWN:
            # a local label (torch's "+cpu") is left out: ==2.13.0 takes the CPU build on this
            # disk and the index's release alike, which ==2.13.0+cpu would not
            out[_normalise(match.group(1))] = match.group(2).split("+", 1)[0]
    return out


def frozen(python: str) -> dict[str, str]:
    """What ``pip freeze`` says the environment of ``python`` holds (pip included)."""
    text = subprocess.run(
        [python, "-m", "pip", "freeze", "--all", "--exclude-editable"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return pins(text.splitlines())


def changes(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """One line per package whose pinned version the new environment changes, adds or drops."""
    out = []
    for name in sorted(old.keys() | new.keys()):
        before, after = old.get(name), new.get(name)
        if before == after:
            continue
        if before is None:
            out.append(f"  + {name} {after}")
        elif after is None:
            out.append(f"  - {name} {before}")
        else:
            out.append(f"  ~ {name} {before} -> {after}")
    return out


def _python_of(python: str) -> tuple[str, str]:
    code = "import platform, sys; print(sys.version.split()[0]); print(platform.machine())"
    out = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True)
    version, machine = out.stdout.split()
    return version, f"{sys.platform} {machine}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("diff", "write"))
    parser.add_argument("python", help="the interpreter of the environment to read")
    parser.add_argument("--constraints", type=Path, default=CONSTRAINTS)
    args = parser.parse_args(argv)
    new = frozen(args.python)
    if args.command == "diff":
        old = pins(args.constraints.read_text(encoding="utf-8").splitlines())
        lines = changes(old, new)
        found = f"{len(lines)} change(s)" if lines else "no change"
        print(f"newest versions against {args.constraints.name}: {found}", *lines, sep="\n")
        return 0
    version, platform = _python_of(args.python)
    body = "".join(f"{name}=={v}\n" for name, v in sorted(new.items()))
    args.constraints.write_text(
        HEADER.format(python=version, platform=platform) + body, encoding="utf-8"
    )
    print(f"wrote {args.constraints} ({len(new)} pins)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
