"""Plug-ins from other distributions: entry points in ``leakage.backends`` / ``leakage.adapters``
(simulated here: nothing is installed)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leakage._registry import Registry
from leakage.backends import backend_names, base, create_backend
from leakage.errors import BackendUnavailable, InvalidInput
from leakage.transcripts.adapters import ADAPTERS
from tests.plugin_support import fake_entry_points


class FlatBackend:
    name = "flat"

    def __init__(self, level: float) -> None:
        self.level = level

    def info(self) -> dict[str, Any]:
        return {"backend": self.name, "level": self.level}

    def loglik(self, clues: Sequence[str], candidates: Sequence[str], *, category=None):
        return np.full((len(clues), len(candidates)), self.level)


def make_flat(*, level: float = -1.0) -> FlatBackend:
    return FlatBackend(level)


class EchoAdapter:
    name = "echo-format"

    def sniff(self, record: Any) -> bool:
        return False

    def convert(self, record: Any, *, path: Path | None, index: int) -> Any:
        raise NotImplementedError


@pytest.fixture
def fresh() -> Iterator[None]:
    """The registries read their entry points again, before and after the test."""
    base.BACKENDS.reload()
    ADAPTERS.reload()
    yield
    for name in ("flat", "broken"):
        base.BACKENDS.pop(name, None)
        base.BACKENDS.failed.pop(name, None)
    ADAPTERS.pop("echo-format", None)
    base.BACKENDS.reload()
    ADAPTERS.reload()


def test_a_backend_from_an_entry_point_is_listed_and_created(monkeypatch, fresh):
    fake_entry_points(
        monkeypatch,
        "leakage.backends",
        flat=f"{__name__}:make_flat",
        cooccurrence=f"{__name__}:make_flat",  # the package's own name wins
    )
    assert "flat" in backend_names()
    backend = create_backend("flat", level="-2")  # options checked against its signature
    assert isinstance(backend, FlatBackend) and backend.level == -2.0
    with pytest.raises(InvalidInput, match="no option 'colour'"):
        create_backend("flat", colour=1)
    assert base.BACKENDS["cooccurrence"] is not make_flat


def test_a_broken_entry_point_is_skipped_and_named_when_asked_for(monkeypatch, fresh):
    fake_entry_points(monkeypatch, "leakage.backends", broken="no_such_module_xyz:make")
    assert "broken" not in backend_names() and "cooccurrence" in backend_names()
    with pytest.raises(BackendUnavailable, match="no_such_module_xyz"):
        create_backend("broken")


def test_an_adapter_from_an_entry_point_is_registered(monkeypatch, fresh):
    fake_entry_points(monkeypatch, "leakage.adapters", **{"echo-format": f"{__name__}:EchoAdapter"})
    assert isinstance(ADAPTERS["echo-format"], EchoAdapter)
    assert {"ck-arena", "spygame-liang", "echo-format"} <= set(ADAPTERS)


def test_the_package_adapters_are_declared_under_their_own_names():
    """The shipped adapters are imported when first asked for, each under the ``name`` its
    class gives (``--input-format``)."""
    for name in ("ck-arena", "spygame-liang"):
        assert ADAPTERS[name].name == name


def test_an_adapter_registered_at_run_time_is_an_input_format(fresh):
    from leakage.transcripts import input_formats
    from leakage.transcripts._load import check_input_format
    from leakage.transcripts.adapters import register_adapter

    assert "echo-format" not in input_formats()
    register_adapter(EchoAdapter)
    assert "echo-format" in input_formats()
    check_input_format("echo-format")  # no UnknownInputFormat


def test_registry_create_and_names():
    reg: Registry[Any] = Registry("leakage.test-nothing")
    reg.register("b", dict)
    reg.register("a", list)
    assert reg.names() == ["a", "b"]
    assert reg.create("b", x=1) == {"x": 1}
    with pytest.raises(KeyError):
        reg.create("c")
