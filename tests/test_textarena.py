"""TextArena's Taboo with leakage scored while it is played (leakage.textarena) and its game
logs as an input format (``textarena-taboo``), offline: scripted agents, the real default
index, no network (Taboo's word lists ship with textarena; it downloads nothing)."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import textarena as ta

from leakage.errors import InvalidTranscript
from leakage.scoring import score_transcript
from leakage.textarena import TabooLeakageWrapper
from leakage.transcripts import iter_transcripts

from .conftest import REPO

CLUES = ["a woolly animal", "it lives in the mountains", "kept on farms", "a big bird"]


@pytest.fixture(autouse=True)
def _own_random_state() -> Iterator[None]:
    """Taboo seeds Python's global ``random`` on reset; give the other tests theirs back."""
    saved = random.getstate()
    yield
    random.setstate(saved)


def _play(env: TabooLeakageWrapper, seed: int = 1) -> list[tuple[int, str, dict]]:
    """One game with scripted agents: the clue giver cycles through ``CLUES``; a guesser
    guesses ``[camel]`` twice, then the word (read off the game, as an oracle would)."""
    env.reset(num_players=4, seed=seed)
    clues = iter(CLUES * 20)
    guesses = 0
    steps = []
    done = False
    while not done:
        pid, observation = env.get_observation()
        assert isinstance(observation, str)  # the default wrappers' LLM observation
        role = env.state.role_mapping[pid]
        if role == "Clue Giver":
            action = next(clues)
        else:
            guesses += 1
            word = env.state.game_state["word_to_guess"]
            action = f"[{word}]" if guesses % 3 == 0 else "[camel]"
        done, info = env.step(action)
        steps.append((pid, role, info))
    return steps


def _taboo(**kw) -> object:
    return ta.make("Taboo-v0-animals", max_rounds=2, max_attempts_per_player=3, **kw)


def test_a_game_through_the_wrapper_scores_each_clue_as_leakage_score_does(
    tmp_path: Path, default_index: Path, cooccurrence
):
    log = tmp_path / "taboo.jsonl"
    env = TabooLeakageWrapper(_taboo(), cooccurrence, log_path=log, agents={0: "scripted"})
    steps = _play(env)
    rewards, game_info = env.close()
    assert set(rewards) == {0, 1, 2, 3}

    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert records == env.records and len(records) >= 2
    words = json.loads(
        (Path(ta.__file__).parent / "envs" / "Taboo" / "words.json").read_text(encoding="utf-8")
    )["animals"]
    for r in records:
        assert r["candidates"] == list(words) and r["word"] in words
        assert r["game_end"]["rewards"] == {str(k): v for k, v in rewards.items()}
        assert r["game_end"]["reason"] == game_info[0]["reason"]
        assert r["outcome"] in ("guessed", "forfeited", "open")
    assert any(r["outcome"] == "guessed" for r in records)
    assert records[0]["players"][0] == {"id": 0, "role": "Clue Giver", "agent": "scripted"}
    # "a big bird" names a taboo word of some animal, or not: flagged by Taboo's own rule
    for r in records:
        for m in r["messages"]:
            if "taboo" in m:
                named = [w for w in [*r["taboo_words"], r["word"]] if re.search(
                    rf"\b{re.escape(w)}\b", m["text"], re.I)]  # fmt: skip
                assert m["taboo"] is bool(named)

    # the log read back: one game per hidden word, scored as the wrapper scored it
    games = list(iter_transcripts([log]))
    assert not any(isinstance(g, Exception) for g in games)
    assert [g.id for g in games] == [f"{r['game_id']}#{r['word_number']}" for r in records]
    reports = {g.id: score_transcript(g, cooccurrence) for g in games}
    clue_steps = [(pid, info) for pid, role, info in steps if role == "Clue Giver"]
    assert clue_steps and all("leakage" not in i for _, role, i in steps if role == "Guesser")
    for _pid, info in clue_steps:
        got = info["leakage"]
        assert "error" not in got, got
        step = reports[got["transcript_id"]].steps[got["turn"]]
        assert step.counted and step.role == "non-chameleon"
        assert got["secret"] == reports[got["transcript_id"]].secret
        assert got["secret_probability"] == pytest.approx(step.secret_probability)
        assert got["secret_rank"] == step.secret_rank
        assert got["entropy_bits"] == pytest.approx(step.entropy_bits)
        assert got["information_gain_bits"] == pytest.approx(step.information_gain_bits)
        top = sorted(step.posterior.items(), key=lambda kv: -kv[1])[:5]
        assert [w for w, _ in got["top"]] == [w for w, _ in top]
    # the guesses are turns that do not update the posterior; meta says which was right
    g = games[0]
    roles = {p.id: p.role for p in g.players}
    assert {roles[t.player] for t in g.turns} == {"non-chameleon", "chameleon"}
    assert all(x["correct"] is (x["guess"] == g.secret) for x in g.meta["guesses"])

    # `leakage score` on the log prints the same reports
    out = subprocess.run(
        [sys.executable, "-m", "leakage", "score", str(log), "-f", "jsonl", "-b",
         "cooccurrence", "-O", f"index={default_index}"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    printed = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    assert [r["steps"] for r in printed] == [
        reports[g.id].model_dump(mode="json")["steps"] for g in games
    ]


class Broken:
    """A backend that fails as an unreachable endpoint would."""

    name = "broken"

    def loglik(self, clues, candidates, *, category=None):
        raise ConnectionError("endpoint unreachable")


def test_a_scoring_failure_is_said_in_the_info_and_the_game_goes_on(tmp_path: Path, cooccurrence):
    log = tmp_path / "taboo.jsonl"
    env = TabooLeakageWrapper(_taboo(), Broken(), log_path=log)
    steps = _play(env, seed=2)
    env.close()
    errors = [i["leakage"] for _, role, i in steps if role == "Clue Giver"]
    assert errors and all(
        e["error"] == "ConnectionError: endpoint unreachable" and "#" in e["transcript_id"]
        for e in errors
    )
    assert steps[-1][2] is not None  # played to the end
    # every message is in the log, to be scored later with a backend that works
    games = list(iter_transcripts([log]))
    assert sum(len(g.turns) for g in games) == len(steps)
    assert all(score_transcript(g, cooccurrence).steps for g in games)


def test_guesses_are_scored_when_asked(cooccurrence):
    env = TabooLeakageWrapper(_taboo(), cooccurrence, include_guesses=True, top_k=2)
    steps = _play(env, seed=3)
    env.close()
    guessed = [i["leakage"] for _, role, i in steps if role == "Guesser"]
    assert guessed and all(g["counted"] and len(g["top"]) == 2 for g in guessed)
    # each step names its player and TextArena's role: a guesser is a guesser
    assert all(g["role"] == "Guesser" and env.roles[g["player"]] == "Guesser" for g in guessed)


def test_the_roles_are_exposed(cooccurrence):
    env = TabooLeakageWrapper(_taboo(), cooccurrence)
    assert env.roles == {}
    env.reset(num_players=4, seed=5)
    roles = env.roles
    assert sorted(roles) == [0, 1, 2, 3]
    assert sorted(roles.values()) == ["Clue Giver", "Clue Giver", "Guesser", "Guesser"]
    pid, _ = env.get_observation()
    _done, info = env.step("a woolly animal")
    assert info["leakage"]["player"] == pid and info["leakage"]["role"] == roles[pid]
    env.close()


def test_a_repeated_clue_is_counted_once(tmp_path: Path, default_index: Path, cooccurrence):
    """A clue giver saying the same clue again (any case, brackets, punctuation) adds no
    evidence: the repeat is not a turn of the game read back, its step says so, and the
    posterior stays where the first saying left it."""
    log = tmp_path / "taboo.jsonl"
    env = TabooLeakageWrapper(_taboo(), cooccurrence, log_path=log)
    env.reset(num_players=4, seed=6)
    said = ["a woolly animal", "[A  woolly animal.]", "kept on farms"]
    sayings = {pid: iter(said * 3) for pid in range(4)}
    steps, done = [], False
    while not done:
        pid, _ = env.get_observation()
        action = next(sayings[pid]) if env.roles[pid] == "Clue Giver" else "[camel]"
        done, info = env.step(action)
        if "leakage" in info:
            steps.append(info["leakage"])
    env.close()
    record = env.records[0]
    steps = [s for s in steps if s["transcript_id"] == steps[0]["transcript_id"]]
    assert len(steps) == 3
    first, repeat, new = steps
    assert first["counted"] and "repeated" not in first
    # the same clue again, in another form: message 2 repeats message 0
    assert repeat["repeated"] == 0 and repeat["counted"] is False
    assert repeat["information_gain_bits"] == 0.0
    assert repeat["secret_probability"] == first["secret_probability"]
    assert repeat["top"] == first["top"]
    # the next new clue is the game's second turn of evidence
    assert "repeated" not in new and new["counted"] and new["turn"] > first["turn"]
    assert new["information_gain_bits"] != 0.0
    (game, *_) = iter_transcripts([log])
    clues = [t.text for t in game.turns if t.player == str(record["players"][0]["id"])]
    assert clues == ["[a woolly animal]", "[kept on farms]"]  # as the team saw them
    assert game.meta["repeated_clues"] == [{"message": 2, "repeats": 0}]


def test_the_wrapper_checks_its_game_and_the_seats(cooccurrence):
    with pytest.raises(TypeError, match=r"wraps TextArena's Taboo.*not TicTacToeEnv"):
        TabooLeakageWrapper(ta.make("TicTacToe-v0"), cooccurrence)
    env = TabooLeakageWrapper(_taboo(), cooccurrence)
    with pytest.raises(ValueError, match="even number of players, at least 4: 5"):
        env.reset(num_players=5)


@pytest.fixture(scope="module")
def taboo_record(cooccurrence) -> dict:
    """The first record of a game's log (a word with a clue and a guess)."""
    saved = random.getstate()
    env = TabooLeakageWrapper(_taboo(), cooccurrence)
    _play(env, seed=4)
    env.close()
    random.setstate(saved)
    (record,) = [r for r in env.records if len(r["messages"]) >= 2][:1]
    return record


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (lambda r: r.pop("word"), "word", "missing"),
        (lambda r: r.update(word="Unicorn"), "word", "'Unicorn' is not among the candidates"),
        (lambda r: r.update(format="leakage.textarena-taboo/9"), "format", "expected"),
        (lambda r: r["players"][1].update(role="Judge"), "players[1].role", "'Judge'"),
        (lambda r: r["players"][1].update(role="Clue Giver"), "players", "2 clue givers"),
        (lambda r: r["messages"][0].update(player=7), "messages[0].player", "not on the team"),
        (lambda r: r["messages"][1].update(text=3), "messages[1].text", "expected a string"),
        (lambda r: r["messages"][1].update(text="a\x00b"), "messages[1].text", "NUL"),
        (lambda r: r["candidates"].append(r["candidates"][0].upper()), "candidates", "duplicate"),
        (lambda r: r.update(outcome="won"), "outcome", "guessed, forfeited, open"),
    ],
)
def test_a_bad_log_is_an_error_naming_file_record_and_field(
    tmp_path: Path, taboo_record, change, field, message
):
    good = taboo_record
    bad = json.loads(json.dumps(good))
    change(bad)
    path = tmp_path / "taboo.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    first, second = iter_transcripts([path])
    assert not isinstance(first, Exception)
    assert isinstance(second, InvalidTranscript)
    text = str(second)
    assert f"{path}, record line 2: {field}: " in text and message in text, text
