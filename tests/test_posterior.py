"""The posterior engine: properties that must hold for any log-likelihood matrix."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from leakage.posterior import (
    entropy_bits,
    posterior_trace,
    posterior_traces,
    ranks_of,
    spy_posterior,
    spy_trace,
)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
any_float = st.one_of(finite, st.just(-np.inf), st.just(np.inf), st.just(np.nan))


@st.composite
def matrices(draw, elements=finite):
    m = draw(st.integers(1, 6))
    k = draw(st.integers(1, 20))
    return draw(arrays(np.float64, (m, k), elements=elements))


@settings(max_examples=200, deadline=None)
@given(matrices(any_float))
def test_posteriors_sum_to_one_and_stay_finite(L):
    tr = posterior_trace(L)
    assert np.all(np.isfinite(tr.posterior))
    assert np.allclose(tr.posterior.sum(axis=1), 1.0)
    assert np.all(tr.posterior >= 0)
    assert np.all(np.isfinite(tr.entropy_bits))
    assert np.all(np.isfinite(tr.information_gain_bits))
    assert np.all(np.isfinite(tr.kl_bits)) and np.all(tr.kl_bits >= 0)


@settings(max_examples=200, deadline=None)
@given(matrices(any_float))
def test_entropy_within_bounds(L):
    k = L.shape[1]
    tr = posterior_trace(L)
    assert np.all(tr.entropy_bits >= 0)
    assert np.all(tr.entropy_bits <= np.log2(k) + 1e-9)


@settings(max_examples=200, deadline=None)
@given(matrices(finite), st.randoms(use_true_random=False))
def test_invariant_to_candidate_order(L, rnd):
    k = L.shape[1]
    perm = list(range(k))
    rnd.shuffle(perm)
    a = posterior_trace(L, secret_index=0)
    b = posterior_trace(L[:, perm], secret_index=perm.index(0))
    assert np.allclose(a.posterior[:, perm], b.posterior)
    assert np.allclose(a.entropy_bits, b.entropy_bits)
    assert np.array_equal(a.secret_rank, b.secret_rank)


@settings(max_examples=100, deadline=None)
@given(matrices(finite), st.data())
def test_gains_add_up_and_uncounted_turns_change_nothing(L, data):
    m = L.shape[0]
    counted = np.array(data.draw(st.lists(st.booleans(), min_size=m, max_size=m)))
    tr = posterior_trace(L, counted=counted)
    final = tr.entropy_bits[-1]
    assert np.isclose(tr.information_gain_bits.sum(), tr.prior_entropy_bits - final, atol=1e-6)
    previous = np.vstack([tr.prior, tr.posterior[:-1]])
    for i in np.flatnonzero(~counted):
        assert np.allclose(tr.posterior[i], previous[i])
        assert tr.information_gain_bits[i] == 0 and tr.kl_bits[i] == 0


def test_zero_count_does_not_veto():
    # -inf for the secret on one clue would make it impossible forever; it is floored instead.
    L = np.array([[0.0, -np.inf, 0.0], [-50.0, 800.0, -50.0]])
    tr = posterior_trace(L, secret_index=1)
    assert tr.secret_rank[-1] == 1


def test_uniform_prior_and_given_prior():
    tr = posterior_trace(np.zeros((1, 4)))
    assert np.allclose(tr.posterior[0], 0.25)
    assert tr.entropy_bits[0] == pytest.approx(2.0)
    tr = posterior_trace(np.zeros((1, 2)), prior=[3, 1])
    assert np.allclose(tr.posterior[0], [0.75, 0.25])
    with pytest.raises(ValueError):
        posterior_trace(np.zeros((1, 2)), prior=[1, -1])


def test_bayes_update_matches_hand_computation():
    L = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3]]))
    tr = posterior_trace(L, secret_index=1)
    expected = np.array([0.05, 0.15, 0.075]) / 0.275
    assert np.allclose(tr.posterior[1], expected)
    assert tr.secret_rank.tolist() == [3, 1]  # ties count against the secret
    assert tr.in_top_k(1).tolist() == [False, True]


def test_rank_ties_count_against_candidate():
    assert ranks_of(np.full((1, 5), 0.2), 2).tolist() == [5]


def test_entropy_of_point_mass_is_zero():
    assert entropy_bits(np.array([1.0, 0.0, 0.0])) == 0.0


@settings(max_examples=100, deadline=None)
@given(
    arrays(np.float64, st.integers(2, 8), elements=finite),
    st.integers(1, 3),
    st.sampled_from(["known", "marginalise"]),
)
def test_spy_posterior_marginals(d, n_spies, assignment):
    if n_spies >= d.size:
        n_spies = d.size - 1
    p = spy_posterior(d, n_spies, assignment=assignment)
    assert np.all(np.isfinite(p)) and np.all((p >= -1e-12) & (p <= 1 + 1e-12))
    assert p.sum() == pytest.approx(n_spies)


def test_spy_posterior_finds_the_odd_one_out():
    # Player 2's statements favour the spy word; the others' favour the civilian word.
    d = np.array([2.0, 1.5, -3.0, 2.5])
    p = spy_posterior(d, 1)
    assert int(np.argmax(p)) == 2 and p[2] > 0.9
    # Not knowing which word is the civilians', the odd one out is still the suspect.
    pm = spy_posterior(d, 1, assignment="marginalise")
    assert int(np.argmax(pm)) == 2
    # No evidence: every player equally likely.
    assert np.allclose(spy_posterior(np.zeros(6), 2), 2 / 6)


def test_bad_shapes_are_errors():
    with pytest.raises(ValueError):
        posterior_trace(np.zeros(3))
    with pytest.raises(ValueError):
        posterior_trace(np.zeros((2, 3)), counted=[True])
    with pytest.raises(ValueError):
        spy_posterior(np.zeros(3), 3)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_many_games_at_once_give_what_each_game_gives_alone(data):
    g = data.draw(st.integers(1, 5))
    m = data.draw(st.integers(0, 5))
    k = data.draw(st.integers(1, 12))
    L = data.draw(arrays(np.float64, (g, m, k), elements=any_float))
    counted = data.draw(arrays(np.bool_, (g, m)))
    with_secret = data.draw(st.booleans())
    secret = data.draw(st.lists(st.integers(0, k - 1), min_size=g, max_size=g))

    many = posterior_traces(L, counted, secret if with_secret else None)

    assert len(many) == g
    for i, got in enumerate(many):
        if m == 0:
            want_h = np.log2(k)
            assert got.posterior.shape == (0, k) and got.prior_entropy_bits == pytest.approx(want_h)
            continue
        want = posterior_trace(
            L[i], counted=counted[i], secret_index=secret[i] if with_secret else None
        )
        for name in ("prior", "posterior", "entropy_bits", "information_gain_bits", "kl_bits"):
            np.testing.assert_allclose(
                getattr(got, name), getattr(want, name), rtol=1e-12, atol=1e-12, err_msg=name
            )
        np.testing.assert_array_equal(got.counted, want.counted)
        assert got.prior_entropy_bits == pytest.approx(want.prior_entropy_bits, rel=1e-12)
        if with_secret:
            np.testing.assert_allclose(got.secret_probability, want.secret_probability, rtol=1e-12)
            np.testing.assert_array_equal(got.secret_rank, want.secret_rank)
        else:
            assert got.secret_probability is None and got.secret_rank is None


def test_many_games_check_their_shapes():
    with pytest.raises(ValueError, match="games x clues x candidates"):
        posterior_traces(np.zeros((4, 16)), np.ones((4,), bool))
    with pytest.raises(ValueError, match="counted"):
        posterior_traces(np.zeros((2, 4, 16)), np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="secret_index"):
        posterior_traces(np.zeros((2, 4, 16)), np.ones((2, 4), bool), [0, 16])


@st.composite
def spy_games(draw):
    n = draw(st.integers(2, 6))
    m = draw(st.integers(0, 8))
    k = draw(st.integers(2, 5))
    loglik = draw(arrays(np.float64, (m, k), elements=st.floats(-50, 0)))
    seat = draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    own = draw(st.lists(st.integers(0, 1), min_size=m, max_size=m))
    return loglik, seat, own, n, draw(st.integers(1, n - 1))


@settings(max_examples=100, deadline=None)
@given(spy_games(), st.sampled_from(["known", "marginalise"]))
def test_spy_trace_is_each_statement_alone_and_the_evidence_so_far(game, assignment):
    loglik, seat, own, n, n_spies = game
    tr = spy_trace(loglik, seat, own, n, n_spies, assignment=assignment)
    m, k = loglik.shape
    assert tr.posterior.shape == (m, k) and tr.spy_posterior.shape == (m, n)
    assert tr.prior_entropy_bits == pytest.approx(np.log2(k))
    evidence = np.zeros(n)
    for i in range(m):  # statement by statement, as the definition reads
        alone = posterior_trace(loglik[i : i + 1], secret_index=own[i])
        np.testing.assert_allclose(tr.posterior[i], alone.posterior[0], rtol=1e-9, atol=1e-12)
        assert tr.entropy_bits[i] == pytest.approx(alone.entropy_bits[0], abs=1e-9)
        assert tr.information_gain_bits[i] == pytest.approx(
            alone.information_gain_bits[0], abs=1e-9
        )
        assert tr.kl_bits[i] == pytest.approx(alone.kl_bits[0], abs=1e-9)
        assert tr.secret_probability[i] == pytest.approx(alone.secret_probability[0])
        assert tr.secret_rank[i] == ranks_of(tr.posterior[i], own[i])[0]
        evidence[seat[i]] += loglik[i, 0] - loglik[i, 1]
        want = spy_posterior(evidence, n_spies, assignment=assignment)
        np.testing.assert_allclose(tr.spy_posterior[i], want, rtol=1e-9, atol=1e-12)
    assert tr.outlier_scores is None


def test_spy_trace_worked_by_hand():
    # Two candidates, three players, one spy. Player 1's one statement favours the spy's
    # word by 2 nats; player 0's favours the civilians' word by 1 nat.
    loglik = np.array([np.log([0.5, 0.5]), np.log([0.25, 0.75]), [0.0, -1.0]])
    tr = spy_trace(loglik, [2, 1, 0], [0, 1, 0], 3)
    np.testing.assert_allclose(tr.posterior[1], [0.25, 0.75])
    assert tr.secret_probability.tolist() == pytest.approx([0.5, 0.75, np.e / (1 + np.e)])
    assert tr.secret_rank.tolist() == [2, 1, 1]
    assert tr.entropy_bits[0] == pytest.approx(1.0) and tr.information_gain_bits[0] == 0
    d = np.array([1.0, np.log(0.25 / 0.75), 0.0])  # civilian minus spy, after all three
    p = np.exp(-d) / np.exp(-d).sum()
    np.testing.assert_allclose(tr.spy_posterior[-1], p)
    np.testing.assert_allclose(tr.spy_posterior[0], [1 / 3] * 3)


def test_spy_trace_checks_its_shapes():
    with pytest.raises(ValueError, match="statements x candidates"):
        spy_trace(np.zeros((2, 1)), [0, 1], [0, 0], 2)
    with pytest.raises(ValueError, match="one entry per statement"):
        spy_trace(np.zeros((2, 2)), [0], [0, 0], 2)
    with pytest.raises(ValueError, match="out of range"):
        spy_trace(np.zeros((2, 2)), [0, 2], [0, 0], 2)
    empty = spy_trace(np.zeros((0, 3)), [], [], 4, 2)
    assert empty.posterior.shape == (0, 3) and empty.spy_posterior.shape == (0, 4)
