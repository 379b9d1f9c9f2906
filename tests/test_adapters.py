"""The CK-Arena and SpyGame (Liang et al.) adapters, on every real log and on broken variants.

Tests on the real logs need ``../shared/data`` and skip without it; the small hand-made
records at the top keep the mapping rules covered on any machine.
"""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from leakage.errors import InvalidTranscript
from leakage.transcripts import SpyGameTranscript, convert_record, load_transcripts
from leakage.transcripts.adapters import ADAPTERS

Record = dict[str, Any]

# --- hand-made records (no shared data needed) -----------------------------------------------


def ck_record() -> Record:
    """A small CK-Arena game with each quirk of the real logs."""

    def statement(sid: int, pid: int, rnd: int, text: str) -> Record:
        return {"statement_id": sid, "player_id": pid, "content": text, "statement_round": rnd}

    players = [
        {"player_id": i, "llm_id": m, "role": r, "assigned_concept": w,
         "eliminated_in_voting_round": e, "is_winner": r == "civilian"}
        for i, m, r, w, e in [
            (1, "model-a", "civilian", "sun", None),
            (2, "model-b", "undercover", "moon", 1),
            (3, "model-a", "civilian", "sun", None),
            (4, "model-c", "undercover", "moon", -1),
        ]
    ]  # fmt: skip
    return {
        "game_record": {
            "game_id": "20250101-000000",
            "topic_category": "sky",
            "concept_pair": {"concept_a": "moon", "concept_b": "sun"},
            "players": players,
            "game_process": {
                "statements": [
                    statement(1, 1, 1, "It is hot."),
                    statement(2, 2, 1, "It shines at night."),
                    statement(3, 3, 1, "It rises."),
                    statement(4, 4, 1, ""),
                    statement(5, 1, 2, "It is a star."),
                    statement(6, 3, 2, "It is yellow."),
                ],
                "voting_rounds": [
                    {
                        "voting_round_id": 1,
                        "votes": [
                            {"voter_id": 1, "voted_for": 2},
                            {"voter_id": 2, "voted_for": 0},
                            {"voter_id": 3, "voted_for": 2},
                            {"voter_id": 4, "voted_for": "null"},
                        ],
                        "eliminated": [{"player_id": 2}],
                    }
                ],
                "metric_eliminations": [{"player_id": 4, "elimination_round": 1}],
            },
            "game_summary": {"winner_role": "civilian"},
        }
    }


def test_ck_arena_mapping_on_a_small_record() -> None:
    t = convert_record(ck_record(), path=Path("logs__x__game.json"))
    assert isinstance(t, SpyGameTranscript)
    assert t.id == "20250101-000000@logs__x__game"
    assert [(p.id, p.role, p.agent) for p in t.players][:2] == [
        ("1", "civilian", "model-a"),
        ("2", "spy", "model-b"),
    ]
    assert (t.words.civilian, t.words.spy) == ("sun", "moon")  # not concept_a / concept_b
    assert [tt.player for tt in t.turns] == ["1", "2", "3", "1", "3"]  # "" by 4 skipped
    assert t.meta["skipped_empty_statements"] == 1
    assert t.meta["skipped_statement_ids"] == [4]
    assert [(v.voter, v.target) for v in t.votes] == [("1", "2"), ("3", "2")]
    assert t.meta["abstentions"] == 2
    # the metric elimination follows the statement, so it comes before round 1's vote
    assert [(e.player, e.round) for e in t.eliminations] == [("4", 1), ("2", 1)]
    assert t.meta["elimination_causes"] == {"4": "metric", "2": "vote"}
    assert t.meta["matchup"] == "model-a vs model-b+model-c"
    assert t.meta["winner_role"] == "civilian"
    assert t.meta["winners"] == ["1", "3"]
    assert t.meta["source"] == "ck-arena"
    assert t.meta["upstream_path"] == "logs/x/game.json"
    assert len(t.meta["turn_scores"]) == len(t.turns)


def test_ck_arena_audience_game_has_no_votes() -> None:
    record = ck_record()
    process = record["game_record"]["game_process"]
    del process["voting_rounds"], process["metric_eliminations"]
    process["audience_decisions"] = [
        {"voting_round_id": 1, "audience_choice": 2, "eliminated": [{"player_id": 2}]}
    ]
    record["game_record"]["players"][3]["eliminated_in_voting_round"] = 2  # only recorded here
    record["game_record"]["audience"] = {"llm_id": "judge-model"}
    t = convert_record(record, input_format="ck-arena")
    assert t.votes == []
    assert [(e.player, e.round) for e in t.eliminations] == [("2", 1), ("4", 2)]
    assert t.meta["elimination_causes"] == {"2": "audience", "4": "record"}
    assert t.meta["audience_model"] == "judge-model"
    assert t.id == "20250101-000000"  # no file: the game id alone


def liang_record() -> Record:
    """A small Liang et al. game: a tie, then a villager out, then the spy out."""
    return {
        "game_name": "SpyGame",
        "win": "villager",
        "spy": "Player 2 (moon)",
        "spy_word": "moon",
        "villager_word": "sun",
        "host_agent": "host-model",
        "guest_agent": "guest-model",
        "guest_name": "Player 2",
        "guest_identity": "spy",
        "seed": 7,
        "players_model": {
            "Player 3": ["host-model", "sun"],
            "Player 1": ["host-model", "sun"],
            "Player 2": ["guest-model", "moon"],
        },
        "rounds": {
            "round-1": {
                "describe": {"Player 3": "Player 3: It is hot.", "Player 1": "Player 1: Bright."},
                "vote": {
                    "Player 1": "Host: Player 1 votes for Player 3. Reason: Player 1: I vote.",
                    "Player 3": "Host: Player 3 votes for Player 1. Reason: Player 3: I vote.",
                },
                "result": "Host: There is a tie among ['Player 1', 'Player 3']. They will ...",
            },
            "round-2": {
                "describe": {"Player 2": "Player 2:  ", "Player 1": "It rises."},
                "vote": {"Player 1": "Host: Player 1 votes for Player 3. Reason: x"},
                "result": "Host: Player 3 has been voted out, but he/she is not the spy player.",
            },
            "round-3": {
                "describe": {"Player 1": "Player 1: Yellow."},
                "vote": {"Player 1": "Host: Player 1 votes for Player 2. Reason: x"},
                "result": "Host: Player 2 is the spy and has been voted out. The villager ...",
            },
        },
    }


def test_liang_mapping_on_a_small_record() -> None:
    t = convert_record(liang_record(), path=Path("bench/host-dir/guest-dir/moon.json"))
    assert isinstance(t, SpyGameTranscript)
    assert t.id == "host-dir/guest-dir/moon"
    assert [p.id for p in t.players] == ["Player 1", "Player 2", "Player 3"]
    assert t.spies() == {"Player 2"}
    assert t.player("Player 2").agent == "guest-model"
    assert [(tt.player, tt.text, tt.round) for tt in t.turns] == [
        ("Player 3", "It is hot.", 1),
        ("Player 1", "Bright.", 1),
        ("Player 1", "It rises.", 2),  # no prefix to strip; Player 2's empty text skipped
        ("Player 1", "Yellow.", 3),
    ]
    assert t.meta["skipped_empty_descriptions"] == 1
    assert [(v.voter, v.target, v.round) for v in t.votes][-1] == ("Player 1", "Player 2", 3)
    assert [(e.player, e.round) for e in t.eliminations] == [("Player 3", 2), ("Player 2", 3)]
    assert t.meta["tie_rounds"] == [1]
    assert t.meta["winner_role"] == "civilian"
    assert (t.meta["host_folder"], t.meta["guest_folder"]) == ("host-dir", "guest-dir")
    assert t.meta["matchup"] == "host-model vs guest-model"


def test_liang_two_spies_and_spy_win() -> None:
    record = liang_record()
    record["players_model"]["Player 3"][1] = "moon"
    record["spy"] = ["Player 2 (moon)", "Player 3 (moon)"]
    record["win"] = "spy"
    record["rounds"]["round-2"]["result"] = (
        "Host: Player 3 is not the spy, the spy player Player 2 has survived untill the end."
    )
    t = convert_record(record, input_format="spygame-liang")
    assert t.spies() == {"Player 2", "Player 3"}
    assert t.meta["winner_role"] == "spy"
    assert t.id == "host-model/guest-model/moon-7"


# --- real logs --------------------------------------------------------------------------------

EMPTY_STATEMENT = re.compile(r"^\s*$")


def _ck_files(shared: Path) -> list[Path]:
    return sorted((shared / "ck-arena-dev" / "logs").glob("*.json"))


def _liang_files(shared: Path) -> list[Path]:
    return sorted((shared / "spygame-liang" / "benchmark").rglob("*.json"))


def _raw(path: Path) -> Record:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ck_games(shared_data: Path) -> list[tuple[Path, Record, SpyGameTranscript]]:
    """Every CK-Arena log, loaded by auto-detection through the directory."""
    files = _ck_files(shared_data)
    good, bad = load_transcripts([shared_data / "ck-arena-dev" / "logs"])
    assert bad == []
    assert len(good) == len(files)
    games = []
    for path, t in zip(files, good, strict=True):
        assert isinstance(t, SpyGameTranscript)
        assert t.meta["source_file"] == path.name
        games.append((path, _raw(path), t))
    return games


@pytest.fixture(scope="module")
def liang_games(shared_data: Path) -> list[tuple[Path, Record, SpyGameTranscript]]:
    files = _liang_files(shared_data)
    good, bad = load_transcripts(files)
    assert bad == []
    assert len(good) == len(files) == 7
    return [(p, _raw(p), t) for p, t in zip(files, good, strict=True)]  # type: ignore[misc]


@pytest.mark.shared_data
def test_ck_arena_every_log_converts(
    ck_games: list[tuple[Path, Record, SpyGameTranscript]],
) -> None:
    assert len(ck_games) == 227
    ids = [t.id for _, _, t in ck_games]
    assert len(set(ids)) == len(ids)  # several files share a game_id
    assert len({raw["game_record"]["game_id"] for _, raw, _ in ck_games}) < len(ids)
    assert all(t.meta["source"] == "ck-arena" for _, _, t in ck_games)


@pytest.mark.shared_data
def test_ck_arena_games_match_their_logs(
    ck_games: list[tuple[Path, Record, SpyGameTranscript]],
) -> None:
    for path, raw, t in ck_games:
        g = raw["game_record"]
        statements = g["game_process"]["statements"]
        kept = [s for s in statements if not EMPTY_STATEMENT.match(s["content"])]
        assert len(t.players) == 6, path.name
        assert len(t.spies()) == 2, path.name
        assert len(t.turns) == len(statements) - t.meta["skipped_empty_statements"], path.name
        assert [(tt.player, tt.text, tt.round) for tt in t.turns] == [
            (str(s["player_id"]), s["content"], s["statement_round"]) for s in kept
        ], path.name
        assert len(t.meta["turn_scores"]) == len(t.turns)
        for p in g["players"]:
            word = t.words.spy if p["role"] == "undercover" else t.words.civilian
            assert p["assigned_concept"] == word, path.name
            assert t.player(str(p["player_id"])).agent == p["llm_id"]
        out = {str(p["player_id"]) for p in g["players"] if p["eliminated_in_voting_round"]}
        assert {e.player for e in t.eliminations} == out, path.name
        rounds = [e.round for e in t.eliminations]
        assert rounds == sorted(rounds), path.name
        raw_votes = [v for r in g["game_process"].get("voting_rounds", []) for v in r["votes"]]
        assert len(t.votes) + t.meta["abstentions"] == len(raw_votes), path.name
        winner = g["game_summary"]["winner_role"]
        assert t.meta["winner_role"] == {"undercover": "spy", "civilian": "civilian"}[winner]
        spies = sorted({p["llm_id"] for p in g["players"] if p["role"] == "undercover"})
        assert t.meta["spy_models"] == spies
        assert t.meta["matchup"].endswith(" vs " + "+".join(spies))


@pytest.mark.shared_data
def test_ck_arena_oddities_are_counted(
    ck_games: list[tuple[Path, Record, SpyGameTranscript]],
) -> None:
    """The numbers the module docstring and the report quote for the dev logs."""
    assert sum(t.meta["skipped_empty_statements"] for _, _, t in ck_games) == 12
    assert sum(t.meta["abstentions"] for _, _, t in ck_games) == 23
    causes = Counter(c for _, _, t in ck_games for c in t.meta["elimination_causes"].values())
    assert causes == {"vote": 473, "audience": 115, "metric": 41}
    audience = [t for _, raw, t in ck_games if "audience" in raw["game_record"]]
    assert len(audience) == 43
    assert all(t.votes == [] and "audience_model" in t.meta for t in audience)
    for _, _, t in ck_games:  # a player out by a judge's score never votes afterwards
        causes = t.meta["elimination_causes"]
        out = {e.player: e.round for e in t.eliminations if causes[e.player] == "metric"}
        assert all(v.round is not None and v.round < out.get(v.voter, 99) for v in t.votes)


@pytest.mark.shared_data
def test_liang_every_log_converts(
    liang_games: list[tuple[Path, Record, SpyGameTranscript]],
) -> None:
    ids = [t.id for _, _, t in liang_games]
    assert len(set(ids)) == len(ids)  # Durian.json appears under each pairing
    assert "gpt-3.5-turbo-0613/gpt-4-0613/Durian" in ids
    for path, raw, t in liang_games:
        assert len(t.spies()) == 1
        assert t.meta["host_folder"] == path.parent.parent.name
        assert t.meta["guest_folder"] == path.parent.name
        for p in t.players:
            expected = raw["guest_agent"] if p.id == raw["guest_name"] else raw["host_agent"]
            assert p.agent == expected, path
        said = [(n, text) for r in raw["rounds"].values() for n, text in r["describe"].items()]
        assert len(t.turns) == len(said) - t.meta["skipped_empty_descriptions"]
        for turn, (name, text) in zip(t.turns, said, strict=True):
            assert turn.player == name
            assert text == f"{name}: {turn.text}"
            assert not turn.text.startswith("Player")


@pytest.mark.shared_data
def test_liang_turn_order_is_the_order_the_host_announced(
    liang_games: list[tuple[Path, Record, SpyGameTranscript]],
) -> None:
    """The ``describe`` object's order is the speaking order (checked against the histories)."""
    announce = re.compile(r"in the order of (\[.*?\])")
    for path, raw, t in liang_games:
        histories = [
            [m.group(1) for msg in msgs if (m := announce.search(msg["content"]))]
            for msgs in raw["players"].values()
        ]
        orders = [json.loads(o.replace("'", '"')) for o in max(histories, key=len)]
        spoken = [[tt.player for tt in t.turns if tt.round == n] for n in range(1, len(orders) + 1)]
        assert spoken == orders, path


@pytest.mark.shared_data
def test_liang_votes_and_eliminations_match_the_tallies(
    liang_games: list[tuple[Path, Record, SpyGameTranscript]],
) -> None:
    for path, raw, t in liang_games:
        for n, rnd in enumerate(raw["rounds"].values(), start=1):
            tally = Counter(v.target for v in t.votes if v.round == n)
            assert tally == Counter({p: k for p, k in rnd["vote_num"].items() if k}), path
            out = [e.player for e in t.eliminations if e.round == n]
            if n in t.meta["tie_rounds"]:
                assert out == [] and "tie" in rnd["result"]
            else:
                assert out == [tally.most_common(1)[0][0]], path
        spy_out = any(t.player(e.player).role == "spy" for e in t.eliminations)
        assert spy_out == (t.meta["winner_role"] == "civilian"), path


# --- auto-detection ------------------------------------------------------------------------


@pytest.mark.shared_data
def test_each_adapter_claims_only_its_own_records(shared_data: Path) -> None:
    ck = _raw(_ck_files(shared_data)[0])
    liang = _raw(_liang_files(shared_data)[0])
    native = {"format": "leakage.transcript/1", "game": "spygame"}
    assert ADAPTERS["ck-arena"].sniff(ck)
    assert ADAPTERS["spygame-liang"].sniff(liang)
    for other in (liang, native, {"game_record": {"players": []}}, [ck], "text"):
        assert not ADAPTERS["ck-arena"].sniff(other)
    for other in (ck, native, {"rounds": {}}, [liang], None):
        assert not ADAPTERS["spygame-liang"].sniff(other)


@pytest.mark.shared_data
def test_mixed_formats_load_together(shared_data: Path) -> None:
    paths = [_ck_files(shared_data)[0], _liang_files(shared_data)[0]]
    good, bad = load_transcripts(paths)
    assert bad == []
    assert [t.meta["source"] for t in good] == ["ck-arena", "spygame-liang"]


# --- malformed variants of real records ------------------------------------------------------


def _edit(path: str, value: Any = ...) -> Callable[[Any], None]:
    """Set (or, with no value, delete) a key path like ``game_record/players/2/role``."""

    def mutate(record: Any) -> None:
        *parents, last = path.split("/")
        node = record
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        key: Any = int(last) if isinstance(node, list) else last
        if value is ...:
            del node[key]
        else:
            node[key] = value

    return mutate


CK_BROKEN = [
    (_edit("game_record/players/2/role"), "game_record.players[2].role", "missing"),
    (_edit("game_record/players/2/role", "spy"), "game_record.players[2].role", "undercover"),
    (_edit("game_record/players/0/player_id", [1]), "game_record.players[0].player_id", "id"),
    (_edit("game_record/players/1/assigned_concept", 3), "game_record.players[1].assigned_concept",
     "expected a string, got a number"),
    (_edit("game_record/game_process"), "game_record.game_process", "missing"),
    (_edit("game_record/game_process/statements", {}), "game_record.game_process.statements",
     "expected an array, got an object"),
    (_edit("game_record/game_process/statements/3/player_id", 99),
     "game_record.game_process.statements[3].player_id", "unknown player 99"),
    (_edit("game_record/game_process/statements/0/content", None),
     "game_record.game_process.statements[0].content", "must not be null"),
    (_edit("game_record/game_process/statements/0/statement_round", 0),
     "game_record.game_process.statements[0].statement_round", "from 1"),
    (_edit("game_record/game_process/voting_rounds/0/votes/1/voted_for", 42),
     "game_record.game_process.voting_rounds[0].votes[1].voted_for", "unknown player 42"),
    (_edit("game_record/game_process/voting_rounds/0/votes/1/voter_id"),
     "game_record.game_process.voting_rounds[0].votes[1].voter_id", "missing"),
    (_edit("game_record/players/0/eliminated_in_voting_round", "2"),
     "game_record.players[0].eliminated_in_voting_round", "expected an integer"),
    (_edit("game_record/game_summary/winner_role", "nobody"),
     "game_record.game_summary.winner_role", "unknown role"),
    (_edit("game_record/players/1/player_id", 1), "game_record.players[1].player_id",
     "appears twice"),
]  # fmt: skip


@pytest.mark.shared_data
@pytest.mark.parametrize(("mutate", "field", "words"), CK_BROKEN)
def test_broken_ck_arena_record_names_the_field(
    shared_data: Path, mutate: Callable[[Any], None], field: str, words: str
) -> None:
    record = copy.deepcopy(_raw(_ck_files(shared_data)[0]))
    mutate(record)
    with pytest.raises(InvalidTranscript) as info:
        convert_record(record, path=Path("x.json"))
    assert any(f == field and words in msg for f, msg in info.value.problems), info.value.problems


@pytest.mark.shared_data
def test_ck_arena_role_words_must_agree(shared_data: Path) -> None:
    record = _raw(_ck_files(shared_data)[0])
    civilian = next(p for p in record["game_record"]["players"] if p["role"] == "civilian")
    civilian["assigned_concept"] = "volleyball"
    with pytest.raises(InvalidTranscript) as info:
        convert_record(record)
    ((field, msg),) = info.value.problems
    assert field == "game_record.players" and "civilian players hold different words" in msg


@pytest.mark.shared_data
def test_ck_arena_model_check_failures_become_invalid_transcript(shared_data: Path) -> None:
    """What only the transcript model checks (one word for both sides) is reported too."""
    record = _raw(_ck_files(shared_data)[0])
    players = record["game_record"]["players"]
    civilian_word = next(p["assigned_concept"] for p in players if p["role"] == "civilian")
    for p in players:
        p["assigned_concept"] = civilian_word
    with pytest.raises(InvalidTranscript) as info:
        convert_record(record)
    assert ("words", "the civilian and spy words are the same") in info.value.problems


ROUND = "rounds/round-1"
LIANG_BROKEN = [
    (_edit("spy_word"), "spy_word", "missing"),
    (_edit("villager_word", ""), "villager_word", "empty"),
    (_edit("players_model/Player 1", "gpt"), "players_model['Player 1']", "[model, word]"),
    (_edit("players_model/Player 1", ["gpt", "Banana"]), "players_model['Player 1'][1]",
     "neither"),
    (_edit("spy", "Player 1 (Durian)"), "spy", "players_model gives the spy word"),
    (_edit("win", "draw"), "win", "expected 'villager' or 'spy'"),
    (_edit("rounds", []), "rounds", "expected an object"),
    (_edit(f"{ROUND}/describe"), "rounds['round-1'].describe", "missing"),
    (_edit(f"{ROUND}/describe/Player 9", "Player 9: hi"), "rounds['round-1'].describe['Player 9']",
     "unknown player"),
    (_edit(f"{ROUND}/describe/Player 1", 5), "rounds['round-1'].describe['Player 1']",
     "expected a string"),
    (_edit(f"{ROUND}/vote/Player 1", "I vote for 4"), "rounds['round-1'].vote['Player 1']",
     "votes for"),
    (_edit(f"{ROUND}/vote/Player 1", "Host: Player 1 votes for Player 7. Reason: x"),
     "rounds['round-1'].vote['Player 1']", "unknown player 'Player 7'"),
    (_edit(f"{ROUND}/vote/Player 1", "Host: Player 2 votes for Player 3. Reason: x"),
     "rounds['round-1'].vote['Player 1']", "filed under"),
    (_edit(f"{ROUND}/result", "Host: everyone wins"), "rounds['round-1'].result", "unrecognised"),
    (_edit(f"{ROUND}/result", "Host: Player 8 is the spy and has been voted out."),
     "rounds['round-1'].result", "unknown player"),
    (_edit("rounds/first", {}), "rounds['first']", "round-1"),
]  # fmt: skip


@pytest.mark.shared_data
@pytest.mark.parametrize(("mutate", "field", "words"), LIANG_BROKEN)
def test_broken_liang_record_names_the_field(
    shared_data: Path, mutate: Callable[[Any], None], field: str, words: str
) -> None:
    path = next(p for p in _liang_files(shared_data) if p.parent.name == "gpt-4-0613")
    record = copy.deepcopy(_raw(path))
    mutate(record)
    with pytest.raises(InvalidTranscript) as info:
        convert_record(record, input_format="spygame-liang", path=path)
    assert any(f == field and words in msg for f, msg in info.value.problems), info.value.problems


@pytest.mark.shared_data
def test_broken_records_do_not_stop_the_batch(shared_data: Path, tmp_path: Path) -> None:
    ck = _raw(_ck_files(shared_data)[0])
    liang = _raw(_liang_files(shared_data)[0])
    bad_ck = copy.deepcopy(ck)
    bad_ck["game_record"]["game_process"]["statements"][2]["player_id"] = 7
    bad_liang = copy.deepcopy(liang)
    del bad_liang["rounds"]["round-1"]["result"]
    lines = [ck, bad_ck, liang, bad_liang, ck]
    batch = tmp_path / "batch.jsonl"
    batch.write_text("\n".join(json.dumps(r) for r in lines), encoding="utf-8")
    good, bad = load_transcripts([batch])
    assert [t.meta["source"] for t in good] == ["ck-arena", "spygame-liang", "ck-arena"]
    assert len({t.id for t in good}) == 3  # the two copies of one game keep distinct ids
    assert [(e.source, e.record) for e in bad] == [(str(batch), "line 2"), (str(batch), "line 4")]
    assert isinstance(bad[0], InvalidTranscript) and isinstance(bad[1], InvalidTranscript)
    assert bad[0].problems[0][0] == "game_record.game_process.statements[2].player_id"
    assert bad[1].problems == [("rounds['round-1'].result", "missing")]
    assert "line 2: game_record.game_process.statements[2].player_id: unknown player 7" in str(
        bad[0]
    )
