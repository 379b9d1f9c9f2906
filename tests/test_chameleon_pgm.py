"""The Chameleon's reflection phase and MAgIC's PGM-aware Chameleon agent: the phase off by
default changes no game; on, its schedule and format; the agent's beliefs and moves worked
by hand on a 4-player game over a hand-made association table; MAgIC's Reasoning and
Self-awareness on a hand-worked Chameleon game; pgm:llm against scripted clients."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

from leakage.games import ChameleonConfig, ChameleonObservation, play_chameleon
from leakage.games.agents import (
    AgentFactory,
    AmbiguousAgent,
    AssociationTable,
    CopyingChameleon,
    PGMChameleonLLMAgent,
    PGMChameleonPlayer,
    TrivialAgent,
    parse_spec,
)
from leakage.games.agents.pgm_chameleon import PGMChameleonPrompts, pgm_text
from leakage.games.metrics import game_metrics, metrics_table
from leakage.llm import Generation, OpenAICompatibleClient
from leakage.transcripts import ChameleonTranscript, parse_transcript
from tests.fakes.openai_api import MODEL, FakeOpenAI
from tests.games_support import scripted

# -- the engine -------------------------------------------------------------------------

GOLDEN = "87c96c589b0028ec85de5645c13a771db847eb3edf8f651d6893dc077eb129f8"
"""sha256 of the 60 transcripts below as the engine wrote them before the reflection phase
existed (commit 5b07c15): the default config must reproduce them byte for byte."""


def test_reflection_off_by_default_changes_no_game():
    assert ChameleonConfig().reflect is False
    h = hashlib.sha256()
    for seed in range(30):
        for agents in (
            {"non-chameleon": AmbiguousAgent(), "chameleon": AmbiguousAgent()},
            {"non-chameleon": TrivialAgent(), "chameleon": CopyingChameleon(TrivialAgent())},
        ):
            t = play_chameleon(agents, seed=seed, config=ChameleonConfig(n_candidates=15))
            assert "reflections" not in t.meta and "invalid_moves" not in t.meta
            h.update(t.model_dump_json().encode())
    assert h.hexdigest() == GOLDEN


def _reflector(answers):
    """An agent whose reflection is ``answers(obs)``; it says the first clue word of the
    card it has not heard, votes for the first other player, guesses the first candidate."""
    seen = []

    def agent(obs):
        seen.append((obs.phase, obs.player, len(obs.clues)))
        if obs.phase == "reflect":
            return answers(obs)
        if obs.phase == "vote":
            return next(p for p in obs.players if p != obs.player)
        if obs.phase == "guess":
            return obs.candidates[0]
        return "word" + "abcd"[len(obs.clues)]

    return scripted(agent), seen


def test_reflections_after_every_clue_by_every_other_player():
    def answers(obs):
        others = [p for p in obs.players if p != obs.player]
        out = {"self": obs.role, "suspect": others[0]}
        if obs.role == "chameleon":
            out |= {"secret_guess": obs.candidates[1].upper(),
                    "secret_beliefs": {obs.candidates[1]: 0.5}}  # fmt: skip
        else:
            out |= {"thinks": {others[0]: others[1]}, "beliefs": {others[0]: 0.7}}
        return json.dumps(out)

    agent, seen = _reflector(answers)
    cfg = ChameleonConfig(reflect=True)
    t = play_chameleon({"non-chameleon": agent, "chameleon": agent}, seed=4, config=cfg)
    parse_transcript(json.loads(t.model_dump_json()))
    order = t.meta["speaking_order"]
    # the schedule: each clue, then every other player in speaking order reflects on it
    expected = []
    for k, p in enumerate(order):
        expected.append(("clue", p, k))
        expected += [("reflect", q, k + 1) for q in order if q != p]
    assert seen[: len(expected)] == expected
    assert [s[0] for s in seen[len(expected) :]][:4] == ["vote"] * 4
    refl = t.meta["reflections"]
    assert len(refl) == 4 * 3 and t.meta["invalid_moves"] == []
    assert t.meta["reflect"] == "statement"
    for r in refl:
        speaker = t.turns[r["after_turn"]].player
        assert r["round"] == 1 and r["player"] != speaker
        role = next(p.role for p in t.players if p.id == r["player"])
        assert r["self"] == role
        if role == "chameleon":  # read against the card: its spelling
            assert r["secret_guess"] == t.candidates[1]
            assert r["secret_beliefs"] == {t.candidates[1]: 0.5}
        else:
            assert set(r) == {"round", "after_turn", "player", "self", "suspect", "thinks",
                              "beliefs"}  # fmt: skip
    assert len(t.turns) == 4 and len(t.votes) == 4


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("I think p2", "not a reflection object"),
        ('{"self": "spy", "suspect": "p2"}', "not a reflection object"),
        ('{"self": "non-chameleon", "suspect": "p9"}', "not a reflection object"),
        ('{"self": "chameleon", "suspect": "p2", "secret_guess": "Nothing"}', "secret_guess:"),
        ('{"self": "chameleon", "suspect": "p2", "secret_beliefs": {"Nothing": 0.2}}',
         "secret_beliefs: 'Nothing' is not a candidate"),
        ('{"self": "chameleon", "suspect": "p2", "beliefs": {"p2": 1.5}}',
         "beliefs: p2: 1.5 is not a probability"),
        ('{"self": "chameleon", "suspect": "p2", "thinks": {"p2": "p2"}}', "thinks: "),
    ],
)  # fmt: skip
def test_an_invalid_reflection_is_dropped_and_recorded(answer, reason):
    agent, _ = _reflector(lambda obs: answer)
    t = play_chameleon({"non-chameleon": agent, "chameleon": agent}, seed=4,
                       config=ChameleonConfig(reflect=True))  # fmt: skip
    assert t.meta["outcome"] != "invalid" and t.meta["reflections"] == []
    moves = t.meta["invalid_moves"]
    assert len(moves) == 12
    assert all(m["phase"] == "reflect" and m["round"] == 1 for m in moves)
    assert all(m["reason"].startswith(reason) for m in moves), moves[0]
    parse_transcript(json.loads(t.model_dump_json()))


def test_scripted_agents_reflect_with_their_vote():
    t = play_chameleon({"non-chameleon": TrivialAgent(), "chameleon": AmbiguousAgent()}, seed=2,
                       config=ChameleonConfig(reflect=True))  # fmt: skip
    assert len(t.meta["reflections"]) == 12 and not t.meta["invalid_moves"]
    roles = {p.id: p.role for p in t.players}
    first = t.meta["speaking_order"][0]
    for r in t.meta["reflections"]:
        assert r["self"] == roles[r["player"]]
        if r["self"] == "non-chameleon":  # the trivial vote: player 1 (player 2 for player 1)
            assert r["suspect"] == (first if r["player"] != first else t.meta["speaking_order"][1])


def test_play_chameleon_reflect_option(tmp_path, default_index):
    from typer.testing import CliRunner

    from leakage.cli import app

    for flag, n in (([], 0), (["--reflect", "none"], 0), (["--reflect", "statement"], 12)):
        out = tmp_path / "g.jsonl"
        r = CliRunner().invoke(app, ["play", "chameleon", "--games", "2", "--agents",
                                     "non-chameleon=trivial,chameleon=amb", "--index",
                                     str(default_index), "--out", str(out), *flag])  # fmt: skip
        assert r.exit_code == 0, r.output
        for line in out.read_text().splitlines():
            t = parse_transcript(json.loads(line))
            assert len(t.meta.get("reflections", [])) == n
        (row,) = [x for x in r.output.splitlines() if "self_awareness" in x]
        assert ("1.000" in row) == bool(n) and ("n/a" in row) == (not n)


# -- the PGM agent on a hand-made table ---------------------------------------------------

CANDS = ("A", "B", "C")
# P(clue | candidate) of each clue (columns A, B, C)
CLUES = {"a1": (0.6, 0.2, 0.2), "b1": (0.1, 0.8, 0.1), "g": (0.3, 0.3, 0.3)}
PLAYERS = ("p1", "p2", "p3", "p4")


class OneTable:
    """``AssociationTables`` stand-in: every card is this table."""

    def __init__(self, table):
        self.table = table

    def get(self, candidates, category=None):
        return self.table


def _table(clues=CLUES, cands=CANDS):
    return AssociationTable(cands, tuple(clues), np.log(np.array(list(clues.values()))))


def _obs(player, secret, clues, phase="reflect", players=PLAYERS, cands=CANDS):
    return ChameleonObservation(
        phase, player, "chameleon" if secret is None else "non-chameleon", "Test",
        cands, secret, players, tuple(clues), seed=0,
    )  # fmt: skip


SAID = (("p1", "a1"), ("p2", "b1"), ("p3", "g"))


def test_non_chameleon_beliefs_by_hand():
    # LR(c; A) = mean_w P(c | w) / P(c | A): a1 (1/3)/0.6 = 5/9, b1 (1/3)/0.1 = 10/3, g 1;
    # p4 has not spoken (ratio 1) and is the one reflecting.
    agent = PGMChameleonPlayer(OneTable(_table()))
    b = agent.beliefs(_obs("p4", "A", SAID))
    lr = {"p1": 5 / 9, "p2": 10 / 3, "p3": 1.0}
    z = sum(lr.values())
    assert b.beliefs == pytest.approx({**{p: v / z for p, v in lr.items()}, "p4": 0.0})
    assert b.suspect == "p2"
    # two-hop: p1 is the chameleon with P(p1) (then it knows it), else it knows A and weighs
    # p2 (10/3), p3 (1) and p4 (1, not spoken), its own clue left out
    p1 = lr["p1"] / z
    view = {"p2": 10 / 3, "p3": 1.0, "p4": 1.0}
    zv = sum(view.values())
    assert b.others["p1"] == pytest.approx(
        {"p1": p1, **{q: (1 - p1) * v / zv for q, v in view.items()}}
    )
    # p2 sees p1 (5/9), p3 (1) and p4 (1): p3 and p4 tie
    assert b.thinks["p1"] == b.thinks["p3"] == "p2" and b.thinks["p2"] in ("p3", "p4")
    r = json.loads(agent(_obs("p4", "A", SAID)))
    assert r["self"] == "non-chameleon" and r["suspect"] == "p2"
    assert r["beliefs"]["p2"] == pytest.approx(30 / 44, abs=1e-6)
    assert "secret_guess" not in r
    assert agent(_obs("p4", "A", SAID, phase="vote")) == "p2"


def test_chameleon_beliefs_by_hand():
    # p2 is the chameleon; it heard a1 and g: P(s) ∝ P(a1 | s) P(g | s) = 0.6, 0.2, 0.2
    agent = PGMChameleonPlayer(OneTable(_table()))
    b = agent.beliefs(_obs("p2", None, SAID))
    assert b.secret == pytest.approx({"A": 0.6, "B": 0.2, "C": 0.2})
    assert b.beliefs is None and b.secret_guess == "A"

    # what p1 (who knows s) thinks of p2, averaged over s: with s = A or C, b1's ratio is
    # (1/3)/0.1 = 10/3 against p3's 1 and p4's 1; with s = B it is (1/3)/0.8 = 5/12
    def p2_seen_by_p1(r):
        return r / (r + 2)

    expected = 0.8 * p2_seen_by_p1(10 / 3) + 0.2 * p2_seen_by_p1(5 / 12)
    assert b.others["p1"]["p2"] == pytest.approx(expected)
    assert b.others["p1"]["p1"] == 0.0
    # p3 said g (ratio 1), p1 said a1: with s = A p1's ratio is 5/9, with s = B or C it is
    # (1/3)/0.2 = 5/3; p3 sees p1, p2, p4 -> who the others suspect most, p2 aside: p1 or p4
    r = json.loads(agent(_obs("p2", None, SAID)))
    assert r["self"] == "chameleon" and r["secret_guess"] == "A" and r["suspect"] != "p2"
    mean = {p: np.mean([b.others[q][p] for q in b.others if q != p]) for p in ("p1", "p3", "p4")}
    assert r["suspect"] == max(mean, key=mean.get)
    assert agent(_obs("p2", None, SAID, phase="vote")) == r["suspect"]
    assert agent(_obs("p2", None, SAID, phase="guess")) == "A"
    assert "I am the chameleon" in pgm_text(b) and "suspects me with probability" in pgm_text(b)


CLUE_TABLE = {
    "sure": (0.97, 0.01, 0.01, 0.01),
    "ok": (0.40, 0.45, 0.10, 0.05),
    "flat": (0.24, 0.26, 0.25, 0.25),
}


def test_clue_choice_by_hand():
    cands = ("A", "B", "C", "D")
    tables = OneTable(_table(CLUE_TABLE, cands))

    def first(secret, budget):
        agent = PGMChameleonPlayer(tables, budget=budget)
        return agent(_obs("p1", secret, (), phase="clue", cands=cands))

    # the first speaker: the chameleon hears only this clue, so it learns P(A | clue) =
    # 0.97 (sure), 0.40 (ok, B the most probable) and 0.24 (flat); the fellow players
    # suspect the speaker less the better the clue fits A (ratio 1 / (K P(A | clue))).
    # Budget 0.45: ok and flat keep it (sure does not), ok fits A better
    assert first("A", 0.45) == "ok"
    # budget 0.3: only flat keeps it
    assert first("A", 0.3) == "flat"
    # the chameleon speaking first: the others' expected suspicion over a uniform secret
    # (ratio 1 / (K P(s | clue)); two players not spoken yet, ratio 1 each):
    agent = PGMChameleonPlayer(tables)
    suspicion = {}
    for clue, p in CLUE_TABLE.items():
        post = np.array(p) / sum(p)
        ratio = 1 / (4 * post)
        suspicion[clue] = float(np.mean(ratio / (ratio + 2)))
    assert agent(_obs("p1", None, (), phase="clue", cands=cands)) == min(
        suspicion, key=suspicion.get
    ) == "flat"  # fmt: skip
    assert agent.last_choice["suspicion"] == pytest.approx(suspicion["flat"])


# -- metrics on a hand-worked game -------------------------------------------------------


def _refl(after, player, self_, suspect, **extra):
    return {"round": 1, "after_turn": after, "player": player, "self": self_,
            "suspect": suspect, **extra}  # fmt: skip


def test_magic_reasoning_and_self_awareness_on_a_chameleon_game():
    # a, b, d non-chameleons, c the chameleon; clues a, b, c, d (after_turn 0-3)
    refl = [
        _refl(0, "b", "non-chameleon", "a", thinks={"c": "a"}),
        _refl(0, "c", "chameleon", "a", thinks={"a": "b", "b": "a"}),
        _refl(0, "d", "non-chameleon", "c"),
        _refl(2, "a", "non-chameleon", "c", thinks={"b": "c", "d": "c"}),
        _refl(2, "b", "non-chameleon", "c", thinks={"c": "b"}),
        _refl(2, "d", "chameleon", "c"),  # d says it is the chameleon: wrong
        _refl(3, "c", "chameleon", "b", thinks={"a": "c"}),
    ]
    t = ChameleonTranscript.model_validate({
        "game": "chameleon", "id": "r1",
        "players": [{"id": p, "role": "chameleon" if p == "c" else "non-chameleon"}
                    for p in "abcd"],
        "turns": [{"player": p, "text": w} for p, w in zip("abcd", "xyzw", strict=True)],
        "votes": [{"voter": "a", "target": "c"}, {"voter": "b", "target": "c"},
                  {"voter": "c", "target": "b"}, {"voter": "d", "target": "c"}],
        "category": "Sports", "candidates": ["Golf", "Tennis"], "secret": "Golf",
        "chameleon_guess": "Tennis",
        "meta": {"accused": "c", "reflections": refl},
    })  # fmt: skip
    m = game_metrics(t)
    # S_self = n_cr / n_rt: every reflection states a role; d's "chameleon" is wrong -> 6 / 7
    assert m["self_awareness"] == (6, 7)
    # S_R, gold: the non-chameleons' suspects (the chameleon's is whom it points at):
    #   b:a ✗ d:c ✓ a:c ✓ b:c ✓ d:c ✓ -> 4 of 5
    # inter, each claim against that player's own suspect in its last reflection (round 1):
    #   last suspects: a c, b c, c b, d c
    #   b thinks c suspects a ✗ (c: b); c thinks a suspects b ✗ (a: c), b suspects a ✗ (b: c);
    #   a thinks b suspects c ✓, d suspects c ✓; b thinks c suspects b ✓; c thinks a
    #   suspects c ✓ -> 4 of 7
    assert m["reasoning"] == (4 + 4, 5 + 7)
    rows = {r.metric: r for r in metrics_table([t], n_boot=100)["chameleon"]}
    assert rows["reasoning"].value == pytest.approx(8 / 12)
    assert rows["self_awareness"].value == pytest.approx(6 / 7)
    # without reflections: not available, with the reason
    plain = t.model_copy(update={"meta": {"accused": "c"}})
    rows = {r.metric: r for r in metrics_table([plain], n_boot=100)["chameleon"]}
    assert (
        rows["self_awareness"].value is None and "no reflections" in rows["self_awareness"].reason
    )
    assert rows["reasoning"].value is None and "thinks" in rows["reasoning"].reason


# -- PGM games: real tables, the factory, the LLM variant ---------------------------------


@pytest.fixture(scope="module")
def tables(cooccurrence):
    from leakage.games.agents import AssociationTables

    return AssociationTables(cooccurrence)


def _check_pgm_reflections(t, roles):
    parse_transcript(json.loads(t.model_dump_json()))
    assert t.meta["outcome"] != "invalid" and not t.meta["invalid_moves"]
    mine = {p.id for p in t.players if p.role in roles}
    refl = [r for r in t.meta["reflections"] if r["player"] in mine]
    assert refl
    for r in refl:
        ob = r["others_beliefs"]
        assert set(ob) == set(r["thinks"]) == set(t.meta["speaking_order"]) - {r["player"]}
        for dist in ob.values():
            assert sum(dist.values()) == pytest.approx(1.0, abs=1e-4)
        if r["self"] == "non-chameleon":
            assert sum(r["beliefs"].values()) == pytest.approx(1.0, abs=1e-4)
            assert r["beliefs"][r["suspect"]] == pytest.approx(max(r["beliefs"].values()))
        else:
            assert r["secret_guess"] == max(r["secret_beliefs"], key=r["secret_beliefs"].get)
    for v in t.votes:  # a vote is the suspect of the voter's reflection on the last clue
        last = [r for r in refl if r["player"] == v.voter][-1:]
        if last and last[0]["after_turn"] == len(t.turns) - 1:
            assert v.target == last[0]["suspect"]
    return refl


def test_pgm_agents_play_with_reflections(tables):
    from tests.games_support import SPORTS

    factory = AgentFactory()
    factory._tables = tables
    assert parse_spec("chameleon", "non-chameleon=pgm,chameleon=pgm:llm")["chameleon"] == (
        "pgm:llm"
    )
    agents = factory.agents("chameleon", "non-chameleon=pgm,chameleon=pgm")
    assert isinstance(agents["chameleon"], PGMChameleonPlayer)
    cfg = ChameleonConfig(reflect=True)
    for seed in range(4):
        t = play_chameleon(agents, seed=seed, config=cfg, cards=SPORTS)
        _check_pgm_reflections(t, {"chameleon", "non-chameleon"})
        m = game_metrics(t)
        assert m["reasoning"] is not None and m["self_awareness"] == (12, 12)
    # without the phase the agent plays as well (beliefs are computed at each move)
    t = play_chameleon(agents, seed=0, cards=SPORTS)
    assert t.meta["outcome"] != "invalid" and "reflections" not in t.meta


def _clue_in(messages):
    """The scripted model: a word from the clue prompt (the first candidate that is not the
    secret, as a non-chameleon; 'sporty' as the chameleon)."""
    system = messages[0]["content"]
    assert "As p" in messages[-1]["content"] and "I think now" in messages[-1]["content"]
    if "You are the chameleon!" in system:
        assert "blend in and defraud trust" in messages[-1]["content"]
        return "Answer: sporty"
    assert "increase the suspiciousness" in messages[-1]["content"]
    return "Answer: athletic"


def test_pgm_llm_says_the_models_clues_from_its_pgm(tables):
    from tests.games_support import SPORTS

    with FakeOpenAI(chat_reply=_clue_in) as fake:
        client = OpenAICompatibleClient(fake.url, MODEL, backoff=0.01)
        agent = PGMChameleonLLMAgent(tables, client, retries=0)
        t = play_chameleon({"non-chameleon": agent, "chameleon": agent}, seed=3, cards=SPORTS,
                           config=ChameleonConfig(reflect=True))  # fmt: skip
        asked = len(fake.requests)
    assert asked == 4  # one request per clue; reflections and votes come from the PGM
    cham = next(p.id for p in t.players if p.role == "chameleon")
    assert [x.text for x in t.turns if x.player == cham] == ["sporty"]
    # a second "athletic" is a repeat, refused by the agent: the scripted clue instead
    nc = [x.text for x in t.turns if x.player != cham]
    assert nc[0] == "athletic" and nc.count("athletic") == 1
    assert t.players[0].agent == f"pgm:llm:{MODEL}"
    _check_pgm_reflections(t, {"chameleon", "non-chameleon"})


def test_pgm_llm_falls_back_to_the_scripted_clue(tables):
    from tests.games_support import SPORTS

    class Echo:
        name = "echo"

        def __init__(self, reply):
            self.reply, self.prompts = reply, []

        def generate(self, messages, **_):
            self.prompts.append(messages)
            return Generation(self.reply(messages))

    # a non-chameleon model that says the secret, twice: refused, then the scripted clue
    client = Echo(lambda m: "Answer: " + re.search(r"The word is: (.+?)\.", m[0].content)[1]
                  if "The word is" in m[0].content else "Answer: two words")  # fmt: skip
    agent = PGMChameleonLLMAgent(tables, client, retries=1)
    scripted_agent = PGMChameleonPlayer(tables)
    cfg = ChameleonConfig(reflect=True)
    t = play_chameleon({"non-chameleon": agent, "chameleon": agent}, seed=5, cards=SPORTS,
                       config=cfg)  # fmt: skip
    ref = play_chameleon({"non-chameleon": scripted_agent, "chameleon": scripted_agent},
                         seed=5, cards=SPORTS, config=cfg)  # fmt: skip
    assert [x.text for x in t.turns] == [x.text for x in ref.turns]
    assert len(client.prompts) == 4 * 2  # every clue asked twice (retries=1)
    assert agent.last_move is not None and agent.last_move["mode"] == "fallback"
    last = client.prompts[-1][-1].content
    assert "Follow the reply form" in last
    assert (
        "is the secret" in agent.last_move["rejected"]
        or "one word" in (agent.last_move["rejected"])
    )
    assert t.meta["reflections"] == ref.meta["reflections"]


def test_pgm_prompts_are_magics():
    p = PGMChameleonPrompts()
    assert "increase the suspiciousness of the {target}" in p.non_chameleon
    assert "blend in and defraud trust from the {target}" in p.chameleon


def test_llm_players_answer_the_reflection_prompt():
    from leakage.games.agents import ChameleonLLMAgent

    def reply(messages):
        prompt = messages[-1].content
        if "Whom do you think is the chameleon" in prompt:
            others = re.search(r"among (.+)\? Reply", prompt)[1].split(", ")
            told = "You are the chameleon" in messages[0].content
            role = "chameleon" if told else "non-chameleon"
            return "Answer: " + json.dumps({"self": role, "suspect": others[-1]})
        if "Vote for" in prompt:
            return "Answer: " + re.search(r"one of: (p\d)", prompt)[1]
        if "caught" in prompt:
            return "Answer: " + re.search(r"words: ([^,.]+)", messages[0].content)[1]
        return "Answer: " + "abcdefgh"[prompt.count(":")] * 3

    class Echo:
        name = "echo"

        def generate(self, messages, **_):
            return Generation(reply(messages))

    agent = ChameleonLLMAgent(Echo())
    t = play_chameleon({"non-chameleon": agent, "chameleon": agent}, seed=1,
                       config=ChameleonConfig(reflect=True))  # fmt: skip
    assert len(t.meta["reflections"]) == 12 and not t.meta["invalid_moves"]
    roles = {p.id: p.role for p in t.players}
    for r in t.meta["reflections"]:
        assert r["self"] == roles[r["player"]]
        assert r["suspect"] == [p for p in t.meta["speaking_order"] if p != r["player"]][-1]


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    pytest.importorskip("torch")
    from leakage.llm import LocalLM

    return LocalLM("smollm2-135m", cache_dir=tmp_path_factory.mktemp("pgm-cham") / "smollm2")


def test_pgm_local_plays_with_the_bundled_model(tables, smollm2):
    from tests.games_support import SPORTS

    agent = PGMChameleonLLMAgent(tables, smollm2)
    t = play_chameleon({"non-chameleon": agent, "chameleon": agent}, seed=3, cards=SPORTS,
                       config=ChameleonConfig(reflect=True))  # fmt: skip
    _check_pgm_reflections(t, {"chameleon", "non-chameleon"})
    assert len(t.turns) == 4 and agent.last_move is not None
    assert agent.last_move["mode"] in ("one-word", "fallback")
