"""LLM players (fake OpenAI-compatible server, and the real bundled SmolLM2) and the
leakage-aware non-chameleon (scoring library, and the service contract over HTTP)."""

from __future__ import annotations

import json
import re

import httpx
import numpy as np
import pytest

from leakage.games import SpyGameConfig, play_chameleon, play_spygame
from leakage.games.agents import (
    ChameleonLLMAgent,
    ChameleonPrompts,
    LeakageAwareAgent,
    LibraryOracle,
    PosteriorChameleon,
    RevealingAgent,
    ServiceOracle,
    SpyLLMAgent,
    SpyPrompts,
    TableOracle,
)
from leakage.games.agents.llm import extract_answer
from leakage.llm import OpenAICompatibleClient
from leakage.transcripts import parse_transcript
from tests.fakes.openai_api import MODEL, FakeOpenAI
from tests.games_support import SPORTS, scripted, tables_fixture  # noqa: F401  (fixture)


def test_extract_answer():
    assert extract_answer("Let me think. Answer: racket.") == "racket."
    assert extract_answer("answer: x\nAnswer: p3") == "p3"
    assert extract_answer("  golf ") == "golf"


def test_llm_chameleon_players_parse_strictly_and_retry(tmp_path):
    """An endpoint cannot be constrained: its answers are checked by the same rules (a clue
    said before is refused), asked again with the reason, and what it still says goes to
    the engine, which records the invalid move."""
    from leakage.games import ChameleonObservation

    # The fake answers "You said: <last user message>": the templates script the replies.
    prompts = ChameleonPrompts(clue="Answer: racket", vote="Answer: p9 please", guess="x")
    with FakeOpenAI() as fake:
        client = OpenAICompatibleClient(fake.url, MODEL, backoff=0.01)
        agent = ChameleonLLMAgent(client, prompts, retries=2)
        t = play_chameleon({"non-chameleon": agent, "chameleon": agent}, seed=0, cards=SPORTS)
        assert [x.text for x in t.turns] == ["racket"]
        assert t.meta["outcome"] == "invalid"
        assert t.meta["invalid"]["phase"] == "clue"
        assert t.meta["invalid"]["reason"] == "not exactly one word"
        # the last reply is kept as said (the fake echoes the retry request back)
        assert t.meta["invalid"]["output"].startswith("You said: That answer could not be read")
        assert len(fake.requests) == 1 + 3  # one clue, then the repeat asked three times
        retry = fake.requests[2].body["messages"]
        assert retry[-1]["content"].startswith("That answer is not allowed ('racket' was said")
        assert agent.last_move == {"mode": "generated", "tries": 3, "rejected": "could not be read"}
        assert t.players[0].agent == f"llm:{MODEL}"
        parse_transcript(json.loads(t.model_dump_json()))
        card = SPORTS[0]
        vote = ChameleonObservation("vote", "p1", "non-chameleon", card.category, card.words,
                                    card.words[0], ("p1", "p2", "p3"), (), seed=1)  # fmt: skip
        assert agent(vote).startswith("You said: That answer could not be read")
        assert len(fake.requests) == 4 + 3


def test_llm_spygame_players(tmp_path):
    reflect = 'Answer: {{"self": "spy", "suspect": "p2"}}'  # templates are str.format
    prompts = SpyPrompts(describe="Answer: a round thing you can hold", reflect=reflect,
                         vote="Answer: p2")  # fmt: skip
    with FakeOpenAI() as fake:
        client = OpenAICompatibleClient(fake.url, MODEL, backoff=0.01)
        agent = SpyLLMAgent(client, prompts, retries=0)
        t = play_spygame({"civilian": agent, "spy": agent}, seed=2, cards=SPORTS,
                         config=SpyGameConfig(max_rounds=2))  # fmt: skip
    assert t.turns[0].text == "a round thing you can hold"
    assert t.meta["outcome"] != "invalid"
    assert any(r["suspect"] == "p2" for r in t.meta["reflections"])
    assert t.eliminations and t.eliminations[0].player == "p2"  # everyone else voted p2


def test_one_word_takes_the_likeliest_first_token_that_leads_to_an_allowed_word():
    """The constraint on its own, over a scripted model: first tokens that are not letters,
    single letters, stop words or forbidden words are skipped without a call; a first token
    whose completion is forbidden moves on to the next."""
    from leakage.games.agents._constrained import one_word
    from leakage.llm import Generation

    class Scripted:
        def __init__(self):
            self.calls = []

        def generate(self, prompt, *, max_tokens=256, top_logprobs=0, **_):
            self.calls.append(prompt)
            if top_logprobs:  # the free answer and the first-token ranking
                tops = {" tennis": -1.0, ' "': -1.5, " A": -2.0, " the": -2.5, " ball": -3.0,
                        " Ten": -3.5, " net": -4.0, " court": -5.0}  # fmt: skip
                return Generation(" tennis, of course", top_logprobs=[tops])
            return Generation({"P: net": "ball!"}[prompt])

    lm = Scripted()
    word, how = one_word(lm, "P:", {"Tennis": "is the secret", "ball": "was said before"})
    assert word == "netball"
    # " Ten" is completed by the free answer ("tennis"): no call
    assert how == {"first_token": " net", "logprob": -4.0, "rejected": ["tennis"]}
    assert lm.calls == ["P:", "P: net"]
    banned = dict.fromkeys(["tennis", "ball", "netball", "court"], "")
    assert one_word(lm, "P:", banned) == (None, {"rejected": ["tennis", "netball"]})


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    pytest.importorskip("torch")
    from leakage.llm import LocalLM

    return LocalLM("smollm2-135m", cache_dir=tmp_path_factory.mktemp("games-llm") / "smollm2")


def test_the_bundled_local_model_plays_valid_games(smollm2):
    """Answers are drawn from what the rules allow (the unconstrained SmolLM2 played 0 valid
    games of 5): one-word clues, none repeated, the secret never said, a chameleon saying
    no card word; votes for another player; a guess among the candidates."""
    agent = ChameleonLLMAgent(smollm2)
    t = play_chameleon({"non-chameleon": agent, "chameleon": agent}, seed=0, cards=SPORTS)
    parse_transcript(json.loads(t.model_dump_json()))
    assert t.meta["outcome"] != "invalid", t.meta.get("invalid")
    clues = [x.text for x in t.turns]
    assert len(clues) == 4 and all(c.isalpha() for c in clues), clues
    assert len({c.casefold() for c in clues}) == 4, clues
    assert t.secret.casefold() not in {c.casefold() for c in clues}
    chameleon = next(p.id for p in t.players if p.role == "chameleon")
    said = next(x.text for x in t.turns if x.player == chameleon)
    assert said.casefold() not in {w.casefold() for w in SPORTS[0].words}
    assert len(t.votes) == 4 and all(v.voter != v.target for v in t.votes)
    assert t.chameleon_guess is None or t.chameleon_guess in t.candidates
    assert agent.last_move is not None and agent.last_move["mode"] in ("scored", "one-word")
    assert t.players[0].agent == "llm:" + smollm2.name


# -- leakage-aware ---------------------------------------------------------------------


def test_leakage_aware_keeps_the_adversary_under_budget(tables, cooccurrence):
    from leakage.games import ChameleonObservation

    oracle = LibraryOracle(cooccurrence)
    aware = LeakageAwareAgent(tables, oracle, budget=0.2)
    reveal = RevealingAgent(tables)
    card = SPORTS[0]
    feasible = 0
    for secret in card.words[:5]:
        obs = ChameleonObservation("clue", "p1", "non-chameleon", card.category, card.words,
                                   secret, ("p1", "p2", "p3", "p4"), (), seed=1)  # fmt: skip
        clue = aware(obs)
        choice = aware.last_choice
        assert choice is not None and choice["chosen"] == clue
        ok = [
            lk <= 0.2 and m > 0 and not top
            for lk, m, top in zip(choice["leak"], choice["margin"], choice["top"], strict=True)
        ]
        i = choice["proposals"].index(clue)
        if any(ok):
            feasible += 1
            assert ok[i]  # under budget, recognisable, not the adversary's top guess
            assert choice["margin"][i] == max(
                m for m, o in zip(choice["margin"], ok, strict=True) if o
            )
        one = _one_clue(card, secret, clue)
        leak_aware = oracle.posteriors([one])[0][secret]
        leak_reveal = oracle.posteriors([_one_clue(card, secret, reveal(obs))])[0][secret]
        assert leak_aware <= leak_reveal + 1e-9
        assert leak_aware == pytest.approx(choice["leak"][i])
        # the library scores as the posterior chameleon infers (the factory's oracle)
        table_view = TableOracle(tables).posteriors([one])[0]
        assert table_view == pytest.approx(oracle.posteriors([one])[0])
    assert feasible >= 3
    t = play_chameleon({"non-chameleon": aware, "chameleon": PosteriorChameleon(tables)},
                       seed=3, cards=SPORTS)  # fmt: skip
    assert t.meta["outcome"] != "invalid"


def test_leakage_aware_budget_holds_against_the_chameleon_that_plays(tables):
    """docs/games.md: the posterior chameleon's P(secret) when it guesses is within the
    budget in every game whose last non-chameleon speaker kept it, and that speaker kept it
    in at least the share of games the docs state. (The agent once scored every clue said,
    the chameleon's too, and held P(secret) 0.41 on average over a 0.25 budget.)"""
    from leakage.games.agents.posterior import heard_posterior

    budget, kept_share = 0.25, 1.0  # docs/games.md, "The leakage-aware non-chameleon"
    aware = LeakageAwareAgent(tables, budget=budget)
    cham = PosteriorChameleon(tables)
    said: dict[str, float] = {}

    def recorded(obs):
        clue = aware(obs)
        if obs.phase == "clue":
            choice = aware.last_choice
            said[obs.player] = choice["leak"][choice["proposals"].index(clue)]
        return clue

    kept, over = [], []
    for seed in range(24):
        said.clear()
        t = play_chameleon({"non-chameleon": scripted(recorded), "chameleon": cham},
                           seed=seed, cards=SPORTS)  # fmt: skip
        assert t.meta["outcome"] != "invalid"
        chameleon = next(p.id for p in t.players if p.role == "chameleon")
        heard = [x for x in t.turns if x.player != chameleon]
        post = heard_posterior(tables.get(t.candidates, t.category), [x.text for x in heard])
        p_secret = post[t.candidates.index(t.secret)]
        # what the last speaker measured for the true chameleon is what that chameleon holds
        assert said[heard[-1].player] >= p_secret - 1e-12
        kept.append(said[heard[-1].player] <= budget)
        over.append(p_secret > budget)
    assert not any(k and o for k, o in zip(kept, over, strict=True)), (kept, over)
    assert np.mean(kept) >= kept_share


def _one_clue(card, secret, clue):
    from leakage.transcripts import ChameleonTranscript

    return ChameleonTranscript.model_validate({
        "game": "chameleon", "id": "x", "category": card.category,
        "candidates": list(card.words), "secret": secret,
        "players": [{"id": "a", "role": "non-chameleon"}, {"id": "b", "role": "chameleon"}],
        "turns": [{"player": "a", "text": clue}],
    })  # fmt: skip


def test_service_client_mode_speaks_the_score_contract(tables, cooccurrence):
    """Client mode against an in-test stub of ``POST /v1/score`` (the real service is built
    elsewhere): the body is a leakage.transcript/1 record, the answer a leakage.report/1."""
    from leakage.scoring import score_transcript

    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/score" and request.method == "POST"
        assert request.url.params["backend"] == "cooccurrence"
        body = json.loads(request.content)
        assert body["format"] == "leakage.transcript/1"
        seen.append(body)
        t = parse_transcript(body)
        return httpx.Response(200, json=score_transcript(t, cooccurrence).model_dump(mode="json"))

    client = httpx.Client(transport=httpx.MockTransport(handler))
    remote = LeakageAwareAgent(tables, ServiceOracle("http://leakage.test", client=client))
    local = LeakageAwareAgent(tables, LibraryOracle(cooccurrence))
    cham = PosteriorChameleon(tables)
    a = play_chameleon({"non-chameleon": remote, "chameleon": cham}, seed=5, cards=SPORTS)
    b = play_chameleon({"non-chameleon": local, "chameleon": cham}, seed=5, cards=SPORTS)
    assert a.model_dump_json() == b.model_dump_json()
    assert seen and all(len(s["turns"]) >= 1 for s in seen)
    np.testing.assert_allclose(remote.last_choice["leak"], local.last_choice["leak"])

    def down(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, text="busy")

    broken = ServiceOracle("http://x", client=httpx.Client(transport=httpx.MockTransport(down)))
    from leakage.errors import LLMError

    with pytest.raises(LLMError, match="HTTP 503"):
        broken.posteriors([_one_clue(SPORTS[0], "Golf", "ball")])


def test_leakage_aware_beats_revealing_against_the_posterior_chameleon(tables, cooccurrence):
    cham = PosteriorChameleon(tables)
    rates = {}
    for name, agent in (
        ("revealing", RevealingAgent(tables)),
        ("aware", LeakageAwareAgent(tables, LibraryOracle(cooccurrence), budget=0.25)),
    ):
        games = [
            play_chameleon({"non-chameleon": agent, "chameleon": cham}, seed=s, cards=SPORTS)
            for s in range(40)
        ]
        rates[name] = np.mean([t.meta["outcome"] == "chameleon_caught" for t in games])
    assert rates["aware"] > rates["revealing"] + 0.15, rates


def test_play_help_names_every_agent_the_spec_accepts():
    import typer

    from leakage.cli import app
    from leakage.games.agents._spec import CHAMELEON_AGENTS, SPY_AGENTS

    play = typer.main.get_command(app).commands["play"]  # type: ignore[attr-defined]
    (option,) = [p for p in play.params if p.name == "agents"]
    words = set(re.findall(r"[a-z-]+", option.help))
    for table in (CHAMELEON_AGENTS, SPY_AGENTS):
        for names in table.values():
            assert set(names) <= words, set(names) - words
