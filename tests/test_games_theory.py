"""Propositions 1-3 of Karabag & Topcu against the Monte-Carlo simulator."""

from __future__ import annotations

import math

import pytest

from leakage.games import theory as T


def test_the_trivial_strategy_wins_23_percent_for_4_players_and_16_words():
    r = T.simulate(T.trivial(16), 4, games=60_000, seed=1)
    assert T.trivial_win_rate(4, 16) == pytest.approx(0.234375)
    assert abs(r.win_rate - 0.234375) < 4 * r.stderr
    assert round(r.win_rate, 2) in (0.23, 0.24)
    assert abs(r.caught_rate - 0.25) < 0.01 and abs(r.guess_rate - 1 / 16) < 0.01


def test_simulated_win_rates_respect_the_bounds_for_4_to_12_players():
    rows = T.check(range(4, 13), l=3, games=6_000, seed=3)
    assert {r.kind for r in rows} == {"exact", "upper", "lower"}
    broken = [r for r in rows if not r.respected]
    assert not broken, broken
    amb = [r for r in rows if r.strategy == "amb"]
    # π_amb's exact rate is H_N / N (l-1)/l: the simulation finds it
    for r in amb:
        exact = sum(1 / j for j in range(1, r.n + 1)) / r.n * 2 / 3
        assert abs(r.simulated - exact) < 4 * r.stderr + 1e-3
    # the revealing bound bites for large N and the simulation stays under it
    tight = [r for r in rows if r.strategy.startswith("revealing") and r.bound < 1]
    assert tight and all(r.simulated < r.bound for r in tight)


def test_the_check_can_fail():
    """A bound that is too optimistic is caught: the check is not vacuous."""
    rows = T.check([4], l=3, games=6_000, seed=0)
    amb = next(r for r in rows if r.strategy == "amb")
    fake = T.CheckRow("amb", 4, 15, amb.simulated, amb.stderr, amb.simulated + 0.05, "lower")
    assert not fake.respected


def test_bound_formulas():
    assert T.concealing_bound(4, 16, 0.0) == pytest.approx(0.25)
    assert T.concealing_bound(4, 16, 1.0) == pytest.approx(0.25 + 3 / 16 * math.sqrt(15 / 16))
    assert T.revealing_bound(5, 16, 1.0, 0.5) == pytest.approx(90 * math.exp(-1))
    assert T.amb_bound(4, 4) == pytest.approx((math.log(5) + 0.4) / 4 * 0.75)
    assert T.mutual_information(T.concealing(8, 0.0).pi) == pytest.approx(0.0, abs=1e-12)
    assert T.mutual_information(T.concealing(8, 1.0).pi) == pytest.approx(math.log(8))
    assert T.revealing(8, 0.5, 1.0).alpha == pytest.approx(2.0)


def test_plot(tmp_path):
    rows = T.check([4, 5], l=3, games=2_000)
    path = T.plot_check(rows, tmp_path / "theory.png")
    assert path.stat().st_size > 5_000
