"""From transcript to report: which turns count, what each step carries, SpyGame posteriors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from leakage import ScoreOptions, parse_transcript, score_transcript
from leakage.reports import Report


class TableBackend:
    """A deterministic backend: log P(clue | w) read from a dict, 0 elsewhere."""

    name = "table"

    def __init__(self, table: dict[tuple[str, str], float]) -> None:
        self.table = table
        self.calls: list[list[str]] = []

    def info(self):
        return {"backend": self.name}

    def loglik(self, clues: Sequence[str], candidates: Sequence[str], *, category=None):
        self.calls.append(list(clues))
        return np.array([[self.table.get((c, w), 0.0) for w in candidates] for c in clues])


CHAMELEON = {
    "format": "leakage.transcript/1",
    "game": "chameleon",
    "id": "g1",
    "category": "Sports",
    "candidates": ["Tennis", "Golf", "Rugby", "Polo"],
    "secret": "Tennis",
    "players": [
        {"id": "a", "role": "non-chameleon"},
        {"id": "b", "role": "chameleon"},
        {"id": "c", "role": "non-chameleon"},
    ],
    "turns": [
        {"player": "a", "text": "racket"},
        {"player": "b", "text": "club"},
        {"player": "c", "text": "serve"},
    ],
    "meta": {"matchup": "x vs y"},
}

TABLE = {
    ("racket", "Tennis"): 2.0,
    ("club", "Golf"): 5.0,
    ("serve", "Tennis"): 1.0,
    ("serve", "Polo"): 1.0,
}


def test_chameleon_counts_only_non_chameleon_turns_by_default():
    backend = TableBackend(TABLE)
    r = score_transcript(parse_transcript(CHAMELEON), backend)
    assert isinstance(r, Report) and r.format == "leakage.report/1"
    assert [s.counted for s in r.steps] == [True, False, True]
    assert backend.calls == [["racket", "serve"]]  # the chameleon's clue costs no query
    p1 = np.array([np.e**2, 1, 1, 1]) / (np.e**2 + 3)
    assert r.steps[0].posterior["Tennis"] == pytest.approx(p1[0])
    assert r.steps[1].posterior == r.steps[0].posterior
    assert r.steps[1].information_gain_bits == 0.0
    assert r.steps[0].secret_rank == 1 and r.summary.top1 is True
    assert r.summary.counted_turns == 2
    assert r.summary.prior_entropy_bits == pytest.approx(2.0)
    gains = sum(s.information_gain_bits for s in r.steps)
    assert gains == pytest.approx(2.0 - r.summary.final_entropy_bits)
    assert r.meta == {"matchup": "x vs y"}
    assert r.secret == "Tennis" and r.candidates == CHAMELEON["candidates"]


def test_chameleon_turns_can_be_included():
    r = score_transcript(
        parse_transcript(CHAMELEON), TableBackend(TABLE), ScoreOptions(include_chameleon=True)
    )
    assert all(s.counted for s in r.steps)
    assert r.steps[1].posterior["Golf"] > r.steps[0].posterior["Golf"]


def test_no_secret_means_no_accuracy_figures():
    game = {**CHAMELEON, "secret": None}
    r = score_transcript(parse_transcript(game), TableBackend(TABLE))
    assert r.secret is None
    assert all(s.secret_probability is None and s.secret_rank is None for s in r.steps)
    assert r.summary.top1 is None


SPY = {
    "format": "leakage.transcript/1",
    "game": "spygame",
    "id": "s1",
    "words": {"civilian": "Violin", "spy": "Cello"},
    "distractors": ["Flute"],
    "players": [
        {"id": "1", "role": "civilian"},
        {"id": "2", "role": "spy"},
        {"id": "3", "role": "civilian"},
        {"id": "4", "role": "civilian"},
    ],
    "turns": [
        {"player": "1", "text": "chin", "round": 1},
        {"player": "2", "text": "big", "round": 1},
        {"player": "3", "text": "bow", "round": 1},
        {"player": "4", "text": "small", "round": 1},
        {"player": "1", "text": "bow", "round": 2},
    ],
}
SPY_TABLE = {
    ("chin", "Violin"): 2.0,
    ("big", "Cello"): 2.0,
    ("small", "Violin"): 1.0,
    ("bow", "Violin"): 0.5,
    ("bow", "Cello"): 0.5,
}


def test_spygame_word_and_spy_posteriors():
    r = score_transcript(parse_transcript(SPY), TableBackend(SPY_TABLE))
    assert r.candidates == ["Violin", "Cello", "Flute"]
    first = r.steps[0]
    assert first.speaker_word == "Violin" and first.secret_rank == 1
    assert sum(first.posterior.values()) == pytest.approx(1.0)
    assert r.steps[1].speaker_word == "Cello" and r.steps[1].secret_rank == 1
    # After "big", player 2 is the most likely spy; probabilities sum to the number of spies.
    sp = r.steps[1].spy_posterior
    assert max(sp, key=sp.get) == "2"
    assert sum(sp.values()) == pytest.approx(1.0)
    assert r.summary.spy_top_after_round1 == ["2"] and r.summary.spy_hit_after_round1 is True
    # "bow" is equally likely under both words: the statement leaks nothing about the pair.
    assert r.steps[2].posterior["Violin"] == pytest.approx(r.steps[2].posterior["Cello"])


def test_spygame_two_spies_marginals_sum_to_two():
    game = {**SPY, "players": [*SPY["players"][:3], {"id": "4", "role": "spy"}]}
    game["turns"] = SPY["turns"]
    r = score_transcript(parse_transcript(game), TableBackend(SPY_TABLE))
    assert sum(r.steps[-1].spy_posterior.values()) == pytest.approx(2.0)
    assert len(r.summary.spy_top_after_round1) == 2


def test_examples_score_end_to_end(cooccurrence):
    from leakage.transcripts import load_transcripts

    from .conftest import EXAMPLES

    games, errors = load_transcripts(
        [EXAMPLES / "chameleon_sports.json", EXAMPLES / "spygame_two_spies.json"]
    )
    assert not errors
    for g in games:
        r = score_transcript(g, cooccurrence)
        assert len(r.steps) == len(g.turns)
        for s in r.steps:
            assert sum(s.posterior.values()) == pytest.approx(1.0)
            assert 0 <= s.entropy_bits <= np.log2(len(r.candidates)) + 1e-9
        assert r.backend_info["count_source"]["source"] == "local"


def test_an_unknown_spy_assignment_is_refused_when_the_options_are_made():
    """Not only when a SpyGame game is scored: a batch of Chameleon games would otherwise
    carry a bad value unnoticed."""
    from leakage.errors import InvalidInput
    from leakage.scoring import ScoreOptions

    with pytest.raises(InvalidInput, match="spy_assignment must be one of known, marginalise"):
        ScoreOptions(spy_assignment="guess")  # type: ignore[arg-type]
    assert ScoreOptions(spy_assignment="marginalise").spy_assignment == "marginalise"


@pytest.mark.parametrize("secret", ["Tennis", None])
def test_a_chameleon_game_without_turns_is_a_report_without_steps(secret):
    """No clue yet (a game logged before anyone spoke): the posterior is the prior, no step;
    with other games of the same shape in one call too (the grouped posterior engine)."""
    from leakage.scoring import game_input, score_inputs

    game = parse_transcript({**CHAMELEON, "turns": [], "secret": secret})
    report = score_transcript(game, TableBackend(TABLE))
    assert report.steps == []
    assert report.summary.prior_entropy_bits == pytest.approx(2.0)
    traces = score_inputs([game_input(game)] * 2, TableBackend(TABLE))
    assert [t.posterior.shape for t in traces] == [(0, 4), (0, 4)]  # type: ignore[union-attr]
