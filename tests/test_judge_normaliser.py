"""The judge's ``normaliser`` option reaches the local model and is refused elsewhere."""

from __future__ import annotations

import pytest

from leakage import create_backend
from leakage.backends.judge import open_llm
from leakage.llm import _local


def test_the_judge_passes_its_normaliser_to_the_local_model(monkeypatch: pytest.MonkeyPatch):
    seen: dict[str, object] = {}

    class Recorder:
        name = "recorder"

        def __init__(self, model: str, **kw: object) -> None:
            seen.update(kw, model=model)

    monkeypatch.setattr(_local, "LocalLM", Recorder)
    monkeypatch.setattr("leakage.llm.LocalLM", Recorder)
    create_backend("judge", normaliser="shortlist")
    assert seen["normaliser"] == "shortlist" and seen["model"] == "gemma-3-270m"


def test_an_unknown_normaliser_is_refused_before_loading_a_model():
    with pytest.raises(ValueError, match="normaliser must be one of exact, shortlist"):
        create_backend("judge", normaliser="approximate")


def test_an_endpoint_has_no_normaliser():
    with pytest.raises(ValueError, match="normaliser applies to a local model"):
        open_llm("some-model", endpoint="http://127.0.0.1:9/v1", normaliser="shortlist")
