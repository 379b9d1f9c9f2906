"""Seats (issue 39): the spy's own seat over an open vocabulary and a civilian voter's seat,
with the real bundled MiniLM on a small vocabulary and the bundled two-spy example game."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from leakage import load_transcripts
from leakage.seats import (
    PairPrior,
    fit_pair_prior,
    game_rows,
    read_pair_prior,
    spy_seat,
    voter_seat,
)
from leakage.vocab import (
    OpenVocabulary,
    ShortlistPosterior,
    build_vocabulary,
    merge_words,
    vocabulary_pool,
    wordfreq_words,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "leakage" / "data" / "examples"
PAIRS = [("violin", "cello"), ("sun", "moon"), ("cat", "dog"), ("tea", "coffee")]


@pytest.fixture(scope="module")
def vocab(minilm) -> OpenVocabulary:
    words = merge_words(wordfreq_words(3000), ["violin", "cello", "cellos", "viola", "harp"])
    return OpenVocabulary(build_vocabulary(words, minilm, kind="numpy"), minilm)


@pytest.fixture(scope="module")
def game():
    games, errors = load_transcripts([EXAMPLE / "spygame_two_spies.json"])
    assert not errors
    return games[0]


def test_pair_prior_is_fitted_and_leaves_out_the_own_word(vocab):
    prior = fit_pair_prior(vocab, PAIRS, fitted_on={"data": "test pairs"})
    assert prior.beta > 0 and prior.pairs == len(PAIRS)
    lp = prior.log_prior(vocab, "cello")
    index = vocab.index
    assert lp[index.position("cello")] == -np.inf and lp[index.position("cellos")] == -np.inf
    assert np.isfinite(lp[index.position("violin")])
    finite = lp[np.isfinite(lp)]
    # related words first: violin beats a word of no relation
    assert lp[index.position("violin")] > np.quantile(finite, 0.99)
    with pytest.raises(Exception, match="no pair"):
        fit_pair_prior(vocab, [("zzzq", "qqqz")])


def test_the_shipped_pair_prior_reads():
    prior = read_pair_prior()
    assert isinstance(prior, PairPrior) and prior.beta > 0 and prior.pairs > 0


def test_spy_seat_figures_per_statement(vocab, game):
    prior = fit_pair_prior(vocab, PAIRS)
    pool = vocabulary_pool(vocab, ["embedding"], kind="statement")
    search = ShortlistPosterior(vocab, pool, shortlist=40, tau=0.25)
    seat = spy_seat(search, game, "p2", prior, rounds=1)
    heard = [t for t in game.turns if t.player != "p2" and t.round == game.turns[0].round]
    assert [s.turn for s in seat.steps] == [game.turns.index(t) for t in heard]
    assert seat.own_word == "Cello" and seat.civilian_word == "Violin"
    before = seat.prior_entropy_bits
    for step in seat.steps:
        assert step.gain_bits == pytest.approx(before - step.entropy_bits)
        before = step.entropy_bits
        assert 0 < step.probability <= 1 and step.rank is not None and step.rank >= 1
        assert 0 < step.shortlist_mass <= 1 + 1e-9
        assert 0 < step.entropy_bits < np.log2(len(vocab.index))
    assert seat.steps[-1].rank <= 10, seat.steps[-1].top  # "chin", "bow": violin
    with pytest.raises(Exception, match="not a spy"):
        spy_seat(search, game, "p1", prior)


def test_voter_seat_probabilities_are_consistent(vocab, game):
    prior = fit_pair_prior(vocab, PAIRS)
    pool = vocabulary_pool(vocab, ["embedding"], kind="statement")
    search = ShortlistPosterior(vocab, pool, shortlist=30, tau=0.25)
    civilians = [p.id for p in game.players if p.role == "civilian"]
    rows = game_rows(search, game, prior, seats=civilians, rounds=1)
    k = len(game.spies())
    for seat_id in civilians:
        seat = voter_seat(search, game, seat_id, prior, rounds=1, rows=rows)
        alone = voter_seat(search, game, seat_id, prior, rounds=1)
        assert set(seat.p_spy) == {p.id for p in game.players} - {seat_id}
        assert all(0 <= p <= 1 for p in seat.p_spy.values()) and 0 <= seat.p_self_spy <= 1
        # E[spies among the others] = k if I am a civilian, k - 1 if I am a spy
        expected = k * (1 - seat.p_self_spy) + (k - 1) * seat.p_self_spy
        assert sum(seat.p_spy.values()) == pytest.approx(expected)
        assert alone.p_spy.keys() == seat.p_spy.keys()
