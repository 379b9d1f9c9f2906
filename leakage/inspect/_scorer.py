"""Leakage and game outcomes as Inspect scorers and metrics.

:func:`leakage_scorer` scores the game a sample carries (its ``leakage.transcript/1`` in the
store or the metadata under ``leakage_transcript``) with any backend. The score's value
holds what a table averages (Chameleon: final P(secret), the secret's rank, final entropy,
total information gain; SpyGame: final and mean entropy, total information gain, whether
the spy posterior caught a spy after round 1); its metadata the whole ``leakage.report/1``
(per turn: posterior, entropy, information gain, spy posterior); its explanation the same,
turn by turn, as text. :func:`game_scorer` gives each game's outcome and
:func:`game_metrics` the game metrics of :mod:`leakage.games.metrics` (win rates, the
paper-named metrics) over the games.
"""

from __future__ import annotations

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
    Target,
    mean,
    metric,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from leakage.backends import LikelihoodBackend, create_backend
from leakage.errors import InvalidTranscript
from leakage.games.metrics import CHAMELEON_METRICS, SPY_METRICS
from leakage.games.metrics import game_metrics as per_game
from leakage.inspect._keys import TRANSCRIPT_KEY
from leakage.reports import Report
from leakage.scoring import ScoreOptions, score_transcript
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
        f"{s.prior_entropy_bits:.2f} bits.",
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
) -> Scorer:
    """How much the game's clues reveal, by ``backend`` (any name ``leakage score -b``
    takes, built once with ``backend_options``), scored as ``leakage score`` does
    (``include_chameleon``, ``spy_assignment`` as its options)."""
    options = ScoreOptions(
        include_chameleon=include_chameleon,
        spy_assignment=spy_assignment,  # type: ignore[arg-type]
    )
    built: list[LikelihoodBackend] = []
    # Scoring (and building the backend: loading a model, opening an index) blocks, so it
    # runs on a worker thread and the event loop goes on with the other samples' moves. One
    # backend is shared by the samples and every call into it holds this lock, as in the
    # service: the backends keep unlocked caches.
    lock = threading.Lock()

    def report_for(transcript: ChameleonTranscript | SpyGameTranscript) -> Report:
        with lock:
            if not built:
                built.append(create_backend(backend, **(backend_options or {})))
            return score_transcript(transcript, built[0], options)

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
            if "game_metrics" in meta:
                pairs = {k: tuple(v) if v else None for k, v in meta["game_metrics"].items()}
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


@scorer(metrics=[game_metrics()])
def game_scorer() -> Scorer:
    """The game's outcome (the value), who won, and its per-game metric ratios
    (``numerator, denominator``, metadata ``game_metrics``) for :func:`game_metrics`."""

    async def score(state: TaskState, target: Target) -> Score:
        t = sample_transcript(state)
        winner = t.meta.get("winner_role")
        return Score(
            value=str(t.meta.get("outcome", "unknown")),
            answer=str(winner),
            explanation=f"{t.game} game {t.id}: {t.meta.get('outcome')}; winner: {winner}",
            metadata={
                "game": t.game,
                "winner_role": winner,
                "game_metrics": {k: _pair(v) for k, v in per_game(t).items()},
            },
        )

    return score
