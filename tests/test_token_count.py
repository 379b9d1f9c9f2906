"""``SupportsTokenCount``: the LLM judge counts its local model's tokens, the ensemble
forwards the count of its language-model members, and the service's size check reads it
through the protocol (no probing for a judge inside an ensemble)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from leakage.backends import SupportsTokenCount, create_backend
from leakage.backends.ensemble import EnsembleBackend
from leakage.backends.judge import JudgeBackend
from leakage_service.inputs import model_tokens

from .test_service_hardening import ByteTokens


class Remote:
    """An LLM client without a tokenizer here (a model behind an HTTP endpoint)."""

    name = "remote"

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        return [0.0 for _ in continuations]


class Flat:
    """A backend without a language model."""

    name = "flat"

    def info(self) -> dict[str, str]:
        return {"backend": self.name}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        return np.zeros((len(clues), len(candidates)))


def test_the_judge_counts_its_local_models_tokens_and_a_remote_one_none():
    judge = JudgeBackend(ByteTokens())  # type: ignore[arg-type]
    assert isinstance(judge, SupportsTokenCount)
    assert judge.count_tokens(["ab", "cde", ""]) == 5  # one token a byte
    assert judge.count_tokens(["é"]) == 2  # two UTF-8 bytes
    remote = JudgeBackend(Remote())  # type: ignore[arg-type]
    assert remote.count_tokens(["ab"]) is None
    assert model_tokens(remote, ["ab"]) is None


def test_the_ensemble_forwards_the_count_of_its_language_model_members():
    flat: dict[str, float] = {"flat": 1.0}
    without = EnsembleBackend({"flat": Flat()}, flat, flat)
    assert not isinstance(without, SupportsTokenCount)
    assert model_tokens(without, ["ab"]) is None

    ones = {"flat": 1.0, "listener": 1.0}
    listener = JudgeBackend(ByteTokens(), direction="listener")  # type: ignore[arg-type]
    pooled = EnsembleBackend({"flat": Flat(), "listener": listener}, ones, ones)
    assert isinstance(pooled, SupportsTokenCount)
    assert model_tokens(pooled, ["abc", "d"]) == 4

    ones = {"judge": 1.0, "listener": 1.0}
    remote = JudgeBackend(Remote())  # type: ignore[arg-type]
    mixed = EnsembleBackend({"judge": remote, "listener": listener}, ones, ones)
    assert mixed.count_tokens(["abc"]) == 3  # the member that can count
    both_remote = EnsembleBackend({"judge": remote, "listener": remote}, ones, ones)
    assert both_remote.count_tokens(["abc"]) is None


def test_backends_without_a_language_model_do_not_count(default_index: Path):
    with create_backend("cooccurrence", index=default_index) as cooc:  # type: ignore[attr-defined]
        assert not isinstance(cooc, SupportsTokenCount)
        assert model_tokens(cooc, ["a"]) is None
