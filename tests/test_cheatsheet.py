"""Gu et al.'s Dynamic Cheatsheet: the store (FAISS retrieval, curation, persistence), the
agent's prompt injection, learning across seeded games, and the ``--agents`` spec."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from leakage.errors import InvalidInput
from leakage.games import ChameleonObservation, play_chameleon
from leakage.games.agents import (
    AgentFactory,
    ChameleonLLMAgent,
    Cheatsheet,
    CheatsheetAgent,
    parse_spec,
)
from leakage.games.agents.cheatsheet import HEADER, Entry, rule_lessons, situation
from leakage.llm import Generation
from tests.games_support import SPORTS, WordsEncoder, scripted

pytest.importorskip("faiss")


class EchoLLM:
    """An endpoint-like client (no tokenizer): records prompts, answers ``reply(prompt)``."""

    name = "echo"

    def __init__(self, reply):
        self.reply = reply
        self.prompts: list[str] = []

    def generate(self, messages, **_):
        text = "\n".join(m.content for m in messages)
        self.prompts.append(text)
        return Generation(self.reply(text))


def entry(lesson, situation="chameleon game; role chameleon; category Sports", games=1):
    return Entry(lesson, situation, "loss", games, 0)


def test_retrieval_returns_the_most_similar_entry(minilm):
    store = Cheatsheet(minilm)
    store.curate(
        [
            entry("Vote for the player whose clue is furthest from the others.",
                  "spygame; role civilian; word apple"),
            entry("A clue about rackets blends in when the category is Sports.",
                  "chameleon game; role chameleon; category Sports"),
            entry("Name a spice when the category is Food.",
                  "chameleon game; role chameleon; category Food"),
        ]
    )  # fmt: skip
    hits = store.retrieve("chameleon game; role chameleon; category Sports; secret unknown", 2)
    assert hits[0][0].lesson.startswith("A clue about rackets")
    assert hits[0][1] > hits[1][1]
    assert [e.lesson for e, _ in store.retrieve("spygame; role civilian; word pear", 1)] == [
        "Vote for the player whose clue is furthest from the others."
    ]


def test_curation_merges_duplicates_and_keeps_the_best_supported():
    store = Cheatsheet(WordsEncoder(), capacity=2)
    a = entry("say a word close to the others")
    info = store.curate([a, entry("Say a word close to the others."), entry("guess the first")])
    assert info == {"added": 3, "merged": 1, "dropped": 0, "kept": 2}
    assert [(e.lesson, e.games) for e in store.entries] == [
        ("say a word close to the others", 2),
        ("guess the first", 1),
    ]
    assert a.games == 1  # the caller's entries are not changed
    # over capacity: the entry supported by the fewest games goes, the oldest first on ties
    info = store.curate([entry("vote for the quietest player"), entry("watch the votes closely")])
    assert info["dropped"] == 2
    assert [e.lesson for e in store.entries] == [
        "say a word close to the others",
        "watch the votes closely",
    ]
    assert store._index.ntotal == 2


def test_the_memory_round_trips_through_its_file(tmp_path):
    path = tmp_path / "mem" / "chameleon.chameleon.json"
    inner = ChameleonLLMAgent(EchoLLM(lambda _: "Answer: p2"))
    agent = CheatsheetAgent(inner, Cheatsheet(WordsEncoder()), path=path, curate_every=3)
    agent.store.curate([entry("keep clues plain", games=3), entry("vote late")])
    agent.pending = [entry("a pending lesson")]
    agent.games = 4
    agent.save(path)
    again = CheatsheetAgent(inner, Cheatsheet(WordsEncoder()), path=path, curate_every=3)
    assert again.store.entries == agent.store.entries
    np.testing.assert_array_equal(again.store.vectors, agent.store.vectors)
    assert (again.pending, again.games) == (agent.pending, 4)
    assert again.store.retrieve("keep clues plain", 1)[0][0].lesson == "keep clues plain"
    # another encoder: the vectors are made again, not reused
    other = WordsEncoder()
    other.name, other.dimension = "other", 32
    moved = Cheatsheet(other)
    moved.load_dict(json.loads(path.read_text()), str(path))
    assert moved.vectors.shape == (2, 32)

    path.write_text(json.dumps({"format": "leakage.cheatsheet/1", "entries": [{"lesson": 1}]}))
    with pytest.raises(InvalidInput, match=r"entries\[0\]: missing field outcome, situation"):
        CheatsheetAgent(inner, Cheatsheet(WordsEncoder()), path=path)
    path.write_text("{}")
    with pytest.raises(InvalidInput, match=r"not a leakage\.cheatsheet/1 file"):
        CheatsheetAgent(inner, Cheatsheet(WordsEncoder()), path=path)


def test_retrieved_lessons_go_into_the_phase_prompt_and_nowhere_else():
    llm = EchoLLM(lambda _: "Answer: p2")
    inner = ChameleonLLMAgent(llm)
    store = Cheatsheet(WordsEncoder())
    store.curate([entry("Braces {like these} are kept as they are.")])
    agent = CheatsheetAgent(inner, store, top_k=1)
    card = SPORTS[0]
    obs = ChameleonObservation("vote", "p1", "chameleon", card.category, card.words, None,
                               ("p1", "p2", "p3"), (("p2", "ball"),), seed=1)  # fmt: skip
    assert agent(obs) == "p2"
    assert f"{HEADER}\n- Braces {{like these}} are kept as they are." in llm.prompts[0]
    assert inner.prompts.vote == type(inner.prompts)().vote  # restored after the move
    assert agent.last_retrieved[0][0].lesson.startswith("Braces")
    assert "role chameleon" in situation(obs) and "secret unknown" in situation(obs)
    bare = CheatsheetAgent(ChameleonLLMAgent(llm), Cheatsheet(WordsEncoder()))
    bare(obs)
    assert HEADER not in llm.prompts[1]


def _clue_or_vote(text):
    """A scripted endpoint: a fresh clue, a vote for p1 (or p2 when voting is p1's)."""
    if "Vote for" in text:
        return "Answer: p2" if "You are player p1" in text else "Answer: p1"
    if "Which word of the card" in text:
        return "Answer: " + SPORTS[0].words[0]
    said = len(re.findall(r"p\d: \w+", text.split("Words said so far:")[-1]))
    return "Answer: " + ["alpha", "bravo", "charlie", "delta"][said]


def _scripted_move(obs):
    if obs.phase == "vote":
        return "p2" if obs.player == "p1" else "p1"
    return {"p1": "kilo", "p2": "lima", "p3": "mike", "p4": "oscar"}[obs.player]


def test_the_agent_learns_from_seeded_games_and_curates_every_k(tmp_path):
    """Scripted players, rule lessons: lessons wait until the K-th game, then the memory is
    curated, saved, and its entries appear in the next games' prompts."""
    llm = EchoLLM(_clue_or_vote)
    path = tmp_path / "m.json"
    agent = CheatsheetAgent(
        ChameleonLLMAgent(llm), Cheatsheet(WordsEncoder()), curate_every=2, path=path
    )
    others = scripted(_scripted_move)
    transcripts = []
    for seed in range(3):
        n = len(llm.prompts)
        transcripts.append(
            play_chameleon({"non-chameleon": others, "chameleon": agent}, seed=seed, cards=SPORTS)
        )
        assert (HEADER in "".join(llm.prompts[n:])) == (seed == 2)
        assert len(agent.store) == (0 if seed == 0 else 1)
    assert agent.games == 3 and len(agent.pending) == 1
    # both first games caught the chameleon: their lessons differ in the clue only and merge
    assert [t.meta["outcome"] for t in transcripts[:2]] == ["chameleon_caught"] * 2
    assert agent.curations == [{"game": 2, "by": "rule", "added": 2, "merged": 1,
                                "dropped": 0, "kept": 1}]  # fmt: skip
    assert (agent.store.entries[0].games, agent.store.entries[0].outcome) == (2, "loss")
    t = transcripts[0]
    cham = next(iter(t.chameleons()))
    (lesson,) = rule_lessons(t, [cham])
    said = next(x.text for x in t.turns if x.player == cham)
    assert f"the clue '{said}'" in lesson.lesson and lesson.situation.endswith("Sports")
    assert lesson.outcome == ("win" if t.meta["winner_role"] == "chameleon" else "loss")
    saved = json.loads(path.read_text())
    assert saved["games"] == 3 and len(saved["entries"]) == 1 and len(saved["pending"]) == 1


def test_an_llm_writes_the_lessons_and_curates():
    def reply(text):
        if "strategy notes" in text:
            return "Answer:\n- Pick a clue that sounds like the others' clues.\n- ok"
        if "reusable rule" in text:
            return "Answer: Pick a clue that matches the others, not the category."
        return _clue_or_vote(text)

    llm = EchoLLM(reply)
    from leakage.games.agents.cheatsheet import LLMCurator, LLMLessons

    agent = CheatsheetAgent(ChameleonLLMAgent(llm), Cheatsheet(WordsEncoder()),
                            lessons=LLMLessons(llm), curator=LLMCurator(llm),
                            curate_every=1)  # fmt: skip
    others = scripted(_scripted_move)
    play_chameleon({"non-chameleon": others, "chameleon": agent}, seed=0, cards=SPORTS)
    # the curator's rules replace the memory ("ok" is too short to be a rule)
    assert [e.lesson for e in agent.store.entries] == [
        "Pick a clue that sounds like the others' clues."
    ]
    assert agent.store.entries[0].situation == "chameleon game; role chameleon; category Sports"
    assert agent.last_curation is not None and agent.last_curation["by"] == "llm"
    assert "the public log" in "".join(llm.prompts) and "vote" in "".join(llm.prompts)


def test_the_cheatsheet_spec(tmp_path):
    assert parse_spec("chameleon", "chameleon=cheatsheet:local")["chameleon"] == (
        "cheatsheet:local"
    )
    assert parse_spec("spygame", "spy=cheatsheet:llm:m")["spy"] == "cheatsheet:llm:m"
    with pytest.raises(InvalidInput, match="a cheatsheet wraps an LLM player"):
        parse_spec("chameleon", "chameleon=cheatsheet:posterior")
    factory = AgentFactory(encoder=WordsEncoder(), memory=tmp_path, llm_endpoint="http://x")
    factory._clients["llm"] = EchoLLM(_clue_or_vote)
    agent = factory.build("chameleon", "cheatsheet:llm", role="chameleon")
    assert isinstance(agent, CheatsheetAgent)
    assert agent.path == tmp_path / "chameleon.chameleon.json"
    assert agent.name == "cheatsheet+llm:echo"
    assert agent.curator is not None  # an endpoint writes the lessons (lessons="auto")
    with pytest.raises(InvalidInput, match="has no prompts"):
        CheatsheetAgent(scripted(lambda obs: "x"), Cheatsheet(WordsEncoder()))
