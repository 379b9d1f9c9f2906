"""The game engines, scripted agents and metrics (real co-occurrence index, one card)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from leakage.errors import InvalidInput
from leakage.games import (
    ChameleonConfig,
    SpyGameConfig,
    play_chameleon,
    play_spygame,
)
from leakage.games.agents import (
    AgentFactory,
    AmbiguousAgent,
    AssociativeSpyPlayer,
    ConcealingAgent,
    PosteriorChameleon,
    RandomChameleon,
    RevealingAgent,
    parse_spec,
)
from leakage.games.metrics import (
    CHAMELEON_METRICS,
    credit_win_rates,
    game_metrics,
    metrics_table,
)
from leakage.transcripts import parse_transcript
from tests.games_support import SPORTS, scripted, tables_fixture  # noqa: F401  (fixture)


def dump(t) -> str:
    return t.model_dump_json()


# -- Chameleon engine ------------------------------------------------------------------


def test_same_seed_same_transcript_and_valid_format(tables):
    agents = {"non-chameleon": RevealingAgent(tables), "chameleon": PosteriorChameleon(tables)}
    a = [play_chameleon(agents, seed=s, cards=SPORTS) for s in range(8)]
    b = [play_chameleon(agents, seed=s, cards=SPORTS) for s in range(8)]
    assert [dump(t) for t in a] == [dump(t) for t in b]
    assert len({dump(t) for t in a}) == 8
    for t in a:
        again = parse_transcript(json.loads(dump(t)))  # the real validator accepts it
        assert again.meta["outcome"] in ("chameleon_unidentified", "chameleon_guessed",
                                         "chameleon_caught")  # fmt: skip
        assert len(t.turns) == 4 and len(t.votes) == 4 and t.secret in t.candidates
        assert sorted(p.role for p in t.players).count("chameleon") == 1
    # order of play does not matter: each decision's randomness comes from the game seed
    assert dump(play_chameleon(agents, seed=5, cards=SPORTS)) == dump(a[5])


def test_rules_of_a_round():
    """A chameleon everybody votes for is caught and gets its one guess."""

    def by_clue(o, clue):
        return next(p for p, c in o.clues if c == clue and p != o.player)

    for guess in ("Tennis", "Golf"):
        cham = scripted(
            lambda o, g=guess: (
                {"clue": "ball"}.get(o.phase) or (by_clue(o, "racket") if o.phase == "vote" else g)
            )
        )
        honest = scripted(lambda o: by_clue(o, "ball") if o.phase == "vote" else "racket")
        for seed in range(6):
            t = play_chameleon({"non-chameleon": honest, "chameleon": cham}, seed=seed,
                               cards=SPORTS)  # fmt: skip
            if t.secret in ("racket", "ball"):
                continue
            assert t.meta["caught"] and t.meta["accused"] in t.chameleons()
            assert t.meta["tally"]["counts"][t.meta["accused"]] == 3
            assert t.chameleon_guess == guess
            expected = "chameleon_guessed" if t.secret == guess else "chameleon_caught"
            assert t.meta["outcome"] == expected
            assert t.meta["winner_role"] == ("chameleon" if t.secret == guess else "non-chameleon")


def test_a_tie_is_broken_by_a_drawn_player():
    ring = scripted(
        lambda o: "word" if o.phase == "clue" else o.players[(o.players.index(o.player) + 1) % 4]
    )
    t = play_chameleon({"non-chameleon": ring, "chameleon": ring}, seed=11, cards=SPORTS)
    tally = t.meta["tally"]
    assert sorted(tally["tied"]) == sorted(p.id for p in t.players)
    breaker = tally["tiebreaker"]
    vote_of = {v.voter: v.target for v in t.votes}
    assert t.meta["accused"] == vote_of[breaker]  # the drawn player's own vote decides


@pytest.mark.parametrize(
    ("clue", "vote", "guess", "phase", "reason"),
    [
        ("two words", None, None, "clue", "not exactly one word"),
        ("", None, None, "clue", "not exactly one word"),
        ("ok", "SELF", None, "vote", "voted for itself"),
        ("ok", "p9", None, "vote", "no player named"),
        ("ok", "FIRST", "Basketballs", "guess", "the guess is not a candidate"),
    ],
)
def test_invalid_moves_are_recorded_not_raised(clue, vote, guess, phase, reason):
    def bad(o):
        if o.phase == "clue":
            return clue
        if o.phase == "vote":
            if vote == "SELF":
                return o.player
            if vote == "FIRST":
                return o.players[0] if o.player != o.players[0] else o.players[1]
            return vote
        return guess

    def good(o):
        if o.phase == "vote":
            return next(p for p in o.players if p != o.player)
        return "sport"

    outcomes = Counter()
    for seed in range(12):
        t = play_chameleon({"non-chameleon": scripted(good if phase == "guess" else bad),
                            "chameleon": scripted(bad)}, seed=seed, cards=SPORTS)  # fmt: skip
        outcomes[t.meta["outcome"]] += 1
        if t.meta["outcome"] == "invalid":
            assert t.meta["invalid"]["phase"] == phase
            assert t.meta["invalid"]["reason"] == reason
            assert t.meta["winner_role"] is None
            parse_transcript(json.loads(dump(t)))
    assert outcomes["invalid"] >= 1


def secret_of(seed: int) -> str:
    from leakage.games import ChameleonGame

    game = ChameleonGame(cards=SPORTS)
    game.reset(seed)
    return game.secret


def test_saying_the_secret_is_allowed_by_default_and_invalid_under_forbid_secret():
    """Karabag & Topcu (section 3.2) let a player say the secret; the old rule is an option."""

    def says_secret(o):
        if o.phase == "vote":
            return next(p for p in o.players if p != o.player)
        return o.secret

    def chameleon(o):
        said = [c for p, c in o.clues if p != o.player]
        if o.phase == "vote":
            return next(p for p in o.players if p != o.player)
        return said[0] if said else "pass"  # repeats the secret when it has heard it

    agents = {"non-chameleon": scripted(says_secret), "chameleon": scripted(chameleon)}
    one_word = [s for s in range(40) if " " not in secret_of(s)][:6]
    for seed in one_word:
        t = play_chameleon(agents, seed=seed, cards=SPORTS)
        assert t.meta["outcome"] != "invalid" and t.meta["forbid_secret"] is False
        honest = [x.text for x in t.turns if x.player not in t.chameleons()]
        assert set(honest) == {t.secret}
        if t.meta["caught"]:
            assert t.meta["outcome"] == "chameleon_guessed"
    t = play_chameleon(agents, seed=one_word[0], cards=SPORTS,
                       config=ChameleonConfig(forbid_secret=True))  # fmt: skip
    assert t.meta["outcome"] == "invalid" and t.meta["forbid_secret"] is True
    assert t.meta["invalid"]["reason"] == "said the secret word"


def test_config_checks():
    with pytest.raises(ValueError):
        ChameleonConfig(n_players=2)
    with pytest.raises(ValueError):
        SpyGameConfig(n_players=4, n_spies=2)
    with pytest.raises(ValueError, match="no agent for role chameleon"):
        play_chameleon({"non-chameleon": scripted(lambda o: "x")}, seed=0)


# -- scripted agents -------------------------------------------------------------------


def test_scripted_strategies_differ_as_the_theory_says(tables):
    """Revealing clues point to the secret, concealing ones to nothing in particular; the
    posterior chameleon reads revealing clues far better than chance (1/16)."""
    table = tables.get(SPORTS[0].words, "Sports")
    games = [
        play_chameleon({"non-chameleon": RevealingAgent(tables),
                        "chameleon": PosteriorChameleon(tables)}, seed=s, cards=SPORTS)
        for s in range(40)
    ]  # fmt: skip
    support = []
    for t in games:
        clue = next(x.text for x in t.turns if x.player not in t.chameleons())
        row = table.rows([clue])[0]
        support.append(int(np.argmax(row)) == table.column(t.secret))
    assert np.mean(support) > 0.8
    caught = [t for t in games if t.meta["caught"]]
    assert caught and np.mean([t.chameleon_guess == t.secret for t in caught]) > 0.5

    conceal = ConcealingAgent(tables)
    obs_games = play_chameleon({"non-chameleon": conceal, "chameleon": RandomChameleon(tables)},
                               seed=1, cards=SPORTS)  # fmt: skip
    flat = next(x.text for x in obs_games.turns if x.player not in obs_games.chameleons())
    post = np.exp(table.rows([flat])[0])
    post /= post.sum()
    assert post.max() < 0.2  # near uniform over 16


def test_amb_keeps_an_ambiguity_set(tables):
    """π_amb's clues eliminate groups without the secret until someone breaks the code (the
    posterior chameleon, which says association words), then they are null; that player is
    voted out."""
    from leakage.games.agents.scripted import amb_groups

    config = ChameleonConfig(n_candidates=15)
    for seed in range(6):
        t = play_chameleon({"non-chameleon": AmbiguousAgent(),
                            "chameleon": PosteriorChameleon(tables)}, seed=seed, cards=SPORTS,
                           config=config)  # fmt: skip
        assert t.meta["outcome"] != "invalid" and t.meta["caught"]
        groups = amb_groups(tuple(t.candidates), 4)
        words = {"-".join(w.split()): g for g, ws in enumerate(groups) for w in ws}
        secret = next(g for g, ws in enumerate(groups) if t.secret in ws)
        said = [x.text for x in t.turns]
        c = [x.player for x in t.turns].index(next(iter(t.chameleons())))
        assert all(words[w] != secret for w in said[:c])  # the secret's group stays
        assert len({words[w] for w in said[:c]}) == c and set(said[c + 1 :]) <= {"null"}


# -- SpyGame ---------------------------------------------------------------------------


def test_spygame_gu_et_al_defaults(tables):
    seen = []

    class Spy(AssociativeSpyPlayer):
        def __call__(self, obs, /):
            seen.append(obs.role)
            return super().__call__(obs)

    agent = Spy(tables)
    a = play_spygame({"civilian": agent, "spy": agent}, seed=4, cards=SPORTS)
    b = play_spygame({"civilian": agent, "spy": agent}, seed=4, cards=SPORTS)
    assert dump(a) == dump(b)
    assert set(seen) == {None}  # no one is told its role
    assert len(a.players) == 5 and len(a.spies()) == 1
    assert a.meta["outcome"] in ("civilians_win", "spies_win")
    assert a.meta["reflections"] and all(
        r["self"] in ("civilian", "spy") for r in a.meta["reflections"]
    )
    assert max(e.round for e in a.eliminations) <= 6 if a.eliminations else True
    parse_transcript(json.loads(dump(a)))
    m = game_metrics(a)
    assert m["self_detection_rate"] is not None and m["civilian_suspect_accuracy"] is not None


def test_spygame_undercover_variant_and_invalid_moves(tables):
    roles = []

    def player(o):
        roles.append(o.role)
        if o.phase == "describe":
            return "something you can hold"
        if o.phase == "reflect":
            return "I am not sure"  # not a reflection object: dropped
        return "nobody"  # an invalid vote: an abstention

    cfg = SpyGameConfig(n_players=6, n_spies=2, roles_known=True, max_rounds=2)
    t = play_spygame({"civilian": scripted(player), "spy": scripted(player)}, seed=1,
                     config=cfg, cards=SPORTS)  # fmt: skip
    assert set(roles) == {"civilian", "spy"} and len(t.spies()) == 2
    kinds = Counter(m["phase"] for m in t.meta["invalid_moves"])
    assert kinds["vote"] == 12  # 6 players x 2 rounds
    assert kinds["reflect"] == 60  # after each of 6 statements, the 5 others, x 2 rounds
    assert t.meta["outcome"] == "spies_win" and not t.eliminations

    def says_word(o):
        return f"my word is {o.word}" if o.phase == "describe" else o.alive[0]

    bad = play_spygame({"civilian": scripted(says_word), "spy": scripted(says_word)}, seed=0,
                       cards=SPORTS)  # fmt: skip
    assert bad.meta["outcome"] == "invalid"
    assert bad.meta["invalid"]["reason"] == "says its own word"


# -- metrics ---------------------------------------------------------------------------


def _chameleon(outcome, accused, guess=None, secret="Golf"):
    from leakage.transcripts import ChameleonTranscript

    return ChameleonTranscript.model_validate({
        "game": "chameleon", "id": f"g-{outcome}-{accused}-{guess}",
        "players": [{"id": "a", "role": "non-chameleon"}, {"id": "b", "role": "non-chameleon"},
                    {"id": "c", "role": "chameleon"}],
        "turns": [{"player": "a", "text": "club"}], "category": "Sports",
        "candidates": ["Golf", "Tennis", "Rugby"], "secret": secret, "chameleon_guess": guess,
        "meta": {"outcome": outcome, "accused": accused},
    })  # fmt: skip


def test_chameleon_metrics_by_hand():
    games = [
        _chameleon("chameleon_caught", "c", "Tennis"),
        _chameleon("chameleon_guessed", "c", "Golf"),
        _chameleon("chameleon_unidentified", "a"),
        _chameleon("invalid", None),
    ]
    rows = {r.metric: r for r in metrics_table(games, n_boot=200)["chameleon"]}
    assert set(rows) == set(CHAMELEON_METRICS)
    assert rows["valid_game_ratio"].value == pytest.approx(0.75)
    assert rows["identification_rate"].value == pytest.approx(2 / 3)
    assert rows["non_chameleon_win_rate"].value == pytest.approx(1 / 3)
    assert rows["second_chance_guess_rate"].value == pytest.approx(0.5)
    assert rows["second_chance_guess_rate"].games == 2
    lo, hi = rows["identification_rate"].ci_low, rows["identification_rate"].ci_high
    assert 0 <= lo <= 2 / 3 <= hi <= 1


def test_metrics_of_the_ck_arena_logs(shared_data: Path):
    from leakage.transcripts import load_transcripts

    good, bad = load_transcripts([shared_data / "ck-arena-dev" / "logs"], input_format="ck-arena")
    assert good and not bad
    rows = {r.metric: r for r in metrics_table(good, n_boot=200)["spygame"]}
    # what the logs cannot support is said, not invented
    for name in ("notice_rate", "self_detection_rate", "self_awareness", "reasoning"):
        assert rows[name].value is None and rows[name].reason
    # what they can is computed from their fields: check two by hand
    winners = [t.meta["winner_role"] for t in good]
    assert rows["civilian_win_rate"].value == pytest.approx(winners.count("civilian") / len(good))
    civ_votes = [(t, v) for t in good for v in t.votes if t.player(v.voter).role == "civilian"]
    hits = sum(v.target in t.spies() for t, v in civ_votes)
    assert rows["vote_rate"].value == pytest.approx(hits / len(civ_votes))
    assert rows["caught_rate"].ci_low <= rows["caught_rate"].value <= rows["caught_rate"].ci_high
    credits = credit_win_rates(good)
    total = sum(c["credits"] for c in credits.values())
    assert total == pytest.approx(sum(1 for t in good if t.meta["winner_role"]))


# -- specs -----------------------------------------------------------------------------


def test_agent_specs():
    assert parse_spec("chameleon", "chameleon=random") == {
        "non-chameleon": "revealing",
        "chameleon": "random",
    }
    assert parse_spec("spygame", "spy=llm:gpt-4o")["spy"] == "llm:gpt-4o"
    with pytest.raises(InvalidInput, match="unknown agent"):
        parse_spec("chameleon", "chameleon=revealing")
    with pytest.raises(InvalidInput, match="ROLE=AGENT"):
        parse_spec("spygame", "villager=associative")
    factory = AgentFactory(backend=object())
    assert factory.build("chameleon", "revealing").name == "revealing"


def test_play_and_metrics_from_the_command_line(tmp_path, default_index):
    from typer.testing import CliRunner

    from leakage.cli import app

    out = tmp_path / "games.jsonl"
    args = ["play", "spygame", "--games", "3", "--seed", "7", "--out", str(out),
            "--index", str(default_index)]  # fmt: skip
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    assert len(lines) == 3
    r2 = CliRunner().invoke(app, args)
    assert out.read_text().splitlines() == lines  # seeded: the run replays exactly
    js = tmp_path / "m.json"
    r = CliRunner().invoke(app, ["metrics", str(out), "--json", str(js)])
    assert r.exit_code == 0, r.output
    doc = json.loads(js.read_text())
    names = {m["metric"] for m in doc["metrics"]["spygame"]}
    assert "spy_win_rate" in names and doc["games"] == 3 and r2.exit_code == 0


def test_reading_the_observation_twice_draws_nothing():
    from leakage.games import ChameleonGame

    g = ChameleonGame(cards=SPORTS)
    g.reset(1)
    first = g.observation
    assert g.observation is first
    g.step("ball")
    assert g.observation is not first and g.observation.clues == ((first.player, "ball"),)
