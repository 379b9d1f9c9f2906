"""What the service reads from the library's registries: the count sources it lists (with
the key variables their classes name) and the cost factor a backend's factory declares."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leakage.backends import base, cost_factor, costs
from leakage.backends.cooccurrence import COUNT_SOURCES
from leakage.transcripts import load_transcripts
from leakage_service.inputs import game_cost

from .conftest import EXAMPLES
from .test_service import Api, settings_for


class TallySource:
    name = "tally"
    key_env = ("TALLY_KEY", "TALLY_ACCOUNT")

    @classmethod
    def open(cls) -> TallySource:
        return cls()


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An installed distribution's count source (a simulated entry point)."""
    real = importlib.metadata.entry_points

    def fake(**kw: Any) -> Any:
        if kw.get("group") == "leakage.count_sources":
            return importlib.metadata.EntryPoints(
                [importlib.metadata.EntryPoint("tally", f"{__name__}:TallySource", kw["group"])]
            )
        return real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    COUNT_SOURCES.reload()
    yield
    COUNT_SOURCES.pop("tally", None)
    COUNT_SOURCES.reload()


def test_the_count_sources_listed_are_the_registrys(
    tally: None, tmp_path: Path, default_index: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("TALLY_KEY", raising=False)
    monkeypatch.setenv("TALLY_ACCOUNT", "a")
    api = Api(settings_for(tmp_path, default_index))
    try:
        sources = {s["name"]: s for s in api.get("/v1/backends").json()["count_sources"]}
        assert set(sources) == {"local", "serpapi", "google-cse", "infini-gram", "tally"}
        assert sources["tally"] == {
            "name": "tally",
            "kind": "web",
            "configured": False,
            "needs": ["TALLY_KEY", "TALLY_ACCOUNT"],
        }
        assert sources["local"]["kind"] == "local" and sources["local"]["configured"]
        assert sources["google-cse"]["needs"] == ["GOOGLE_API_KEY", "GOOGLE_CSE_ID"]
        assert sources["infini-gram"]["needs"] == []
        monkeypatch.setenv("TALLY_KEY", "k")
        sources = {s["name"]: s for s in api.get("/v1/backends").json()["count_sources"]}
        assert sources["tally"]["configured"] is True
    finally:
        api.close()


def test_a_factory_declares_its_cost_factor(monkeypatch: pytest.MonkeyPatch):
    @costs(7)
    def heavy() -> Any:
        raise AssertionError("the cost is read without building the backend")

    monkeypatch.setitem(base.BACKENDS, "heavy", heavy)
    assert cost_factor("heavy") == 7
    assert [cost_factor(n) for n in ("cooccurrence", "embedding")] == [1, 1]
    assert [cost_factor(n) for n in ("judge", "listener", "ensemble")] == [250, 250, 250]
    (game,), _ = load_transcripts([EXAMPLES / "chameleon_sports.json"])
    assert game_cost(game, "heavy").factor == 7
    assert game_cost(game, "heavy").total == 7 * game_cost(game, "cooccurrence").total
    assert game_cost(game, "no-such-backend").factor == 1  # refused later, by the backend check
    with pytest.raises(ValueError, match="at least 1"):
        costs(0)
