"""SpyGame's reflection schedule (Gu et al., section 3: after every statement, the other
living players reflect) and the reflection fields the engine keeps (scripted players, no
index)."""

from __future__ import annotations

import json

import pytest

from leakage.games import SpyGameConfig, play_spygame
from leakage.games.metrics import game_metrics
from leakage.transcripts import parse_transcript
from tests.games_support import scripted

PAIR = ("sun", "moon")


def recorder(reflection=None):
    """A player that describes vaguely, reflects with ``reflection(obs)`` (default: a plain
    suspicion of the first other living player) and votes for the first other living player;
    every observation it is shown is kept in ``seen``."""
    seen = []

    def player(o):
        seen.append(o)
        others = [q for q in o.alive if q != o.player]
        if o.phase == "describe":
            return "it is up in the sky"
        if o.phase == "reflect":
            data = reflection(o) if reflection else {"self": "civilian", "suspect": others[0]}
            return json.dumps(data)
        return others[0]

    agent = scripted(player)
    agent.seen = seen
    return agent


def test_default_schedule_reflects_after_every_statement_by_every_other_living_player():
    agent = recorder()
    t = play_spygame({"civilian": agent, "spy": agent}, seed=3, pair=PAIR,
                     config=SpyGameConfig(max_rounds=3))  # fmt: skip
    parse_transcript(json.loads(t.model_dump_json()))
    turns = [(x.player, x.round) for x in t.turns]
    refl = t.meta["reflections"]
    # the order of moves: each statement, then the others' reflections on it
    moves = [(o.phase, o.player, len(o.statements)) for o in agent.seen]
    i = 0
    for k, (speaker, rnd) in enumerate(turns):
        assert moves[i] == ("describe", speaker, k)
        alive = next(o.alive for o in agent.seen if o.round == rnd)
        reflectors = [q for q in alive if q != speaker]
        assert moves[i + 1 : i + 1 + len(reflectors)] == [("reflect", q, k + 1) for q in reflectors]
        i += 1 + len(reflectors)
        if k + 1 == len(turns) or turns[k + 1][1] != rnd:  # the round's votes
            assert [m[0] for m in moves[i : i + len(alive)]] == ["vote"] * len(alive)
            i += len(alive)
        mine = [r for r in refl if r["after_turn"] == k]
        assert [r["player"] for r in mine] == reflectors
        assert all(r["round"] == rnd for r in mine)
    assert i == len(moves)
    assert len(refl) == sum(len({p for p, r in turns if r == n}) - 1 for _, n in turns)


def test_once_a_round_schedule_and_no_reflection():
    agent = recorder()
    cfg = SpyGameConfig(max_rounds=2, reflect_after="round")
    t = play_spygame({"civilian": agent, "spy": agent}, seed=3, pair=PAIR, config=cfg)
    by_round: dict[int, list] = {}
    for r in t.meta["reflections"]:
        by_round.setdefault(r["round"], []).append(r)
    for rnd, rs in by_round.items():
        last = max(k for k, x in enumerate(t.turns) if x.round == rnd)
        speakers = [x.player for x in t.turns if x.round == rnd]
        assert [r["player"] for r in rs] == speakers  # every living player, once
        assert all(r["after_turn"] == last for r in rs)
    quiet = recorder()
    t = play_spygame({"civilian": quiet, "spy": quiet}, seed=3, pair=PAIR,
                     config=SpyGameConfig(max_rounds=2, reflect=False))  # fmt: skip
    assert t.meta["reflections"] == [] and {o.phase for o in quiet.seen} == {"describe", "vote"}
    with pytest.raises(ValueError, match="reflect_after"):
        SpyGameConfig(reflect_after="turn")  # type: ignore[arg-type]


def second_order(o):
    """Each other player suspects the one after it in ``alive`` (wrapping)."""
    others = [q for q in o.alive if q != o.player]
    ring = list(o.alive)
    thinks = {q: ring[(ring.index(q) + 1) % len(ring)] for q in others}
    p = 1 / len(o.alive)
    return {
        "self": "civilian",
        "suspect": others[0],
        "thinks": thinks,
        "beliefs": dict.fromkeys(o.alive, p),
        "others_beliefs": {q: dict.fromkeys(o.alive, p) for q in others},
    }


def test_reflections_keep_thinks_and_beliefs_and_magic_reasoning_reads_them():
    agent = recorder(second_order)
    t = play_spygame({"civilian": agent, "spy": agent}, seed=5, pair=PAIR,
                     config=SpyGameConfig(max_rounds=2))  # fmt: skip
    refl = t.meta["reflections"]
    assert refl and all({"thinks", "beliefs", "others_beliefs"} <= set(r) for r in refl)
    assert not t.meta["invalid_moves"]
    r = refl[0]
    assert set(r["thinks"]) == set(r["others_beliefs"]) == set(r["beliefs"]) - {r["player"]}
    parse_transcript(json.loads(t.model_dump_json()))
    # MAgIC S_R by hand: every suspect is the first other living player; a claim "q thinks
    # ring-next(q)" is right when ring-next(q) is q's own last suspect that round
    own = {(x["round"], x["player"]): x["suspect"] for x in refl}
    spies = t.spies()
    gold = sum(x["suspect"] in spies for x in refl)
    claims = [(x["round"], q, s) for x in refl for q, s in x["thinks"].items()
              if (x["round"], q) in own]  # fmt: skip
    right = sum(own[(rnd, q)] == s for rnd, q, s in claims)
    num, den = game_metrics(t)["reasoning"]
    assert (num, den) == (gold + right, len(refl) + len(claims))


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("thinks", ["p1"], "thinks: not an object"),
        ("thinks", {"nobody": "p1"}, "thinks: 'nobody' is not another living player"),
        ("thinks", "self-suspect", "thinks: not an object"),
        ("beliefs", {"p1": 1.5}, "beliefs: p1: 1.5 is not a probability"),
        ("beliefs", {"p1": "high"}, "beliefs: p1: 'high' is not a number"),
        ("others_beliefs", {"p9": {}}, "others_beliefs: 'p9' is not another living player"),
    ],
)
def test_a_malformed_reflection_field_drops_the_reflection_naming_the_field(field, value, why):
    def bad(o):
        return {**second_order(o), field: value}

    agent = recorder(bad)
    t = play_spygame({"civilian": agent, "spy": agent}, seed=5, pair=PAIR,
                     config=SpyGameConfig(max_rounds=1))  # fmt: skip
    assert t.meta["reflections"] == []
    reasons = {m["reason"] for m in t.meta["invalid_moves"] if m["phase"] == "reflect"}
    assert any(x.startswith(why) for x in reasons), reasons


def test_thinks_names_whom_another_player_suspects_not_itself():
    def self_suspect(o):
        data = second_order(o)
        q = next(iter(data["thinks"]))
        return {**data, "thinks": {q: q}}

    agent = recorder(self_suspect)
    t = play_spygame({"civilian": agent, "spy": agent}, seed=5, pair=PAIR,
                     config=SpyGameConfig(max_rounds=1))  # fmt: skip
    assert t.meta["reflections"] == []
    assert all("cannot suspect" in m["reason"] for m in t.meta["invalid_moves"])


@pytest.mark.parametrize("schedule", ["statement", "round", "none"])
def test_play_reflect_option_sets_the_schedule(schedule, tmp_path, default_index):
    from typer.testing import CliRunner

    from leakage.cli import app

    out = tmp_path / "g.jsonl"
    r = CliRunner().invoke(app, ["play", "spygame", "--games", "2", "--seed", "1",
                                 "--rounds", "2", "--reflect", schedule, "--index",
                                 str(default_index), "--out", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    for line in out.read_text().splitlines():
        t = parse_transcript(json.loads(line))
        refl = t.meta["reflections"]
        if schedule == "none":
            assert refl == []
            continue
        for k, turn in enumerate(t.turns):
            after = [x["player"] for x in refl if x["after_turn"] == k]
            speakers = [x.player for x in t.turns if x.round == turn.round]
            last = k == max(i for i, x in enumerate(t.turns) if x.round == turn.round)
            if schedule == "statement":
                assert after == [p for p in speakers if p != turn.player]
            else:
                assert after == (speakers if last else [])


def test_play_reflect_is_for_spygame():
    from typer.testing import CliRunner

    from leakage.cli import app

    r = CliRunner().invoke(app, ["play", "chameleon", "--reflect", "round"])
    assert r.exit_code == 2 and "--reflect" in r.output and "spygame" in r.output
