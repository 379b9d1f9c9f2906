"""Scoring one chunk of raw records: parse, convert, score, and shape the outputs.

The same code runs in the parent (``--workers 0``), in each process of the local pool and in
each Ray actor. A :class:`Scorer` creates its backend once; a chunk comes back as a
:class:`ChunkResult` holding an Arrow record batch of step rows, the report lines and the
error lines, ready for the parent to append. A backend failure (count source down, budget
spent) is returned as ``fatal`` rather than raised: library errors do not all survive
pickling, and the parent stops the run cleanly with what was committed.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from leakage.batch._inputs import RawRecord, to_transcript
from leakage.batch._rows import StepColumns
from leakage.errors import InvalidInput, InvalidTranscript, LeakageError
from leakage.scoring import ScoreOptions, prepare, score_transcript
from leakage.transcripts import AnyTranscript


def peak_rss_mb() -> float | None:
    """This process's peak resident memory (Linux/macOS), in MB."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20 if os.uname().sysname == "Darwin" else 1 << 10)


@dataclass
class ChunkResult:
    """What scoring one chunk produced; the parent writes it and commits ``keys``."""

    keys: list[tuple[str, int]]
    """Every record of the chunk, scored or failed: ``(source, record)``."""
    steps: Any = None
    """A ``pyarrow.RecordBatch`` of step rows (None when no game was scored)."""
    reports: str = ""
    """One ``leakage.report/1`` JSON object per line, per scored game."""
    errors: str = ""
    """One JSON object per line, per failed record."""
    games: int = 0
    failed: int = 0
    fatal: tuple[str, str] | None = None
    """``(error class name, message)`` when the backend failed; nothing else is kept."""
    backend_info: dict[str, Any] = field(default_factory=dict)
    pid: int = 0
    peak_rss_mb: float | None = None


def error_line(source: str, record: int, label: str, err: InvalidInput) -> str:
    doc: dict[str, Any] = {
        "source": source,
        "record": record,
        "label": label,
        "type": type(err).__name__,
        "error": str(err),
    }
    if isinstance(err, InvalidTranscript):
        doc["problems"] = [list(p) for p in err.problems]
    return json.dumps(doc, ensure_ascii=False)


@dataclass
class ScorerSpec:
    """Everything a worker needs to build its scorer (picklable)."""

    backend: str
    backend_options: dict[str, Any]
    options: ScoreOptions = field(default_factory=ScoreOptions)
    input_format: str = "auto"
    difficulty: Mapping[str, str] | None = None
    write_reports: bool = True


class Scorer:
    """One backend, created once, scoring chunk after chunk."""

    def __init__(self, spec: ScorerSpec) -> None:
        from leakage.backends import create_backend

        self.spec = spec
        self.backend = create_backend(spec.backend, **spec.backend_options)
        self._info: dict[str, Any] | None = None

    def info(self) -> dict[str, Any]:
        if self._info is None:
            self._info = self.backend.info()
        return self._info

    def score(self, chunk: Sequence[RawRecord]) -> ChunkResult:
        spec = self.spec
        result = ChunkResult(keys=[(r.source, r.record) for r in chunk], pid=os.getpid())
        errors: list[str] = []
        good: list[tuple[RawRecord, AnyTranscript]] = []
        for raw in chunk:
            item = to_transcript(raw, spec.input_format)
            if isinstance(item, InvalidInput):
                errors.append(error_line(raw.source, raw.record, raw.label, item))
            else:
                good.append((raw, item))
        cols = StepColumns()
        reports: list[str] = []
        try:
            if good:
                prepare([t for _, t in good], self.backend, spec.options)
            for raw, t in good:
                try:
                    report = score_transcript(t, self.backend, spec.options)
                except InvalidInput as err:
                    errors.append(error_line(raw.source, raw.record, raw.label, err))
                    continue
                cols.add(raw.source, raw.record, t, report, spec.difficulty)
                if spec.write_reports:
                    reports.append(report.model_dump_json())
                result.games += 1
        except LeakageError as err:
            return ChunkResult(keys=[], fatal=(type(err).__name__, str(err)), pid=os.getpid())
        if cols.rows:
            result.steps = cols.to_batch()
        result.reports = "".join(f"{r}\n" for r in reports)
        result.errors = "".join(f"{e}\n" for e in errors)
        result.failed = len(errors)
        result.backend_info = self.info()
        result.peak_rss_mb = peak_rss_mb()
        return result


class SafeScorer:
    """A :class:`Scorer`, or the reason it could not be built, reported with each chunk.

    A backend that cannot start (missing extra, unknown name) must stop the run with its
    own error; raised in a pool's initializer or an actor's constructor it would only break
    the pool, so it is returned as ``fatal`` instead.
    """

    def __init__(self, spec: ScorerSpec) -> None:
        self.scorer: Scorer | None = None
        self.failed: tuple[str, str] = ("LeakageError", "no scorer")
        try:
            self.scorer = Scorer(spec)
        except LeakageError as err:
            self.failed = (type(err).__name__, str(err))

    def score(self, chunk: Sequence[RawRecord]) -> ChunkResult:
        if self.scorer is None:
            return ChunkResult(keys=[], fatal=self.failed, pid=os.getpid())
        return self.scorer.score(chunk)


# The scorer of a pool process, created once by ``init_process``.
_SCORER: SafeScorer | None = None


def tune_gc() -> None:
    """Fewer cyclic garbage collections in a scoring process (not in a caller's process).

    Scoring allocates many short-lived objects (pydantic models, lists) and few cycles;
    with the default thresholds the collector ran often enough over the backend's caches
    to cost about 15% of a co-occurrence game (measured in docs/benchmarks.md). What is
    alive once the backend is built is frozen out of the collections altogether.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


def init_process(spec: ScorerSpec) -> None:
    global _SCORER
    from leakage._runtime import prepare_model_runtime

    prepare_model_runtime()
    _SCORER = SafeScorer(spec)
    tune_gc()


def score_in_process(chunk: Sequence[RawRecord]) -> ChunkResult:
    if _SCORER is None:  # pragma: no cover - the pool runs init_process first
        raise RuntimeError("init_process was not run in this worker")
    return _SCORER.score(chunk)
