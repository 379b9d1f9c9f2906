"""The two stages of scoring a batch splits between processes, and what travels between them."""

from __future__ import annotations

import json
import pickle
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from leakage.batch._worker import Assembler, ScoredChunk, Scorer, ScorerSpec, report_json
from leakage.reports import Report
from leakage.scoring import (
    ScoreOptions,
    build_report,
    game_input,
    report_context,
    report_data,
    score_input,
    score_transcript,
)
from leakage.transcripts import load_transcripts
from leakage.transcripts._files import RawRecord

from .conftest import EXAMPLES


class EmbeddingLike:
    """A backend with ``embed``, so that SpyGame reports carry outlier scores."""

    name = "embedding-like"

    def info(self) -> dict[str, object]:
        return {"backend": self.name, "path": Path("/models/x")}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        rng = np.random.default_rng(len(clues) * 31 + len(candidates))
        return np.log(rng.dirichlet(np.ones(len(candidates)), size=len(clues)))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rng = np.random.default_rng(len(texts))
        return rng.normal(size=(len(texts), 8)).astype(np.float32)


def _games():
    paths = [
        EXAMPLES / "chameleon_sports.json",
        EXAMPLES / "spygame_fruit.json",
        EXAMPLES / "spygame_two_spies.json",
    ]
    games, errors = load_transcripts(paths)
    assert not errors
    return games


@pytest.mark.parametrize("options", [ScoreOptions(), ScoreOptions(True, "marginalise")])
def test_report_data_is_the_validated_report_and_serialises_the_same(cooccurrence, options):
    for backend in (cooccurrence, EmbeddingLike()):
        for t in _games():
            inp = game_input(t, options)
            trace = score_input(inp, backend)
            data = report_data(inp, report_context(t), trace, backend.name, backend.info(), options)
            report = build_report(t, trace, backend.name, backend.info(), options)
            assert report == score_transcript(t, backend, options)
            assert Report.model_validate(data) == report
            # Byte for byte what the model writes, so the batch's reports read back the same.
            assert report_json(data) == report.model_dump_json().encode()
    spy = next(t for t in _games() if t.game == "spygame")
    inp = game_input(spy)
    data = report_data(
        inp, report_context(spy), score_input(inp, EmbeddingLike()), "x", {}, ScoreOptions()
    )
    assert all(s["outlier_scores"] for s in data["steps"])


def test_a_forgotten_required_field_fails_rather_than_writing_a_default():
    from leakage.scoring import _STEP

    with pytest.raises(ValueError):
        report_json({"steps": [dict(_STEP)]})


def test_what_a_worker_is_sent_is_plain_values_that_come_back_equal():
    text = (EXAMPLES / "chameleon_batch.jsonl").read_text(encoding="utf-8").splitlines()
    chunk = [RawRecord("/data/games.jsonl", i, f"line {i + 1}", x) for i, x in enumerate(text)]
    parsed = Assembler(ScorerSpec("cooccurrence", {})).parse(chunk)
    sent = (parsed.inputs, parsed.report_contexts)
    assert pickle.loads(pickle.dumps(sent)) == sent
    spy = [game_input(t) for t in _games() if t.game == "spygame"]
    back = pickle.loads(pickle.dumps(spy))
    assert back == spy and [type(x) for x in back] == [type(x) for x in spy]
    assert len(pickle.dumps(sent)) < 2 * sum(len(x) for x in text)


def test_rows_shaped_from_numbers_sent_back_are_the_rows_of_one_process(cooccurrence):
    """A pool of one worker: the worker gathers the rows' numbers, the parent shapes the rows
    from them after they crossed over; a game without a secret has null secret columns."""
    text = (EXAMPLES / "chameleon_batch.jsonl").read_text(encoding="utf-8").splitlines()
    text += [
        json.dumps(json.loads((EXAMPLES / name).read_text(encoding="utf-8")))
        for name in ("spygame_fruit.json", "spygame_two_spies.json")
    ]
    scorer = Scorer(ScorerSpec("cooccurrence", {}), backend=cooccurrence)
    chunk = _chunk_with(text)
    whole = scorer.score(chunk)

    parsed = scorer.assembler.parse(chunk)
    scored = pickle.loads(
        pickle.dumps(scorer.score_inputs(*pickle.loads(pickle.dumps(
            (parsed.inputs, parsed.report_contexts)
        ))))
    )  # fmt: skip
    split = scorer.assembler.assemble(parsed, scored)

    assert split.steps.equals(whole.steps) and split.reports == whole.reports
    rows = split.steps.to_pylist()
    reports = {r["game_id"]: r for r in map(json.loads, split.reports.splitlines())}
    assert len(rows) == sum(len(r["steps"]) for r in reports.values())
    for row in rows:
        step = reports[row["game_id"]]["steps"][row["step"]]
        assert row["candidates"] == list(step["posterior"])
        assert row["probabilities"] == list(step["posterior"].values())
        assert row["secret_probability"] == step["secret_probability"]
        assert row["secret_rank"] == step["secret_rank"]
        assert row["entropy_bits"] == step["entropy_bits"]
        assert row["prior_entropy_bits"] == reports[row["game_id"]]["summary"]["prior_entropy_bits"]
    no_secret = [r for r in rows if r["game_id"] == "example-chameleon-countries-no-secret"]
    assert no_secret and all(
        r["secret"] is None and r["secret_probability"] is None and r["secret_rank"] is None
        for r in no_secret
    )
    assert {r["game"] for r in rows} == {"chameleon", "spygame"}


def _chunk_with(texts: list[str]) -> list[RawRecord]:
    return [RawRecord("/data/games.jsonl", i, f"line {i + 1}", x) for i, x in enumerate(texts)]


def test_a_game_the_backend_rejects_is_an_error_line_and_the_rest_of_the_chunk_is_kept():
    records = [
        json.loads(x)
        for x in (EXAMPLES / "chameleon_batch.jsonl").read_text(encoding="utf-8").splitlines()
    ][:3]
    records[1]["turns"][0]["text"] = "tennis"
    scorer = Scorer(ScorerSpec("picky", {}), backend=Picky())

    result = scorer.score(_chunk_with([json.dumps(r) for r in records]))

    assert (result.games, result.failed) == (2, 1)
    assert result.keys == [("/data/games.jsonl", i) for i in range(3)]
    error = json.loads(result.errors)
    assert (error["label"], error["record"], error["error"]["type"]) == (
        "line 2", 1, "invalid_input"
    )  # fmt: skip
    assert "tennis" in error["error"]["message"] and error["error"]["record"] == 1
    assert result.steps.num_rows == len(records[0]["turns"]) + len(records[2]["turns"])
    reports = [json.loads(x) for x in result.reports.splitlines()]
    assert [r["game_id"] for r in reports] == [records[0]["id"], records[2]["id"]]


def test_a_fatal_backend_failure_keeps_nothing_of_the_chunk():
    assembler = Assembler(ScorerSpec("cooccurrence", {}))
    parsed = assembler.parse([])
    result = assembler.assemble(parsed, ScoredChunk(fatal=("BudgetExceeded", "budget spent")))
    assert result.fatal == ("BudgetExceeded", "budget spent") and result.keys == []


class Picky(EmbeddingLike):
    """Rejects any clue that mentions 'tennis', as a backend may reject what it cannot score."""

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        from leakage.errors import InvalidInput

        if any("tennis" in c.lower() for c in clues):
            raise InvalidInput("cannot score 'tennis'")
        return super().loglik(clues, candidates, category=category)


def test_many_games_at_once_give_what_each_game_gives_alone(cooccurrence):
    from leakage.errors import InvalidInput
    from leakage.scoring import score_inputs

    games = _games()
    chameleon = next(t for t in games if t.game == "chameleon")
    more = [
        chameleon.model_copy(update={"secret": None}),
        chameleon.model_copy(update={"turns": chameleon.turns[:2]}),
        chameleon.model_copy(
            update={"turns": [t.model_copy(update={"text": "tennis"}) for t in chameleon.turns]}
        ),
    ]
    inputs = [game_input(t) for t in [*games, *more, *games]]
    for backend in (cooccurrence, Picky()):
        together = score_inputs(inputs, backend)
        assert len(together) == len(inputs)
        for inp, got in zip(inputs, together, strict=True):
            try:
                want = score_input(inp, backend)
            except InvalidInput as err:
                assert isinstance(got, InvalidInput) and str(got) == str(err)
                continue
            assert not isinstance(got, InvalidInput) and type(got) is type(want)
            for f in fields(want):
                value = getattr(want, f.name)
                if isinstance(value, np.ndarray):
                    np.testing.assert_allclose(getattr(got, f.name), value, rtol=1e-12, atol=1e-12)
                else:
                    assert getattr(got, f.name) == value
    assert any(isinstance(x, InvalidInput) for x in score_inputs(inputs, Picky()))


# -- the model stage on its own (the Ray engine's actors) --------------------------------------


def _records_of(*paths: Path) -> list[RawRecord]:
    out = []
    for path in paths:
        out.append(RawRecord(str(path), 0, "0", path.read_text(encoding="utf-8")))
    return out


@pytest.mark.parametrize("backend", [EmbeddingLike(), Picky()], ids=["embeds", "rejects"])
def test_answers_replayed_elsewhere_give_what_the_backend_gives(backend):
    """``answer`` asks the backend every question scoring asks (after ``prepare``), the
    answers travel pickled, and scoring over ``replay`` of them gives the same step rows,
    reports and error lines as scoring with the backend itself: Chameleon games, SpyGame
    games with outlier scores (the backend embeds), and a game the backend rejects."""
    from leakage.batch._stages import Replay, ReplayEmbed, answer, replay

    records = _records_of(
        EXAMPLES / "chameleon_sports.json",
        EXAMPLES / "spygame_fruit.json",
        EXAMPLES / "spygame_two_spies.json",
    )
    games = [
        json.loads(x)
        for x in (EXAMPLES / "chameleon_batch.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    games[1]["turns"][0]["text"] = "tennis"
    records += _chunk_with([json.dumps(g) for g in games])
    spec = ScorerSpec(backend.name, {})
    direct = Scorer(spec, backend=backend).score(records)

    parsed = Assembler(spec).parse(records)
    answers = pickle.loads(pickle.dumps(answer(backend, parsed.inputs)))
    stand_in = replay(answers)
    assert isinstance(stand_in, ReplayEmbed) and isinstance(stand_in, Replay)
    scorer = Scorer(spec, backend=stand_in)
    again = scorer.assembler.assemble(
        parsed, scorer.score_inputs(parsed.inputs, parsed.report_contexts)
    )

    assert (again.games, again.failed, again.keys) == (direct.games, direct.failed, direct.keys)
    assert again.steps.equals(direct.steps) and again.reports == direct.reports
    assert again.errors == direct.errors
    if isinstance(backend, Picky):
        assert direct.failed >= 1 and "cannot score 'tennis'" in direct.errors
    else:
        assert direct.failed == 0 and b"outlier" in direct.reports


def test_a_backend_without_embed_is_replayed_without_one(cooccurrence):
    from leakage.backends.base import SupportsEmbed
    from leakage.batch._stages import answer, replay

    records = _records_of(EXAMPLES / "spygame_fruit.json", EXAMPLES / "chameleon_sports.json")
    spec = ScorerSpec("cooccurrence", {})
    parsed = Assembler(spec).parse(records)
    answers = answer(cooccurrence, parsed.inputs)
    assert answers.vectors is None and not isinstance(replay(answers), SupportsEmbed)
    assert answers.info == cooccurrence.info() and answers.backend == "cooccurrence"
    direct = Scorer(spec, backend=cooccurrence).score(records)
    scorer = Scorer(spec, backend=replay(answers))
    again = scorer.assembler.assemble(
        parsed, scorer.score_inputs(parsed.inputs, parsed.report_contexts)
    )
    assert again.steps.equals(direct.steps) and again.reports == direct.reports


def test_a_fatal_failure_in_the_model_stage_is_kept_for_the_driver():
    from leakage.batch._stages import answer
    from leakage.errors import CountSourceError

    class Broke(EmbeddingLike):
        def loglik(self, clues, candidates, *, category=None):
            raise CountSourceError("no queries left")

    parsed = Assembler(ScorerSpec("x", {})).parse(_records_of(EXAMPLES / "chameleon_sports.json"))
    answers = answer(Broke(), parsed.inputs)
    assert answers.fatal == ("CountSourceError", "no queries left") and not answers.rows


class DownOnTennis(EmbeddingLike):
    """A count source that fails (after its retries) on any clue that mentions 'tennis'."""

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        from leakage.errors import CountSourceError

        if any("tennis" in c.lower() for c in clues):
            raise CountSourceError("the count source is down")
        return super().loglik(clues, candidates, category=category)


def test_with_record_errors_a_backend_failure_fails_its_game_alone_in_both_stages():
    """``record_errors`` (the service's jobs): the game the backend fails on is an error line
    naming the error, the rest of the chunk is scored, in one process and through the model
    stage's answers replayed elsewhere (Ray) alike; without it the chunk is fatal."""
    from leakage.batch._stages import answer, replay

    games = [
        json.loads(x)
        for x in (EXAMPLES / "chameleon_batch.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    games[1]["turns"][0]["text"] = "tennis"
    records = _chunk_with([json.dumps(g) for g in games])
    backend = DownOnTennis()
    spec = ScorerSpec(backend.name, {}, record_errors=True)
    direct = Scorer(spec, backend=backend).score(records)
    assert (direct.games, direct.failed, direct.fatal) == (len(games) - 1, 1, None)
    error = json.loads(direct.errors)
    assert (error["record"], error["error"]["type"], error["error"]["message"]) == (
        1, "count_source_failed", "the count source is down"
    )  # fmt: skip

    parsed = Assembler(spec).parse(records)
    answers = pickle.loads(pickle.dumps(answer(backend, parsed.inputs, record_errors=True)))
    assert answers.fatal is None
    scorer = Scorer(spec, backend=replay(answers))
    again = scorer.assembler.assemble(
        parsed, scorer.score_inputs(parsed.inputs, parsed.report_contexts)
    )
    assert (again.games, again.failed, again.keys) == (direct.games, direct.failed, direct.keys)
    assert again.steps.equals(direct.steps) and again.reports == direct.reports
    assert again.errors == direct.errors

    stops = ScorerSpec(backend.name, {})
    assert Scorer(stops, backend=backend).score(records).fatal == (
        "CountSourceError", "the count source is down"
    )  # fmt: skip
    assert answer(backend, parsed.inputs).fatal == ("CountSourceError", "the count source is down")
