"""Scoring a transcript: backend matrix -> posterior engine -> ``leakage.report/1``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from leakage.backends.base import LikelihoodBackend
from leakage.metrics import outlier_trace
from leakage.posterior import (
    entropy_bits,
    kl_bits,
    normalize_log,
    posterior_trace,
    ranks_of,
    spy_posterior,
)
from leakage.reports import Report, Step, Summary
from leakage.transcripts import AnyTranscript, ChameleonTranscript, SpyGameTranscript


@dataclass(frozen=True)
class ScoreOptions:
    """How games are scored (the same for a whole batch)."""

    include_chameleon: bool = False
    """Chameleon: let the chameleon's own turns update the posterior too."""
    spy_assignment: str = "known"
    """SpyGame: ``known`` (which word is the civilians' is known) or ``marginalise``."""


def _as_dict(words: list[str], p: np.ndarray) -> dict[str, float]:
    return dict(zip(words, p.tolist(), strict=True))


def _counted(t: ChameleonTranscript, options: ScoreOptions) -> np.ndarray:
    chameleons = t.chameleons()
    return np.array(
        [options.include_chameleon or turn.player not in chameleons for turn in t.turns], bool
    )


def scored_clues(t: AnyTranscript, options: ScoreOptions = ScoreOptions()) -> list[str]:
    """The clue texts scoring ``t`` sends to the backend (what a dry run must price)."""
    if isinstance(t, ChameleonTranscript):
        return [turn.text for turn, c in zip(t.turns, _counted(t, options), strict=True) if c]
    return [turn.text for turn in t.turns]


def score_chameleon(
    t: ChameleonTranscript, backend: LikelihoodBackend, options: ScoreOptions = ScoreOptions()
) -> Report:
    counted = _counted(t, options)
    k = len(t.candidates)
    loglik = np.zeros((len(t.turns), k))
    idx = np.flatnonzero(counted)
    if idx.size:
        loglik[idx] = backend.loglik(
            [t.turns[i].text for i in idx], t.candidates, category=t.category
        )
    secret_index = t.candidates.index(t.secret) if t.secret is not None else None
    tr = posterior_trace(loglik, counted=counted, secret_index=secret_index)
    roles = {p.id: p.role for p in t.players}
    steps = [
        Step(
            index=i,
            player=turn.player,
            role=roles[turn.player],
            round=turn.round,
            text=turn.text,
            counted=bool(counted[i]),
            posterior=_as_dict(t.candidates, tr.posterior[i]),
            entropy_bits=float(tr.entropy_bits[i]),
            information_gain_bits=float(tr.information_gain_bits[i]),
            kl_bits=float(tr.kl_bits[i]),
            secret_probability=None
            if tr.secret_probability is None
            else float(tr.secret_probability[i]),
            secret_rank=None if tr.secret_rank is None else int(tr.secret_rank[i]),
        )
        for i, turn in enumerate(t.turns)
    ]
    last = steps[-1] if steps else None
    summary = Summary(
        counted_turns=int(counted.sum()),
        prior_entropy_bits=tr.prior_entropy_bits,
        final_entropy_bits=last.entropy_bits if last else None,
        total_information_gain_bits=float(tr.information_gain_bits.sum()) if last else None,
        final_secret_probability=last.secret_probability if last else None,
        final_secret_rank=last.secret_rank if last else None,
        top1=None if not last or last.secret_rank is None else last.secret_rank <= 1,
        top3=None if not last or last.secret_rank is None else last.secret_rank <= 3,
    )
    return Report(
        game_id=t.id,
        game="chameleon",
        backend=backend.name,
        backend_info=backend.info(),
        category=t.category,
        candidates=list(t.candidates),
        secret=t.secret,
        settings={"include_chameleon": options.include_chameleon},
        steps=steps,
        summary=summary,
        meta=dict(t.meta),
    )


def _outliers(t: SpyGameTranscript, backend: LikelihoodBackend) -> list[dict[str, float]] | None:
    """Per-statement outlier scores, for backends that can embed text (``embed(texts)``)."""
    embed = getattr(backend, "embed", None)
    if embed is None or not t.turns:
        return None
    return outlier_trace([turn.player for turn in t.turns], embed([x.text for x in t.turns]))


def score_spygame(
    t: SpyGameTranscript, backend: LikelihoodBackend, options: ScoreOptions = ScoreOptions()
) -> Report:
    candidates = t.candidates
    k = len(candidates)
    player_ids = [p.id for p in t.players]
    column = {pid: j for j, pid in enumerate(player_ids)}
    n_spies = len(t.spies())
    loglik = (
        backend.loglik([turn.text for turn in t.turns], candidates) if t.turns else np.zeros((0, k))
    )
    post = normalize_log(loglik) if len(t.turns) else np.zeros((0, k))
    uniform = np.full(k, 1.0 / k)
    h = entropy_bits(post)
    kl = kl_bits(post, uniform)
    prior_h = float(np.log2(k))
    evidence = np.zeros(len(player_ids))
    steps: list[Step] = []
    spy_round1: list[str] | None = None
    outlier_round1: list[str] | None = None
    outliers = _outliers(t, backend)
    first_round = t.turns[0].round if t.turns else None
    for i, turn in enumerate(t.turns):
        evidence[column[turn.player]] += loglik[i, 0] - loglik[i, 1]
        spy_p = spy_posterior(evidence, n_spies, assignment=options.spy_assignment)
        word = t.word_of(turn.player)
        wi = candidates.index(word)
        steps.append(
            Step(
                index=i,
                player=turn.player,
                role=t.player(turn.player).role,
                round=turn.round,
                text=turn.text,
                counted=True,
                posterior=_as_dict(candidates, post[i]),
                entropy_bits=float(h[i]),
                information_gain_bits=prior_h - float(h[i]),
                kl_bits=float(kl[i]),
                secret_probability=float(post[i, wi]),
                secret_rank=int(ranks_of(post[i], wi)[0]),
                speaker_word=word,
                spy_posterior=_as_dict(player_ids, spy_p),
                outlier_scores=None if outliers is None else outliers[i],
            )
        )
        next_round = t.turns[i + 1].round if i + 1 < len(t.turns) else None
        if spy_round1 is None and first_round is not None and next_round != first_round:
            top = np.argsort(-spy_p, kind="stable")[:n_spies]
            spy_round1 = [player_ids[j] for j in top]
            if outliers is not None:
                ranked = sorted(outliers[i], key=lambda p: -outliers[i][p])
                outlier_round1 = ranked[:n_spies]
    summary = Summary(
        counted_turns=len(steps),
        prior_entropy_bits=prior_h,
        final_entropy_bits=steps[-1].entropy_bits if steps else None,
        mean_entropy_bits=float(h.mean()) if len(steps) else None,
        total_information_gain_bits=float((prior_h - h).sum()) if len(steps) else None,
        spy_top_after_round1=spy_round1,
        spy_hit_after_round1=None if spy_round1 is None else bool(set(spy_round1) & t.spies()),
        outlier_top_after_round1=outlier_round1,
        outlier_hit_after_round1=(
            None if outlier_round1 is None else bool(set(outlier_round1) & t.spies())
        ),
    )
    return Report(
        game_id=t.id,
        game="spygame",
        backend=backend.name,
        backend_info=backend.info(),
        candidates=candidates,
        secret=t.words.civilian,
        settings={"spy_assignment": options.spy_assignment, "n_spies": n_spies},
        steps=steps,
        summary=summary,
        meta=dict(t.meta),
    )


def score_transcript(
    t: AnyTranscript, backend: LikelihoodBackend, options: ScoreOptions = ScoreOptions()
) -> Report:
    """Score one game with one backend."""
    if isinstance(t, ChameleonTranscript):
        return score_chameleon(t, backend, options)
    return score_spygame(t, backend, options)


def prepare(
    transcripts: Sequence[AnyTranscript],
    backend: LikelihoodBackend,
    options: ScoreOptions = ScoreOptions(),
) -> None:
    """Let a backend that has a ``prepare`` hook do its work for many games at once.

    The embedding backend embeds every clue and candidate in large batches, far faster than
    game by game; backends without the hook are left alone.
    """
    hook = getattr(backend, "prepare", None)
    if hook is None:
        return
    hook(
        (
            scored_clues(t, options),
            t.candidates,
            t.category if isinstance(t, ChameleonTranscript) else None,
        )
        for t in transcripts
    )


def score_many(
    transcripts: Iterable[AnyTranscript],
    backend: LikelihoodBackend,
    options: ScoreOptions = ScoreOptions(),
    *,
    chunk: int = 1000,
) -> Iterator[Report]:
    """Score games in order, letting the backend prepare each chunk of games in bulk."""
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
    if batch:
        prepare(batch, backend, options)
    for t in batch:
        yield score_transcript(t, backend, options)
