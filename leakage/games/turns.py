"""Whose turn it is in a transcript: the speaking order, rounds and eliminations of the games
(docs/games.md), read from a ``leakage.transcript/1`` game cut after some of its turns.

What a clue not said yet would leak (``POST /v1/score/preview``, the explorer page) is the
game cut after ``n`` turns with one more turn appended: :func:`with_next_clue` builds that
game, :func:`next_speaker` says who speaks it and :func:`next_round` in which round.

The rules, as the engines play them (:mod:`leakage.games.chameleon`,
:mod:`leakage.games.spygame`):

- players speak in the order of ``players``, starting again from the first after the last;
  the next speaker is the one after the last turn's speaker;
- The Chameleon: the chameleon's turn is passed over unless ``include_chameleon`` (by
  default its clue does not update the posterior: :class:`leakage.scoring.ScoreOptions`);
- SpyGame: a player eliminated in round r does not speak after round r (Kim et al.; Gu et al.;
  CK-Arena remove the voted-out player from later rounds);
- a round ends when a player who already spoke in it would speak again: the next turn of
  that player is in the round after.
"""

from __future__ import annotations

from collections.abc import Sequence

from leakage.errors import InvalidInput
from leakage.transcripts import AnyTranscript, ChameleonTranscript, Player, Turn

__all__ = ["next_round", "next_speaker", "with_next_clue"]


def _kept(game: AnyTranscript, turns: int | None) -> list[Turn]:
    n = len(game.turns) if turns is None else turns
    if not 0 <= n <= len(game.turns):
        raise InvalidInput(f"turns is {n}, but the game has {len(game.turns)} turns")
    return list(game.turns[:n])


def _round_after(kept: Sequence[Turn], player: str) -> int | None:
    rounds = [t.round for t in kept if t.round is not None]
    if not rounds:
        return None
    last = rounds[-1]
    return last + 1 if any(t.player == player and t.round == last for t in kept) else last


def next_round(game: AnyTranscript, player: str, turns: int | None = None) -> int | None:
    """The round of ``player``'s turn after the game's first ``turns`` turns (all of them
    when None): the last turn's round, or the one after it once ``player`` has spoken in
    it; None when those turns carry no round numbers (a game without rounds).

    Raises :class:`~leakage.errors.InvalidInput` when ``turns`` is not between 0 and the
    number of the game's turns.
    """
    return _round_after(_kept(game, turns), player)


def next_speaker(
    game: AnyTranscript, turns: int | None = None, *, include_chameleon: bool = False
) -> str:
    """The id of the player who speaks after the game's first ``turns`` turns (all of them
    when None): the next one in the players' order after the last speaker (the first player
    when no turn is kept), passing over The Chameleon's chameleon unless
    ``include_chameleon``, and in SpyGame a player eliminated before the round its turn
    would fall in. When every player is passed over, the next one in order.

    Raises :class:`~leakage.errors.InvalidInput` when ``turns`` is not between 0 and the
    number of the game's turns.
    """
    kept = _kept(game, turns)
    ids = [p.id for p in game.players]
    start = ids.index(kept[-1].player) + 1 if kept else 0
    order = [game.players[(start + i) % len(ids)] for i in range(len(ids))]
    out = {e.player: e.round for e in getattr(game, "eliminations", [])}

    def may_speak(p: Player) -> bool:
        if isinstance(game, ChameleonTranscript):
            return include_chameleon or p.role != "chameleon"
        r = _round_after(kept, p.id)
        return p.id not in out or r is None or r <= out[p.id]

    return next((p.id for p in order if may_speak(p)), order[0].id)


def with_next_clue(
    game: AnyTranscript,
    turns: int | None,
    text: str,
    player: str | None = None,
    *,
    include_chameleon: bool = False,
) -> AnyTranscript:
    """A copy of ``game`` cut after its first ``turns`` turns (all of them when None), with
    one more turn: ``text`` said by ``player``, or when None by :func:`next_speaker`, in the
    round :func:`next_round` gives. ``include_chameleon`` is :func:`next_speaker`'s.

    Raises :class:`~leakage.errors.InvalidInput` when ``turns`` is not between 0 and the
    number of the game's turns, or ``player`` is not one of the game's players.
    """
    kept = _kept(game, turns)
    who = player or next_speaker(game, len(kept), include_chameleon=include_chameleon)
    ids = [p.id for p in game.players]
    if who not in ids:
        raise InvalidInput(f"player {who!r} is not one of the game's players ({', '.join(ids)})")
    turn = Turn(player=who, text=text, round=_round_after(kept, who))
    return game.model_copy(update={"turns": [*kept, turn]})
