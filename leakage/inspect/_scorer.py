"""Leakage and game outcomes as Inspect scorers and metrics.

:func:`leakage_scorer` scores the game a sample carries (its ``leakage.transcript/1`` in the
store or the metadata under ``leakage_transcript``) with any backend. The score's value
holds what a table averages (Chameleon: final P(secret), the secret's rank, final entropy,
total information gain; SpyGame: final and mean entropy, total information gain, whether
the spy posterior caught a spy after round 1); its metadata the whole ``leakage.report/1``
(per turn: posterior, entropy, information gain, spy posterior); its explanation the same,
turn by turn, as text. :func:`game_scorer` gives each game's outcome (numeric: whether the
game was valid and whether the hunting side won; the outcome's name in ``answer``) and
:func:`game_metrics` the game metrics of :mod:`leakage.games.metrics` (win rates, the
paper-named metrics) over the games. Under ``--epochs`` the tasks reduce with
:func:`games_reducer`: the values' means over the epochs, and every epoch's game kept for
:func:`game_metrics`, which then pools all of them (Σ numerators / Σ denominators over every
game played, as ``leakage metrics`` computes them on the same log).
"""

from __future__ import annotations

import json
import math
import threading
from collections import defaultdict
from typing import Any

import anyio.to_thread
from inspect_ai.scorer import (
    Metric,
    SampleScore,
    Score,
    Scorer,
    ScoreReducer,
    Target,
    mean,
    mean_score,
    metric,
    score_reducer,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from leakage.backends import LikelihoodBackend, create_backend
from leakage.errors import InvalidTranscript
from leakage.games.metrics import CHAMELEON_METRICS, SPY_METRICS
from leakage.games.metrics import game_metrics as per_game
from leakage.inspect._keys import TRANSCRIPT_KEY
from leakage.reports import Report, report_seat
from leakage.scoring import PLAYER_SEATS, ScoreOptions, score_transcript
from leakage.seats import seat_sentence
from leakage.transcripts import ChameleonTranscript, SpyGameTranscript, parse_transcript

_NAN = float("nan")


def sample_transcript(state: TaskState) -> ChameleonTranscript | SpyGameTranscript:
    """The game a sample carries: ``leakage_transcript`` in its store (the games the
    ``leakage/`` tasks play), else in its metadata (a dataset of logged games);
    ``InvalidTranscript`` naming the sample and the field otherwise."""
    where = f"sample {state.sample_id!r}"
    data = state.store.get(TRANSCRIPT_KEY)
    field = f"store.{TRANSCRIPT_KEY}"
    if data is None:
        data, field = (state.metadata or {}).get(TRANSCRIPT_KEY), f"metadata.{TRANSCRIPT_KEY}"
    if data is None:
        raise InvalidTranscript(
            [
                (
                    TRANSCRIPT_KEY,
                    "missing from the sample's store and metadata: this sample carries no "
                    "game; play it with leakage/chameleon or leakage/spygame (solver "
                    "play_game), or put a leakage.transcript/1 record there",
                )
            ],
            record=where,
        )
    try:
        return parse_transcript(data)
    except InvalidTranscript as err:
        raise err.located(source=field, record=where) from None


def _num(x: float | int | bool | None) -> float:
    return _NAN if x is None else float(x)


def score_value(report: Report) -> dict[str, float]:
    """What a table averages over games (NaN where a game has no such figure)."""
    s = report.summary
    if report.settings.get("seat") in PLAYER_SEATS:  # the seat's secret: settings.seat_secret
        return {
            "secret_probability": _num(s.final_secret_probability),
            "secret_rank": _num(s.final_secret_rank),
            "final_entropy_bits": _num(s.final_entropy_bits),
            "information_gain_bits": _num(s.total_information_gain_bits),
            "spy_caught": _num(s.spy_hit_after_round1),
        }
    if report.game == "chameleon":
        return {
            "secret_probability": _num(s.final_secret_probability),
            "secret_rank": _num(s.final_secret_rank),
            "final_entropy_bits": _num(s.final_entropy_bits),
            "information_gain_bits": _num(s.total_information_gain_bits),
        }
    value = {
        "final_entropy_bits": _num(s.final_entropy_bits),
        "mean_entropy_bits": _num(s.mean_entropy_bits),
        "information_gain_bits": _num(s.total_information_gain_bits),
        "spy_caught": _num(s.spy_hit_after_round1),
    }
    return value


def _top(posterior: dict[str, float], n: int = 3) -> str:
    best = sorted(posterior.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{w} {p:.2f}" for w, p in best)


def explain(report: Report) -> str:
    """The leakage turn by turn, as a reader of ``inspect view`` wants it."""
    s = report.summary
    secret = f"the secret {report.secret!r}" if report.secret else "no secret given"
    lines = [
        f"{report.game} game {report.game_id}, backend {report.backend}: "
        f"{len(report.candidates)} candidates, {secret}, prior entropy "
        f"{s.prior_entropy_bits:.2f} bits. {seat_sentence(report_seat(report))}",
    ]
    for step in report.steps:
        head = f"{step.index + 1}. {step.player} ({step.role}): {step.text!r}"
        if not step.counted:
            lines.append(f"{head}: not counted")
            continue
        parts = [
            f"entropy {step.entropy_bits:.2f} bits",
            f"gain {step.information_gain_bits:+.2f} bits",
        ]
        if step.secret_probability is not None:
            parts.insert(0, f"P(secret) {step.secret_probability:.2f} (rank {step.secret_rank})")
        parts.append(f"top: {_top(step.posterior)}")
        if step.spy_posterior:
            parts.append(f"spy posterior: {_top(step.spy_posterior)}")
        lines.append(f"{head}: " + "; ".join(parts))
    final = []
    if s.final_secret_probability is not None:
        final.append(f"P(secret) {s.final_secret_probability:.2f}, rank {s.final_secret_rank}")
    if s.total_information_gain_bits is not None:
        final.append(f"total gain {s.total_information_gain_bits:.2f} bits")
    if s.spy_hit_after_round1 is not None:
        caught = "caught" if s.spy_hit_after_round1 else "missed"
        final.append(f"spy posterior after round 1 {caught} the spy ({s.spy_top_after_round1})")
    if final:  # a paragraph of its own: inspect view renders the explanation as Markdown
        lines += ["", "Final: " + "; ".join(final) + "."]
    return "\n".join(lines)


@scorer(metrics={"*": [mean(), stderr()]})
def leakage_scorer(
    backend: str = "cooccurrence",
    backend_options: dict[str, Any] | None = None,
    include_chameleon: bool = False,
    spy_assignment: str = "known",
    seat: str | None = None,
) -> Scorer:
    """How much the game's clues reveal, by ``backend`` (any name ``leakage score -b``
    takes, built once with ``backend_options``), scored as ``leakage score`` does
    (``include_chameleon``, ``spy_assignment``, ``seat`` as its options: a seat that is not
    the game's is an error when the game is scored)."""
    options = ScoreOptions(
        include_chameleon=include_chameleon,
        spy_assignment=spy_assignment,  # type: ignore[arg-type]
        seat=seat,
    )

    # Scoring (and building the backend: loading a model, opening an index) blocks, so it
    # runs on a worker thread and the event loop goes on with the other samples' moves. One
    # backend is shared by the samples (and by the scorers built with the same backend and
    # options: the task built it to check it) and every call into it holds its lock, as in
    # the service: the backends keep unlocked caches.
    def report_for(transcript: ChameleonTranscript | SpyGameTranscript) -> Report:
        built, lock = shared_backend(backend, backend_options)
        with lock:
            return score_transcript(transcript, built, options)

    async def score(state: TaskState, target: Target) -> Score:
        transcript = sample_transcript(state)
        report = await anyio.to_thread.run_sync(report_for, transcript)
        return Score(
            value=score_value(report),
            answer=report.secret,
            explanation=explain(report),
            metadata={"report": report.model_dump(mode="json")},
        )

    return score


_SHARED: dict[str, tuple[LikelihoodBackend, threading.Lock]] = {}
_SHARED_LOCK = threading.Lock()


def shared_backend(
    name: str, options: dict[str, Any] | None
) -> tuple[LikelihoodBackend, threading.Lock]:
    """The backend ``name`` built with ``options`` (``create_backend``: an unknown name or
    option is an error naming it), built once per process and shared with the lock that
    guards its calls. The tasks call it when they are built, so a wrong ``-T backend`` or
    ``backend_options`` stops the run before any game is played."""
    key = json.dumps([name, options or {}], sort_keys=True, default=str)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = (create_backend(name, **(options or {})), threading.Lock())
        return _SHARED[key]


def _pair(value: tuple[float, float] | None) -> list[float] | None:
    return None if value is None else [float(value[0]), float(value[1])]


@metric
def game_metrics() -> Metric:
    """Each game metric over the games (Σ numerators / Σ denominators, as ``leakage play``
    prints them); a metric no game supports is left out. Tasks of one game kind get the
    plain names; a mixed set prefixes each with its kind."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        from leakage.games.metrics import aggregate

        by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for s in scores:
            meta = s.score.metadata or {}
            # one game per score, or every epoch's game of a sample (games_reducer)
            for game in meta.get(EPOCH_GAMES) or [meta.get("game_metrics")]:
                if game is not None:
                    pairs = {k: tuple(v) if v else None for k, v in game.items()}
                    by_kind[meta["game"]].append(pairs)
        out: dict[str, float] = {}
        for kind, games in by_kind.items():
            names = CHAMELEON_METRICS if kind == "chameleon" else SPY_METRICS
            prefix = "" if len(by_kind) == 1 else f"{kind}_"
            for row in aggregate(games, names, n_boot=1):
                if row.value is not None and math.isfinite(row.value):
                    out[prefix + row.metric] = row.value
        return out

    return compute


EPOCH_GAMES = "game_metrics_by_epoch"
"""Metadata key of a reduced game score: each epoch's ``game_metrics``."""

HUNTERS = {"chameleon": "non-chameleon", "spygame": "civilian"}
"""The side that hunts (votes out the chameleon, the spies) in each game."""


def outcome_value(t: ChameleonTranscript | SpyGameTranscript) -> dict[str, float]:
    """A game's outcome as numbers: ``valid`` (1: the game was played to its end without
    an invalid move) and ``hunters_win`` (1: the non-chameleons / civilians won, 0: the
    chameleon / spies won; NaN for an invalid game or one with no winner)."""
    valid = t.meta.get("outcome") != "invalid"
    winner = t.meta.get("winner_role")
    win = _NAN if not valid or winner is None else float(winner == HUNTERS[t.game])
    return {"valid": float(valid), "hunters_win": win}


@scorer(metrics=[game_metrics()])
def game_scorer() -> Scorer:
    """The game's outcome as numbers (:func:`outcome_value`; its name, e.g.
    ``chameleon_caught``, in ``answer`` and metadata ``outcome``), who won, and its
    per-game metric ratios (``numerator, denominator``, metadata ``game_metrics``) for
    :func:`game_metrics`."""

    async def score(state: TaskState, target: Target) -> Score:
        t = sample_transcript(state)
        winner = t.meta.get("winner_role")
        outcome = str(t.meta.get("outcome", "unknown"))
        return Score(
            value=outcome_value(t),
            answer=outcome,
            explanation=f"{t.game} game {t.id}: {t.meta.get('outcome')}; winner: {winner}",
            metadata={
                "game": t.game,
                "outcome": outcome,
                "winner_role": winner,
                "game_metrics": {k: _pair(v) for k, v in per_game(t).items()},
            },
        )

    return score


@score_reducer(name="leakage/games")
def games_reducer() -> ScoreReducer:
    """Reduces a sample's epochs for the leakage tasks: each value the mean over the epochs
    (a NaN left out, as ``mean``), and for :func:`game_scorer` every epoch's game metrics
    kept (metadata ``game_metrics_by_epoch``) so that :func:`game_metrics` pools every game
    played rather than one epoch's."""
    mean_of = mean_score()

    def reduce(scores: list[Score]) -> Score:
        reduced = mean_of(scores)
        metas = [s.metadata or {} for s in scores]
        meta: dict[str, Any] = {"epochs": len(scores)}
        if metas and all("game_metrics" in m for m in metas):
            meta["game"] = metas[0]["game"]
            meta["outcomes"] = [m.get("outcome") for m in metas]
            meta[EPOCH_GAMES] = [m["game_metrics"] for m in metas]
        reduced.metadata = meta
        return reduced

    return reduce
