"""clembench ``guesswhat`` and ``taboo`` logs (``interactions.json``) as input formats:
hand-made logs for the mapping and the errors, the shared dev sample's raw logs and fixtures
for the real format (skipped without ../shared/data)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from leakage.errors import InvalidTranscript
from leakage.transcripts import convert_record, load_transcripts
from leakage.transcripts.adapters import ADAPTERS
from leakage.transcripts.adapters.clembench import instance_key, instance_side

CARD = ["Elder", "Minister", "Cannon", "Grenade", "Organ", "Bass", "Stairs", "Pencil"]


def _msg(sender: str, to: str, kind: str, content: str) -> dict[str, Any]:
    return {
        "from": sender,
        "to": to,
        "timestamp": "t",
        "action": {"type": kind, "content": content},
    }


def guesswhat_log(*, target: str | None = "Bass", end: str = "correct guess") -> dict[str, Any]:
    """A guesswhat log as clembench writes it: two answered questions, then a guess."""
    intro = f"Let's play a guessing game. ...\n\nList of candidate words: {CARD!r}"
    first = "Let's play ... Based on your knowledge of the word: Bass ...\n\n"
    first += (f"Target Word: {target}\n\n" if target else "") + "QUESTION: Is it alive?"
    return {
        "players": {
            "GM": "Game master for guesswhat",
            "Player 1": "Guesser, model-a",
            "Player 2": "Answerer, model-b",
        },
        "turns": [
            [
                _msg("GM", "Player 1", "send message", intro),
                _msg("Player 1", "GM", "get message", "QUESTION: Is it alive?"),
                _msg("GM", "Player 2", "send message", first),
                _msg("Player 2", "GM", "get message", "ANSWER: Yes."),
            ],
            [
                _msg("GM", "Player 1", "send message", "ANSWER: yes"),
                _msg("Player 1", "GM", "get message", "QUESTION: Is it a plant?"),
                _msg("GM", "Player 2", "send message", "QUESTION: Is it a plant?"),
                _msg("Player 2", "GM", "get message", "ANSWER: no"),
            ],
            [
                _msg("GM", "Player 1", "send message", "ANSWER: no"),
                _msg("Player 1", "GM", "get message", "QUESTION: Is it a noun?"),
                _msg("GM", "GM", "invalid content", "Invalid question. Asking about the POS."),
                _msg("GM", "GM", "invalid content", "abort game")
                if end == "abort"
                else _msg("Player 1", "GM", "get message", "GUESS: bass"),
                _msg("GM", "GM", end, "bass"),
            ],
        ],
    }


def taboo_log() -> dict[str, Any]:
    """A taboo log: a clue, a wrong guess, a clue, a right guess, then a rejected clue."""
    intro = (
        "You are playing ...\n\nThis is the target word that you need to describe and that "
        "the other player needs to guess:\n\nclear\n\nRelated words are:\n\n- crystal\n"
        "- obvious\n- confident\n\nImportant: ..."
    )
    return {
        "players": {
            "GM": {"game_role": "Game Master", "model_name": "programmatic"},
            "Player 1": {"game_role": "WordDescriber", "model_name": "m1"},
            "Player 2": {"game_role": "WordGuesser", "model_name": "m2"},
        },
        "turns": [
            [
                _msg("GM", "Player 1", "send message", intro),
                _msg("Player 1", "GM", "get message", "CLUE: Easy to see through."),
                _msg("GM", "GM", "valid response", "continue"),
                _msg("GM", "GM", "valid clue", "easy to see through"),
                _msg("GM", "Player 2", "send message", "... CLUE: Easy to see through."),
                _msg("Player 2", "GM", "get message", "GUESS: Transparent"),
                _msg("GM", "GM", "valid response", "continue"),
                _msg("GM", "GM", "valid guess", "transparent"),
            ],
            [
                _msg("GM", "Player 1", "send message", "GUESS: Transparent"),
                _msg("Player 1", "GM", "get message", "CLUE: Not cloudy."),
                _msg("GM", "GM", "valid response", "continue"),
                _msg("GM", "GM", "valid clue", "not cloudy"),
                _msg("GM", "Player 2", "send message", "CLUE: Not cloudy."),
                _msg("Player 2", "GM", "get message", "GUESS: Clear"),
                _msg("GM", "GM", "valid response", "continue"),
                _msg("GM", "GM", "valid guess", "clear"),
                _msg("GM", "GM", "correct guess", "end game"),
            ],
        ],
    }


def test_guesswhat_answers_are_the_answerers_clues() -> None:
    t = convert_record(guesswhat_log())
    assert t.game == "chameleon"
    assert t.candidates == CARD and t.secret == "Bass"
    assert {p.id: p.role for p in t.players} == {
        "Player 2": "non-chameleon",
        "Player 1": "chameleon",
    }
    texts = [(x.player, x.text) for x in t.turns]
    assert texts == [
        ("Player 2", "Is it alive? Yes."),
        ("Player 2", "Is it a plant? No."),
        ("Player 1", "GUESS: bass"),
    ]
    assert t.chameleon_guess == "bass"
    assert t.meta["qa"] == [{"q": "Is it alive?", "a": "yes"}, {"q": "Is it a plant?", "a": "no"}]
    assert t.meta["correct"] is True and t.meta["outcome"] == "correct guess"
    assert [r["text"] for r in t.meta["rejected"]] == ["QUESTION: Is it a noun?"]
    assert t.meta["models"] == {"Guesser": "model-a", "Answerer": "model-b"}


def test_guesswhat_without_a_target_has_no_secret() -> None:
    t = convert_record(guesswhat_log(target=None, end="abort"))
    assert t.secret is None and t.meta["correct"] is None and t.meta["outcome"] == "invalid content"


def test_guesswhat_target_off_the_card_is_an_error() -> None:
    with pytest.raises(InvalidTranscript, match="not on the card"):
        convert_record(guesswhat_log(target="Trumpet"))


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r["turns"][1][2]["action"].pop("type"), "turns[1][2].action.type"),
        (lambda r: r["turns"][0][1]["action"].update(content=3), "turns[0][1].action.content"),
        (lambda r: r["turns"].__setitem__(2, "x"), "turns[2]"),
        (lambda r: r["players"].update({"Player 1": 7}), "players.Player 1"),
        (lambda r: r["turns"][0][3]["action"].update(content="ANSWER: \x00"), "turns[0][3]"),
    ],
)
def test_broken_guesswhat_log_names_the_field(mutate: Any, field: str) -> None:
    record = guesswhat_log()
    mutate(record)
    with pytest.raises(InvalidTranscript) as info:
        convert_record(record, input_format="clembench-guesswhat")
    assert any(f.startswith(field) for f, _ in info.value.problems), info.value.problems


def test_guesswhat_card_that_is_not_a_list_is_named() -> None:
    record = guesswhat_log()
    record["turns"][0][0]["action"]["content"] = "List of candidate words: [Elder, Bass]"
    with pytest.raises(InvalidTranscript) as info:
        convert_record(record)
    assert info.value.problems[0][0] == "turns[0][0].action.content"


def test_taboo_clues_and_guesses_by_try() -> None:
    t = convert_record(taboo_log())
    assert t.candidates == ["clear", "crystal", "obvious", "confident"] and t.secret == "clear"
    assert [(x.player, x.text, x.round) for x in t.turns] == [
        ("Player 1", "Easy to see through.", 1),
        ("Player 2", "Transparent", 1),
        ("Player 1", "Not cloudy.", 2),
        ("Player 2", "Clear", 2),
    ]
    assert t.meta["open_vocabulary"] is True and t.meta["correct"] is True
    assert t.meta["models"] == {"WordDescriber": "m1", "WordGuesser": "m2"}


def test_taboo_clue_the_game_master_rejected_is_not_a_turn() -> None:
    record = taboo_log()
    record["turns"][1][2:] = [
        _msg("GM", "GM", "invalid clue", "Related word 'crystal' is similar to clue word"),
        _msg("GM", "GM", "invalid clue", "abort game"),
    ]
    record["turns"][1][1]["action"]["content"] = "CLUE: Like crystal."
    t = convert_record(record)
    assert [x.text for x in t.turns] == ["Easy to see through.", "Transparent"]
    assert t.meta["rejected"][0]["text"] == "CLUE: Like crystal."
    assert "crystal" in t.meta["rejected"][0]["reason"]
    assert t.meta["outcome"] == "invalid clue" and t.meta["correct"] is False


def test_each_clembench_adapter_claims_only_its_own_game() -> None:
    gw, tb = guesswhat_log(), taboo_log()
    assert ADAPTERS["clembench-guesswhat"].sniff(gw) and not ADAPTERS["clembench-guesswhat"].sniff(
        tb
    )
    assert ADAPTERS["clembench-taboo"].sniff(tb) and not ADAPTERS["clembench-taboo"].sniff(gw)
    claims = [n for n, a in ADAPTERS.items() if a.sniff(gw) or a.sniff(tb)]
    assert sorted(claims) == ["clembench-guesswhat", "clembench-taboo"]
    with pytest.raises(InvalidTranscript, match="WordDescriber and WordGuesser"):
        convert_record(gw, input_format="clembench-taboo")


def test_id_from_where_clembench_writes_the_log(tmp_path: Path) -> None:
    folder = tmp_path / "m-t0.0--m-t0.0" / "guesswhat" / "0_Level_1" / "episode_2"
    folder.mkdir(parents=True)
    (folder / "interactions.json").write_text(json.dumps(guesswhat_log()))
    (tmp_path / "other.json").write_text(json.dumps(guesswhat_log()))
    good, bad = load_transcripts([tmp_path])
    assert not bad
    by_id = {t.id: t for t in good}
    assert set(by_id) == {"m-t0.0--m-t0.0/guesswhat/0_Level_1/episode_2", "other"}
    meta = by_id["m-t0.0--m-t0.0/guesswhat/0_Level_1/episode_2"].meta
    assert (meta["experiment"], meta["episode"]) == ("0_Level_1", 2)


def test_instance_split_is_by_instance_and_fixed() -> None:
    assert instance_key("guesswhat", "0_Level_1", 2) == "clembench/guesswhat/0_Level_1/episode_2"
    sides = Counter(instance_side("taboo", "0_high_en", n) for n in range(300))
    assert 70 < sides["frozen"] < 130  # about one third
    # a fixed value: the split must never move
    assert [instance_side("guesswhat", "0_Level_1", n) for n in (2, 7, 8)] == [
        instance_side("guesswhat", "0_Level_1", 2),
        instance_side("guesswhat", "0_Level_1", 7),
        instance_side("guesswhat", "0_Level_1", 8),
    ]


# --- the shared dev sample -----------------------------------------------------------------


def _dev(shared: Path, game: str) -> list[dict[str, Any]]:
    path = shared / "clembench-dev" / game / f"{game}_dev.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _raw_path(shared: Path, game: str, row: dict[str, Any]) -> Path:
    prefix = "v1.6__" if game == "taboo" else ""
    name = f"{prefix}{row['model']}__{row['experiment']}__{row['episode']}.json"
    return shared / "clembench-dev" / game / "raw" / name


@pytest.mark.shared_data
def test_every_dev_guesswhat_log_matches_its_parsed_row(shared_data: Path) -> None:
    rows = _dev(shared_data, "guesswhat")
    good, bad = load_transcripts([_raw_path(shared_data, "guesswhat", r) for r in rows])
    assert not bad and len(good) == len(rows) == 83
    no_target = 0
    for row, t in zip(rows, good, strict=True):
        assert t.candidates == row["candidates"]
        assert t.meta["qa"] == [x for x in row["qa"] if x["a"] is not None]
        unanswered = [x["q"] for x in row["qa"] if x["a"] is None]
        assert len(t.meta["rejected"]) == len(unanswered)
        assert t.meta["final_guess"] == row["final_guess"]
        if t.secret is None:  # the README: 7 early aborts never name the target
            no_target += 1
        else:
            assert t.secret == row["target"] and t.meta["correct"] == row["correct"]
    assert no_target == 7


@pytest.mark.shared_data
def test_every_dev_taboo_log_matches_its_parsed_row(shared_data: Path) -> None:
    rows = _dev(shared_data, "taboo")
    good, bad = load_transcripts([_raw_path(shared_data, "taboo", r) for r in rows])
    assert not bad and len(good) == len(rows) == 160
    for row, t in zip(rows, good, strict=True):
        assert t.secret == row["target"] and t.meta["related"] == row["related"]
        clues = [x.text for x in t.turns if x.player == "Player 1"]
        rejected = {r["text"].removeprefix("CLUE:").strip() for r in t.meta["rejected"]}
        # the parsed rows keep every describer reply; the transcript the ones passed on
        assert clues == [x["clue"] for x in row["turns"] if x["clue"] not in rejected]
        assert t.meta["correct"] == (row["outcome"] == "correct guess")


@pytest.mark.shared_data
def test_fixtures_are_read_by_shape(shared_data: Path) -> None:
    for game in ("guesswhat", "taboo"):
        files = sorted((shared_data / "clembench-dev" / game / "fixtures").glob("*.json"))
        good, bad = load_transcripts(files)
        assert len(good) == 3 and not bad
        assert {t.meta["clembench_game"] for t in good} == {game}
        outcomes = Counter(t.meta["outcome"] for t in good)
        assert len(outcomes) == 3, outcomes  # right, wrong or out of turns, an abort


@pytest.mark.shared_data
def test_a_broken_log_does_not_stop_the_others(shared_data: Path, tmp_path: Path) -> None:
    src = sorted((shared_data / "clembench-dev" / "guesswhat" / "fixtures").glob("*.json"))[0]
    record = json.loads(src.read_text())
    broken = copy.deepcopy(record)
    broken["turns"][0][0]["action"].pop("content")
    (tmp_path / "a.json").write_text(json.dumps(broken))
    (tmp_path / "b.json").write_text(json.dumps(record))
    good, bad = load_transcripts([tmp_path])
    assert len(good) == 1 and len(bad) == 1
    assert "a.json" in str(bad[0]) and "turns[0][0].action.content" in str(bad[0])
