"""The ``leakage`` command run as a user runs it: a subprocess of this Python."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click.testing


def run_leakage(
    *args: str,
    home: Path,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    errors: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m leakage ARGS`` with ``LEAKAGE_HOME=home``, wide output (``COLUMNS=200``)
    and ``env`` added to this environment; its output captured as text (``errors``: how
    undecodable bytes are read, as ``open`` takes it)."""
    return subprocess.run(
        [sys.executable, "-m", "leakage", *args],
        capture_output=True,
        text=True,
        errors=errors,
        env={**os.environ, "LEAKAGE_HOME": str(home), "COLUMNS": "200", **(env or {})},
        timeout=timeout,
    )


def invoke_leakage(
    *args: str, home: Path | None = None, env: dict[str, str] | None = None
) -> click.testing.Result:
    """``leakage ARGS`` in this process (typer's ``CliRunner``: what this process has imported
    already, torch and the models, is not loaded again), with ``LEAKAGE_HOME=home`` when
    given and ``env`` added; an exception other than the command's own exit is raised, not
    returned in the result."""
    from typer.testing import CliRunner

    from leakage.cli import app

    home_env = {"LEAKAGE_HOME": str(home)} if home is not None else {}
    result = CliRunner().invoke(app, list(args), env={**home_env, **(env or {})})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result
