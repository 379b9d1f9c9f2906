"""Game metrics against their papers: each expected value is worked by hand, in the comments,
from the paper's definition (Kim et al. section IV, Gu et al. section 6.1, MAgIC section 3.2)
on a tiny game built here, so a drift from the definition fails."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from leakage.games.metrics import (
    CHAMELEON_METRICS,
    METRIC_SOURCES,
    SPY_METRICS,
    credit_win_rates,
    game_metrics,
    metrics_table,
)
from leakage.transcripts import ChameleonTranscript, SpyGameTranscript

REPO = Path(__file__).resolve().parents[1]


def _spy(
    game_id: str,
    spies: str,
    civilians: str,
    votes: list[tuple[int, str, str]],
    eliminations: list[tuple[str, int]],
    meta: dict,
    agents: dict[str, str] | None = None,
) -> SpyGameTranscript:
    agents = agents or {}
    players = [{"id": p, "role": "civilian", "agent": agents.get(p)} for p in civilians]
    players += [{"id": p, "role": "spy", "agent": agents.get(p)} for p in spies]
    return SpyGameTranscript.model_validate(
        {
            "game": "spygame",
            "id": game_id,
            "players": players,
            "words": {"civilian": "sun", "spy": "moon"},
            "turns": [{"player": civilians[0], "text": "bright", "round": 1}],
            "votes": [{"voter": v, "target": t, "round": r} for r, v, t in votes],
            "eliminations": [{"player": p, "round": r} for p, r in eliminations],
            "meta": meta,
        }
    )


def _refl(rnd: int, player: str, self_: str, suspect: str, **extra) -> dict:
    return {"round": rnd, "player": player, "self": self_, "suspect": suspect, **extra}


# G1, a Gu et al. game: civilians 1-4, spy 5, no one told its role, only the vote eliminates.
#   round 1: 1->5 2->4 3->4 4->5 5->4          4 (a civilian) voted out
#   round 2: 1->5 2->5 3->2 5->2               tie: no one out
#   round 3: 1->5 2->5 3->5 (5 abstains)       5 (the spy) voted out; civilians win
G1_VOTES = [
    (1, "1", "5"), (1, "2", "4"), (1, "3", "4"), (1, "4", "5"), (1, "5", "4"),
    (2, "1", "5"), (2, "2", "5"), (2, "3", "2"), (2, "5", "2"),
    (3, "1", "5"), (3, "2", "5"), (3, "3", "5"),
]  # fmt: skip
G1 = _spy(
    "g1",
    spies="5",
    civilians="1234",
    votes=G1_VOTES,
    eliminations=[("4", 1), ("5", 3)],
    meta={
        "outcome": "civilians_win",
        "winner_role": "civilian",
        "rounds_played": 3,
        "roles_known": False,
        "reflections": [
            _refl(1, "1", "civilian", "5", thinks={"2": "4"}),
            _refl(1, "2", "civilian", "4", other_word="Moon"),
            _refl(1, "5", "civilian", "4", other_word="Sun"),
            _refl(2, "1", "spy", "5", other_word="star"),
            _refl(2, "5", "spy", "2", thinks={"1": "5", "3": "2"}),
            _refl(3, "5", "civilian", "1"),
        ],
    },
)
# G2, a CK-Arena game: civilians a b c d, spies x y, roles told, a judge removes c in round 1
# before the vote (meta.elimination_causes).
#   round 1: a->x b->x d->y x->d y->d          tie: no one voted out (c is out: 'metric')
#   round 2: a->x b->d d->x x->d y->d          d voted out; 2 spies vs 2 civilians: spies win
G2_VOTES = [
    (1, "a", "x"), (1, "b", "x"), (1, "d", "y"), (1, "x", "d"), (1, "y", "d"),
    (2, "a", "x"), (2, "b", "d"), (2, "d", "x"), (2, "x", "d"), (2, "y", "d"),
]  # fmt: skip
G2 = _spy(
    "g2",
    spies="xy",
    civilians="abcd",
    votes=G2_VOTES,
    eliminations=[("c", 1), ("d", 2)],
    meta={"winner_role": "spy", "elimination_causes": {"c": "metric", "d": "vote"}},
)


def _rows(games) -> dict:
    return {r.metric: r for r in metrics_table(games, n_boot=200)["spygame"]}


def test_kim_et_al_metrics_by_hand():
    rows = _rows([G1, G2])
    # WR (IV-A) = games won by the spy / games = (0 + 1) / 2
    assert rows["spy_win_rate"].value == pytest.approx(1 / 2)
    # LR (IV-A) = turns (rounds) per game, averaged = (3 + 2) / 2
    assert rows["average_survival_rounds"].value == pytest.approx(5 / 2)
    # CR (IV-C) = games in which the spy was caught / games lost: G1 only lost, 5 voted out
    assert rows["caught_rate"].value == pytest.approx(1 / 1) and rows["caught_rate"].games == 1
    # VR (IV-C) = votes at the spy by citizens / citizens' votes (the spy's votes excluded):
    #   G1: round 1 1->5 4->5 of 4, round 2 1->5 2->5 of 3, round 3 3 of 3 = 7 / 10
    #   G2: round 1 a->x b->x d->y of 3, round 2 a->x d->x of 3 = 5 / 6
    assert rows["vote_rate"].value == pytest.approx((7 + 5) / (10 + 6))
    # VE (IV-C) = entropy of the citizens' votes of each game, averaged over games (bits):
    #   G1 targets 5:7 4:2 2:1 of 10; G2 x:4 y:1 d:1 of 6
    h1 = -(0.7 * math.log2(0.7) + 0.2 * math.log2(0.2) + 0.1 * math.log2(0.1))
    h2 = -(4 / 6 * math.log2(4 / 6) + 2 * (1 / 6) * math.log2(1 / 6))
    assert rows["vote_entropy_bits"].value == pytest.approx((h1 + h2) / 2)
    # NR (IV-B, adapted) = spies that name the civilians' word / spies, in games whose
    # reflections state other words: G1's spy says "Sun" (= "sun") in round 1 -> 1 / 1
    assert rows["notice_rate"].value == pytest.approx(1.0) and rows["notice_rate"].games == 1


def test_kim_caught_rate_counts_lost_games_not_spies():
    # G3: spies x y; y is removed by the judge in round 1, x voted out in round 2 (the game-
    # ending elimination was the vote's) -> caught. G4: x voted out in round 1, y removed by
    # the judge in round 2 (the game ends by the judge) -> lost, not caught.
    # CR = 1 caught / 2 lost games; spies eliminated / spies (ours) would be 4 / 4.
    lost = {"winner_role": "civilian"}
    g3 = _spy("g3", "xy", "abcd", [(2, "a", "x")], [("y", 1), ("x", 2)],
              {**lost, "elimination_causes": {"y": "metric", "x": "vote"}})  # fmt: skip
    g4 = _spy("g4", "xy", "abcd", [(1, "a", "x")], [("x", 1), ("y", 2)],
              {**lost, "elimination_causes": {"x": "vote", "y": "metric"}})  # fmt: skip
    rows = _rows([g3, g4])
    assert rows["caught_rate"].value == pytest.approx(1 / 2)
    assert rows["spy_elimination_rate"].value == pytest.approx(4 / 4)


def test_gu_et_al_metrics_by_hand():
    rows = _rows([G1, G2])
    # voting pressure = votes the spy receives per round, over all rounds and games:
    #   G1 rounds 1-3: 2 + 2 + 3 = 7 votes at 5; G2 rounds 1-2: 3 + 2 = 5 votes at x or y
    assert rows["voting_pressure"].value == pytest.approx((7 + 5) / (3 + 2))
    # VSR = voting rounds in which a civilian is eliminated (by that vote) / voting rounds:
    #   G1: round 1 (4 out) of 3; G2: round 2 (d out) of 2; c went to the judge, not a vote
    assert rows["vsr"].value == pytest.approx((1 + 1) / (3 + 2))
    # average survival rounds = rounds a game lasts, averaged = (3 + 2) / 2
    assert rows["average_survival_rounds"].value == pytest.approx(2.5)
    # SR@K = games in which the spy is alive at the end of round K (per spy): G1's 5 is out in
    # round 3, G2's x and y never: SR@1 = SR@2 = (1 + 2) / 3, SR@3..6 = (0 + 2) / 3
    for k in (1, 2):
        assert rows[f"sr_at_{k}"].value == pytest.approx(3 / 3)
    for k in (3, 4, 5, 6):
        assert rows[f"sr_at_{k}"].value == pytest.approx(2 / 3)
    # self-detection = spy games in which the spy infers it is the spy by the end of the game:
    #   G1's spy says civilian, spy, civilian: its last word is civilian -> 0 / 1 (G2: roles
    #   were told, no reflections: not counted)
    assert rows["self_detection_rate"].value == pytest.approx(0.0)
    assert rows["self_detection_rate"].games == 1


def test_gu_self_detection_is_the_last_stated_role_per_spy():
    # spies x y. x: civilian, civilian, spy (ends knowing); y: spy, civilian (ends wrong).
    # Gu: 1 of 2 spies knows by the end. Ours, per reflection: 2 "spy" of 5 spy reflections.
    refl = [_refl(1, "x", "civilian", "a"), _refl(1, "y", "spy", "a"),
            _refl(2, "x", "civilian", "a"), _refl(2, "y", "civilian", "a"),
            _refl(3, "x", "spy", "a")]  # fmt: skip
    g = _spy("g5", "xy", "abcd", [], [], {"winner_role": "spy", "reflections": refl})
    m = game_metrics(g)
    assert m["self_detection_rate"] == (1, 2)
    assert m["spy_self_report_rate"] == (2, 5)
    told = _spy("g6", "xy", "abcd", [], [], {"roles_known": True, "reflections": refl})
    assert game_metrics(told)["self_detection_rate"] is None  # told: nothing to detect


def test_magic_metrics_by_hand():
    rows = _rows([G1, G2])
    # S_J = n_cv / n_v: civilians' votes at a spy / civilians' votes = (7 + 5) / (10 + 6)
    assert rows["judgement"].value == pytest.approx(12 / 16)
    # S_D = n_wuc / n_uc + 0.25 n_wcg / n_cg; Undercover has no code guesses:
    #   spies won G2, lost G1 -> 1 / 2 + 0
    assert rows["deception"].value == pytest.approx(1 / 2)
    # S_self = correct role identifications / all, every player (G1's reflections):
    #   1 civilian ✓, 2 civilian ✓, 5 civilian ✗, 1 spy ✗, 5 spy ✓, 5 civilian ✗ -> 3 / 6
    assert rows["self_awareness"].value == pytest.approx(3 / 6)
    # S_R = (n_c_gold + n_c_inter) / (n_gold + n_inter):
    #   gold (own suspect is the spy 5): 1:5 ✓ 2:4 ✗ 5:4 ✗ | 1:5 ✓ 5:2 ✗ | 5:1 ✗ -> 2 of 6
    #   inter: round 1, 1 thinks 2 suspects 4: 2 said 4 ✓; round 2, 5 thinks 1 suspects 5: ✓,
    #   5 thinks 3 suspects 2: 3 stated nothing in round 2, not checkable -> 2 of 2
    assert rows["reasoning"].value == pytest.approx((2 + 2) / (6 + 2))


def test_magic_reasoning_needs_the_second_order_analysis():
    plain = [{k: v for k, v in r.items() if k != "thinks"} for r in G1.meta["reflections"]]
    g = G1.model_copy(update={"meta": {**G1.meta, "reflections": plain}})
    assert game_metrics(g)["reasoning"] is None  # the gold part alone is not S_R
    row = _rows([g])["reasoning"]
    assert row.value is None and "thinks" in (row.reason or "")


def _chameleon(game_id: str, votes: dict[str, str], accused: str, guess: str | None):
    # a b are non-chameleons, c the chameleon; the secret is Golf
    return ChameleonTranscript.model_validate(
        {
            "game": "chameleon",
            "id": game_id,
            "players": [
                {"id": "a", "role": "non-chameleon"},
                {"id": "b", "role": "non-chameleon"},
                {"id": "c", "role": "chameleon"},
            ],
            "turns": [{"player": "a", "text": "club"}],
            "votes": [{"voter": v, "target": t} for v, t in votes.items()],
            "category": "Sports",
            "candidates": ["Golf", "Tennis", "Rugby"],
            "secret": "Golf",
            "chameleon_guess": guess,
            "meta": {"accused": accused},
        }
    )


def test_magic_chameleon_side_by_hand():
    games = [
        _chameleon("c1", {"a": "c", "b": "a", "c": "a"}, "a", None),  # not caught: c wins
        _chameleon("c2", {"a": "c", "b": "c", "c": "a"}, "c", "Tennis"),  # caught, wrong
        _chameleon("c3", {"a": "c", "b": "c", "c": "b"}, "c", "Golf"),  # caught, right: c wins
    ]
    rows = {r.metric: r for r in metrics_table(games, n_boot=200)["chameleon"]}
    assert set(rows) == set(CHAMELEON_METRICS)
    # S_J: non-chameleons' votes at c / their votes = (1 + 2 + 2) / (2 + 2 + 2)
    assert rows["judgement"].value == pytest.approx(5 / 6)
    # S_D = wins as chameleon / games + 0.25 * wrong code guesses / code guesses
    #     = 2 / 3 + 0.25 * 1 / 2
    assert rows["deception"].value == pytest.approx(2 / 3 + 0.25 * 1 / 2)
    assert rows["deception"].ci_low <= rows["deception"].value <= rows["deception"].ci_high
    assert rows["reasoning"].value is None  # no reflections in these games


def test_the_projects_own_metrics_by_hand():
    # G3: civilians a b c d, spies x y; no winner recorded.
    #   round 1: a->b b->a c->b d->x x->b y->b     b (a civilian) voted out
    #   round 2: a->x c->x d->x x->a y->a          x voted out
    g = _spy("g3", "xy", "abcd",
             [(1, "a", "b"), (1, "b", "a"), (1, "c", "b"), (1, "d", "x"), (1, "x", "b"),
              (1, "y", "b"), (2, "a", "x"), (2, "c", "x"), (2, "d", "x"), (2, "x", "a"),
              (2, "y", "a")],
             [("b", 1), ("x", 2)], {})  # fmt: skip
    m = game_metrics(g)
    # civilians' plurality: round 1 b (2 of 4), a civilian; round 2 x (3 of 3) -> 1 / 2
    assert m["civilian_plurality_on_spy"] == (1, 2)
    # rounds with a spy in: both; no spy out in round 1, x out in round 2 -> 1 / 2
    assert m["spy_safe_round_rate"] == (1, 2)
    # mean over rounds of the entropy of all votes: round 1 b:4 a:1 x:1, round 2 x:3 a:2
    h1 = -(4 / 6 * math.log2(4 / 6) + 2 * (1 / 6) * math.log2(1 / 6))
    h2 = -(0.6 * math.log2(0.6) + 0.4 * math.log2(0.4))
    assert m["round_vote_entropy_bits"] == pytest.approx((h1 + h2, 2))
    # votes at spies / votes: round 1 d->x, round 2 three -> 4 / 11
    assert m["spy_vote_share"] == (4, 11)
    # eliminations that hit a civilian: b of b, x -> 1 / 2; spies out: x of x, y -> 1 / 2
    assert m["civilian_elimination_rate"] == (1, 2)
    assert m["spy_elimination_rate"] == (1, 2)
    # rounds taken part in (2 rounds played): civilians 2 + 1 + 2 + 2, spies 2 + 2
    assert m["player_rounds_civilian"] == (7, 4) and m["player_rounds_spy"] == (4, 2)
    assert m["civilian_win_rate"] is None  # no winner recorded
    assert game_metrics(G2)["civilian_win_rate"] == (0.0, 1.0)
    # G1's reflections: civilians' suspects 1:5 ✓ 2:4 ✗ 1:5 ✓ -> 2 / 3; other words: the spy
    # names "Sun" (civilians' word) -> 1 / 1; civilians "Moon" ✓ "star" ✗ -> 1 / 2
    m1 = game_metrics(G1)
    assert m1["civilian_suspect_accuracy"] == (2, 3)
    assert m1["spy_word_inference"] == (1, 1)
    assert m1["civilian_word_inference"] == (1, 2)
    # the spy's stated roles: civilian, spy, civilian -> 1 "spy" of 3
    assert m1["spy_self_report_rate"] == (1, 3)


def test_turnout_does_not_owe_votes_from_eliminated_players():
    # Regression: c, removed by the judge in round 1 before the vote, owed no vote there.
    # G2 owed: round 1 a b d x y = 5, round 2 a b d x y = 5 (d votes, then goes): 10 / 10.
    # G1 owed: 5 + 4 + 4 = 13, cast 5 + 4 + 3 = 12.
    assert game_metrics(G2)["turnout"] == (10, 10)
    assert game_metrics(G1)["turnout"] == (12, 13)


def test_credit_win_rates_count_a_game_once_per_model():
    # Regression: m holds both spy seats of g7 (spies win) and one civilian seat of g8
    # (civilians win, 4 seats share the credit): 2 games, credits 2 * 1/2 + 1/4.
    agents7 = {"a": "n", "b": "n", "c": "n", "d": "n", "x": "m", "y": "m"}
    agents8 = {"a": "m", "b": "n", "c": "n", "d": "n", "x": "n", "y": "n"}
    g7 = _spy("g7", "xy", "abcd", [], [], {"winner_role": "spy"}, agents7)
    g8 = _spy("g8", "xy", "abcd", [], [], {"winner_role": "civilian"}, agents8)
    rates = credit_win_rates([g7, g8])
    assert rates["m"] == {"credits": 1.25, "games": 2, "rate": 1.25 / 2}
    assert rates["n"] == {"credits": 0.75, "games": 2, "rate": 0.75 / 2}


def test_docs_metrics_table_names_every_metric_and_its_source():
    text = (REPO / "docs" / "games.md").read_text(encoding="utf-8")
    section = text.split("## Metrics", 1)[1].split("\n## ", 1)[0]
    listed: dict[str, str] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) == 3:
            for name in re.findall(r"`([a-z_0-9]+)`", cells[0]):
                listed[name] = cells[2]
    components = {"deception_wins", "deception_wrong_guesses"}
    for name in {*CHAMELEON_METRICS, *SPY_METRICS} - components:
        assert name in listed, f"docs/games.md does not list {name}"
        assert listed[name] == METRIC_SOURCES[name], name


def test_ck_arena_figures_in_the_docs(shared_data: Path):
    """The figures docs/games.md quotes for the CK-Arena dev logs are what the code gives."""
    from leakage.transcripts import load_transcripts

    good, bad = load_transcripts([shared_data / "ck-arena-dev" / "logs"], input_format="ck-arena")
    assert len(good) == 227 and not bad
    rows = _rows(good)
    text = (REPO / "docs" / "games.md").read_text(encoding="utf-8")
    for name, value in {
        "vote_rate": 0.769,
        "vote_entropy_bits": 1.333,
        "voting_pressure": 2.837,
        "vsr": 0.370,
        "judgement": 0.769,
        "deception": 0.278,
        "turnout": 0.990,
    }.items():
        assert rows[name].value == pytest.approx(value, abs=5e-4), name
        assert f"`{name}` {value:.3f}" in text, name
