"""Where chunks are scored on one machine: in the calling process, or in a process pool.

The pool uses the ``spawn`` start method: torch (embedding, judge) and ``fork`` do not mix,
and a spawned worker sees the environment (``LEAKAGE_HOME``) as it is when the run starts.
Each worker builds its backend once (``init_process``). With one worker the parent parses
each chunk and sends the worker plain values (game inputs, report contexts); the worker
scores them and sends back the step rows' numbers and the report lines (see ``_worker``),
so that the parent's core reads, validates, shapes the rows and writes while the worker's
scores. With more workers each worker parses its chunks and shapes its rows too, and the
parent only reads and writes. The parent keeps at most two chunks per worker in flight, so
neither the queue nor the results grow with the number of games, and takes results in
submission order, so that a file's records are committed in order.
Workers share the backends' on-disk caches (count cache, embedding cache, LLM response cache
in ``$LEAKAGE_HOME``): SQLite in WAL mode with a busy timeout, safe for concurrent writers.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import AbstractContextManager
from functools import partial
from typing import Any, Protocol

from leakage.backends.base import LikelihoodBackend
from leakage.batch._worker import (
    Assembler,
    ChunkResult,
    SafeScorer,
    ScorerSpec,
    init_process,
    score_chunk_in_process,
    score_in_process,
    visible_gpus,
    worker_devices,
)
from leakage.errors import LeakageError
from leakage.transcripts._files import RawRecord


class LocalEngine(Protocol):
    name: str

    def run(self, chunks: Iterable[Sequence[RawRecord]]) -> Iterator[ChunkResult]: ...

    def close(self) -> None: ...


class InProcessEngine:
    """Scores in the calling process (``--workers 0``): no start-up cost, no parallelism."""

    name = "local"

    def __init__(
        self,
        spec: ScorerSpec,
        backend: LikelihoodBackend | None = None,
        lock: AbstractContextManager[Any] | None = None,
    ) -> None:
        """``backend``: score with this one (built by the caller, who closes it) rather than
        one built from ``spec``; ``lock`` held while each chunk is scored."""
        self._scorer = SafeScorer(spec, backend, lock)

    def run(self, chunks: Iterable[Sequence[RawRecord]]) -> Iterator[ChunkResult]:
        for chunk in chunks:
            yield self._scorer.score(chunk)

    def close(self) -> None:
        self._scorer.close()


class ProcessEngine:
    """A pool of ``workers`` spawned processes, each with its own backend; ``devices``: each
    worker's device (``worker_devices``: one model per GPU), else ``spec.device`` for all."""

    name = "local"

    def __init__(self, spec: ScorerSpec, workers: int, devices: Sequence[str] = ()) -> None:
        self.workers = workers
        self.devices = list(devices)
        self._assembler = Assembler(spec)
        context = multiprocessing.get_context("spawn")
        queue = None
        if self.devices:
            queue = context.Queue()
            for device in self.devices:
                queue.put(device)
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=init_process,
            initargs=(spec, queue),
        )

    def run(self, chunks: Iterable[Sequence[RawRecord]]) -> Iterator[ChunkResult]:
        try:
            if self.workers == 1:
                yield from self._split(chunks)
            else:
                yield from self._whole(chunks)
        except BrokenProcessPool:
            raise LeakageError(
                "a worker process died (killed, or out of memory); what was committed is "
                "kept: rerun with --resume, perhaps with fewer --workers or a smaller "
                "--chunk-size"
            ) from None

    def _split(self, chunks: Iterable[Sequence[RawRecord]]) -> Iterator[ChunkResult]:
        """The parent parses, shapes rows and writes; the worker scores and shapes reports."""
        parse, assemble = self._assembler.parse, self._assembler.assemble
        tasks = (
            (self._pool.submit(score_in_process, p.inputs, p.report_contexts), partial(assemble, p))
            for p in map(parse, chunks)
        )
        return _in_order(tasks, depth=2)

    def _whole(self, chunks: Iterable[Sequence[RawRecord]]) -> Iterator[ChunkResult]:
        """Each worker does all of a chunk; the parent reads and writes."""
        tasks = ((self._pool.submit(score_chunk_in_process, c), _same) for c in chunks)
        return _in_order(tasks, depth=2 * self.workers)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def _same(result: ChunkResult) -> ChunkResult:
    return result


def _in_order(
    tasks: Iterable[tuple[Future[Any], Callable[[Any], ChunkResult]]], *, depth: int
) -> Iterator[ChunkResult]:
    """Each task's finished result, in submission order, with at most ``depth`` tasks in
    flight (``tasks`` is drawn lazily, so drawing one submits it)."""
    window: deque[tuple[Future[Any], Callable[[Any], ChunkResult]]] = deque()
    for task in tasks:
        window.append(task)
        if len(window) >= depth:
            future, finish = window.popleft()
            yield finish(future.result())
    while window:
        future, finish = window.popleft()
        yield finish(future.result())


def local_engine(spec: ScorerSpec, workers: int | None) -> LocalEngine:
    """``workers`` 0: in this process; ``None``: one worker per GPU when the backend's models
    run on CUDA (``visible_gpus``), else one; each worker on a GPU of its own
    (``worker_devices``)."""
    gpus = visible_gpus(spec) if workers != 0 else 0
    if workers is None:
        workers = max(1, gpus)
    if workers <= 0:
        return InProcessEngine(spec)
    devices = worker_devices(spec, workers, gpus) if gpus else []
    return ProcessEngine(spec, workers, devices)
