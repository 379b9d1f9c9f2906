"""``AgentFactory.close``: a games run closes the backend and the encoder the factory opened
itself, and leaves alone those it was given."""

from __future__ import annotations

from pathlib import Path

import pytest

import leakage.encoders
from leakage.errors import CorpusError
from leakage.games.agents import AgentFactory
from tests.games_support import WordsEncoder

from .test_cheatsheet import EchoLLM, _clue_or_vote


class Closes:
    closed = 0

    def close(self) -> None:
        self.closed += 1


class ClosingEncoder(Closes, WordsEncoder):
    pass


def test_the_factory_closes_the_default_backend_it_made(default_index: Path):
    with AgentFactory() as factory:
        _ = factory.tables
        source = factory.backend.source
        assert source.count(("tennis",)) >= 0  # open while the run goes on
    with pytest.raises(CorpusError, match="closed database"):
        source.count(("golf",))
    factory.close()  # again: nothing left to close


def test_the_factory_closes_the_encoder_it_opened_not_one_it_was_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    opened = ClosingEncoder()
    monkeypatch.setattr(leakage.encoders, "open_encoder", lambda device="auto": opened)
    given = ClosingEncoder()
    backend = Closes()
    for encoder in (None, given):
        factory = AgentFactory(backend=backend, encoder=encoder, llm_endpoint="http://x")
        factory._clients["llm"] = EchoLLM(_clue_or_vote)
        factory.build("chameleon", "cheatsheet:llm", role="chameleon")
        factory.close()
    assert opened.closed == 1 and given.closed == 0 and backend.closed == 0
