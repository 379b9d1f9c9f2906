"""Propositions 1-3 of Karabag & Topcu against the Monte-Carlo simulator."""

from __future__ import annotations

import math

import numpy as np
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
        assert abs(r.simulated - exact) < 4 * math.sqrt(exact * (1 - exact) / 6_000)
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
    # reveal 0.5, kappa 1: rows i and j differ by 0.5 at columns i and j: L1 = 1
    assert T.revealing(8, 0.5, 1.0).alpha == pytest.approx(1.0)


def test_plot(tmp_path):
    rows = T.check([4, 5], l=3, games=2_000)
    path = T.plot_check(rows, tmp_path / "theory.png")
    assert path.stat().st_size > 5_000


# -- the paper's α and φ on hand-worked examples --------------------------------------


def test_prop1_alpha_is_the_largest_pairwise_kl():
    """Definition 1: α = max_{i,j} KL(D^{w_i} || D^{w_j})."""
    pi = np.array([[1 / 2, 1 / 2], [1 / 4, 3 / 4]])
    # KL(D^1 || D^2) = 1/2 ln((1/2)/(1/4)) + 1/2 ln((1/2)/(3/4)) = 1/2 ln 2 + 1/2 ln(2/3)
    #                = 1/2 ln(4/3) = 0.1438
    # KL(D^2 || D^1) = 1/4 ln(1/2) + 3/4 ln(3/2) = 0.1308; the largest is the first
    kl12 = 0.5 * math.log(4 / 3)
    assert kl12 > 0.25 * math.log(0.5) + 0.75 * math.log(1.5)
    assert T.kl_concealing_alpha(pi) == pytest.approx(kl12)
    # a response one word never gives and another does: no finite α
    assert T.kl_concealing_alpha(np.array([[1.0, 0.0], [0.5, 0.5]])) == math.inf
    assert T.kl_concealing_alpha(T.trivial(5).pi) == 0.0


def test_prop1_alpha_of_the_concealing_family_and_the_issue_figure():
    """ε = 0.3, K = 15 (N = 4, l = 3). Rows i, j differ only at columns i and j, where one
    has a = (1-ε)/K + ε and the other b = (1-ε)/K, so KL = a ln(a/b) + b ln(b/a)
    = (a - b) ln(a/b) = ε ln(a/b)."""
    k, eps = 15, 0.3
    a, b = (1 - eps) / k + eps, (1 - eps) / k
    alpha = eps * math.log(a / b)
    st = T.concealing(k, eps)
    assert st.alpha == pytest.approx(alpha)
    bound = 1 / 4 + 3 / 16 * math.sqrt(14 / 15 * alpha)
    assert T.concealing_bound(4, k, st.alpha) == pytest.approx(bound)
    assert bound == pytest.approx(0.3905, abs=1e-4)  # the issue's 0.391
    # mutual information (what the code used before) is smaller: a bound of 0.355
    mi = T.mutual_information(st.pi)
    assert round(T.concealing_bound(4, k, mi), 3) == 0.355


def test_prop2_alpha_theta_and_phi_on_two_words():
    """Definition 2 and Proposition 2 on D^1 = (3/4, 1/4), D^2 = (1/4, 3/4)."""
    pi = np.array([[3 / 4, 1 / 4], [1 / 4, 3 / 4]])
    # R_{1>2} = {r1}, R_{1=2} = {}, R_{1<2} = {r2}: D^1's bins (3/4, 0, 1/4), D^2's matching
    # bins (1/4, 0, 3/4); L1 = 1/2 + 0 + 1/2 = 1
    assert T.l1_revealing_alpha(pi) == pytest.approx(1.0)
    # θ = max over subsets A of the bins of min(ΣA, 1 - ΣA): sums 0, 3/4, 0, 1/4, ... -> 1/4
    assert T.revealing_theta(pi, 0, 1) == pytest.approx(0.25)
    # φ = ln((1 - 1/4)/(1/4)) / (1 - 1/2) = 2 ln 3
    assert T.revealing_phi(pi) == pytest.approx(2 * math.log(3))
    # N = 4, K = 2: 6 (K-1) exp(-(N-1) α φ / 2) = 6 exp(-3 ln 3) = 6/27
    assert T.revealing_bound(4, 2, 1.0, 2 * math.log(3)) == pytest.approx(6 / 27)


def test_prop2_with_an_equal_bin():
    """D^1 = (.5, .3, .2), D^2 = (.5, .1, .4): r1 is equally likely, so it is the '=' bin."""
    pi = np.array([[0.5, 0.3, 0.2], [0.5, 0.1, 0.4]])
    # D^1's bins (p_>, p_=, p_<) = (.3, .5, .2), D^2's matching (.1, .5, .4): L1 = .2 + 0 + .2
    assert T.l1_revealing_alpha(pi) == pytest.approx(0.4)
    # subset {=} sums to .5, so θ = 1/2 for both orders, and φ(1/2) = 2 (its limit)
    assert T.revealing_theta(pi, 0, 1) == pytest.approx(0.5)
    assert T.revealing_theta(pi, 1, 0) == pytest.approx(0.5)
    assert T.revealing_phi(pi) == 2.0
    assert T.phi_of_theta(0.5 - 1e-6) == pytest.approx(2.0, rel=1e-6)
    assert T.phi_of_theta(0.0) == math.inf


def test_prop2_bound_of_the_revealing_family_and_the_issue_figure():
    """reveal = κ = 0.9, K = 15. Rows i, j differ at columns i and j by reveal·κ each, so
    α = 2·0.81 = 1.62. D^i's bins for (i, j): p_> = reveal(κ + (1-κ)/K) = 0.816 (column i),
    p_< = reveal(1-κ)/K = 0.006 (column j), p_= = 0.178; θ = min(0.816, 0.184) = 0.184."""
    k, reveal, kappa = 15, 0.9, 0.9
    st = T.revealing(k, reveal, kappa)
    assert st.alpha == pytest.approx(2 * reveal * kappa)
    p_gt = reveal * (kappa + (1 - kappa) / k)
    theta = 1 - p_gt
    phi = math.log((1 - theta) / theta) / (1 - 2 * theta)
    assert st.phi == pytest.approx(phi)
    bound = 6 * (k - 1) * math.exp(-3 * st.alpha * phi / 2)
    assert T.revealing_bound(4, k, st.alpha, st.phi) == pytest.approx(bound)
    assert round(bound, 3) == 0.274  # no longer vacuous at N = 4 (above 1 with the old α)


def test_amb_closed_form_is_the_papers_sum():
    """Proof of Proposition 3: (1/N)[N/(N+1) + Σ_i 1/(N+2-i)](l-1)/l; for N = 4, l = 3:
    (1/4)(4/5 + 1/5 + 1/4 + 1/3 + 1/2)(2/3) = 0.3472 = H_4/4 · 2/3."""
    assert T.amb_win_rate(4, 3) == pytest.approx((4 / 5 + 1 / 5 + 1 / 4 + 1 / 3 + 1 / 2) / 6)
    assert round(T.amb_win_rate(4, 3), 4) == 0.3472
    for n in range(3, 10):
        harmonic = sum(1 / j for j in range(1, n + 1))
        assert T.amb_win_rate(n, 4) == pytest.approx(harmonic / n * 3 / 4)
        assert T.amb_win_rate(n, 4) >= T.amb_bound(n, 4)


@pytest.mark.parametrize(("n", "seed"), [(3, 5), (4, 6)])
def test_amb_simulation_agrees_with_the_closed_form(n, seed):
    """A caught first speaker that eliminated the secret's group hears nulls after it and
    guesses within its own group (right with 1/l); a model where it cannot tell wins
    (1/N)(1/(N+1))(1/l) more: 0.0167 at N = 4, 7 standard errors here."""
    games = 40_000
    exact = T.amb_win_rate(n, 3)
    r = T.simulate_amb(n, 3, games=games, seed=seed)
    se = math.sqrt(exact * (1 - exact) / games)
    assert abs(r.win_rate - exact) < 4 * se
    assert abs(r.caught_rate - sum(1 / j for j in range(1, n + 1)) / n) < 4 * math.sqrt(
        0.25 / games
    )


# -- the propositions played on real cards (``leakage play``) -------------------------


def _obs(phase, player, clues, *, secret=None, players=("p1", "p2", "p3", "p4"), seed=0):
    from leakage.games._types import ChameleonObservation

    return ChameleonObservation(
        phase=phase, player=player, role="chameleon" if secret is None else "non-chameleon",
        category="Letters", candidates=tuple("abcdefghijklmno"), secret=secret,
        players=players, clues=tuple(clues), seed=seed,
    )  # fmt: skip


def test_amb_agent_plays_the_papers_code():
    """K = 15, N = 4: groups abc, def, ghi, jkl, mno; a clue names a group by one word."""
    from leakage.games.agents import AmbiguousAgent
    from leakage.games.agents.scripted import amb_groups

    amb = AmbiguousAgent()
    assert amb_groups(tuple("abcdefghijklmno"), 4)[1] == ("d", "e", "f")
    assert [len(g) for g in amb_groups(tuple("abcdefghijklmnop"), 4)] == [4, 3, 3, 3, 3]
    # secret e (group 1); p1 named group 0: p2 names a new group, never 0 or 1
    for seed in range(20):
        clue = amb(_obs("clue", "p2", [("p1", "a")], secret="e", seed=seed))
        assert clue in tuple("ghijklmno")
    # p2 named the secret's group (inconsistent): p3 says null and votes for p2
    assert amb(_obs("clue", "p3", [("p1", "a"), ("p2", "f")], secret="e")) == "null"
    said = [("p1", "a"), ("p2", "f"), ("p3", "null"), ("p4", "null")]
    assert amb(_obs("vote", "p3", said, secret="e")) == "p2"
    # a word that names no group, or a group named before, is inconsistent too
    assert amb(_obs("vote", "p4", [("p1", "a"), ("p2", "ball")], secret="e")) == "p2"
    assert amb(_obs("vote", "p4", [("p1", "a"), ("p2", "b")], secret="e")) == "p2"
    # nobody inconsistent: vote for player 1 (player 1 itself: player 2)
    consistent = [("p1", "a"), ("p2", "g"), ("p3", "j"), ("p4", "m")]
    assert amb(_obs("vote", "p3", consistent, secret="e")) == "p1"
    assert amb(_obs("vote", "p1", consistent, secret="e")) == "p2"
    # the chameleon caught after nulls guesses in its own group; first and consistent: in
    # the group nobody named
    for seed in range(10):
        assert amb(_obs("guess", "p1", [("p1", "d"), ("p2", "null")], seed=seed)) in "def"
        assert amb(_obs("guess", "p1", consistent, seed=seed)) in "def"
        assert amb(_obs("guess", "p3", consistent, seed=seed)) in "jkl"
        assert amb(_obs("clue", "p3", consistent[:2], seed=seed)) in "defjklmno"


def test_copying_chameleon_copies_or_answers_as_the_strategy_would():
    from leakage.games.agents import CopyingChameleon, TrivialAgent
    from tests.games_support import scripted

    trivial = CopyingChameleon(TrivialAgent())
    assert trivial(_obs("clue", "p1", [])) == "null"  # first: as the strategy would
    assert trivial(_obs("vote", "p1", [])) == "p2"  # votes as the strategy: player 1's
    assert trivial(_obs("vote", "p3", [])) == "p1"
    # a strategy that names the secret's neighbour: first, it answers for a random word;
    # later, it copies an earlier clue; caught, it guesses the word the clues match
    shift = scripted(lambda o: "abcdefghijklmno"[("abcdefghijklmno".index(o.secret) + 1) % 15])
    copy = CopyingChameleon(shift)
    assert {copy(_obs("clue", "p1", [], seed=s)) for s in range(40)} == set("abcdefghijklmno")
    assert copy(_obs("clue", "p3", [("p1", "h"), ("p2", "h")])) == "h"
    assert copy(_obs("guess", "p3", [("p1", "h"), ("p2", "h"), ("p3", "h"), ("p4", "h")])) == "g"


def _play(args, default_index, tmp_path):
    import json

    from typer.testing import CliRunner

    from leakage.cli import app

    out = tmp_path / "games.jsonl"
    cmd = ["play", "chameleon", *args, "--seed", "0", "-o", str(out), "--index", str(default_index)]
    r = CliRunner().invoke(app, cmd)
    assert r.exit_code == 0, r.output
    return [json.loads(line)["meta"] for line in out.read_text().splitlines()]


def test_leakage_play_reproduces_the_trivial_rate_and_proposition_1(default_index, tmp_path):
    """Trivial non-chameleons against the copying chameleon: (1/N)(1 - 1/K) = 0.234 for
    N = 4, K = 16, under Proposition 1's bound 1/N (α = 0: the same answer for every secret)."""
    games = 1_500
    metas = _play(["--agents", "non-chameleon=trivial,chameleon=copy", "--games", str(games)],
                  default_index, tmp_path)  # fmt: skip
    win = np.mean([m["winner_role"] == "non-chameleon" for m in metas])
    exact = T.trivial_win_rate(4, 16)
    assert abs(win - exact) < 4 * math.sqrt(exact * (1 - exact) / games)
    caught = np.mean([m["caught"] for m in metas])
    assert abs(caught - 1 / 4) < 4 * math.sqrt(1 / 4 * 3 / 4 / games)
    assert win <= T.concealing_bound(4, 16, 0.0)


def test_leakage_play_reproduces_proposition_3(default_index, tmp_path):
    """π_amb against its best chameleon on real cards, K = 15 = l(N+1) with l = 3: the
    paper's exact H_N/N (l-1)/l = 0.3472 (caught H_N/N = 0.521), above the bound 0.335."""
    games = 1_500
    args = ["--agents", "non-chameleon=amb,chameleon=amb", "--candidates", "15"]
    metas = _play([*args, "--games", str(games)], default_index, tmp_path)
    assert all(m["outcome"] != "invalid" for m in metas)
    win = np.mean([m["winner_role"] == "non-chameleon" for m in metas])
    exact = T.amb_win_rate(4, 3)
    assert abs(win - exact) < 4 * math.sqrt(exact * (1 - exact) / games)
    caught, p = np.mean([m["caught"] for m in metas]), (1 + 1 / 2 + 1 / 3 + 1 / 4) / 4
    assert abs(caught - p) < 4 * math.sqrt(p * (1 - p) / games)
    assert win > T.amb_bound(4, 3) - 4 * math.sqrt(exact * (1 - exact) / games)


def test_the_copy_chameleon_is_built_knowing_the_non_chameleons_agent():
    from leakage.errors import InvalidInput
    from leakage.games.agents import AgentFactory, CopyingChameleon, TrivialAgent

    factory = AgentFactory(backend=object())
    agents = factory.agents("chameleon", "non-chameleon=trivial,chameleon=copy")
    assert isinstance(agents["chameleon"], CopyingChameleon)
    assert isinstance(agents["chameleon"].imitate, TrivialAgent)
    with pytest.raises(InvalidInput, match="imitates the non-chameleons' agent"):
        factory.build("chameleon", "copy")
