"""The command line reads ``LEAKAGE_HOME`` through its pydantic-settings model
(``leakage.cli._settings.CliSettings``), loaded only when a ``LEAKAGE_*`` variable is set:
without one, ``cli_paths`` gives the model's defaults without importing pydantic-settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings
from typer.testing import CliRunner

from leakage.cli import app, cli_paths
from leakage.cli._settings import CliSettings
from leakage.errors import CorpusError
from leakage.paths import Paths, default_home


@pytest.fixture
def no_leakage_variables(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in [n for n in os.environ if n.upper().startswith("LEAKAGE_")]:
        monkeypatch.delenv(name)
    return monkeypatch


def test_without_variables_the_paths_are_the_settings_defaults(no_leakage_variables):
    assert issubclass(CliSettings, BaseSettings)
    assert cli_paths() == CliSettings().paths == Paths(default_home())


@pytest.mark.parametrize(
    ("value", "home"),
    [("/srv/leakage", Path("/srv/leakage")), ("  ", None), ("~/h", Path.home() / "h")],
)
def test_leakage_home_is_read_each_time(no_leakage_variables, value: str, home: Path | None):
    no_leakage_variables.setenv("LEAKAGE_HOME", value)
    assert cli_paths() == Paths(home or default_home())
    no_leakage_variables.setenv("LEAKAGE_HOME", "/elsewhere")
    assert cli_paths().home == Path("/elsewhere")


def test_names_are_case_sensitive_and_other_variables_ignored(no_leakage_variables):
    no_leakage_variables.setenv("leakage_home", "/lower")
    no_leakage_variables.setenv("LEAKAGE_API_KEYS", "k")  # the service's, not the CLI's
    assert cli_paths().home == default_home()


def test_a_command_uses_the_home_of_its_environment(tmp_path: Path):
    r = CliRunner().invoke(app, ["corpus", "info"], env={"LEAKAGE_HOME": str(tmp_path)})
    assert isinstance(r.exception, CorpusError)  # main() makes it exit code 6
    assert str(tmp_path / "corpus" / "default.sqlite") in str(r.exception)


_SCRIPT = """
import json, sys
from leakage.cli import cli_paths
home = str(cli_paths().home)
print(json.dumps([home, "pydantic_settings" in sys.modules]))
"""


def _fresh(env: dict[str, str]) -> tuple[str, bool]:
    base = {k: v for k, v in os.environ.items() if not k.upper().startswith("LEAKAGE_")}
    p = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=120,
        check=True,
    )
    home, loaded = json.loads(p.stdout)
    return home, loaded


def test_pydantic_settings_is_imported_only_when_a_variable_is_set(tmp_path: Path):
    assert _fresh({}) == (str(default_home()), False)
    assert _fresh({"LEAKAGE_HOME": str(tmp_path)}) == (str(tmp_path), True)
