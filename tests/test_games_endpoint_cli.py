"""Gu et al.'s Dynamic Cheatsheet tournament and MAgIC's PGM-aware LLM agent, run from the
command line against an OpenAI-compatible endpoint: a local fake (the real JSON over HTTP)
whose ``chat_reply`` answers every prompt the way a model following the reply form would.

The cheatsheet's encoder is a hashed bag of words (no torch here); the bundled MiniLM's
retrieval is tested in tests/test_cheatsheet.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from leakage.cli.play import game_seeds
from leakage.errors import LLMError
from leakage.games.agents.cheatsheet import HEADER
from leakage.llm import Message, OpenAICompatibleClient
from tests.cli_support import invoke_leakage
from tests.fakes.openai_api import (
    MODEL,
    FakeOpenAI,
    alternatives,
    chat_prompt_tokens,
    tokenize,
)
from tests.games_support import WordsEncoder

Messages = list[dict[str, str]]


def leakage(*args: str, home: Path) -> tuple[int, str]:
    r = invoke_leakage(*args, home=home)
    return r.exit_code, r.output


def test_a_scripted_chat_reply_gets_the_default_replys_usage_logprobs_and_cuts():
    seen: list[Messages] = []

    def reply(messages: Messages) -> str:
        seen.append(messages)
        return "Answer: alpha beta. gamma delta"

    def chat(url: str, content: str, **kw) -> dict:
        body = {"model": MODEL, "messages": [{"role": "user", "content": content}], **kw}
        return httpx.post(f"{url}/chat/completions", json=body).json()

    with FakeOpenAI(chat_reply=reply) as fake:
        whole = chat(fake.url, "hi there", max_tokens=64, logprobs=True, top_logprobs=2)
        cut = chat(fake.url, "again", max_tokens=3)
        stopped = chat(fake.url, "once more", max_tokens=64, stop=["."])
        client = OpenAICompatibleClient(fake.url, MODEL, backoff=0.01)
        generated = client.generate([Message("user", "via the client")], max_tokens=64)
    assert seen == [
        [{"role": "user", "content": t}]
        for t in ("hi there", "again", "once more", "via the client")
    ]
    assert generated.text == whole["choices"][0]["message"]["content"]
    assert whole["choices"][0]["message"]["content"] == "Answer: alpha beta. gamma delta"
    content = whole["choices"][0]["logprobs"]["content"]
    assert [t["token"] for t in content] == [
        t for t, _ in tokenize("Answer: alpha beta. gamma delta")
    ]
    assert [(a["token"], a["logprob"]) for a in content[2]["top_logprobs"]] == alternatives(
        " alpha", 2
    )
    assert cut["choices"][0]["message"]["content"] == "Answer: alpha"
    assert cut["choices"][0]["finish_reason"] == "length"
    assert cut["usage"]["completion_tokens"] == 3
    assert cut["usage"]["prompt_tokens"] == chat_prompt_tokens(
        [{"role": "user", "content": "again"}]
    )
    assert stopped["choices"][0]["message"]["content"] == "Answer: alpha beta"
    assert stopped["choices"][0]["finish_reason"] == "stop"
    assert generated.completion_tokens == len(content)


def test_a_chat_reply_that_cannot_answer_fails_the_request_at_once():
    def reply(messages: Messages) -> str:
        raise AssertionError("a prompt no phase asks")

    with FakeOpenAI(chat_reply=reply) as fake:
        client = OpenAICompatibleClient(fake.url, MODEL, backoff=0.01)
        with pytest.raises(LLMError, match="chat_reply failed: AssertionError"):
            client.generate([Message("user", "hello")])
        assert fake.hits() == 1  # a 400: not retried


# -- the cheatsheet tournament ----------------------------------------------------------

CLUES = ("familiar", "ordinary", "popular", "classic", "everyday", "common", "typical")
CURATED = (
    (
        "Pick a clue from the category's everyday vocabulary, never a rare word.",
        "Vote for the player whose clue sounds most generic and least committed.",
        "When caught, guess the candidate that most of the clues point towards.",
    ),
    (
        "Second curation: echo the theme shared by the first two clues you hear.",
        "Second curation: a vote should go against the odd clue out in the round.",
        "Second curation: a guess follows the strongest single clue on the table.",
    ),
)


class ChameleonModel:
    """Answers a Chameleon player's, lesson writer's and curator's prompts in their reply
    forms (leakage/games/agents/llm.py, cheatsheet.py) and logs ``(kind, messages)``."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Messages]] = []
        self.lessons: list[str] = []

    def __call__(self, messages: Messages) -> str:
        user = messages[-1]["content"]
        if "Here is the public log of a finished" in user:
            secret, outcome = re.search(r"the secret was (.+?); outcome: (\w+)", user).groups()
            lesson = (
                f"After the {secret} game ({outcome}), the chameleon should blend in with "
                "the clues said before its own."
            )
            self.lessons.append(lesson)
            return self._logged("lesson", messages, f"Answer: {lesson}")
        if "These are strategy notes from earlier games" in user:
            n = sum(1 for kind, _ in self.log if kind == "curate")
            rules = "\n".join(f"- {r}" for r in CURATED[n])
            return self._logged("curate", messages, f"Answer:\n{rules}")
        system = messages[0]["content"]
        k, listed = re.search(r"the card lists (\d+) words: (.*?)\. One of them", system).groups()
        card = listed.split(", ")
        assert len(card) == int(k), f"a card word holds ', ': {listed}"
        if "Say your one word" in user:
            said = re.search(r"Words said so far: (.*?)\. Say your", user, re.S).group(1)
            taken = {w.casefold() for w in card} | {
                c.split(": ", 1)[1].casefold() for c in said.split("; ") if ": " in c
            }
            word = next(w for w in CLUES if w not in taken)
            return self._logged("clue", messages, f"I will blend in.\nAnswer: {word}")
        if "Vote for the player you think is the chameleon" in user:
            others = re.search(r"one of: (.*?)\. Reply", user).group(1).split(", ")
            return self._logged("vote", messages, f"Answer: {others[-1]}")
        if "Which word of the card is the secret?" in user:
            return self._logged("guess", messages, f"Answer: {card[0]}")
        raise AssertionError(f"a prompt no phase asks: {user!r}")

    def _logged(self, kind: str, messages: Messages, reply: str) -> str:
        self.log.append((kind, messages))
        return reply


def notes(prompt: str) -> set[str]:
    """The strategies a cheatsheet block at the top of ``prompt`` shows."""
    block = prompt.split("\n\n", 1)[0].splitlines()
    assert block[0] == HEADER
    return {line.removeprefix("- ") for line in block[1:]}


def test_cheatsheet_tournament_through_an_endpoint(
    tmp_path: Path, leakage_home: Path, default_index: Path, monkeypatch: pytest.MonkeyPatch
):
    pytest.importorskip("faiss")
    monkeypatch.setattr("leakage.encoders.open_encoder", lambda *a, **kw: WordsEncoder(256))
    model = ChameleonModel()
    out = tmp_path / "tournament.json"
    with FakeOpenAI(chat_reply=model) as fake:
        code, output = leakage(
            "cheatsheet-tournament", "chameleon",
            "--agents", f"non-chameleon=revealing,chameleon=llm:{MODEL}",
            "--role", "chameleon", "--games", "4", "--curate-every", "2",
            "--llm-endpoint", fake.url, "--json", str(out),
            home=leakage_home,
        )  # fmt: skip
        assert code == 0, output
        assert len(fake.requests) == len(model.log)  # every request answered once
    # every move was read on the first try (two messages: system and the phase's prompt)
    moves = [(kind, m) for kind, m in model.log if kind in ("clue", "vote", "guess")]
    assert all(len(m) == 2 for _, m in moves)

    result = json.loads(out.read_text())
    assert result["agent"] == f"llm:{MODEL}" and result["role"] == "chameleon"
    assert result["games"] == 4 and result["seeds"] == game_seeds(0, 4)
    assert len(result["wins_without"]) == len(result["wins_with"]) == 4
    assert [(c["game"], c["by"]) for c in result["curations"]] == [(2, "llm"), (4, "llm")]
    assert [c["added"] for c in result["curations"]] == [3, 3]
    assert result["memory"] == list(CURATED[1])

    # The request log, game by game: the chameleon gives one clue a game, so clue k opens
    # game k (games 1-4 without the cheatsheet, 5-8 with it).
    games: list[list[tuple[str, Messages]]] = []
    for kind, messages in model.log:
        if kind == "clue":
            games.append([])
        games[-1].append((kind, messages))
    assert len(games) == 8
    kinds = [[kind for kind, _ in g] for g in games]
    assert all("lesson" not in k and "curate" not in k for k in kinds[:4])
    assert [k.count("lesson") for k in kinds[4:]] == [1, 1, 1, 1]
    assert [k.count("curate") for k in kinds[4:]] == [0, 1, 0, 1]
    assert [k[-1] for k in kinds[4:]] == ["lesson", "curate", "lesson", "curate"]

    def prompts(game: list[tuple[str, Messages]]) -> list[str]:
        return [m[1]["content"] for kind, m in game if kind in ("clue", "vote", "guess")]

    without = [p for g in games[:4] for p in prompts(g)]
    assert without and not any(HEADER in p for p in without)
    # before the first curation the memory is empty; after it, every move sees its rules
    assert not any(HEADER in p for g in games[4:6] for p in prompts(g))
    after = [p for g in games[6:] for p in prompts(g)]
    assert len(after) >= 4 and all(p.startswith(HEADER) for p in after)
    assert all(notes(p) == set(CURATED[0]) for p in after)
    # the curator was shown the memory and the lessons the model wrote since
    curations = [m[0]["content"] for kind, m in model.log if kind == "curate"]
    assert all(f"- {lesson} (" in curations[0] for lesson in model.lessons[:2])
    second = model.lessons[2:] + list(CURATED[0])
    assert all(f"- {line} (" in curations[1] for line in second)
    assert len(model.lessons) == 4


# -- MAgIC's PGM-aware agent with an LLM ------------------------------------------------


class PGMModel:
    """Answers the PGM agent's description prompt (leakage/games/agents/pgm.py) in its reply
    form, from the decision prompt's target; ``say_word`` says the player's word instead."""

    def __init__(self, *, say_word: bool = False) -> None:
        self.say_word = say_word
        self.replies: list[str] = []
        self.requests: list[Messages] = []

    def __call__(self, messages: Messages) -> str:
        self.requests.append(messages)
        user = messages[1]["content"]
        assert "Your analysis (PGM):" in user and "the spy with probability" in user
        word = re.search(r"Your word is (.+)\.$", messages[0]["content"]).group(1)
        if self.say_word:
            return f"Answer: my word is {word}"
        if "you are the undercover:" in user:
            target = re.search(r"defraud trust from (\S+)\.", user).group(1)
            text = f"Just what {target} would say about it, nothing unusual here"
        else:
            target = re.search(r"suspiciousness of (\S+)\.", user).group(1)
            text = f"More specific than anything {target} said so far, believe me"
        self.replies.append(text)
        return f"Let me think.\nAnswer: {text}"


def spy_games(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def spy_of(t: dict) -> str:
    return next(p["id"] for p in t["players"] if p["role"] == "spy")


def play_spygame(spy: str, out: Path, home: Path, endpoint: str | None = None) -> None:
    args = ["play", "spygame", "--agents", f"civilian=associative,spy={spy}", "--games", "2"]
    args += ["--out", str(out)] + (["--llm-endpoint", endpoint] if endpoint else [])
    code, output = leakage(*args, home=home)
    assert code == 0, output


def test_pgm_llm_spy_through_an_endpoint(tmp_path: Path, leakage_home: Path, default_index: Path):
    model = PGMModel()
    with FakeOpenAI(chat_reply=model) as fake:
        play_spygame(f"pgm:llm:{MODEL}", tmp_path / "games.jsonl", leakage_home, fake.url)
        assert len(fake.requests) == len(model.requests)
    games = spy_games(tmp_path / "games.jsonl")
    assert len(games) == 2
    said = []
    for t in games:
        spy = spy_of(t)
        assert t["meta"]["outcome"] != "invalid" and not t["meta"]["invalid_moves"]
        assert next(p["agent"] for p in t["players"] if p["id"] == spy) == f"pgm:llm:{MODEL}"
        said += [x["text"] for x in t["turns"] if x["player"] == spy]
        mine = [r for r in t["meta"]["reflections"] if r["player"] == spy]
        assert mine
        for r in mine:
            assert set(r["beliefs"]) == set(r["others_beliefs"][next(iter(r["others_beliefs"]))])
            assert spy in r["beliefs"] and spy not in r["others_beliefs"]
            assert sum(r["beliefs"].values()) == pytest.approx(1.0, abs=1e-5)
    # each of the spy's descriptions is the model's, asked once (no word said, no retry)
    assert said == model.replies and len(model.requests) == len(said)
    assert all(len(m) == 2 for m in model.requests)


def test_pgm_llm_spy_that_says_its_word_falls_back_on_the_scripted_description(
    tmp_path: Path, leakage_home: Path, default_index: Path
):
    model = PGMModel(say_word=True)
    with FakeOpenAI(chat_reply=model) as fake:
        play_spygame(f"pgm:llm:{MODEL}", tmp_path / "llm.jsonl", leakage_home, fake.url)
    play_spygame("pgm", tmp_path / "scripted.jsonl", leakage_home)
    llm, scripted = spy_games(tmp_path / "llm.jsonl"), spy_games(tmp_path / "scripted.jsonl")
    # asked three times (retries=2) per description, then the scripted PGM's words are said:
    # the same beliefs, so the same games as the scripted agent's
    spoken = sum(1 for t in llm for x in t["turns"] if x["player"] == spy_of(t))
    assert spoken and len(model.requests) == 3 * spoken
    assert all("says your word" in m[-1]["content"] for m in model.requests[1::3])
    for a, b in zip(llm, scripted, strict=True):
        assert a["meta"]["outcome"] != "invalid"
        assert (a["turns"], a["votes"]) == (b["turns"], b["votes"])
        assert a["meta"]["reflections"] == b["meta"]["reflections"]
