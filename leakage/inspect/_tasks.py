"""``leakage/chameleon`` and ``leakage/spygame``: one sample per game, its card, secret and
seats from a seed, played by :func:`~leakage.inspect.play_game` and scored by
:func:`~leakage.inspect.leakage_scorer` and :func:`~leakage.inspect.game_scorer`, each
sample's epochs reduced by :func:`~leakage.inspect.games_reducer`.

Building a task checks what would otherwise fail late: the backend and its options (built
then, and shared with the scorer) and, inside an eval, that every game role has a model.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from leakage.games import ChameleonConfig, SpyGameConfig
from leakage.inspect._scorer import game_scorer, games_reducer, leakage_scorer, shared_backend
from leakage.inspect._solver import UnboundRole, play_game, role_models
from leakage.seats import canonical_seat, check_seat

VERSION = "1.0.0"
"""The tasks' version (``Task.version``, in every log's header): raised when a change makes
scores incomparable (rules, prompts, default game set, scorer definitions)."""


def game_seeds(seed: int, games: int) -> list[int]:
    """One seed per game from the run's seed: the seeds ``leakage play`` derives, so the
    same ``seed`` deals the same cards, secrets and seats in both."""
    return [int(s) for s in np.random.SeedSequence(seed).generate_state(games)]


def sample_id(game: str, run_seed: int, i: int, games: int) -> str:
    """``chameleon-0-007``: the game's index zero-padded (at least three digits, more when
    there are more games) so that ids sort in play order."""
    width = max(3, len(str(games - 1)))
    return f"{game}-{run_seed}-{i:0{width}d}"


def _sample(
    game: str, i: int, seed: int, run_seed: int, config: Any, games: int, **extra: Any
) -> Sample:
    game_id = sample_id(game, run_seed, i, games)
    meta = {
        "game": game,
        "game_id": game_id,
        "seed": seed,
        "run_seed": run_seed,
        "config": asdict(config),
        **extra,
    }
    text = f"Play one game of {'The Chameleon' if game == 'chameleon' else 'SpyGame'}"
    return Sample(input=f"{text} (seed {seed}).", id=game_id, metadata=meta)


def _scorers(
    backend: str, backend_options: dict[str, Any] | None, seat: str | None = None
) -> list[Any]:
    return [
        leakage_scorer(backend=backend, backend_options=backend_options, seat=seat),
        game_scorer(),
    ]


def _checked(
    game: str, backend: str, backend_options: dict[str, Any] | None, seat: str | None = None
) -> None:
    """Stop now, before any model call, on what would fail later: the backend and its
    options (built here, and kept for the scorer: ``shared_backend``) and, inside an eval,
    a game role that no model plays (``role_models``). Outside an eval (the task built in
    Python, its roles bound later by ``task_with``) each game checks its roles when it
    starts, still before its first move."""
    if not isinstance(backend_options, dict | None):
        raise ValueError(
            f"leakage/{game}: backend_options is an object of option names and values "
            f'(-T \'backend_options={{"index": "..."}}\'), not {backend_options!r}'
        )
    if seat is not None:  # -T seat=... that is not this game's: stop before any move
        check_seat(canonical_seat(seat), game)
    shared_backend(backend, backend_options)
    try:
        role_models(game)
    except UnboundRole:
        raise
    except (LookupError, ValueError):
        pass  # no eval here (no model at all): the roles are checked when each game starts


def _task(
    game: str,
    samples: list[Sample],
    backend: str,
    backend_options: dict[str, Any] | None,
    retries: int,
    max_tokens: int | None,
    seat: str | None = None,
) -> Task:
    _checked(game, backend, backend_options, seat)
    return Task(
        dataset=MemoryDataset(samples, name=f"leakage-{game}"),
        solver=play_game(retries=retries, max_tokens=max_tokens),
        scorer=_scorers(backend, backend_options, seat),
        epochs=Epochs(1, games_reducer()),
        metadata={"game": game},
        version=VERSION,
    )


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
    max_tokens: int | None = None,
    seat: str | None = None,
) -> Task:
    """The Chameleon (Karabag & Topcu): model roles ``chameleon`` and ``non_chameleon``.
    ``max_tokens``: a move's when Inspect's settings give none (default 64). ``seat``:
    whose posterior the leakage scorer reports (``chameleon``, ``non-chameleon``)."""
    config = ChameleonConfig(
        n_players=n_players,
        n_candidates=n_candidates,
        forbid_secret=forbid_secret,
        reflect=reflect,
    )
    samples = [
        _sample("chameleon", i, s, seed, config, games)
        for i, s in enumerate(game_seeds(seed, games))
    ]
    return _task("chameleon", samples, backend, backend_options, retries, max_tokens, seat)


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
    max_tokens: int | None = None,
    seat: str | None = None,
) -> Task:
    """SpyGame (Gu et al.; ``roles_known``, ``n_spies`` for the MAgIC / CK-Arena variant):
    model roles ``civilian`` and ``spy``. ``reflect``: ``statement`` (after each
    statement), ``round`` or ``none``. ``pairs_from``: a ``leakage splits build`` directory
    or split CSV whose ``difficulty`` pairs are played, each once before any twice (default:
    pairs drawn from the cards). ``max_tokens``: a move's when Inspect's settings give none
    (default 96). ``seat``: whose posterior the leakage scorer reports (``outside-known``,
    ``outside-pair``, ``civilian``, ``spy``)."""
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
        samples = [_sample("spygame", i, s, seed, config, games) for i, s in enumerate(seeds)]
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
                games,
                pair=[p.civilian, p.spy],
                difficulty=p.difficulty,
                pair_similarity=p.similarity,
            )
            for i, (s, p) in enumerate(zip(seeds, drawn, strict=True))
        ]
    return _task("spygame", samples, backend, backend_options, retries, max_tokens, seat)
