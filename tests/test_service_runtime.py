"""The service's scoring loop (``runtime.score_records``): each game's input is made once,
for its preparation and its scoring both, and the reports are those of ``leakage score``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import leakage.scoring
import leakage_service.runtime as runtime
from leakage.scoring import game_input, score_report_data
from leakage.transcripts import parse_transcript
from leakage_service.inputs import ScoreParams
from leakage_service.redact import redact_paths
from leakage_service.telemetry import Metrics

from .conftest import EXAMPLES
from .test_service import settings_for


def test_each_game_input_is_made_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, default_index: Path
):
    games = [
        parse_transcript(json.loads((EXAMPLES / name).read_text()))
        for name in ("chameleon_sports.json", "spygame_two_spies.json", "chameleon_sports.json")
    ]
    made: list[str] = []

    def counting(t: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(t.id)
        return game_input(t, *args, **kwargs)

    monkeypatch.setattr(leakage.scoring, "game_input", counting)
    monkeypatch.setattr(runtime, "game_input", counting)
    backends = runtime.Backends(settings_for(tmp_path, default_index), Metrics())
    try:
        slot = backends.get("cooccurrence")
        params = ScoreParams(top_k=2)
        scored = list(runtime.score_records(backends, slot, enumerate(games), params))
        assert made == [g.id for g in games]
        assert [s.ok for s in scored] == [True, True, True]
        for g, s in zip(games, scored, strict=True):
            want = score_report_data(g, slot.backend, params.options())
            report = json.loads(s.body)
            assert report["settings"]["top_k"] == 2
            assert report["backend_info"] == json.loads(
                json.dumps(redact_paths(want["backend_info"]))
            )
            assert [st["entropy_bits"] for st in report["steps"]] == pytest.approx(
                [st["entropy_bits"] for st in want["steps"]]
            )
    finally:
        backends.close()


class Flat:
    """A backend registered under a shipped name that is not the library's."""

    name = "embedding"

    def info(self) -> dict[str, str]:
        return {"backend": self.name}

    def loglik(self, clues: Any, candidates: Any, *, category: str | None = None) -> Any:
        raise AssertionError("not scored")


def test_splits_with_an_embedding_backend_that_has_no_encoder_say_so(
    tmp_path: Path, default_index: Path
):
    """A 503 naming the backend, not a 500 from reaching for an attribute it lacks."""
    from .test_service import Api, assert_error

    a = Api(settings_for(tmp_path, default_index))
    try:
        a.state.backends.slots["embedding"] = runtime.BackendSlot("embedding", Flat())
        body = {"pairs": [["sun", "moon"]], "descriptions": {"sun": "a star", "moon": "a rock"}}
        err = assert_error(a.post("/v1/splits", json=body), 503, "backend_unavailable")
        assert "library's embedding backend" in err["message"] and "Flat" in err["message"]
    finally:
        a.close()
