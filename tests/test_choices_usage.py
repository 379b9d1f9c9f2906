"""Choices checked where the command line reads them: a value the library does not know is a
usage error (exit code 2, one line naming the option) before anything is built or read."""

from __future__ import annotations

from pathlib import Path

from .conftest import EXAMPLES
from .test_cli import run

GAME = str(EXAMPLES / "chameleon_sports.json")


def _error_line(stderr: str) -> str:
    (line,) = [x for x in stderr.splitlines() if "Invalid value" in x]
    return line


def test_a_role_of_the_other_game_is_a_usage_error(tmp_path: Path):
    args = ("cheatsheet-tournament", "chameleon", "--agents", "non-chameleon=llm")
    p = run(*args, "--role", "spy", home=tmp_path)
    assert p.returncode == 2, p.stderr
    line = _error_line(p.stderr)
    assert "--role" in line and "'spy' is not a role of chameleon" in line
    assert "Traceback" not in p.stderr and list(tmp_path.iterdir()) == []


def test_a_member_that_is_no_backend_is_a_usage_error(tmp_path: Path):
    p = run("calibrate", GAME, "--members", "cooccurrence,nope", home=tmp_path)
    assert p.returncode == 2, p.stderr
    line = _error_line(p.stderr)
    assert "--members" in line and "no backend 'nope'" in line and "embedding" in line
    p = run("calibrate", GAME, "--members", "embedding,embedding", home=tmp_path)
    assert p.returncode == 2 and "listed twice" in _error_line(p.stderr)
