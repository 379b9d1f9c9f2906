"""One function shapes every report (scoring.shape_report): as scored, or as a caller asks
(ReportShape: top_k, extra settings, redaction), from a game's input, context and trace."""

from __future__ import annotations

import pytest

from leakage.reports import Report
from leakage.scoring import (
    ReportShape,
    ScoreOptions,
    game_input,
    report_context,
    report_json,
    reshape_report,
    score_input,
    score_report_data,
    score_transcript,
    shape_report,
)
from leakage.transcripts import load_transcripts

from .conftest import EXAMPLES


def _games():
    games, errors = load_transcripts(
        [EXAMPLES / "chameleon_sports.json", EXAMPLES / "spygame_two_spies.json"]
    )
    assert not errors
    return games


def _hide(info: dict) -> dict:
    return {**info, "count_source": "hidden"}


def test_as_scored_it_is_the_report(cooccurrence):
    for t in _games():
        inp = game_input(t)
        data = shape_report(
            inp, report_context(t), score_input(inp, cooccurrence), "cooccurrence",
            cooccurrence.info(),
        )  # fmt: skip
        report = score_transcript(t, cooccurrence)
        assert Report.model_validate(data) == report
        assert report_json(data) == report.model_dump_json().encode()
        assert score_report_data(t, cooccurrence) == data


@pytest.mark.parametrize("top_k", [1, 3])
def test_a_shaped_report(cooccurrence, top_k: int):
    shape = ReportShape(top_k=top_k, extra_settings={"distractors": ["Golf"]}, redact=_hide)
    options = ScoreOptions(spy_assignment="marginalise")
    for t in _games():
        whole = score_transcript(t, cooccurrence, options).model_dump()
        data = score_report_data(t, cooccurrence, options, shape=shape)
        assert list(data["settings"]) == [*whole["settings"], "distractors", "top_k"]
        assert data["settings"]["top_k"] == top_k
        assert data["settings"]["distractors"] == ["Golf"]
        assert data["backend_info"]["count_source"] == "hidden"
        for step, full in zip(data["steps"], whole["steps"], strict=True):
            best = sorted(full["posterior"].items(), key=lambda kv: -kv[1])[:top_k]
            assert list(step["posterior"].items()) == best
            # everything else is the report's, ranks over every candidate included
            assert {**step, "posterior": None} == {**full, "posterior": None}
        assert data["summary"] == whole["summary"] and data["candidates"] == whole["candidates"]
        Report.model_validate(data)
        # a report made before is reshaped the same way
        assert reshape_report(whole, shape) == data


def test_a_given_game_input_is_not_computed_again(cooccurrence, monkeypatch):
    import leakage.scoring as scoring

    t = _games()[1]
    inp = game_input(t)
    calls = []
    monkeypatch.setattr(scoring, "game_input", lambda *a: calls.append(a) or inp)
    score_report_data(t, cooccurrence, inp=inp)
    assert calls == []
    score_report_data(t, cooccurrence)
    assert len(calls) == 1


def test_a_trace_of_the_other_game_is_refused(cooccurrence):
    chameleon, spy = _games()
    trace = score_input(game_input(spy), cooccurrence)
    with pytest.raises(TypeError, match="Chameleon game needs a Trace"):
        shape_report(game_input(chameleon), report_context(chameleon), trace, "x", {})
