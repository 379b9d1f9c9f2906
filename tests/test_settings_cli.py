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


# -- the library's variables: read here, handed to the library ------------------------------

_LIBRARY_VARIABLES = (
    "LEAKAGE_LLM_BASE_URL",
    "LEAKAGE_LLM_MODEL",
    "LEAKAGE_LLM_API_KEY",
    "OPENAI_API_KEY",
    "SERPAPI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_CSE_ID",
)


@pytest.fixture
def no_from_env(from_env_refused: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """The library's ``from_env`` factories fail (``from_env_refused``) and none of the
    variables is set: what the command line opens must get its keys from its settings."""
    monkeypatch = from_env_refused
    for name in [n for n in os.environ if n.startswith("LEAKAGE_") or n in _LIBRARY_VARIABLES]:
        monkeypatch.delenv(name)
    return monkeypatch


def test_the_settings_read_every_library_variable_and_hide_the_keys(no_from_env):
    from leakage.cli import OTHER_VARIABLES, cli_variables

    values = {name: f"value-of-{name}" for name in _LIBRARY_VARIABLES}
    for name, value in values.items():
        no_from_env.setenv(name, f" {value} ")
    no_from_env.setenv("serpapi_api_key", "lower-case-is-not-the-name")
    settings = CliSettings()
    assert settings.variables() == values == cli_variables()
    for secret in ("LEAKAGE_LLM_API_KEY", "OPENAI_API_KEY", "SERPAPI_API_KEY", "GOOGLE_API_KEY"):
        assert values[secret] not in repr(settings) and values[secret] not in str(settings)
    # the variables whose being set loads the settings: every one they read
    aliases = {f.validation_alias for f in CliSettings.model_fields.values()}
    assert aliases - {n for n in aliases if str(n).startswith("LEAKAGE_")} == set(OTHER_VARIABLES)
    no_from_env.setenv("SERPAPI_API_KEY", "  ")
    assert "SERPAPI_API_KEY" not in cli_variables()


def test_score_hands_the_web_key_to_the_library(no_from_env, tmp_path: Path):
    from tests.conftest import EXAMPLES
    from tests.fakes.web_apis import SERPAPI_KEY, FakeWebApis

    game = str(EXAMPLES / "chameleon_sports.json")
    with FakeWebApis() as fake:
        args = ["score", game, "--source", "serpapi", "--endpoint", fake.serpapi_url]
        env = {"LEAKAGE_HOME": str(tmp_path), "SERPAPI_API_KEY": SERPAPI_KEY}
        r = CliRunner().invoke(app, [*args, "--dry-run"], env=env)
        assert r.exit_code == 0, r.output
        assert "1 games need" in r.output and fake.hits() == 0
        r = CliRunner().invoke(app, [*args, "-f", "json"], env=env)
        assert r.exit_code == 0, r.output
        assert fake.hits() > 0  # the key the settings read was accepted by the fake API
        # without the key: the library's message, naming the variable, as before
        r = CliRunner().invoke(app, args, env={"LEAKAGE_HOME": str(tmp_path)})
        assert "SERPAPI_API_KEY" in str(r.exception)
        assert "from_env" not in str(r.exception)


def test_the_judges_endpoint_settings_reach_the_llm_client(no_from_env):
    from leakage.backends import create_backend
    from leakage.cli._options import with_variables

    no_from_env.setenv("LEAKAGE_LLM_MODEL", "served-model")
    no_from_env.setenv("OPENAI_API_KEY", "sk-test")
    options = with_variables("judge", {"endpoint": "http://127.0.0.1:9/v1"})
    judge = create_backend("judge", **options)
    client = judge.client  # type: ignore[attr-defined]
    assert (client.base_url, client.model, client._api_key) == (
        "http://127.0.0.1:9/v1",
        "served-model",
        "sk-test",
    )
    # an explicit option beats the environment
    options = with_variables("judge", {"endpoint": "http://127.0.0.1:9/v1", "model": "m2"})
    assert create_backend("judge", **options).client.model == "m2"  # type: ignore[attr-defined]
    # an ensemble: each member that takes the variables gets them
    routed = with_variables("ensemble", {})
    assert routed["cooccurrence"]["variables"]["OPENAI_API_KEY"] == "sk-test"
    assert "variables" not in routed.get("embedding", {})


def test_leakage_guess_loads_no_settings_for_a_key_variable(tmp_path: Path):
    """A key variable (not LEAKAGE_*) does not make paths load pydantic-settings."""
    assert _fresh({"SERPAPI_API_KEY": "k", "OPENAI_API_KEY": "k"}) == (
        str(default_home()),
        False,
    )
