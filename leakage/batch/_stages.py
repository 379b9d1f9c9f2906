"""The model stage on its own: what the Ray engine runs on its (GPU) actors, between parsing
and posteriors on CPU tasks.

:func:`answer` asks the backend every question scoring a chunk's games will ask
(:func:`leakage.scoring.backend_requests`: the likelihood rows, and a SpyGame's statement
vectors where the backend embeds), after its bulk ``prepare``, and keeps the answers as plain
arrays (:class:`Answers`). :class:`Replay` is a backend that gives those answers back:
:meth:`Scorer.score_inputs <leakage.batch._worker.Scorer.score_inputs>` over it computes
the posteriors and the reports in another process, with the same numbers as if the backend
had been asked there. A game the backend rejects (``InvalidInput``) is rejected again, with
the same error record; any other backend error stops the run (``fatal``), as elsewhere,
unless the run keeps such errors as the failing game's own (``BatchJob.record_errors``):
then it is kept as that question's answer, and raised again where the game is scored.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage import errors as leakage_errors
from leakage.backends.base import LikelihoodBackend, SupportsEmbed
from leakage.errors import InvalidInput, InvalidTranscript, LeakageError
from leakage.scoring import GameInput, backend_requests, prepare_inputs

Key = tuple[tuple[str, ...], tuple[str, ...], str | None]
"""A likelihood question: (clues, candidates, category)."""


@dataclass
class Refusal:
    """A backend's ``InvalidInput`` for one question (or, with ``record_errors``, any of its
    library errors), as plain values (rebuilt by :meth:`error`, so that its error record is
    the original's)."""

    kind: str
    message: str
    problems: list[tuple[str, str]] | None = None
    source: str | None = None
    record: str | int | None = None

    @classmethod
    def of(cls, err: LeakageError) -> Refusal:
        if isinstance(err, InvalidTranscript):
            return cls(type(err).__name__, str(err), list(err.problems), err.source, err.record)
        return cls(type(err).__name__, str(err))

    def error(self) -> LeakageError:
        if self.problems is not None:
            return InvalidTranscript(self.problems, source=self.source, record=self.record)
        cls = getattr(leakage_errors, self.kind, LeakageError)
        if not (isinstance(cls, type) and issubclass(cls, LeakageError)):
            cls = LeakageError
        err = cls.__new__(cls)
        err.args = (self.message,)
        return err


@dataclass
class Answers:
    """The backend's answers for one chunk (picklable: arrays and strings)."""

    backend: str = ""
    info: dict[str, Any] = field(default_factory=dict)
    rows: dict[Key, NDArray[np.float64] | Refusal] = field(default_factory=dict)
    vectors: dict[tuple[str, ...], NDArray[np.float32]] | None = None
    """``embed`` answers by texts; None when the backend does not embed."""
    fatal: tuple[str, str] | None = None
    pid: int = 0
    peak_rss_mb: float | None = None


def answer(
    backend: LikelihoodBackend, inputs: Sequence[GameInput], *, record_errors: bool = False
) -> Answers:
    """Every question scoring ``inputs`` asks ``backend``, asked now (after its bulk
    ``prepare``), the answers kept; with ``record_errors`` a library error answering a
    question is kept as its answer (the game that asks it fails alone)."""
    from leakage.batch._worker import peak_rss_mb

    embeds = isinstance(backend, SupportsEmbed)
    out = Answers(backend.name, backend.info(), vectors={} if embeds else None, pid=os.getpid())
    try:
        if inputs:
            prepare_inputs(inputs, backend)
        for inp in inputs:
            for req in backend_requests(inp):
                key = (req.clues, req.candidates, req.category)
                if key in out.rows:
                    continue
                try:
                    rows = backend.loglik(
                        list(req.clues), list(req.candidates), category=req.category
                    )
                    out.rows[key] = np.asarray(rows, dtype=np.float64)
                except InvalidInput as err:
                    out.rows[key] = Refusal.of(err)
                    continue
                except LeakageError as err:
                    if not record_errors:
                        raise
                    out.rows[key] = Refusal.of(err)
                    continue
                if req.embed and out.vectors is not None and req.clues not in out.vectors:
                    out.vectors[req.clues] = backend.embed(list(req.clues))  # type: ignore[attr-defined]
    except LeakageError as err:
        return Answers(fatal=(type(err).__name__, str(err)), pid=os.getpid())
    out.peak_rss_mb = peak_rss_mb()
    return out


class Replay:
    """A backend that gives back a chunk's :class:`Answers`: same name, same ``info``."""

    def __init__(self, answers: Answers) -> None:
        self.answers = answers
        self.name = answers.backend

    def info(self) -> dict[str, Any]:
        return self.answers.info

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        found = self.answers.rows[(tuple(clues), tuple(candidates), category)]
        if isinstance(found, Refusal):
            raise found.error()
        return found


class ReplayEmbed(Replay):
    """:class:`Replay` of a backend that embeds (``SupportsEmbed``)."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        assert self.answers.vectors is not None
        return self.answers.vectors[tuple(texts)]


def replay(answers: Answers) -> Replay:
    """The backend that gives ``answers`` back (one that embeds when the original did)."""
    return ReplayEmbed(answers) if answers.vectors is not None else Replay(answers)
