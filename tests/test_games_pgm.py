"""MAgIC's PGM-aware SpyGame agent: stated beliefs, votes that follow them, MAgIC's Reasoning
on its games; the scripted variant on the real co-occurrence index, the LLM variant on a
fake endpoint and on the bundled SmolLM2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from leakage.errors import InvalidInput
from leakage.games import SpyGameConfig, SpyObservation, Statement, play_spygame
from leakage.games.agents import AgentFactory, AssociativeSpyPlayer, PGMSpyPlayer, parse_spec
from leakage.games.agents.pgm import PGMPrompts, PGMSpyLLMAgent
from leakage.games.metrics import game_metrics
from leakage.llm import OpenAICompatibleClient
from leakage.transcripts import parse_transcript
from tests.fakes.openai_api import MODEL, FakeOpenAI
from tests.games_support import SPORTS, tables_fixture  # noqa: F401  (fixture)


class AtVote:
    """A PGM agent, and the beliefs it held at each of its votes: a vote sees every statement
    of its round, the voter's own last one included, which its last reflection (asked after
    each other player's statement) may not have seen."""

    def __init__(self, agent):
        self.agent = agent
        self.beliefs: dict[tuple[str, int], dict] = {}

    def __getattr__(self, name):
        return getattr(self.agent, name)

    def __call__(self, obs):
        move = self.agent(obs)
        if obs.phase == "vote":
            self.beliefs[(obs.player, obs.round)] = self.agent.last_beliefs.reflection()
        return move


def check_pgm_game(t, pgm_roles, at_vote=None):
    """Every reflection of a PGM player states valid beliefs; its votes follow the beliefs it
    held when it voted (``at_vote``: the ``AtVote`` agents), else its last reflection."""
    parse_transcript(json.loads(t.model_dump_json()))
    assert t.meta["outcome"] != "invalid"
    assert not [m for m in t.meta["invalid_moves"] if m["phase"] == "reflect"]
    mine = {p.id for p in t.players if p.role in pgm_roles}
    refl = [r for r in t.meta["reflections"] if r["player"] in mine]
    assert refl
    for r in refl:
        b, ob, me = r["beliefs"], r["others_beliefs"], r["player"]
        others = set(b) - {me}
        assert me in b and set(ob) == set(r["thinks"]) == others
        for dist in (b, *ob.values()):
            assert all(0.0 <= v <= 1.0 for v in dist.values())
            assert sum(dist.values()) == pytest.approx(1.0, abs=1e-4)
        assert b[r["suspect"]] == pytest.approx(max(b[q] for q in others), abs=1e-6)
        for q, s in r["thinks"].items():
            assert s != q and ob[q][s] == pytest.approx(max(v for p, v in ob[q].items() if p != q))
        assert (r["self"] == "spy") == (b[me] > max(b[q] for q in others))
    for v in t.votes:
        if v.voter not in mine:
            continue
        held = {} if at_vote is None else {k: r for a in at_vote for k, r in a.beliefs.items()}
        r = (
            held.get((v.voter, v.round))
            or [x for x in refl if x["player"] == v.voter and x["round"] == v.round][-1]
        )
        if r["self"] == "civilian":  # the most likely spy
            score = r["beliefs"]
        else:  # whom the others suspect most
            score = {p: np.mean([ob[p] for ob in r["others_beliefs"].values()])
                     for p in r["beliefs"] if p != v.voter}  # fmt: skip
        assert score[v.target] == pytest.approx(
            max(x for p, x in score.items() if p != v.voter), abs=1e-6
        )
    return refl


def test_pgm_players_state_beliefs_every_reflection_and_vote_by_them(tables):
    pgm, assoc = AtVote(PGMSpyPlayer(tables)), AssociativeSpyPlayer(tables)
    cfg = SpyGameConfig(max_rounds=3)
    n_refl = 0
    for seed in range(3):
        for agents, roles in (
            ({"civilian": pgm, "spy": assoc}, {"civilian"}),
            ({"civilian": assoc, "spy": pgm}, {"spy"}),
        ):
            t = play_spygame(agents, seed=seed, cards=SPORTS, config=cfg)
            n_refl += len(check_pgm_game(t, roles, [pgm]))
            # one reflection per other living player after each statement, all stated
            assert len(t.meta["reflections"]) == sum(
                len({x.player for x in t.turns if x.round == y.round}) - 1 for y in t.turns
            )
    assert n_refl > 50


def test_magic_reasoning_computes_on_pgm_games(tables):
    pgm = PGMSpyPlayer(tables)
    t = play_spygame({"civilian": pgm, "spy": pgm}, seed=1, cards=SPORTS,
                     config=SpyGameConfig(max_rounds=2))  # fmt: skip
    refl = check_pgm_game(t, {"civilian", "spy"})
    own = {(r["round"], r["player"]): r["suspect"] for r in refl}
    gold = sum(r["suspect"] in t.spies() for r in refl)
    claims = [own[(r["round"], q)] == s for r in refl for q, s in r["thinks"].items()
              if (r["round"], q) in own]  # fmt: skip
    assert game_metrics(t)["reasoning"] == (gold + sum(claims), len(refl) + len(claims))


def _obs(word, statements, *, votes=(), phase="reflect", role=None):
    players = ("p1", "p2", "p3", "p4", "p5")
    return SpyObservation(phase, "p1", word, role, 2 if votes else 1, players, players,
                          tuple(Statement(p, 1, s) for p, s in statements), (), seed=0,
                          votes=votes, category=SPORTS[0].category)  # fmt: skip


def test_beliefs_follow_statements_and_votes(tables):
    card = SPORTS[0]
    table = tables.get(card.words, card.category)
    mine, theirs = card.words[0], card.words[1]
    top = {w: [table.clues[i] for i in np.argsort(-table.posterior[:, table.column(w)])[:8]]
           for w in (mine, theirs)}  # fmt: skip
    pgm = PGMSpyPlayer(tables)
    said = [("p2", top[mine][0]), ("p3", top[theirs][0]), ("p4", top[mine][1]),
            ("p5", top[mine][2])]  # fmt: skip
    b = pgm.beliefs(_obs(mine, said))
    assert b.suspect == "p3" and b.spy["p3"] > 0.5 and not b.believes_spy
    # p3's word is the spy's: the other group's word is the one its statement points to
    assert b.other_word == theirs
    # holding p3's word instead, I am the odd one out
    assert pgm.beliefs(_obs(theirs, said)).believes_spy
    # votes move beliefs: with no statements, three civilians' votes at p4
    flat = pgm.beliefs(_obs(mine, []))
    assert flat.spy == pytest.approx(dict.fromkeys(flat.spy, 0.2))  # uniform over 5
    voted = pgm.beliefs(_obs(mine, [], votes=(("p2", "p4", 1), ("p3", "p4", 1), ("p5", "p4", 1))))
    assert voted.suspect == "p4" and voted.spy["p4"] > flat.spy["p4"]
    # a told role is known
    assert pgm.beliefs(_obs(mine, said, role="spy")).spy["p1"] == 1.0


def test_the_factory_builds_the_pgm_agents(cooccurrence):
    assert parse_spec("spygame", "civilian=pgm,spy=pgm:llm")["spy"] == "pgm:llm"
    factory = AgentFactory(backend=cooccurrence)
    assert isinstance(factory.build("spygame", "pgm"), PGMSpyPlayer)
    with pytest.raises(InvalidInput, match="pgm:llm"):
        factory.build("spygame", "pgm:gpt")
    from leakage.games.agents import PGMChameleonPlayer

    assert isinstance(factory.build("chameleon", "pgm"), PGMChameleonPlayer)


def _one_round_against_the_fake(tables, prompts: PGMPrompts, retries: int):
    """One round of SpyGame, every seat the LLM PGM agent asking the fake OpenAI server: the
    agent, the transcript and the requests the server got."""
    with FakeOpenAI() as fake:
        client = OpenAICompatibleClient(fake.url, MODEL, backoff=0.01)
        agent = PGMSpyLLMAgent(tables, client, prompts, retries=retries)
        t = play_spygame({"civilian": agent, "spy": agent}, seed=2, cards=SPORTS,
                         config=SpyGameConfig(max_rounds=1))  # fmt: skip
        return agent, t, list(fake.requests)


def test_the_llm_pgm_agent_writes_descriptions_from_its_beliefs(tables):
    # the fake answers "You said: <last user message>": the template scripts the reply
    prompts = PGMPrompts(describe="Answer: it is played outdoors\n{pgm}")
    agent, t, requests = _one_round_against_the_fake(tables, prompts, retries=0)
    asked = [r.body["messages"][-1]["content"] for r in requests]
    assert [x.text for x in t.turns] == ["it is played outdoors"] * 5
    assert agent.last_move == {"mode": "generated", "tries": 1}
    assert all("As p" in a and "the spy with probability" in a for a in asked)
    assert "I think" in asked[-1] and "thinks" in asked[-1]  # the second-order part
    check_pgm_game(t, {"civilian", "spy"})
    assert t.players[0].agent == f"pgm:llm:{MODEL}"
    # a description that says the word is refused, asked again, then the scripted one is said
    bad = PGMPrompts(describe="Answer: my word is {word}")
    agent, t, requests = _one_round_against_the_fake(tables, bad, retries=1)
    assert len(requests) == 5 * 2
    assert t.meta["outcome"] != "invalid"
    assert agent.last_move is not None and agent.last_move["mode"] == "fallback"
    assert "says your word" in agent.last_move["rejected"]


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    pytest.importorskip("torch")
    from leakage.llm import LocalLM

    return LocalLM("smollm2-135m", cache_dir=tmp_path_factory.mktemp("pgm-llm") / "smollm2")


def test_the_llm_pgm_agent_plays_with_the_bundled_local_model(tables, smollm2):
    agent = AtVote(PGMSpyLLMAgent(tables, smollm2, retries=1))
    t = play_spygame({"civilian": agent, "spy": agent}, seed=3, cards=SPORTS,
                     config=SpyGameConfig(max_rounds=1))  # fmt: skip
    check_pgm_game(t, {"civilian", "spy"}, [agent])
    assert len(t.turns) == 5 and agent.last_move is not None
