"""The pooling variants of ``benchmarks/studies/pooling_variants.py``: each pool on small
hand-worked items, and the fit recovering known parameters from items drawn from a known model.
No models, no ``../shared``."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.studies import pooling_variants as pv


def _rows() -> np.ndarray:
    """Two members, two clues, three candidates (B x m x K), rows centred."""
    return np.array(
        [
            [[1.0, 0.0, -1.0], [0.5, 0.0, -0.5]],
            [[-1.0, 2.0, -1.0], [0.0, 0.3, -0.3]],
        ]
    )


def test_linear_pool_hand_worked() -> None:
    # a = (1, 2): L = 1 * (1.5, 0, -1.5) + 2 * (-1, 2.3, -1.3) = (-0.5, 4.6, -4.1);
    # softmax: exp(-5.1) / (exp(-5.1) + 1 + exp(-8.7)) = 0.0060967 / 1.0062627 = 0.0060588
    lp = pv.linear_pool(_rows(), np.array([1.0, 2.0]))
    want = np.array([-0.5, 4.6, -4.1])
    want = want - np.log(np.exp(want).sum())
    assert np.allclose(lp, want)
    assert np.exp(lp[0]) == pytest.approx(0.0060588, abs=1e-6)


def test_floors_with_no_floor_is_linear() -> None:
    temps, weights = np.array([0.5, 2.0]), np.array([1.5, 0.4])
    got = pv.floor_pool(_rows(), temps, weights, np.zeros(2))
    assert np.allclose(got, pv.linear_pool(_rows(), weights / temps))


def test_floors_k2_hand_worked() -> None:
    # One member, one clue, K = 2, row (1, -1), T = 1, w = 1, eps = 0.2:
    # softmax = (e / (e + 1/e), ...) = (0.880797, 0.119203);
    # q = log(0.8 * p + 0.1) = (log 0.804638, log 0.195362);
    # posterior = (0.804638, 0.195362) (already normalised: the floor keeps the sum 1).
    rows = np.array([[[1.0, -1.0]]])
    lp = pv.floor_pool(rows, np.ones(1), np.ones(1), np.array([0.2]))
    assert np.allclose(np.exp(lp), [0.804638, 0.195362], atol=1e-6)


def test_floor_bounds_a_confidently_wrong_member() -> None:
    # A member puts the secret (candidate 0) last by 50 nats on each of 3 clues: pooled
    # linearly it sinks the secret; with a floor eps its cost is at most log(K / eps) a clue.
    k, eps = 4, 0.1
    wrong = np.tile([-50.0, 50.0, 0.0, 0.0], (3, 1))
    right = np.tile([2.0, 0.0, 0.0, 0.0], (3, 1))
    rows = np.stack([right, wrong])
    linear = pv.linear_pool(rows, np.ones(2))
    floors = pv.floor_pool(rows, np.ones(2), np.ones(2), np.full(2, eps))
    assert -linear[0] > 100
    alone = pv.floor_pool(rows[:1], np.ones(1), np.ones(1), np.full(1, eps))
    assert -floors[0] <= -alone[0] + 3 * np.log(k / eps) + 1e-9
    assert -floors[0] < 15


def test_m_scale_at_one_clue_is_linear_and_scales_with_m() -> None:
    one = _rows()[:, :1]
    a = np.array([0.7, 1.3])
    assert np.allclose(pv.m_scale_pool(one, a, 0.8), pv.linear_pool(one, a))
    # m = 2, gamma = 1: half the summed evidence, i.e. the linear pool with a / 2
    assert np.allclose(pv.m_scale_pool(_rows(), a, 1.0), pv.linear_pool(_rows(), a / 2))


def test_mixture_is_the_weighted_average_of_member_posteriors() -> None:
    rows, a, pi = _rows(), np.array([1.0, 0.5]), np.array([0.25, 0.75])
    own = [np.exp(pv.linear_pool(rows[b : b + 1], a[b : b + 1])) for b in range(2)]
    got = np.exp(pv.mixture_pool(rows, a, pi))
    assert np.allclose(got, pi[0] * own[0] + pi[1] * own[1])
    assert got.sum() == pytest.approx(1.0)
    # with the log-linear pool as a third component
    poe = np.array([2.0, 1.0])
    pi3 = np.array([0.2, 0.3, 0.5])
    got3 = np.exp(pv.mixture_pool(rows, a, pi3, poe))
    want3 = pi3[0] * own[0] + pi3[1] * own[1] + pi3[2] * np.exp(pv.linear_pool(rows, poe))
    assert np.allclose(got3, want3)


def test_pools_take_stacks_of_items() -> None:
    stack = np.stack([_rows(), -_rows()])
    a = np.array([1.0, 2.0])
    for variant, params in (
        ("linear", {"a": a}),
        ("floors", {"temps": np.ones(2), "weights": a, "eps": np.full(2, 0.1)}),
        ("m_scale", {"a": a, "gamma": 0.5}),
        ("mixture", {"a": a, "pi": np.array([0.5, 0.5])}),
        ("mixture_poe", {"a": a, "pi": np.full(3, 1 / 3), "poe": a}),
    ):
        both = pv.log_posterior(variant, stack, params)
        assert both.shape == (2, 3)
        assert np.allclose(both[1], pv.log_posterior(variant, stack[1], params))


def test_unpack_sizes_and_ranges() -> None:
    for variant in pv.VARIANTS:
        x = pv.initial(variant, 3)
        params = pv.unpack(variant, x, 3)
        assert pv.log_posterior(variant, np.zeros((3, 2, 5)), params).shape == (5,)
    assert pv.unpack("floors", pv.initial("floors", 2), 2)["eps"] == pytest.approx(
        [1 / (1 + np.exp(3))] * 2
    )
    with pytest.raises(ValueError, match="unknown pooling variant"):
        pv.initial("nope", 2)


def _synthetic(a: np.ndarray, n: int, seed: int) -> tuple[list[np.ndarray], list[int]]:
    """Items of 1-3 clues on 6 candidates whose truth is drawn from the linear pool with
    multipliers ``a``."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for i in range(n):
        r = rng.normal(0, 1, (a.size, 1 + i % 3, 6))
        r -= r.mean(axis=-1, keepdims=True)
        p = np.exp(pv.linear_pool(r, a))
        rows.append(r)
        truth.append(int(rng.choice(6, p=p)))
    return rows, truth


def test_fit_recovers_known_multipliers() -> None:
    a = np.array([2.0, 0.5])
    rows, truth = _synthetic(a, 3000, seed=1)
    params, loss = pv.fit("linear", rows, truth, l2=0.0)
    assert params["a"] == pytest.approx(a, rel=0.12)
    # the floors variant finds little floor when there is none, and about the same w / T
    floors, floor_loss = pv.fit("floors", rows, truth, l2=0.0)
    assert floors["eps"].max() < 0.1
    assert floors["weights"] / floors["temps"] == pytest.approx(a, rel=0.15)
    assert floor_loss <= loss + 1e-3
    # m_scale finds gamma near 0
    scaled, _ = pv.fit("m_scale", rows, truth, l2=0.0)
    assert abs(scaled["gamma"]) < 0.15


def test_fit_recovers_a_known_mixture_weight() -> None:
    # member 0 is right (its own posterior with a = 1.5 draws the truth) on 80% of items,
    # member 1 (a = 1.5) on the rest
    rng = np.random.default_rng(2)
    rows, truth = [], []
    for _ in range(3000):
        r = rng.normal(0, 1, (2, 1, 5))
        r -= r.mean(axis=-1, keepdims=True)
        b = 0 if rng.random() < 0.8 else 1
        p = np.exp(pv.linear_pool(r[b : b + 1], np.array([1.5])))
        rows.append(r)
        truth.append(int(rng.choice(5, p=p)))
    params, _ = pv.fit("mixture", rows, truth, l2=0.0)
    assert params["pi"][0] == pytest.approx(0.8, abs=0.08)
    assert params["a"] == pytest.approx([1.5, 1.5], rel=0.25)


def test_paired_and_uk_rank() -> None:
    pa = np.array([[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]])
    pb = np.array([[0.2, 0.7, 0.1], [0.2, 0.5, 0.3]])
    truth = np.array([0, 1])
    d = pv.paired(pa, pb, truth, ["w1", "w2"])
    assert d["top1"] == pytest.approx(0.5)
    assert d["log_loss"] == pytest.approx((np.log(0.2) - np.log(0.7)) / 2, abs=1e-4)
    r = pv.uk_rank(np.log(pa[1]), ["A", "B", "C"], "C")
    assert r == {"rank": 2, "of": 3, "p_secret": 0.3, "top3": [["B", 0.5], ["C", 0.3], ["A", 0.2]]}
