"""Records of n players, n turns and n votes for every input format (issue 37): what the
scaling test (tests/test_adapter_scaling.py), the bad-input corpus, the fuzzer and
``benchmarks.service_limits`` feed the adapters and validators to keep their work linear in
the size of one record. ``duplicate_last`` gives the last player the first one's id (the
check that was quadratic found it last, after comparing every pair).
"""

from __future__ import annotations

from typing import Any

Record = dict[str, Any]


def ck_arena(n: int, *, duplicate_last: bool = False) -> Record:
    """A CK-Arena game of ``n`` players (the last one the undercover), a statement and a vote
    by each."""
    ids = list(range(1, n + 1))
    if duplicate_last:
        ids[-1] = 1
    players = [
        {"player_id": pid, "llm_id": f"model-{i % 3}",
         "role": "undercover" if i == n - 1 else "civilian",
         "assigned_concept": "moon" if i == n - 1 else "sun",
         "eliminated_in_voting_round": None, "is_winner": i != n - 1}
        for i, pid in enumerate(ids)
    ]  # fmt: skip
    statements = [
        {"statement_id": i, "player_id": pid, "content": f"It is bright {i}.",
         "statement_round": 1}
        for i, pid in enumerate(range(1, n + 1))
    ]  # fmt: skip
    votes = [{"voter_id": pid, "voted_for": 1 + pid % n} for pid in range(1, n + 1)]
    return {
        "game_record": {
            "game_id": f"big-{n}",
            "topic_category": "sky",
            "concept_pair": {"concept_a": "moon", "concept_b": "sun"},
            "players": players,
            "game_process": {
                "statements": statements,
                "voting_rounds": [{"voting_round_id": 1, "votes": votes, "eliminated": []}],
            },
            "game_summary": {"winner_role": "civilian"},
        }
    }


def taboo(n: int, *, duplicate_last: bool = False) -> Record:
    """A TextArena Taboo word played by a team of ``n`` (one clue giver), a message each."""
    ids = list(range(n))
    if duplicate_last:
        ids[-1] = 0
    return {
        "format": "leakage.textarena-taboo/1",
        "game_id": f"big-{n}",
        "env_id": "Taboo-v0-animals",
        "word_number": 1,
        "category": "animals",
        "candidates": ["Alpaca", "Camel", "Llama", "Horse"],
        "word": "Alpaca",
        "taboo_words": ["wool"],
        "players": [
            {"id": pid, "role": "Clue Giver" if i == 0 else "Guesser"} for i, pid in enumerate(ids)
        ],
        "messages": [{"player": i, "text": f"[clue {i}]", "round": 1} for i in range(n)],
        "outcome": "open",
    }


def liang(n: int) -> Record:
    """A Liang et al. SpyGame of ``n`` players (Player 1 the spy): one round, a description
    and a vote by each."""
    names = [f"Player {i}" for i in range(1, n + 1)]
    return {
        "game_name": "SpyGame",
        "win": "villager",
        "spy": "Player 1 (moon)",
        "spy_word": "moon",
        "villager_word": "sun",
        "players_model": {p: ["m", "moon" if i == 0 else "sun"] for i, p in enumerate(names)},
        "rounds": {
            "round-1": {
                "describe": {p: f"{p}: It is bright." for p in names},
                "vote": {p: f"Host: {p} votes for Player 1. Reason: x" for p in names},
                "result": "Host: Player 1 is the spy and has been voted out. The end.",
            }
        },
    }


def native(n: int) -> Record:
    """A ``leakage.transcript/1`` SpyGame of ``n`` players, a turn and a vote by each."""
    names = [f"p{i}" for i in range(n)]
    return {
        "format": "leakage.transcript/1",
        "game": "spygame",
        "id": f"big-{n}",
        "words": {"civilian": "sun", "spy": "moon"},
        "players": [
            {"id": p, "role": "spy" if i == 0 else "civilian"} for i, p in enumerate(names)
        ],
        "turns": [{"player": p, "text": f"bright {i}", "round": 1} for i, p in enumerate(names)],
        "votes": [{"voter": p, "target": names[0], "round": 1} for p in names],
        "eliminations": [{"player": names[0], "round": 1}],
    }


def liang_long_texts(n: int) -> Record:
    """A Liang et al. game whose vote and result texts are ``n`` characters of the templates'
    own words repeated (what made their regular expressions quadratic)."""
    record = liang(3)
    rnd = record["rounds"]["round-1"]
    rnd["vote"]["Player 2"] = "Host: Player 2" + " votes for x" * (n // 11)
    rnd["result"] = "Host: " + " is not the spy, the spy player y" * (n // 32)
    record["spy"] = "Player 1" + "(" * n + ")"
    return record


BUILDERS = {"ck-arena": ck_arena, "textarena-taboo": taboo, "spygame-liang": liang,
            "leakage": native}  # fmt: skip
"""``input_format`` -> the builder of a valid record of n players."""
