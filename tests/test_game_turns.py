"""Whose turn it is in a transcript cut after some turns (``leakage.games.turns``): worked by
hand on small games whose order, roles and eliminations are written out below."""

from __future__ import annotations

import pytest

from leakage.errors import InvalidInput
from leakage.games import next_round, next_speaker, with_next_clue
from leakage.transcripts import parse_transcript


def _record(game: str, roles: str, said: str, **fields: object) -> dict:
    """A transcript record: ``roles`` ``"id=role ..."`` in speaking order, ``said``
    ``"id|text|round; ..."`` in turn order."""
    players = [dict(zip(("id", "role"), p.split("="), strict=True)) for p in roles.split()]
    turns = [t.strip().split("|") for t in said.split(";")]
    return {
        "format": "leakage.transcript/1",
        "id": game,
        "game": game,
        "players": players,
        "turns": [{"player": p, "text": text, "round": int(r)} for p, text, r in turns],
        **fields,
    }


# p1 p2 p3 p4 in order, p3 the chameleon; round 1: p1 p2 p3 p4, round 2: p1
CHAMELEON = _record(
    "chameleon",
    "p1=non-chameleon p2=non-chameleon p3=chameleon p4=non-chameleon",
    "p1|racket|1; p2|court|1; p3|ball|1; p4|serve|1; p1|love|2",
    category="Sports",
    candidates=["tennis", "golf", "rugby", "boxing"],
    secret="tennis",
)

# a b c in order, c the spy; b voted out in round 1; round 2: a c (b no longer speaks)
SPY = _record(
    "spygame",
    "a=civilian b=civilian c=spy",
    "a|A fruit.|1; b|It is round.|1; c|It is sour.|1; a|It has a peel.|2; c|It is yellowish.|2",
    words={"civilian": "orange", "spy": "lemon"},
    eliminations=[{"player": "b", "round": 1}],
)


def _game(data: dict, *, rounds: bool = True):
    if not rounds:
        data = {
            **data,
            "turns": [{k: v for k, v in t.items() if k != "round"} for t in data["turns"]],
        }
    return parse_transcript(data)


@pytest.mark.parametrize(
    ("turns", "include", "speaker"),
    [
        (0, False, "p1"),  # nobody spoke yet: the first player
        (1, False, "p2"),
        (2, False, "p4"),  # after p2 comes p3, the chameleon: passed over
        (2, True, "p3"),  # unless its clues count
        (4, False, "p1"),  # after the last player, the first again
        (None, False, "p2"),  # all five turns: after p1's "love"
    ],
)
def test_chameleon_next_speaker_passes_over_the_chameleon(turns, include, speaker):
    assert next_speaker(_game(CHAMELEON), turns, include_chameleon=include) == speaker


@pytest.mark.parametrize(
    ("turns", "speaker"),
    [
        (1, "b"),  # round 1, b still in
        (2, "c"),
        (3, "a"),  # round 2 starts with a
        (4, "c"),  # after a, b would speak in round 2, but b was voted out in round 1
        (5, "a"),
    ],
)
def test_spygame_next_speaker_passes_over_an_eliminated_player(turns, speaker):
    assert next_speaker(_game(SPY), turns) == speaker


def test_an_eliminated_player_speaks_in_its_own_round_and_without_rounds():
    spy = _game(SPY)
    # after a's first turn b is next, in round 1, the round it was voted out at the end of
    assert next_round(spy, "b", 1) == 1
    assert next_speaker(spy, 1) == "b"
    # with no round numbers nothing says the elimination has happened yet: b speaks
    assert next_speaker(_game(SPY, rounds=False), 4) == "b"


@pytest.mark.parametrize(
    ("turns", "player", "round_"),
    [
        (0, "p1", None),  # no turn kept: no round to go by
        (1, "p2", 1),  # p2 has not spoken in round 1
        (1, "p1", 2),  # p1 has: its next turn is in round 2
        (4, "p1", 2),
        (5, "p1", 3),  # p1 spoke in round 2 already
        (5, "p3", 2),
    ],
)
def test_next_round(turns, player, round_):
    assert next_round(_game(CHAMELEON), player, turns) == round_


def test_next_round_is_none_in_a_game_without_rounds():
    assert next_round(_game(CHAMELEON, rounds=False), "p1", 4) is None


def test_with_next_clue_cuts_and_appends_the_next_turn():
    game = _game(CHAMELEON)
    out = with_next_clue(game, 2, "net")
    assert [(t.player, t.text, t.round) for t in out.turns] == [
        ("p1", "racket", 1),
        ("p2", "court", 1),
        ("p4", "net", 1),
    ]
    assert len(game.turns) == 5  # the game itself is left as it was
    chosen = with_next_clue(game, None, "net", "p2")
    assert [(t.player, t.text, t.round) for t in chosen.turns[-2:]] == [
        ("p1", "love", 2),
        ("p2", "net", 2),
    ]
    spy = with_next_clue(_game(SPY), 4, "It is a citrus.")
    assert (spy.turns[-1].player, spy.turns[-1].round) == ("c", 2)
    assert spy.eliminations == _game(SPY).eliminations


def test_bad_turns_and_players_are_invalid_input():
    game = _game(CHAMELEON)
    with pytest.raises(InvalidInput, match="turns is 6, but the game has 5 turns"):
        with_next_clue(game, 6, "net")
    with pytest.raises(InvalidInput, match="turns is -1"):
        next_speaker(game, -1)
    with pytest.raises(InvalidInput, match=r"player 'p9' is not one of the game's players"):
        with_next_clue(game, 2, "net", "p9")
