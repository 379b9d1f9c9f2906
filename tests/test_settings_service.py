"""The service's settings are a pydantic-settings ``BaseSettings`` read by ``from_env`` alone:
a ``Settings`` built directly takes the values it is given, whatever the environment says,
and ``from_env`` reads ``os.environ`` (or the mapping it is given) with the service's syntax
(names checked first, blank values unset, comma- and ``os.pathsep``-separated lists)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from leakage.errors import InvalidInput
from leakage.paths import default_home
from leakage_service.settings import Settings


def test_settings_are_a_pydantic_settings_model():
    assert issubclass(Settings, BaseSettings)
    assert Settings.model_config["env_prefix"] == "LEAKAGE_"


def test_built_directly_they_read_no_variable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("LEAKAGE_WORKERS", "5")
    monkeypatch.setenv("LEAKAGE_HOME", str(tmp_path))
    assert (Settings().workers, Settings().home) == (2, default_home())
    assert Settings(home=tmp_path / "h").workers == 2


def test_from_env_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    for name in [n for n in os.environ if n.upper().startswith("LEAKAGE_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("LEAKAGE_WORKERS", " 5 ")
    monkeypatch.setenv("LEAKAGE_HOME", str(tmp_path))
    monkeypatch.setenv("LEAKAGE_BACKENDS", "cooccurrence, ,judge")
    monkeypatch.setenv("LEAKAGE_CORS_ORIGINS", "  ")
    s = Settings.from_env(workers=None)
    assert (s.workers, s.home, s.backends, s.cors_origins) == (
        5,
        tmp_path,
        ["cooccurrence", "judge"],
        [],
    )
    # an override wins over the variable
    assert Settings.from_env(workers=3).workers == 3


def test_lists_are_comma_separated_not_json():
    s = Settings.from_env(
        {
            "LEAKAGE_PRELOAD": "cooccurrence",
            "LEAKAGE_API_KEYS": "k1,k2",
            "LEAKAGE_ALLOWED_PATHS": os.pathsep.join(["/data", " /logs "]),
        }
    )
    assert (s.preload, s.api_keys) == (["cooccurrence"], ["k1", "k2"])
    assert s.allowed_paths == [Path("/data"), Path("/logs")]
    with pytest.raises(InvalidInput, match=r"LEAKAGE_API_KEYS\.0: String should match"):
        Settings.from_env({"LEAKAGE_API_KEYS": '["k1"] x'})


def test_a_bad_value_names_every_variable_at_fault():
    with pytest.raises(InvalidInput) as err:
        Settings.from_env({"LEAKAGE_RATE_LIMIT": "-1", "LEAKAGE_ON_RESTART": "later"})
    assert str(err.value) == (
        "bad service setting: LEAKAGE_RATE_LIMIT: Input should be greater than or equal to 0; "
        "LEAKAGE_ON_RESTART: Input should be 'resume' or 'fail'"
    )


def test_the_library_variables_are_settings_handed_to_the_backends(
    from_env_refused: pytest.MonkeyPatch, tmp_path: Path, default_index: Path
):
    """The web keys and the LLM endpoint are read by the settings (keys hidden) and given to
    the backends explicitly: the library's ``from_env`` factories never run in the service."""
    from leakage.backends import create_backend
    from leakage_service.runtime import Backends
    from leakage_service.telemetry import Metrics
    from tests.test_service import Api, settings_for

    env = {
        "LEAKAGE_HOME": str(tmp_path),
        "LEAKAGE_INDEX": str(default_index),
        "SERPAPI_API_KEY": " serp-secret ",
        "LEAKAGE_LLM_MODEL": "served-model",
        "LEAKAGE_LLM_API_KEY": "llm-secret",
        "google_api_key": "lower case: not the variable's name",
    }
    s = Settings.from_env(env)
    assert s.variables() == {
        "SERPAPI_API_KEY": "serp-secret",
        "LEAKAGE_LLM_MODEL": "served-model",
        "LEAKAGE_LLM_API_KEY": "llm-secret",
    }
    assert "serp-secret" not in repr(s) and "llm-secret" not in repr(s)
    with pytest.raises(InvalidInput, match="LEAKAGE_SERPAPI_API_KEY"):
        Settings.from_env({"LEAKAGE_SERPAPI_API_KEY": "k"})  # not a setting's name
    options = Backends(s, Metrics()).options
    assert options("judge")["variables"] == s.variables()
    assert options("ensemble")["cooccurrence"]["variables"] == s.variables()
    backend = create_backend("cooccurrence", **{**options("cooccurrence"), "source": "serpapi"})
    try:
        assert backend.source._api_key == "serp-secret"  # type: ignore[attr-defined]
    finally:
        backend.close()  # type: ignore[attr-defined]
    judge = create_backend("judge", **options("judge"), endpoint="http://127.0.0.1:9/v1")
    assert (judge.client.model, judge.client._api_key) == ("served-model", "llm-secret")  # type: ignore[attr-defined]

    # /v1/backends says a source is configured by the settings, whatever the environment says
    from_env_refused.delenv("SERPAPI_API_KEY", raising=False)
    api = Api(settings_for(tmp_path, default_index, serpapi_api_key="k"))
    try:
        sources = {x["name"]: x for x in api.get("/v1/backends").json()["count_sources"]}
        assert sources["serpapi"]["configured"] is True
        assert sources["google-cse"]["configured"] is False
    finally:
        api.close()


def test_trusted_proxies_are_addresses_or_networks_and_none_by_default():
    assert Settings().trusted_proxies == [] and Settings.from_env({}).trusted_proxies == []
    assert Settings.from_env({"LEAKAGE_TRUSTED_PROXIES": "  "}).trusted_proxies == []
    s = Settings.from_env({"LEAKAGE_TRUSTED_PROXIES": " 10.0.0.5, ,172.16.0.0/12,::1 "})
    assert s.trusted_proxies == ["10.0.0.5", "172.16.0.0/12", "::1"]
    # uvicorn would take these as names no peer has: trusting nobody, silently
    for value, fault, hint in [
        ("10.0.0.5,proxy.local", "LEAKAGE_TRUSTED_PROXIES.1", "e.g. 10.0.0.5"),
        ("10.0.0.1/8", "LEAKAGE_TRUSTED_PROXIES.0", "did you mean 10.0.0.0/8?"),
    ]:
        with pytest.raises(InvalidInput, match=re.escape(fault)) as err:
            Settings.from_env({"LEAKAGE_TRUSTED_PROXIES": value})
        assert hint in str(err.value)


def test_uvicorn_believes_forwarded_headers_from_the_named_proxies_only():
    from leakage_service.server import proxy_options

    # uvicorn's default (proxy_headers=True, 127.0.0.1) is never left in place
    assert proxy_options(Settings()) == {"proxy_headers": False, "forwarded_allow_ips": []}
    named = proxy_options(Settings(trusted_proxies=["10.0.0.5", "::1"]))
    assert named == {"proxy_headers": True, "forwarded_allow_ips": ["10.0.0.5", "::1"]}
    # "*" trusts every peer only alone; in a list uvicorn reads it as a name
    every = proxy_options(Settings(trusted_proxies=["10.0.0.5", "*"]))
    assert every == {"proxy_headers": True, "forwarded_allow_ips": ["*"]}
