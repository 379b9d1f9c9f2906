"""Every file a service backend keeps lies under ``Settings.home``: ``Backends.options``
gives each backend the location ``Paths(home)`` names for it, under an option name its
factory takes (checked as ``create_backend`` checks options)."""

from __future__ import annotations

from pathlib import Path

import pytest

from leakage.backends import backend_names, create_backend
from leakage.backends.base import BACKENDS, _checked
from leakage.backends.ensemble import route_options
from leakage.paths import Paths
from leakage_service.runtime import Backends
from leakage_service.settings import Settings
from leakage_service.telemetry import Metrics

EXPECTED = {
    "cooccurrence": {"index": "index", "cache_path": "web_counts"},
    "embedding": {"cache_path": "embeddings"},
    "answers": {"cache_path": "embeddings"},
    "judge": {"cache_path": "llm_responses", "models_dir": "models"},
    "listener": {"cache_path": "llm_responses", "models_dir": "models"},
}
"""Each backend's path options and the ``Paths`` attribute each must be."""


def backends_at(home: Path) -> Backends:
    return Backends(Settings(home=home), Metrics())


def under(path: object, home: Path) -> bool:
    return Path(str(path)).resolve().is_relative_to(home.resolve())


def path_options(options: dict) -> dict:
    """The options that name files: all but ``variables`` (the settings' keys and endpoint,
    handed to the backends that read them)."""
    return {k: v for k, v in options.items() if k != "variables"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_backend_gets_its_paths_under_the_home(name, tmp_path):
    options = backends_at(tmp_path).options(name)
    paths = Paths(tmp_path)
    assert {k: Path(str(v)) for k, v in path_options(options).items()} == {
        k: getattr(paths, attr) for k, attr in EXPECTED[name].items()
    }
    # the names are options the factory takes (a misspelt one is InvalidInput here)
    _checked(name, BACKENDS[name], options)


def test_every_registered_backend_keeps_its_files_under_the_home(tmp_path):
    backends = backends_at(tmp_path)
    for name in backend_names():
        options = backends.options(name)
        members = options if name == "ensemble" else {name: options}
        for member, opts in members.items():
            assert all(under(v, tmp_path) for v in path_options(opts).values()), (
                name,
                member,
                opts,
            )
        if name != "ensemble":
            _checked(name, BACKENDS[name], options)


def test_the_ensemble_routes_each_member_its_own_paths(tmp_path):
    options = backends_at(tmp_path).options("ensemble")
    names = sorted(EXPECTED)
    routed = route_options(names, options)
    for name in names:
        assert routed[name] == backends_at(tmp_path).options(name)
        _checked(name, BACKENDS[name], routed[name])
    # a pool without some of them still takes the options (theirs are left out)
    assert route_options(["cooccurrence"], options) == {
        "cooccurrence": backends_at(tmp_path).options("cooccurrence")
    }


def test_the_cooccurrence_backend_is_created_from_the_options(tmp_path, default_index):
    backends = Backends(Settings(home=tmp_path, index=default_index), Metrics())
    backend = create_backend("cooccurrence", **backends.options("cooccurrence"))
    try:
        assert backend.loglik(["racket"], ["tennis", "golf"]).shape == (1, 2)
    finally:
        backend.close()
