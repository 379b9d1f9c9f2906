"""Scoring a transcript: backend matrix -> posterior engine -> ``leakage.report/1``.

Scoring runs in two stages, and both work on plain values taken from the transcript, so
that a batch can send games to other processes cheaply:

1. :func:`score_inputs` asks the backend about the clues of a chunk of games
   (:class:`GameInput`) and runs the posterior engine over the answers, once per group of
   games of the same shape; the result per game is a dict of numbers (numpy arrays).
2. :func:`report_data` puts those numbers together with the rest of the game
   (:class:`ReportContext`: ids, roles, rounds, meta) into the report as plain data;
   :func:`build_report` validates it into a :class:`~leakage.reports.Report`.

:func:`score_transcript` and :func:`score_many` run both.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel

from leakage.backends.base import LikelihoodBackend
from leakage.errors import InvalidInput
from leakage.metrics import outlier_trace
from leakage.posterior import (
    Trace,
    entropy_bits,
    kl_bits,
    normalize_log,
    posterior_traces,
    ranks_of,
    spy_posterior,
)
from leakage.reports import Report, Step, Summary
from leakage.transcripts import AnyTranscript, ChameleonTranscript

Numbers = dict[str, Any]
"""What :func:`score_input` found for one game: numpy arrays (and a few scalars) by name."""

_TRACE_FIELDS = tuple(f.name for f in fields(Trace))


@dataclass(frozen=True)
class ScoreOptions:
    """How games are scored (the same for a whole batch)."""

    include_chameleon: bool = False
    """Chameleon: let the chameleon's own turns update the posterior too."""
    spy_assignment: str = "known"
    """SpyGame: ``known`` (which word is the civilians' is known) or ``marginalise``."""


class GameInput(NamedTuple):
    """What the backend stage needs from one transcript, as plain values."""

    game: Literal["chameleon", "spygame"]
    texts: tuple[str, ...]
    """Every turn's text, in order."""
    speakers: tuple[str, ...]
    """Every turn's player id."""
    candidates: tuple[str, ...]
    category: str | None
    counted: tuple[bool, ...]
    """Which turns update the posterior (SpyGame: all)."""
    secret_index: int | None
    """Chameleon: position of the secret among the candidates (None without a secret)."""
    word_index: tuple[int, ...] = ()
    """SpyGame: for every turn, the position of the speaker's word among the candidates."""
    players: tuple[str, ...] = ()
    """SpyGame: the player ids in seat order (the spy posterior's columns)."""
    n_spies: int = 0
    spy_assignment: str = "known"

    @property
    def clues(self) -> list[str]:
        """The texts the backend is asked about."""
        return [x for x, c in zip(self.texts, self.counted, strict=True) if c]


def _as_dict(words: list[str], p: np.ndarray) -> dict[str, float]:
    return dict(zip(words, p.tolist(), strict=True))


def _counted(t: ChameleonTranscript, options: ScoreOptions) -> tuple[bool, ...]:
    chameleons = t.chameleons()
    return tuple(options.include_chameleon or turn.player not in chameleons for turn in t.turns)


def game_input(t: AnyTranscript, options: ScoreOptions = ScoreOptions()) -> GameInput:
    """The plain values :func:`score_input` needs from ``t``."""
    texts = tuple(turn.text for turn in t.turns)
    speakers = tuple(turn.player for turn in t.turns)
    if isinstance(t, ChameleonTranscript):
        secret_index = t.candidates.index(t.secret) if t.secret is not None else None
        return GameInput(
            "chameleon", texts, speakers, tuple(t.candidates), t.category,
            _counted(t, options), secret_index,
        )  # fmt: skip
    candidates = tuple(t.candidates)
    position = {w: j for j, w in enumerate(candidates)}
    words = {p.id: position[t.word_of(p.id)] for p in t.players}
    return GameInput(
        "spygame", texts, speakers, candidates, None, (True,) * len(texts), None,
        tuple(words[x] for x in speakers), tuple(p.id for p in t.players), len(t.spies()),
        options.spy_assignment,
    )  # fmt: skip


def scored_clues(t: AnyTranscript, options: ScoreOptions = ScoreOptions()) -> list[str]:
    """The clue texts scoring ``t`` sends to the backend (what a dry run must price)."""
    return game_input(t, options).clues


def _chameleon_loglik(inp: GameInput, backend: LikelihoodBackend) -> np.ndarray:
    """The backend's log-likelihoods, one row per turn (zeros for turns not counted)."""
    loglik = np.zeros((len(inp.texts), len(inp.candidates)))
    if any(inp.counted):
        rows = backend.loglik(inp.clues, list(inp.candidates), category=inp.category)
        loglik[np.flatnonzero(inp.counted)] = rows
    return loglik


def _trace_numbers(tr: Trace) -> Numbers:
    return {name: getattr(tr, name) for name in _TRACE_FIELDS}


def score_input(inp: GameInput, backend: LikelihoodBackend) -> Numbers:
    """Stage 1 for one game (:func:`score_inputs`); a game the backend rejects raises."""
    (numbers,) = score_inputs([inp], backend)
    if isinstance(numbers, InvalidInput):
        raise numbers
    return numbers


def _spygame_numbers(inp: GameInput, backend: LikelihoodBackend) -> Numbers:
    """Per statement: the speaker's-word posterior from that statement alone (uniform prior),
    its entropy, KL from uniform, the speaker's word's probability and rank, and the spy
    posterior given every statement so far; outlier scores when the backend can embed."""
    k, m = len(inp.candidates), len(inp.texts)
    texts = list(inp.texts)
    loglik = backend.loglik(texts, list(inp.candidates)) if texts else np.zeros((0, k))
    loglik = np.asarray(loglik, dtype=np.float64)
    post = normalize_log(loglik) if m else np.zeros((0, k))
    h = entropy_bits(post)
    prior_h = float(np.log2(k))
    column = {pid: j for j, pid in enumerate(inp.players)}
    evidence = np.zeros(len(inp.players))
    spy = np.zeros((m, len(inp.players)))
    rank = np.zeros(m, dtype=np.int64)
    for i, (player, wi) in enumerate(zip(inp.speakers, inp.word_index, strict=True)):
        evidence[column[player]] += loglik[i, 0] - loglik[i, 1]
        spy[i] = spy_posterior(evidence, inp.n_spies, assignment=inp.spy_assignment)
        rank[i] = ranks_of(post[i], wi)[0]
    out: Numbers = {
        "posterior": post,
        "entropy_bits": h,
        "information_gain_bits": prior_h - h,
        "kl_bits": kl_bits(post, np.full(k, 1.0 / k)),
        "secret_probability": post[np.arange(m), np.array(inp.word_index, dtype=np.intp)],
        "secret_rank": rank,
        "spy_posterior": spy,
        "prior_entropy_bits": prior_h,
    }
    embed = getattr(backend, "embed", None)
    if embed is not None and texts:
        out["outliers"] = outlier_trace(list(inp.speakers), embed(texts))
    return out


def score_inputs(
    inputs: Sequence[GameInput], backend: LikelihoodBackend
) -> list[Numbers | InvalidInput]:
    """:func:`score_input` for many games, in order: the backend is asked game by game, the
    posterior engine runs once per group of Chameleon games of the same shape (turns,
    candidates, with or without a secret). A game the backend rejects comes back as its
    :class:`~leakage.errors.InvalidInput`; any other backend error is raised."""
    out: list[Numbers | InvalidInput] = [{} for _ in inputs]
    groups: dict[tuple[int, int, bool], list[tuple[int, np.ndarray]]] = {}
    for i, inp in enumerate(inputs):
        try:
            if inp.game == "chameleon":
                loglik = _chameleon_loglik(inp, backend)
                key = (len(inp.texts), len(inp.candidates), inp.secret_index is not None)
                groups.setdefault(key, []).append((i, loglik))
            else:
                out[i] = _spygame_numbers(inp, backend)
        except InvalidInput as err:
            out[i] = err
    for (m, _, has_secret), members in groups.items():
        games = [inputs[i] for i, _ in members]
        traces = posterior_traces(
            np.stack([loglik for _, loglik in members]),
            counted=np.array([g.counted for g in games], dtype=bool).reshape(len(games), m),
            secret_index=[g.secret_index or 0 for g in games] if has_secret else None,
        )
        for (i, _), tr in zip(members, traces, strict=True):
            out[i] = _trace_numbers(tr)
    return out


class ReportContext(NamedTuple):
    """What the report stage takes from a transcript beside its :class:`GameInput`, as plain
    values (so that the process that scores a game can also write its report)."""

    game_id: str
    secret: str | None
    """Chameleon: the secret; SpyGame: the civilians' word."""
    roles: tuple[str, ...]
    """Every turn's speaker's role."""
    rounds: tuple[int | None, ...]
    speaker_words: tuple[str | None, ...]
    """SpyGame: every turn's speaker's word."""
    spies: tuple[str, ...]
    meta: dict[str, Any]


def report_context(t: AnyTranscript) -> ReportContext:
    """The :class:`ReportContext` of ``t``."""
    roles = {p.id: p.role for p in t.players}
    speakers = [turn.player for turn in t.turns]
    rounds = tuple(turn.round for turn in t.turns)
    if isinstance(t, ChameleonTranscript):
        words: tuple[str | None, ...] = (None,) * len(speakers)
        return ReportContext(
            t.id, t.secret, tuple(roles[p] for p in speakers), rounds, words, (), t.meta
        )
    words = tuple(t.word_of(p) for p in speakers)
    spies = tuple(sorted(t.spies()))
    return ReportContext(
        t.id, t.words.civilian, tuple(roles[p] for p in speakers), rounds, words, spies, t.meta
    )


def report_data(
    inp: GameInput,
    ctx: ReportContext,
    numbers: Numbers,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions = ScoreOptions(),
) -> dict[str, Any]:
    """Stage 2 as plain data: what ``build_report(...).model_dump(mode="json")`` gives, with
    every field in the report's order, built without validating it (for writers that only
    serialise it, such as the batch path)."""
    if inp.game == "chameleon":
        return _chameleon_report(inp, ctx, Trace(**numbers), backend, backend_info, options)
    return _spygame_report(inp, ctx, numbers, backend, backend_info, options)


def build_report(
    t: AnyTranscript,
    numbers: Numbers,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions = ScoreOptions(),
) -> Report:
    """Stage 2: the report of ``t`` from what :func:`score_input` found for it."""
    return _report(t, game_input(t, options), numbers, backend, backend_info, options)


def _report(
    t: AnyTranscript,
    inp: GameInput,
    numbers: Numbers,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions,
) -> Report:
    data = report_data(inp, report_context(t), numbers, backend, backend_info, options)
    return Report.model_validate(data)


def _defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Every field of ``model`` in order, set to its default; a required field is left
    ``PydanticUndefined``, which neither serialises nor validates if it is not set."""
    return {name: f.get_default() for name, f in model.model_fields.items()}


_STEP = _defaults(Step)
_SUMMARY = _defaults(Summary)
_REPORT = _defaults(Report)


def _chameleon_report(
    inp: GameInput,
    ctx: ReportContext,
    tr: Trace,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions,
) -> dict[str, Any]:
    candidates = inp.candidates
    counted = tr.counted.tolist()
    entropy = tr.entropy_bits.tolist()
    gain = tr.information_gain_bits.tolist()
    kl = tr.kl_bits.tolist()
    probability = None if tr.secret_probability is None else tr.secret_probability.tolist()
    rank = None if tr.secret_rank is None else tr.secret_rank.tolist()
    steps = [
        {
            **_STEP,
            "index": i,
            "player": player,
            "role": role,
            "round": round_,
            "text": text,
            "counted": counted[i],
            "posterior": dict(zip(candidates, row, strict=True)),
            "entropy_bits": entropy[i],
            "information_gain_bits": gain[i],
            "kl_bits": kl[i],
            "secret_probability": None if probability is None else probability[i],
            "secret_rank": None if rank is None else rank[i],
        }
        for i, (player, role, round_, text, row) in enumerate(
            zip(inp.speakers, ctx.roles, ctx.rounds, inp.texts, tr.posterior.tolist(), strict=True)
        )
    ]
    last = steps[-1] if steps else None
    last_rank = None if last is None else last["secret_rank"]
    summary = {
        **_SUMMARY,
        "counted_turns": sum(counted),
        "prior_entropy_bits": float(tr.prior_entropy_bits),
        "final_entropy_bits": None if last is None else last["entropy_bits"],
        "total_information_gain_bits": (
            None if last is None else float(tr.information_gain_bits.sum())
        ),
        "final_secret_probability": None if last is None else last["secret_probability"],
        "final_secret_rank": last_rank,
        "top1": None if last_rank is None else last_rank <= 1,
        "top3": None if last_rank is None else last_rank <= 3,
    }
    return {
        **_REPORT,
        "game_id": ctx.game_id,
        "game": "chameleon",
        "backend": backend,
        "backend_info": backend_info,
        "category": inp.category,
        "candidates": list(candidates),
        "secret": ctx.secret,
        "settings": {"include_chameleon": options.include_chameleon},
        "steps": steps,
        "summary": summary,
        "meta": dict(ctx.meta),
    }


def _spygame_report(
    inp: GameInput,
    ctx: ReportContext,
    numbers: Numbers,
    backend: str,
    backend_info: dict[str, Any],
    options: ScoreOptions,
) -> dict[str, Any]:
    candidates = inp.candidates
    player_ids = list(inp.players)
    n_spies = inp.n_spies
    spies = set(ctx.spies)
    outliers: list[dict[str, float]] | None = numbers.get("outliers")
    h = numbers["entropy_bits"]
    prior_h = float(numbers["prior_entropy_bits"])
    entropy, kl = h.tolist(), numbers["kl_bits"].tolist()
    gain = numbers["information_gain_bits"].tolist()
    probability = numbers["secret_probability"].tolist()
    rank = numbers["secret_rank"].tolist()
    spy = numbers["spy_posterior"]
    rounds = ctx.rounds
    steps: list[dict[str, Any]] = []
    spy_round1: list[str] | None = None
    outlier_round1: list[str] | None = None
    first_round = rounds[0] if rounds else None
    for i, row in enumerate(numbers["posterior"].tolist()):
        steps.append(
            {
                **_STEP,
                "index": i,
                "player": inp.speakers[i],
                "role": ctx.roles[i],
                "round": rounds[i],
                "text": inp.texts[i],
                "counted": True,
                "posterior": dict(zip(candidates, row, strict=True)),
                "entropy_bits": entropy[i],
                "information_gain_bits": gain[i],
                "kl_bits": kl[i],
                "secret_probability": probability[i],
                "secret_rank": rank[i],
                "speaker_word": ctx.speaker_words[i],
                "spy_posterior": _as_dict(player_ids, spy[i]),
                "outlier_scores": None if outliers is None else outliers[i],
            }
        )
        next_round = rounds[i + 1] if i + 1 < len(rounds) else None
        if spy_round1 is None and first_round is not None and next_round != first_round:
            top = np.argsort(-spy[i], kind="stable")[:n_spies]
            spy_round1 = [player_ids[j] for j in top]
            if outliers is not None:
                ranked = sorted(outliers[i], key=lambda p: -outliers[i][p])
                outlier_round1 = ranked[:n_spies]
    summary = {
        **_SUMMARY,
        "counted_turns": len(steps),
        "prior_entropy_bits": prior_h,
        "final_entropy_bits": steps[-1]["entropy_bits"] if steps else None,
        "mean_entropy_bits": float(h.mean()) if len(steps) else None,
        "total_information_gain_bits": float((prior_h - h).sum()) if len(steps) else None,
        "spy_top_after_round1": spy_round1,
        "spy_hit_after_round1": None if spy_round1 is None else bool(set(spy_round1) & spies),
        "outlier_top_after_round1": outlier_round1,
        "outlier_hit_after_round1": (
            None if outlier_round1 is None else bool(set(outlier_round1) & spies)
        ),
    }
    return {
        **_REPORT,
        "game_id": ctx.game_id,
        "game": "spygame",
        "backend": backend,
        "backend_info": backend_info,
        "candidates": list(candidates),
        "secret": ctx.secret,
        "settings": {"spy_assignment": options.spy_assignment, "n_spies": n_spies},
        "steps": steps,
        "summary": summary,
        "meta": dict(ctx.meta),
    }


def score_transcript(
    t: AnyTranscript, backend: LikelihoodBackend, options: ScoreOptions = ScoreOptions()
) -> Report:
    """Score one game with one backend: both stages in one go."""
    inp = game_input(t, options)
    return _report(t, inp, score_input(inp, backend), backend.name, backend.info(), options)


def prepare(
    transcripts: Sequence[AnyTranscript],
    backend: LikelihoodBackend,
    options: ScoreOptions = ScoreOptions(),
) -> None:
    """Let a backend that has a ``prepare`` hook do its work for many games at once.

    The embedding backend embeds every clue and candidate in large batches, far faster than
    game by game; backends without the hook are left alone.
    """
    prepare_inputs([game_input(t, options) for t in transcripts], backend)


def prepare_inputs(inputs: Iterable[GameInput], backend: LikelihoodBackend) -> None:
    """:func:`prepare` for games already turned into :class:`GameInput`."""
    hook = getattr(backend, "prepare", None)
    if hook is None:
        return
    hook((inp.clues, list(inp.candidates), inp.category) for inp in inputs)


def score_many(
    transcripts: Iterable[AnyTranscript],
    backend: LikelihoodBackend,
    options: ScoreOptions = ScoreOptions(),
    *,
    chunk: int = 1000,
) -> Iterator[Report]:
    """Score games in order, a chunk at a time: the backend prepares each chunk in bulk
    (:func:`prepare`) and the posterior engine runs over a chunk's games at once
    (:func:`score_inputs`). A game the backend rejects raises when its turn comes."""
    batch: list[AnyTranscript] = []
    for t in transcripts:
        batch.append(t)
        if len(batch) >= chunk:
            yield from _score_chunk(batch, backend, options)
            batch = []
    yield from _score_chunk(batch, backend, options)


def _score_chunk(
    batch: list[AnyTranscript], backend: LikelihoodBackend, options: ScoreOptions
) -> Iterator[Report]:
    if not batch:
        return
    inputs = [game_input(t, options) for t in batch]
    prepare_inputs(inputs, backend)
    name, info = backend.name, backend.info()
    for t, inp, numbers in zip(batch, inputs, score_inputs(inputs, backend), strict=True):
        if isinstance(numbers, InvalidInput):
            raise numbers
        yield _report(t, inp, numbers, name, info, options)
