"""``leakage/chameleon`` and ``leakage/spygame``: one sample per game, its card, secret and
seats from a seed, played by :func:`~leakage.inspect.play_game` and scored by
:func:`~leakage.inspect.leakage_scorer` and :func:`~leakage.inspect.game_scorer`."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from leakage.games import ChameleonConfig, SpyGameConfig
from leakage.inspect._keys import GAME_ROLES
from leakage.inspect._scorer import game_scorer, leakage_scorer
from leakage.inspect._solver import play_game


def game_seeds(seed: int, games: int) -> list[int]:
    """One seed per game from the run's seed: the seeds ``leakage play`` derives, so the
    same ``seed`` deals the same cards, secrets and seats in both."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(games)]


def _agents(game: str) -> dict[str, str]:
    return {role: f"inspect:{model_role}" for role, model_role in GAME_ROLES[game].items()}


def _sample(game: str, i: int, seed: int, run_seed: int, config: Any, **extra: Any) -> Sample:
    game_id = f"{game}-{run_seed}-{i}"
    meta = {
        "game": game,
        "game_id": game_id,
        "seed": seed,
        "run_seed": run_seed,
        "config": asdict(config),
        "agents": _agents(game),
        **extra,
    }
    text = f"Play one game of {'The Chameleon' if game == 'chameleon' else 'SpyGame'}"
    return Sample(input=f"{text} (seed {seed}).", id=game_id, metadata=meta)


def _scorers(backend: str, backend_options: dict[str, Any] | None) -> list[Any]:
    return [leakage_scorer(backend=backend, backend_options=backend_options), game_scorer()]


@task
def chameleon(
    games: int = 10,
    seed: int = 0,
    n_players: int = 4,
    n_candidates: int = 16,
    forbid_secret: bool = False,
    reflect: bool = False,
    backend: str = "cooccurrence",
    backend_options: dict[str, Any] | None = None,
    retries: int = 2,
) -> Task:
    """The Chameleon (Karabag & Topcu): model roles ``chameleon`` and ``non_chameleon``."""
    config = ChameleonConfig(
        n_players=n_players,
        n_candidates=n_candidates,
        forbid_secret=forbid_secret,
        reflect=reflect,
    )
    samples = [
        _sample("chameleon", i, s, seed, config) for i, s in enumerate(game_seeds(seed, games))
    ]
    return Task(
        dataset=MemoryDataset(samples, name="leakage-chameleon"),
        solver=play_game(retries=retries),
        scorer=_scorers(backend, backend_options),
        metadata={"game": "chameleon"},
    )


@task
def spygame(
    games: int = 10,
    seed: int = 0,
    n_players: int = 5,
    n_spies: int = 1,
    max_rounds: int = 6,
    roles_known: bool = False,
    reflect: str = "statement",
    max_words: int = 30,
    pairs_from: str | None = None,
    difficulty: str = "all",
    backend: str = "cooccurrence",
    backend_options: dict[str, Any] | None = None,
    retries: int = 2,
) -> Task:
    """SpyGame (Gu et al.; ``roles_known``, ``n_spies`` for the MAgIC / CK-Arena variant):
    model roles ``civilian`` and ``spy``. ``reflect``: ``statement`` (after each
    statement), ``round`` or ``none``. ``pairs_from``: a ``leakage splits build`` directory
    or split CSV whose ``difficulty`` pairs are played, each once before any twice (default:
    pairs drawn from the cards)."""
    if reflect not in ("statement", "round", "none"):
        raise ValueError(f"reflect must be 'statement', 'round' or 'none', not {reflect!r}")
    config = SpyGameConfig(
        n_players=n_players,
        n_spies=n_spies,
        max_rounds=max_rounds,
        roles_known=roles_known,
        reflect=reflect != "none",
        reflect_after="round" if reflect == "round" else "statement",
        max_words=max_words,
    )
    seeds = game_seeds(seed, games)
    if pairs_from is None:
        samples = [_sample("spygame", i, s, seed, config) for i, s in enumerate(seeds)]
    else:
        from leakage.splits import draw_pairs, read_split

        drawn = draw_pairs(read_split(pairs_from, difficulty), games, seed)
        samples = [
            _sample(
                "spygame",
                i,
                s,
                seed,
                config,
                pair=[p.civilian, p.spy],
                difficulty=p.difficulty,
                pair_similarity=p.similarity,
            )
            for i, (s, p) in enumerate(zip(seeds, drawn, strict=True))
        ]
    return Task(
        dataset=MemoryDataset(samples, name="leakage-spygame"),
        solver=play_game(retries=retries),
        scorer=_scorers(backend, backend_options),
        metadata={"game": "spygame"},
    )
