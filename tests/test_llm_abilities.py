"""The LLM clients' optional abilities, declared as protocols (``leakage.llm``): the shipped
clients have the ones they implement, and the judge and the constrained agents take the fast
path with a client that has one, the plain path without it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from leakage.backends.judge import JudgeBackend
from leakage.games.agents._constrained import chat_text
from leakage.llm import (
    Generation,
    LLMClient,
    Message,
    OpenAICompatibleClient,
    SupportsScoreEach,
    SupportsScoreGroups,
    SupportsScoreMany,
    SupportsTokenizer,
)

GAMES = [
    (["tt", "g"], ["Tennis", "Golf"], "Sports"),
    (["pp"], ["Polo", "Golf"], "Sports"),
]


class Plain:
    """``score`` and ``generate`` only: every count of calls by kind."""

    name = "plain"

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def _count(self, kind: str) -> None:
        self.calls[kind] = self.calls.get(kind, 0) + 1

    def info(self) -> dict[str, object]:
        return {"model": self.name}

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        self._count("score")
        return [float(len(prompt) % 7 + len(c)) for c in continuations]

    def generate(self, messages: Sequence[Message] | str, **kw: Any) -> Generation:
        return Generation(text="")

    def _table(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        return np.array([[len(p) % 7 + len(c) for c in continuations] for p in prompts], float)


class Many(Plain):
    def score_many(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        self._count("score_many")
        return self._table(prompts, continuations)


class Groups(Many):
    def score_groups(self, groups: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list[Any]:
        self._count("score_groups")
        return [self._table(p, c) for p, c in groups]


class Each(Many):
    def score_each(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Any]:
        self._count("score_each")
        return [self._table([p], c)[0] for p, c in items]


class Tokenized(Plain):
    class _Tok:
        chat_template = None

    tokenizer = _Tok()


def test_the_shipped_clients_declare_what_they_implement():
    from leakage.llm import LocalLM

    for ability in (SupportsScoreMany, SupportsScoreGroups, SupportsScoreEach):
        assert issubclass(LocalLM, ability)
    local = LocalLM.__new__(LocalLM)  # no model loaded: the tokenizer is what it holds
    assert not isinstance(local, SupportsTokenizer)
    local._tok = object()
    assert isinstance(local, SupportsTokenizer) and local.tokenizer is local._tok

    remote = OpenAICompatibleClient("http://127.0.0.1:9/v1", "m")
    assert isinstance(remote, LLMClient) and isinstance(remote, SupportsScoreMany)
    for ability in (SupportsScoreGroups, SupportsScoreEach, SupportsTokenizer):
        assert not isinstance(remote, ability)


@pytest.mark.parametrize(
    ("client", "calls"),
    [
        (Plain, {"score": 4}),  # one score per candidate prompt of each game
        (Many, {"score_many": 2}),  # one score_many per game
        (Groups, {"score_groups": 1}),  # both games in prepare, nothing afterwards
    ],
)
def test_the_speaker_judge_takes_the_fastest_path_its_client_has(client, calls):
    plain = JudgeBackend(Plain())
    want = [plain.loglik(c, w, category=k) for c, w, k in GAMES]
    llm = client()
    judge = JudgeBackend(llm)
    judge.prepare(GAMES)
    got = [judge.loglik(c, w, category=k) for c, w, k in GAMES]
    for a, b in zip(got, want, strict=True):
        assert a.tolist() == b.tolist()
    assert llm.calls == calls


@pytest.mark.parametrize(
    ("client", "calls"), [(Many, {"score_many": 2}), (Each, {"score_each": 1})]
)
def test_the_listener_prepares_with_score_each_only(client, calls):
    plain = JudgeBackend(Many(), direction="listener")
    want = [plain.loglik(c, w, category=k) for c, w, k in GAMES]
    llm = client()
    judge = JudgeBackend(llm, direction="listener")
    judge.prepare(GAMES)
    got = [judge.loglik(c, w, category=k) for c, w, k in GAMES]
    for a, b in zip(got, want, strict=True):
        assert a.tolist() == b.tolist()
    assert llm.calls == calls


def test_chat_text_needs_a_tokenizer_here():
    messages = [Message("user", "Name a sport.")]
    assert chat_text(Plain(), messages) is None  # an endpoint: the agent asks it directly
    assert chat_text(Tokenized(), messages) == "Name a sport.\n\nAnswer:"
    remote = OpenAICompatibleClient("http://127.0.0.1:9/v1", "m")
    assert chat_text(remote, messages) is None
