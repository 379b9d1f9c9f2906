"""Scoring chunks of raw records: parse, score, and shape the outputs.

A chunk goes through three steps. :meth:`Assembler.parse` turns raw records into
transcripts, and takes from each the plain values scoring needs: its
:class:`~leakage.scoring.GameInput` and its :class:`~leakage.batch._rows.RowContext` (ids,
roles, rounds, models, meta). :meth:`Scorer.score_inputs` scores those values (the only step
that needs the backend): it gathers the numbers of the step rows as flat arrays and shapes
the report lines, with no transcript. :meth:`Assembler.assemble` puts the step rows
together from the row contexts and those arrays, adds the error lines and makes the
:class:`ChunkResult` the parent appends.

``--workers 0``, each Ray actor and each worker of a pool of two or more run all three in
one process (:meth:`Scorer.score`). A pool of one worker splits them: the parent parses,
assembles and writes while the worker scores, so that both cores work about equally;
between the two only plain values travel (game inputs and report contexts one way, a few
numpy arrays and the report bytes back).

A backend failure (count source down, budget spent) is returned as ``fatal`` rather than
raised: library errors do not all survive pickling, and the parent stops the run cleanly
with what was committed.
"""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from multiprocessing.util import Finalize
from typing import Any, NamedTuple

from leakage.backends.base import LikelihoodBackend, SupportsClose
from leakage.batch._rows import RowContext, StepColumns, StepNumbers, row_context
from leakage.errors import ErrorRecord, InvalidInput, LeakageError
from leakage.scoring import (
    GameInput,
    ReportContext,
    ReportShape,
    ScoreOptions,
    game_input,
    prepare_inputs,
    report_json,
    score_inputs,
    shape_report,
)
from leakage.transcripts import AnyTranscript
from leakage.transcripts._files import RawRecord, to_transcript

log = logging.getLogger("leakage.batch")

PrepareGame = Callable[[AnyTranscript], "AnyTranscript | InvalidInput"]
"""A caller's step between reading a record and scoring it (the service: its distractors and
size limits): the game to score, or the :class:`~leakage.errors.InvalidInput` that becomes
the record's error line. Picklable when the engine runs in other processes (a module-level
function, or a ``functools.partial`` of one)."""


def peak_rss_mb() -> float | None:
    """This process's peak resident memory, in MB.

    On Linux the high-water mark of the process's own memory (``VmHWM``): ``ru_maxrss``
    there also keeps the peak of the process it was forked from, before ``exec``, so a
    small process started by a large one would report the large one's peak. Elsewhere
    ``ru_maxrss`` (macOS, BSD); None on Windows.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
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
    reports: bytes = b""
    """One ``leakage.report/1`` JSON object per line, per scored game (UTF-8)."""
    errors: str = ""
    """One JSON object per line, per failed record."""
    games: int = 0
    failed: int = 0
    fatal: tuple[str, str] | None = None
    """``(error class name, message)`` when the backend failed; nothing else is kept."""
    backend_info: dict[str, Any] = field(default_factory=dict)
    pid: int = 0
    peak_rss_mb: float | None = None

    def outcomes(self) -> Iterator[RecordOutcome]:
        """Every record of the chunk, in order: its report line, or its error line (a report
        line per scored game is written unless ``write_reports`` is off: then ``body`` is
        empty for a scored game)."""
        import json

        failed: dict[tuple[str, int], str] = {}
        for text in self.errors.splitlines():
            doc = json.loads(text)
            failed[(doc["source"], doc["record"])] = text
        reports = iter(self.reports.splitlines())
        for source, record in self.keys:
            error = failed.get((source, record))
            if error is not None:
                yield RecordOutcome(source, record, False, error)
            else:
                yield RecordOutcome(source, record, True, next(reports, b"").decode())


class RecordOutcome(NamedTuple):
    """One record of a chunk: where it is, whether it was scored, and its report or error
    line (JSON text)."""

    source: str
    record: int
    ok: bool
    body: str


def error_line(source: str, record: int, label: int | str, err: InvalidInput | ErrorRecord) -> str:
    """The ``errors.jsonl`` line of a record that is not a game, or that the backend stage
    rejected (an :class:`~leakage.errors.ErrorRecord`, located here)."""
    found = err if isinstance(err, ErrorRecord) else ErrorRecord.of(err)
    return replace(found, source=source, record=record, label=str(label)).to_json()


@dataclass
class ScoredChunk:
    """What scoring a chunk's parsed games produced, in their order: the numbers of their
    step rows, their report lines, and the games the backend rejected (by position among
    the chunk's parsed games)."""

    backend: str = ""
    numbers: dict[str, Any] | None = None
    """:meth:`StepNumbers.arrays` of the games scored (None when none was)."""
    reports: bytes = b""
    rejected: dict[int, ErrorRecord] = field(default_factory=dict)
    """The games the backend rejected, by position, their records not yet located."""
    backend_info: dict[str, Any] = field(default_factory=dict)
    fatal: tuple[str, str] | None = None
    pid: int = 0
    peak_rss_mb: float | None = None


@dataclass
class Parsed:
    """One chunk, parsed: the plain values of the records that are games (the transcripts
    themselves are not kept), and the error lines of those that are not."""

    keys: list[tuple[str, int]]
    good: list[RawRecord]
    inputs: list[GameInput]
    contexts: list[RowContext]
    errors: list[str]

    @property
    def report_contexts(self) -> list[ReportContext]:
        """What scoring needs of each context besides the game input (rows need the rest)."""
        return [c.report for c in self.contexts]


@dataclass
class ScorerSpec:
    """Everything a worker needs to build its scorer (picklable)."""

    backend: str
    backend_options: dict[str, Any]
    options: ScoreOptions = field(default_factory=ScoreOptions)
    input_format: str = "auto"
    difficulty: Mapping[str, str] | None = None
    write_reports: bool = True
    variables: dict[str, str] | None = field(default=None, repr=False)
    """The backend's ``variables`` option (``BatchJob.variables``), outside
    ``backend_options`` so that it is never written to the manifest."""
    device: str = "auto"
    """Where the backend's models run (``BatchJob.device``; each worker of a pool on GPUs
    gets its own, ``worker_devices``). Given to the backend as its ``device`` option unless
    ``auto`` (every backend's default), outside ``backend_options``: a job resumed on other
    hardware is the same job."""
    shape: ReportShape | None = None
    """How each report is written (``leakage.scoring.ReportShape``: the service's ``top_k``,
    its distractors recorded, server paths redacted); None: as scored."""
    prepare: PrepareGame | None = field(default=None, repr=False)
    """Applied to each record's game before it is scored (:data:`PrepareGame`)."""
    record_errors: bool = False
    """``BatchJob.record_errors``: a backend error while scoring a game fails that game
    alone (its error line) instead of stopping the run."""


def loads_models(backend: str) -> bool:
    """Whether the backend takes a ``device`` option (its factory names it, or passes options
    on to members that may: the ensemble)."""
    from leakage.backends.base import BACKENDS, accepted_options

    if backend not in BACKENDS:
        return False
    named, any_name = accepted_options(BACKENDS[backend])
    return "device" in named or any_name


def visible_gpus(spec: ScorerSpec) -> int:
    """CUDA devices this machine's workers would use: those torch sees when the device is
    ``auto`` or ``cuda`` and the backend loads models, else 0 (torch is imported only then)."""
    if spec.device not in ("auto", "cuda") or not loads_models(spec.backend):
        return 0
    from leakage._runtime import cuda_may_be_present

    if not cuda_may_be_present():
        return 0  # no torch, or no NVIDIA device node: no need to import torch here
    import torch

    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def worker_devices(spec: ScorerSpec, workers: int, gpus: int) -> list[str]:
    """Each pool worker's device: with ``gpus`` CUDA devices and the device ``auto`` or
    ``cuda``, one model per GPU (``cuda:0``, ``cuda:1``, ...; more workers than GPUs share
    them round-robin), else ``spec.device`` for every worker."""
    if gpus > 0 and spec.device in ("auto", "cuda"):
        return [f"cuda:{i % gpus}" for i in range(workers)]
    return [spec.device] * workers


class Assembler:
    """The steps of a chunk that need no backend: parsing records and shaping the outputs."""

    def __init__(self, spec: ScorerSpec) -> None:
        self.spec = spec

    def parse(self, chunk: Sequence[RawRecord]) -> Parsed:
        spec = self.spec
        parsed = Parsed([(r.source, r.record) for r in chunk], [], [], [], [])
        for raw in chunk:
            item = to_transcript(raw, spec.input_format)
            if spec.prepare is not None and not isinstance(item, InvalidInput):
                item = spec.prepare(item)
            if isinstance(item, InvalidInput):
                parsed.errors.append(error_line(raw.source, raw.record, raw.label, item))
                continue
            try:
                inp = game_input(item, spec.options)
            except InvalidInput as err:  # e.g. a seat that is not this game's
                parsed.errors.append(error_line(raw.source, raw.record, raw.label, err))
                continue
            parsed.good.append(raw)
            parsed.inputs.append(inp)
            parsed.contexts.append(
                row_context(raw.source, raw.record, item, inp.counted, spec.difficulty)
            )
        return parsed

    def assemble(self, parsed: Parsed, scored: ScoredChunk) -> ChunkResult:
        if scored.fatal is not None:
            return ChunkResult(keys=[], fatal=scored.fatal, pid=scored.pid)
        errors = list(parsed.errors)
        for i, err in scored.rejected.items():
            raw = parsed.good[i]
            errors.append(error_line(raw.source, raw.record, raw.label, err))
        cols = StepColumns()
        for i, (inp, ctx) in enumerate(zip(parsed.inputs, parsed.contexts, strict=True)):
            if i not in scored.rejected:
                cols.add(ctx, inp, scored.backend)
        return ChunkResult(
            keys=parsed.keys,
            steps=cols.to_batch(scored.numbers) if cols.rows and scored.numbers else None,
            reports=scored.reports,
            errors="".join(f"{e}\n" for e in errors),
            games=len(parsed.good) - len(scored.rejected),
            failed=len(errors),
            backend_info=scored.backend_info,
            pid=scored.pid,
            peak_rss_mb=scored.peak_rss_mb,
        )


class Scorer:
    """One backend, created once, scoring chunk after chunk; :meth:`close` closes it."""

    def __init__(
        self,
        spec: ScorerSpec,
        backend: LikelihoodBackend | None = None,
        lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        """``backend`` is built from the spec unless one is given (then its caller closes
        it); ``lock``, held while a chunk is scored, guards a backend that other threads use
        too (a server's)."""
        from leakage.backends import create_backend

        self.spec = spec
        self._lock: AbstractContextManager[Any] = lock if lock is not None else nullcontext()
        self._owns = backend is None
        if backend is None:
            from leakage.backends.base import with_variables

            options = dict(spec.backend_options)
            if spec.variables is not None:
                options = with_variables(spec.backend, options, spec.variables)
            if spec.device != "auto":
                if "device" in options:
                    raise InvalidInput("option 'device' is given twice: by --device and by -O")
                options["device"] = spec.device
            backend = create_backend(spec.backend, **options)
        self.backend = backend
        self.assembler = Assembler(spec)
        self._info: dict[str, Any] | None = None

    def close(self) -> None:
        """Close the backend this scorer built (its index, caches; idempotent)."""
        if self._owns and isinstance(self.backend, SupportsClose):
            self.backend.close()

    def info(self) -> dict[str, Any]:
        if self._info is None:
            self._info = self.backend.info()
        return self._info

    def score_inputs(
        self, inputs: Sequence[GameInput], contexts: Sequence[ReportContext]
    ) -> ScoredChunk:
        """Score a chunk's parsed games: the backend stage, then the numbers of their step
        rows and their report lines, from the plain values the parent sends (no transcript
        needed)."""
        with self._lock:
            try:
                if inputs:
                    prepare_inputs(inputs, self.backend)
                found = self._score(inputs)
            except LeakageError as err:
                return ScoredChunk(fatal=(type(err).__name__, str(err)), pid=os.getpid())
            info = self.info()
        spec, name = self.spec, self.backend.name
        shape = spec.shape or ReportShape()
        scored = ScoredChunk(backend=name, backend_info=info, pid=os.getpid())
        step_numbers = StepNumbers()
        reports: list[bytes] = []
        for i, (inp, ctx, trace) in enumerate(zip(inputs, contexts, found, strict=True)):
            if isinstance(trace, ErrorRecord):
                scored.rejected[i] = trace
                continue
            if isinstance(trace, InvalidInput):
                scored.rejected[i] = ErrorRecord.of(trace)
                continue
            step_numbers.add(trace)
            if spec.write_reports:
                data = shape_report(inp, ctx, trace, name, info, spec.options, shape)
                reports.append(report_json(data) + b"\n")
        scored.numbers = step_numbers.arrays() if step_numbers else None
        scored.reports = b"".join(reports)
        scored.peak_rss_mb = peak_rss_mb()
        return scored

    def _score(self, inputs: Sequence[GameInput]) -> list[Any]:
        """:func:`~leakage.scoring.score_inputs` of a prepared chunk. A backend error stops
        the run (raised), unless ``record_errors``: then the chunk is scored again game by
        game, and a game the backend fails on becomes its own :class:`ErrorRecord` (its
        error's type and message; a bug's ``internal_error``, logged) while the others are
        scored (the service's jobs: one failing game, or a source that fails now and then,
        must not stop a job)."""
        try:
            return list(score_inputs(inputs, self.backend))
        except Exception as err:
            if not self.spec.record_errors or len(inputs) == 0:
                raise
            if len(inputs) == 1:
                return [_failed(err)]
        out: list[Any] = []
        for inp in inputs:
            try:
                out.extend(score_inputs([inp], self.backend))
            except Exception as err:  # every failure is that game's error line
                out.append(_failed(err))
        return out

    def score(self, chunk: Sequence[RawRecord]) -> ChunkResult:
        """All three steps in this process."""
        parsed = self.assembler.parse(chunk)
        scored = self.score_inputs(parsed.inputs, parsed.report_contexts)
        return self.assembler.assemble(parsed, scored)


def _failed(err: Exception) -> ErrorRecord:
    """The error record of a game the backend failed on (``Scorer._score``)."""
    if isinstance(err, LeakageError):
        return ErrorRecord.of(err)
    log.error("a game failed to score", exc_info=err)
    return ErrorRecord(None, "internal_error", "internal error scoring this game; see the log")


class SafeScorer:
    """A :class:`Scorer`, or the reason it could not be built, reported with each chunk.

    A backend that cannot start (missing extra, unknown name) must stop the run with its
    own error; raised in a pool's initializer or an actor's constructor it would only break
    the pool, so it is returned as ``fatal`` instead.
    """

    def __init__(
        self,
        spec: ScorerSpec,
        backend: LikelihoodBackend | None = None,
        lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        self.scorer: Scorer | None = None
        self.failed: tuple[str, str] = ("LeakageError", "no scorer")
        try:
            self.scorer = Scorer(spec, backend, lock)
        except LeakageError as err:
            self.failed = (type(err).__name__, str(err))

    def score(self, chunk: Sequence[RawRecord]) -> ChunkResult:
        if self.scorer is None:
            return ChunkResult(keys=[], fatal=self.failed, pid=os.getpid())
        return self.scorer.score(chunk)

    def close(self) -> None:
        if self.scorer is not None:
            self.scorer.close()

    def score_inputs(
        self, inputs: Sequence[GameInput], contexts: Sequence[ReportContext]
    ) -> ScoredChunk:
        if self.scorer is None:
            return ScoredChunk(fatal=self.failed, pid=os.getpid())
        return self.scorer.score_inputs(inputs, contexts)


# The scorer of a pool process, created once by ``init_process``.
_SCORER: SafeScorer | None = None


def tune_gc() -> None:
    """Fewer cyclic garbage collections in a scoring process (see :func:`fewer_collections`
    for a caller's process).

    Scoring allocates many short-lived objects (pydantic models, lists) and few cycles;
    with the default thresholds the collector ran often enough over the backend's caches
    to cost about 15% of a co-occurrence game (measured in docs/benchmarks.md). What is
    alive once the backend is built is frozen out of the collections altogether.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """:func:`tune_gc` for the duration of a run in a caller's process, undone after it."""
    threshold = gc.get_threshold()
    tune_gc()
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def init_process(spec: ScorerSpec, devices: Any = None) -> None:
    """A pool worker's start: its scorer, built once. ``devices``: a queue of the pool's
    worker devices (``worker_devices``), one taken by each worker as it starts."""
    global _SCORER
    from leakage._runtime import prepare_model_runtime

    prepare_model_runtime()
    if devices is not None:
        spec = replace(spec, device=devices.get())
    _SCORER = SafeScorer(spec)
    # closed when the pool stops this process (multiprocessing runs its finalizers then;
    # a process that is killed releases its files with it)
    Finalize(None, _SCORER.close, exitpriority=10)
    tune_gc()


def score_chunk_in_process(chunk: Sequence[RawRecord]) -> ChunkResult:
    if _SCORER is None:  # pragma: no cover - the pool runs init_process first
        raise RuntimeError("init_process was not run in this worker")
    return _SCORER.score(chunk)


def score_in_process(inputs: Sequence[GameInput], contexts: Sequence[ReportContext]) -> ScoredChunk:
    if _SCORER is None:  # pragma: no cover - the pool runs init_process first
        raise RuntimeError("init_process was not run in this worker")
    return _SCORER.score_inputs(inputs, contexts)
