"""``leakage play`` closes the co-occurrence backend it opens and its agent factory when the
games are played, and when a game fails."""

from __future__ import annotations

import pytest

from leakage.backends.cooccurrence._backend import CooccurrenceBackend
from leakage.games.agents import AgentFactory


@pytest.fixture
def closed(monkeypatch):
    """What was closed, in order: ``backend`` and ``factory``."""
    seen: list[str] = []
    close_backend, close_factory = CooccurrenceBackend.close, AgentFactory.close

    def backend_close(self):
        seen.append("backend")
        close_backend(self)

    def factory_close(self):
        seen.append("factory")
        close_factory(self)

    monkeypatch.setattr(CooccurrenceBackend, "close", backend_close)
    monkeypatch.setattr(AgentFactory, "close", factory_close)
    return seen


def _play(tmp_path, default_index, *extra):
    from typer.testing import CliRunner

    from leakage.cli import app

    return CliRunner().invoke(app, ["play", "chameleon", "--games", "2", "--agents",
                                    "non-chameleon=trivial,chameleon=amb", "--index",
                                    str(default_index), "--out", str(tmp_path / "g.jsonl"),
                                    *extra])  # fmt: skip


def test_play_closes_its_backend_and_factory(tmp_path, default_index, leakage_home, closed):
    r = _play(tmp_path, default_index)
    assert r.exit_code == 0, r.output
    assert len((tmp_path / "g.jsonl").read_text().splitlines()) == 2
    # the factory first (its agents use the backend), then the backend
    assert closed == ["factory", "backend"]


def test_play_closes_them_when_a_game_fails(
    tmp_path, default_index, leakage_home, closed, monkeypatch
):
    import leakage.games._loop

    def failing_run(engine, roster):
        raise RuntimeError("a game failed")

    monkeypatch.setattr(leakage.games._loop, "run", failing_run)
    r = _play(tmp_path, default_index)
    assert isinstance(r.exception, RuntimeError)
    assert closed == ["factory", "backend"]
