"""The two stages of scoring a batch splits between processes, and what travels between them."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from leakage.batch._inputs import RawRecord
from leakage.batch._rows import StepColumns
from leakage.batch._worker import Assembler, PackedNumbers, Scored, ScorerSpec, report_json
from leakage.reports import Report
from leakage.scoring import (
    ScoreOptions,
    build_report,
    game_input,
    report_data,
    score_input,
    score_transcript,
)
from leakage.transcripts import load_transcripts

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
            numbers = score_input(game_input(t, options), backend)
            data = report_data(t, numbers, backend.name, backend.info(), options)
            report = build_report(t, numbers, backend.name, backend.info(), options)
            assert report == score_transcript(t, backend, options)
            assert Report.model_validate(data) == report
            # Byte for byte what the model writes, so the batch's reports read back the same.
            assert report_json(data) == report.model_dump_json().encode()
    spy = next(t for t in _games() if t.game == "spygame")
    data = report_data(
        spy, score_input(game_input(spy), EmbeddingLike()), "embedding-like", {}, ScoreOptions()
    )
    assert all(s["outlier_scores"] for s in data["steps"])


def test_a_forgotten_required_field_fails_rather_than_writing_a_default():
    from leakage.scoring import _STEP

    with pytest.raises(ValueError):
        report_json({"steps": [dict(_STEP)]})


def test_packed_numbers_come_back_the_same_after_pickling(cooccurrence):
    items = []
    for t in _games():
        items.append(score_input(game_input(t), EmbeddingLike()))
        items.append(score_input(game_input(t), cooccurrence))
    no_secret = next(t for t in _games() if t.game == "chameleon").model_copy(
        update={"secret": None}
    )
    items.insert(1, score_input(game_input(no_secret), cooccurrence))
    no_turns = no_secret.model_copy(update={"turns": []})
    items.append(score_input(game_input(no_turns), cooccurrence))
    items.insert(3, ("InvalidInput", "clue 2 is too long", [["turns[1].text", "too long"]]))

    back = list(pickle.loads(pickle.dumps(PackedNumbers(items))).unpack())

    assert len(back) == len(items)
    for got, want in zip(back, items, strict=True):
        if isinstance(want, tuple):
            assert got == want
            continue
        assert got.keys() == want.keys()
        for name, value in want.items():
            if isinstance(value, np.ndarray):
                assert got[name].shape == value.shape and got[name].dtype == value.dtype
                np.testing.assert_array_equal(got[name], value)
            else:
                assert got[name] == value


def test_a_game_the_backend_rejects_is_an_error_line_and_the_rest_of_the_chunk_is_kept(
    cooccurrence,
):
    text = (EXAMPLES / "chameleon_batch.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    chunk = [RawRecord("/data/games.jsonl", i, f"line {i + 1}", x) for i, x in enumerate(text)]
    assembler = Assembler(ScorerSpec("cooccurrence", {}))
    parsed = assembler.parse(chunk)
    numbers = [score_input(inp, cooccurrence) for inp in parsed.inputs]
    numbers[1] = ("InvalidInput", "clue too long", [["turns[0].text", "too long"]])
    cols = StepColumns()
    for i in (0, 2):
        cols.add(parsed.contexts[i], parsed.inputs[i], numbers[i], "cooccurrence")
    scored = Scored(
        numbers=PackedNumbers(numbers),
        steps=cols.to_batch(),
        backend="cooccurrence",
        backend_info={},
    )

    result = assembler.assemble(parsed, scored)

    assert (result.games, result.failed) == (2, 1)
    assert result.keys == [("/data/games.jsonl", i) for i in range(3)]
    assert '"label": "line 2"' in result.errors and '"type": "InvalidInput"' in result.errors
    assert '"problems": [["turns[0].text", "too long"]]' in result.errors
    assert result.steps.num_rows == sum(len(parsed.good[i][1].turns) for i in (0, 2))
    assert len(result.reports.splitlines()) == 2


def test_a_fatal_backend_failure_keeps_nothing_of_the_chunk():
    assembler = Assembler(ScorerSpec("cooccurrence", {}))
    parsed = assembler.parse([])
    result = assembler.assemble(parsed, Scored(fatal=("BudgetExceeded", "budget spent")))
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
            assert not isinstance(got, InvalidInput) and got.keys() == want.keys()
            for name, value in want.items():
                if isinstance(value, np.ndarray):
                    np.testing.assert_allclose(got[name], value, rtol=1e-12, atol=1e-12)
                else:
                    assert got[name] == value
    assert any(isinstance(x, InvalidInput) for x in score_inputs(inputs, Picky()))
