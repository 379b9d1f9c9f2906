"""Calibration items from logged games, member rows computed once, the game-level split.

An *item* is one clue scored on its own against its game's candidates, with the candidate
that is the truth:

- The Chameleon: each counted clue (the non-chameleons' turns, as scoring counts them) of a
  game with a known secret; truth = the secret.
- SpyGame / Undercover: each statement; candidates = the pair (+ distractors); truth = the
  speaker's own word.

Items of one game share a card and a strategy, so they are never split: train and test are
sets of games.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from leakage.backends.base import LikelihoodBackend, SupportsPrepare
from leakage.backends.ensemble import centre_rows
from leakage.scoring import ScoreOptions, scored_clues
from leakage.transcripts import AnyTranscript, ChameleonTranscript


@dataclass(frozen=True)
class GameItems:
    """The items of one game: its clues, its candidates and each clue's true candidate."""

    game_id: str
    game: str
    """``chameleon`` or ``spygame``."""
    clues: list[str]
    candidates: list[str]
    category: str | None
    truth: list[int]
    """Index into ``candidates`` of the truth of each clue."""


def extract_items(
    transcripts: Sequence[AnyTranscript], options: ScoreOptions | None = None
) -> tuple[list[GameItems], dict[str, int]]:
    """Items per game, and how many games were skipped for which reason.

    ``options`` decides which Chameleon turns count (default: the non-chameleons' only).
    """
    options = options or ScoreOptions()
    games: list[GameItems] = []
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for t in transcripts:
        if len(t.candidates) < 2:
            skip("fewer than two candidates")
            continue
        if isinstance(t, ChameleonTranscript):
            if t.secret is None:
                skip("chameleon game without a secret")
                continue
            clues = scored_clues(t, options)
            truth = [t.candidates.index(t.secret)] * len(clues)
            category = t.category
        else:
            clues = [turn.text for turn in t.turns]
            held = t.words_by_player()
            truth = [t.candidates.index(held[turn.player]) for turn in t.turns]
            category = None
        if not clues:
            skip("no counted clue")
            continue
        games.append(
            GameItems(
                game_id=t.id,
                game="chameleon" if isinstance(t, ChameleonTranscript) else "spygame",
                clues=clues,
                candidates=list(t.candidates),
                category=category,
                truth=truth,
            )
        )
    return games, skipped


def member_rows(
    backend: LikelihoodBackend, games: Sequence[GameItems]
) -> list[NDArray[np.float64]]:
    """Each game's centred log-likelihood rows from one backend, computed once.

    A backend that ``SupportsPrepare`` (the embedding backend) gets every game at once first,
    so that its texts are embedded in large batches.
    """
    if isinstance(backend, SupportsPrepare):
        backend.prepare([(g.clues, g.candidates, g.category) for g in games])
    out = []
    for g in games:
        rows = np.asarray(backend.loglik(g.clues, g.candidates, category=g.category))
        if rows.shape != (len(g.clues), len(g.candidates)):
            raise ValueError(
                f"backend {backend.name!r} returned shape {rows.shape} for game {g.game_id} "
                f"({len(g.clues)} clues x {len(g.candidates)} candidates)"
            )
        out.append(centre_rows(rows))
    return out


@dataclass(frozen=True)
class ItemSet:
    """Every item as padded arrays: games with different numbers of candidates side by side.

    ``rows[b, i, :]`` is member b's centred row of item i, padded with 0 where ``mask`` is
    False (no candidate there).
    """

    members: tuple[str, ...]
    rows: NDArray[np.float64]
    """(members, items, max candidates)"""
    mask: NDArray[np.bool_]
    """(items, max candidates): True where there is a candidate."""
    truth: NDArray[np.int64]
    """(items,): index of the true candidate."""
    game: NDArray[np.int64]
    """(items,): index of the item's game in ``game_ids``."""
    game_ids: tuple[str, ...]

    @property
    def n_items(self) -> int:
        return int(self.truth.size)

    def select(self, keep: NDArray[np.bool_]) -> ItemSet:
        """The items where ``keep`` is True (same members, same game numbering)."""
        return ItemSet(
            self.members,
            self.rows[:, keep],
            self.mask[keep],
            self.truth[keep],
            self.game[keep],
            self.game_ids,
        )

    def member(self, name: str) -> NDArray[np.float64]:
        return self.rows[self.members.index(name)]


def build_item_set(
    games: Sequence[GameItems], rows: Mapping[str, Sequence[NDArray[np.float64]]]
) -> ItemSet:
    """Stack the per-game rows of every member into one padded ``ItemSet``."""
    members = tuple(rows)
    n = sum(len(g.clues) for g in games)
    k = max((len(g.candidates) for g in games), default=0)
    out = np.zeros((len(members), n, k))
    mask = np.zeros((n, k), dtype=bool)
    truth = np.zeros(n, dtype=np.int64)
    game = np.zeros(n, dtype=np.int64)
    at = 0
    for gi, g in enumerate(games):
        m, kg = len(g.clues), len(g.candidates)
        for b, name in enumerate(members):
            out[b, at : at + m, :kg] = rows[name][gi]
        mask[at : at + m, :kg] = True
        truth[at : at + m] = g.truth
        game[at : at + m] = gi
        at += m
    return ItemSet(members, out, mask, truth, game, tuple(g.game_id for g in games))


def split_games(
    n_games: int, *, test_fraction: float = 0.3, seed: int = 0
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """A seeded split of game indices into (train, test), each sorted; both non-empty."""
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be between 0 and 1, got {test_fraction}")
    if n_games < 2:
        raise ValueError(f"a train/test split needs at least 2 games with items, got {n_games}")
    order = np.random.default_rng(seed).permutation(n_games)
    n_test = min(max(round(test_fraction * n_games), 1), n_games - 1)
    return np.sort(order[n_test:]), np.sort(order[:n_test])
