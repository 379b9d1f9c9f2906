"""``run_batch``: inputs -> chunks -> engine -> results directory, with checkpoints.

The parent reads records (skipping those the ledger has committed when resuming), sends
chunks of ``chunk_size`` records to the engine, appends each chunk's outputs as it comes back
and commits every ``checkpoint_games`` records or ``checkpoint_seconds`` seconds, whichever
comes first, and at the end. Memory stays flat: records are streamed, at most two chunks per
worker are in flight, and step rows are held only up to one Parquet row group.

A backend failure (count source down, query budget spent) stops the run after committing
every chunk already complete; ``--resume`` continues from there.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leakage import errors as leakage_errors
from leakage.backends.base import LikelihoodBackend
from leakage.batch._manifest import (
    backend_summary,
    check_resumable,
    new_manifest,
    now,
    read_manifest,
    write_manifest,
)
from leakage.batch._output import ResultsDir
from leakage.batch._worker import (
    ChunkResult,
    PrepareGame,
    ScorerSpec,
    fewer_collections,
    peak_rss_mb,
)
from leakage.errors import InvalidInput, LeakageError
from leakage.scoring import ReportShape, ScoreOptions
from leakage.transcripts._files import (
    DEFAULT_LIMITS,
    RawRecord,
    ReadLimits,
    count_records,
    expand_inputs,
    iter_file,
)
from leakage.transcripts._load import check_input_format


@dataclass
class BatchJob:
    """One batch job: what to read, how to score, where to write."""

    inputs: Sequence[str | Path]
    out: Path
    backend: str = "cooccurrence"
    backend_options: dict[str, Any] = field(default_factory=dict)
    input_format: str = "auto"
    options: ScoreOptions = field(default_factory=ScoreOptions)
    workers: int | None = 1
    """Scoring processes (Ray: actors); 0 scores in the calling process; ``None``: one per
    GPU when the backend's models run on CUDA, else one."""
    engine: str = "local"
    """``local`` (this machine) or ``ray``."""
    ray_address: str | None = None
    resume: bool = False
    chunk_size: int = 256
    checkpoint_games: int = 20_000
    checkpoint_seconds: float = 30.0
    difficulty: Path | None = None
    write_reports: bool = True
    device: str = "auto"
    """Where the backend's models run (``leakage._runtime``'s policy); not part of the job's
    identity: a run resumed on other hardware continues the same job (each run records its
    device in the manifest)."""
    variables: Mapping[str, str] | None = field(default=None, repr=False)
    """The values of the library's variables (the web count sources' keys, the LLM
    endpoint's ``LEAKAGE_LLM_*``) as the caller read them, given to the backend as its
    ``variables`` option (``leakage.backends.base.with_variables``); never written to the
    manifest. ``None``: the backend reads the environment (``from_env``)."""
    shape: ReportShape | None = None
    """How each report is written (``top_k``, extra settings, redaction); None: as scored."""
    prepare: PrepareGame | None = field(default=None, repr=False)
    """Applied to each game between reading and scoring; an ``InvalidInput`` it returns is
    the record's error line (a server's distractors and size limits). Picklable for the
    process and Ray engines."""
    limits: ReadLimits = field(default=DEFAULT_LIMITS, repr=False)
    """What a compressed input (``.gz``, an Inspect log) may expand to (local engine)."""
    backend_object: LikelihoodBackend | None = field(default=None, repr=False)
    """Score with this backend, built and closed by the caller (a server's loaded one),
    instead of building one from ``backend``; only in the calling process (``workers=0``,
    engine ``local``). ``backend`` still names it in the manifest."""
    backend_lock: Any = field(default=None, repr=False)
    """A context manager (a ``threading.Lock``) held while each chunk is scored with
    ``backend_object``, which other threads use too."""
    on_chunk: Callable[[ChunkResult], bool] | None = field(default=None, repr=False)
    """Called with each chunk's outputs before they are added to the results; False stops
    the run without adding them (a caller's job cancelled). Every record's outcome:
    :meth:`ChunkResult.outcomes`."""
    stop: Callable[[], bool] | None = field(default=None, repr=False)
    """Asked before each chunk is taken: True stops the run there (``stats.stopped``)."""
    record_errors: bool = False
    """What a backend error while a game is scored does (a count source down, an LLM
    endpoint failing, a bug in a backend). False (``leakage batch``): it stops the run with
    that error, every committed chunk kept, so that ``--resume`` scores the rest once the
    backend is back. True (the service's jobs): that game alone fails, with an error line
    naming the error, and the run goes on. Either way a failing bulk ``prepare`` of a chunk
    stops the run, as a backend that cannot be created does."""


@dataclass
class BatchStats:
    """What one run of a job did."""

    games: int = 0
    """Games scored by this run."""
    failed: int = 0
    """Records that failed (bad input) in this run."""
    skipped: int = 0
    """Records committed by earlier runs and skipped (``--resume``)."""
    seconds: float = 0.0
    stopped: str | None = None
    """Why the run stopped early, when it did."""
    parent_peak_rss_mb: float | None = None
    worker_peak_rss_mb: dict[int, float] = field(default_factory=dict)
    first_result_seconds: float | None = None
    """Until the first chunk came back: start-up (workers, backend) plus that chunk."""
    first_result_records: int = 0

    @property
    def games_per_s(self) -> float:
        return (self.games + self.failed) / self.seconds if self.seconds > 0 else 0.0

    @property
    def steady_games_per_s(self) -> float | None:
        """The rate after the first chunk, start-up left out (None before a second chunk)."""
        if self.first_result_seconds is None:
            return None
        rest = self.games + self.failed - self.first_result_records
        span = self.seconds - self.first_result_seconds
        return rest / span if rest > 0 and span > 0 else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "failed": self.failed,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
            "records_per_s": round(self.games_per_s, 1),
            "first_result_seconds": (
                None if self.first_result_seconds is None else round(self.first_result_seconds, 3)
            ),
            "steady_records_per_s": (
                None if self.steady_games_per_s is None else round(self.steady_games_per_s, 1)
            ),
            "stopped": self.stopped,
            "parent_peak_rss_mb": self.parent_peak_rss_mb,
            "worker_peak_rss_mb": max(self.worker_peak_rss_mb.values(), default=None),
        }


Progress = Callable[[int, int], None]
"""``on_progress(records done in this run, records this run expects)``."""


def _chunks(records: Iterable[RawRecord], size: int) -> Iterator[list[RawRecord]]:
    chunk: list[RawRecord] = []
    for r in records:
        chunk.append(r)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _pending(
    files: list[Path], results: ResultsDir, resume: bool, limits: ReadLimits = DEFAULT_LIMITS
) -> Iterator[RawRecord]:
    for f in files:
        done = results.committed_records(str(f)) if resume else set()
        for rec in iter_file(f, limits=limits):
            if rec.record not in done:
                yield rec


def _fatal(name: str, message: str) -> LeakageError:
    """Rebuild a worker's library error as its own class, for the exit code."""
    cls = getattr(leakage_errors, name, LeakageError)
    if not (isinstance(cls, type) and issubclass(cls, LeakageError)):
        cls = LeakageError
    err = cls.__new__(cls)
    err.args = (message,)
    return err


def _prepare(job: BatchJob, files: list[Path]) -> tuple[ResultsDir, dict[str, Any]]:
    manifest = new_manifest(
        arguments=[str(i) for i in job.inputs],
        files=files,
        input_format=job.input_format,
        backend=job.backend,
        backend_options=job.backend_options,
        options=job.options,
        difficulty=str(job.difficulty) if job.difficulty else None,
        engine=job.engine,
    )
    path = Path(job.out) / "manifest.json"
    old = read_manifest(path)
    if old is not None:
        if not job.resume:
            raise InvalidInput(
                f"{job.out} already holds batch results; pass --resume to continue that job "
                "or choose another --out"
            )
        check_resumable(old, manifest)
        old["inputs"] = manifest["inputs"]
        old["code_version"] = manifest["code_version"]
        manifest = old
    Path(job.out).mkdir(parents=True, exist_ok=True)
    write_manifest(path, manifest)
    return ResultsDir(job.out), manifest


def run_batch(
    job: BatchJob, *, on_progress: Progress | None = None, command: list[str] | None = None
) -> BatchStats:
    """Run (or resume) ``job``; returns this run's statistics (also in the manifest)."""
    from leakage.batch._difficulty import load_difficulty

    check_input_format(job.input_format)
    files = expand_inputs(job.inputs)
    if not files:
        raise InvalidInput("no input files: name files, directories or globs")
    difficulty = load_difficulty(job.difficulty) if job.difficulty else None
    spec = ScorerSpec(
        backend=job.backend,
        backend_options=dict(job.backend_options),
        options=job.options,
        input_format=job.input_format,
        difficulty=difficulty,
        write_reports=job.write_reports,
        variables=None if job.variables is None else dict(job.variables),
        device=job.device,
        shape=job.shape,
        prepare=job.prepare,
        record_errors=job.record_errors,
    )
    if job.backend_object is not None and (job.engine != "local" or job.workers != 0):
        raise InvalidInput("a backend object scores only in the calling process (workers=0)")
    results, manifest = _prepare(job, files)
    stats = BatchStats()
    games_before, failed_before = results.committed_count()
    stats.skipped = games_before + failed_before if job.resume else 0
    # Counting reads every JSONL file once more: only for a caller that shows progress.
    counted = sum(count_records(f) for f in files) if on_progress is not None else 0
    expected = max(0, counted - stats.skipped)
    run_record: dict[str, Any] = {
        "started_at": now(),
        "command": command or sys.argv,
        "device": job.device,
    }
    manifest["runs"].append(run_record)
    write_manifest(Path(job.out) / "manifest.json", manifest)  # a killed run shows, unfinished
    start = time.perf_counter()
    last_commit = start
    try:
        for result in _results(job, spec, files, results):
            if result.fatal is not None:
                stats.stopped = f"{result.fatal[0]}: {result.fatal[1]}"
                raise _fatal(*result.fatal)
            if job.on_chunk is not None and not job.on_chunk(result):
                stats.stopped = "stopped by the caller"
                break
            if manifest["backend_info"] is None and result.backend_info:
                manifest["backend_info"] = result.backend_info
                manifest.update(backend_summary(result.backend_info))
            results.add(result)
            stats.games += result.games
            stats.failed += result.failed
            if stats.first_result_seconds is None:
                stats.first_result_seconds = time.perf_counter() - start
                stats.first_result_records = result.games + result.failed
            if result.peak_rss_mb is not None:
                stats.worker_peak_rss_mb[result.pid] = result.peak_rss_mb
            now_s = time.perf_counter()
            if (
                results.pending_games >= job.checkpoint_games
                or now_s - last_commit >= job.checkpoint_seconds
            ):
                results.commit()
                last_commit = now_s
            if on_progress is not None:
                on_progress(stats.games + stats.failed, expected)
            if job.stop is not None and job.stop():
                stats.stopped = "stopped by the caller"
                break
    except BaseException as err:  # noted in the manifest, then re-raised
        stats.stopped = stats.stopped or f"{type(err).__name__}: {err}".rstrip(": ")
        raise
    finally:
        try:
            results.commit()
            games, failed = results.committed_count()
        finally:
            results.close()  # its files closed even when the last commit failed
        stats.seconds = time.perf_counter() - start
        stats.parent_peak_rss_mb = peak_rss_mb()
        run_record.update(finished_at=now(), **stats.as_dict())
        manifest["totals"] = {"games": games, "failed": failed}
        manifest["status"] = "stopped" if stats.stopped else "complete"
        write_manifest(Path(job.out) / "manifest.json", manifest)
    return stats


def _results(
    job: BatchJob, spec: ScorerSpec, files: list[Path], results: ResultsDir
) -> Iterator[ChunkResult]:
    if job.engine == "ray":
        from leakage.batch._ray import ray_results

        yield from ray_results(
            spec,
            files,
            ledger=results.out / "checkpoint.sqlite" if job.resume else None,
            workers=None if job.workers is None else max(1, job.workers),
            chunk_size=job.chunk_size,
            address=job.ray_address,
        )
        return
    if job.engine != "local":
        raise InvalidInput(f"unknown engine {job.engine!r}; choose local or ray")
    from leakage.batch._engines import InProcessEngine, LocalEngine, local_engine

    engine: LocalEngine
    if job.backend_object is not None:
        engine = InProcessEngine(spec, job.backend_object, job.backend_lock)
    else:
        engine = local_engine(spec, job.workers)
    pending = _pending(files, results, job.resume, job.limits)
    # A caller's backend lives in a caller's process (a server): its collector is left alone.
    tuned = fewer_collections() if job.backend_object is None else nullcontext()
    try:
        with tuned:
            yield from engine.run(_chunks(pending, job.chunk_size))
    finally:
        engine.close()
