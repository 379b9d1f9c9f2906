"""What the app holds for its lifetime: the backends, the scoring threads and the slow pool,
the report cache.

Thread safety: a backend is created once and shared, and every call into it holds that
backend's lock. The co-occurrence backend keeps unlocked dict caches (rows, posting lists)
and is GIL-bound anyway, so parallel threads would only race; the embedding backend runs a
torch model that already uses every core for one batch. Different backends run in parallel.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, TypeVar

from leakage.backends import (
    LikelihoodBackend,
    SupportsCacheStats,
    SupportsClose,
    backend_names,
    create_backend,
)
from leakage.errors import BackendUnavailable, LeakageError, UnknownBackend
from leakage.scoring import (
    GameInput,
    ReportData,
    ReportShape,
    ScoreOptions,
    game_input,
    prepare_inputs,
    report_json,
    score_report_data,
)
from leakage.transcripts import AnyTranscript
from leakage_service.errors import (
    BackendLoading,
    QueueFull,
    ScoreTimeout,
    SlowQueueFull,
    error_line,
)
from leakage_service.inputs import ScoreParams, check_size
from leakage_service.settings import Settings
from leakage_service.telemetry import Metrics

log = logging.getLogger("leakage.service")
T = TypeVar("T")


@dataclass
class BackendSlot:
    """One backend and the lock every call into it holds."""

    name: str
    backend: LikelihoodBackend
    lock: threading.Lock = field(default_factory=threading.Lock)
    loaded_seconds: float = 0.0


class Backends:
    """The backends a request may use: preloaded at start-up or created on first use."""

    def __init__(self, settings: Settings, metrics: Metrics) -> None:
        self.settings = settings
        self.metrics = metrics
        self.slots: dict[str, BackendSlot] = {}
        self.failed: dict[str, str] = {}
        """Backends that could not be created here, with the reason (kept until restart)."""
        self._create_lock = threading.Lock()
        self._loading: dict[str, Future[BackendSlot]] = {}
        self._load_started: dict[str, float] = {}
        self._times_lock = threading.Lock()
        self._closed = False

    @property
    def allowed(self) -> list[str]:
        names = backend_names()
        return [n for n in names if self.settings.backends is None or n in self.settings.backends]

    def options(self, name: str) -> dict[str, Any]:
        """Creation options: every file a backend keeps is under the service's home
        (``Settings.paths``; the index is ``Settings.index_path``), never where the library's
        defaults (``LEAKAGE_HOME``) would put it. Co-occurrence: the index and the web count
        sources' cache; embedding: its cache; judge and listener: the endpoint's response
        cache and the converted GGUF models. Co-occurrence, judge and listener also get the
        web count sources' keys and the LLM endpoint's settings (``variables``:
        ``Settings.variables``), so the library reads no environment. The ensemble gives each
        member its own as a per-member option (``route_options``), which is ignored for a
        backend that is not a member. Embedding, judge and listener get the device
        (``Settings.device``) unless it is ``auto``, their default."""
        paths = self.settings.paths
        variables = self.settings.variables()
        device = {} if self.settings.device == "auto" else {"device": self.settings.device}
        llm = {
            "cache_path": str(paths.llm_responses),
            "models_dir": str(paths.models),
            "variables": variables,
            **device,
        }
        own: dict[str, dict[str, Any]] = {
            "cooccurrence": {
                "index": self.settings.index_path,
                "cache_path": str(paths.web_counts),
                "variables": variables,
            },
            "embedding": {"cache_path": str(paths.embeddings), **device},
            "answers": {"cache_path": str(paths.embeddings), **device},
            "judge": llm,
            "listener": dict(llm),
        }
        if name == "ensemble":
            return own
        return dict(own.get(name, {}))

    def get(self, name: str) -> BackendSlot:
        """The backend ``name``, created now if needed (blocking: call from a thread)."""
        slot = self.slots.get(name)
        if slot is not None:
            return slot
        self.check(name)
        return self._load(name).result()

    async def loaded(self, name: str, wait: float) -> BackendSlot:
        """The backend ``name`` once it is loaded, waiting at most ``wait`` seconds for a load
        (started now if none is under way). Past that, ``BackendLoading`` (503 +
        Retry-After) with the time so far and the last load's: the load goes on on its own
        thread, and a later request gets the backend. A load that failed raises its error
        (``BackendUnavailable``, kept until restart, or any other, once: the request after
        that one loads again)."""
        slot = self.slots.get(name)
        if slot is not None:
            return slot
        self.check(name)
        future = self._load(name)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not waiter.done():  # cancelled when the request stopped waiting
                waiter.set_result(None)

        def done(_: Future[BackendSlot]) -> None:
            with suppress(RuntimeError):  # the loop is closed: no one waits any more
                loop.call_soon_threadsafe(wake)

        future.add_done_callback(done)
        try:
            await asyncio.wait_for(waiter, wait)
        except TimeoutError:
            raise self._still_loading(name) from None
        return future.result()

    def _load(self, name: str) -> Future[BackendSlot]:
        """The load of ``name``: the one under way, or one started now on its own thread
        (not a scoring thread: a judge's model takes longer to load than a request may)."""
        with self._create_lock:
            slot = self.slots.get(name)
            if slot is not None:
                done: Future[BackendSlot] = Future()
                done.set_result(slot)
                return done
            if name in self.failed:
                raise BackendUnavailable(self.failed[name])
            future = self._loading.get(name)
            if future is not None:
                if future.done():  # failed: this caller reports it, the next one loads again
                    del self._loading[name]
                return future
            future = Future()
            future.set_running_or_notify_cancel()  # so that no waiter going away cancels it
            self._loading[name] = future
            self._load_started[name] = time.monotonic()
        thread = threading.Thread(
            target=self._run_load, args=(name, future), name=f"leakage-load-{name}", daemon=True
        )
        thread.start()
        return future

    def _run_load(self, name: str, future: Future[BackendSlot]) -> None:
        start = time.perf_counter()
        try:
            backend = create_backend(name, **self.options(name))
        except BaseException as err:
            with self._create_lock:
                if isinstance(err, BackendUnavailable):
                    self.failed[name] = str(err)
                    del self._loading[name]
            if isinstance(err, LeakageError):
                log.warning("backend %s could not be loaded: %s", name, err)
            else:
                log.exception("backend %s could not be loaded", name)
            future.set_exception(err)
            return
        seconds = time.perf_counter() - start
        slot = BackendSlot(name, backend, loaded_seconds=seconds)
        with self._create_lock:
            closed = self._closed
            if not closed:
                self.slots[name] = slot
            del self._loading[name]
        if closed and isinstance(backend, SupportsClose):  # the server stopped meanwhile
            backend.close()
        log.info("backend %s loaded in %.2f s", name, seconds)
        self._remember(name, seconds)
        future.set_result(slot)

    def is_loading(self, name: str) -> bool:
        """Whether a load of ``name`` is under way now."""
        future = self._loading.get(name)
        return future is not None and not future.done()

    def _still_loading(self, name: str) -> BackendLoading:
        """The 503 of a request that waited for ``name``'s load as long as it may. Retry-After
        is the time the last load suggests is left, between 1 and 10 s (5 s without one), so
        that a client polling on it sees the load end soon after it does."""
        started = self._load_started.get(name, time.monotonic())
        elapsed = time.monotonic() - started
        last = self.load_times().get(name)
        left = 5.0 if last is None else last - elapsed
        retry = min(max(math.ceil(left), 1), 10)
        return BackendLoading(name, elapsed, last, retry)

    def load_times(self) -> dict[str, float]:
        """Seconds each backend took to load last time, on this server or an earlier one
        (``Paths.backend_loads``); an unreadable file counts as none."""
        path = self.settings.paths.backend_loads
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as err:
            log.warning("ignoring %s: %s", path, err)
            return {}
        if not isinstance(found, dict):
            return {}
        return {
            k: float(v)
            for k, v in found.items()
            if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        }

    def _remember(self, name: str, seconds: float) -> None:
        path = self.settings.paths.backend_loads
        with self._times_lock:
            times = {**self.load_times(), name: round(seconds, 3)}
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                part = path.with_name(path.name + ".part")
                part.write_text(json.dumps(times, indent=1, sort_keys=True), encoding="utf-8")
                part.replace(path)
            except OSError as err:  # the estimate is a courtesy, never a failed load
                log.warning("could not remember the load time in %s: %s", path, err)

    def check(self, name: str) -> None:
        """``UnknownBackend`` unless ``name`` is registered and enabled here."""
        if name in self.slots:
            return
        if name not in backend_names():
            raise UnknownBackend(f"unknown backend {name!r}; available: {', '.join(self.allowed)}")
        if name not in self.allowed:
            raise UnknownBackend(
                f"backend {name!r} is not enabled on this server; enabled: "
                f"{', '.join(self.allowed)} (LEAKAGE_BACKENDS)"
            )

    def close(self) -> None:
        """Close every backend (SQLite connections of the index and caches; an ensemble's
        members); a load that ends later closes its own."""
        with self._create_lock:
            self._closed = True
        for slot in self.slots.values():
            if isinstance(slot.backend, SupportsClose):
                slot.backend.close()

    # -- scoring (call from a worker thread) ----------------------------------------------

    def prepare(self, slot: BackendSlot, inputs: Sequence[GameInput]) -> None:
        """Let the backend batch its work for many games (embedding: one encode call)."""
        # on an error, each game is scored (and fails) on its own afterwards
        with slot.lock, suppress(LeakageError):
            prepare_inputs(inputs, slot.backend)

    def score(
        self,
        slot: BackendSlot,
        game: AnyTranscript,
        opts: ScoreOptions,
        *,
        inp: GameInput | None = None,
        shape: ReportShape | None = None,
        deadline: float | None = None,
    ) -> ReportData:
        """Score one game: its report as plain data, shaped by ``shape`` (default: as scored;
        ``report_json`` writes it). ``inp``: ``game_input(game, opts)`` when the caller has it
        already. With a ``deadline`` (``time.monotonic()``), a request that waited for the backend
        past it gives up (``ScoreTimeout``) instead of scoring a game its client no longer
        waits for."""
        if deadline is None:
            slot.lock.acquire()
        elif not slot.lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
            seconds = self.settings.score_timeout
            raise ScoreTimeout(seconds, max(1, math.ceil(seconds)))
        try:
            return self._score_locked(slot, game, opts, inp, shape)
        finally:
            slot.lock.release()

    def _score_locked(
        self,
        slot: BackendSlot,
        game: AnyTranscript,
        opts: ScoreOptions,
        inp: GameInput | None,
        shape: ReportShape | None,
    ) -> ReportData:
        counter = slot.backend if isinstance(slot.backend, SupportsCacheStats) else None
        before = counter.cache_misses() if counter is not None else None
        start = time.perf_counter()
        try:
            if inp is None:
                inp = game_input(game, opts)
            data = score_report_data(
                game, slot.backend, opts, inp=inp, shape=shape or ReportShape()
            )
        except Exception:
            self.metrics.games.labels(slot.name, "error").inc()
            raise
        self.metrics.backend_latency.labels(slot.name).observe(time.perf_counter() - start)
        self.metrics.games.labels(slot.name, "ok").inc()
        if counter is not None and before is not None:
            misses = counter.cache_misses() - before
            wanted = len(set(inp.clues) | set(inp.candidates))
            self.metrics.cache_hits("embedding", max(wanted - misses, 0), misses)
        return data


@dataclass(frozen=True)
class Scored:
    """One record of a batch or job, scored: the report (or error line) as JSON text."""

    index: int
    ok: bool
    game_id: str | None
    body: str


def score_records(
    backends: Backends,
    slot: BackendSlot,
    items: Iterable[tuple[int, AnyTranscript | Exception]],
    params: ScoreParams,
    *,
    stop: Callable[[], bool] = lambda: False,
    chunk: int = 64,
) -> Iterator[Scored]:
    """Score records in order, each chunk prepared in bulk first; a record that is an error,
    is over the server's size limits (``check_size``: before any backend sees it) or fails
    to score becomes an error line. Stops early (between games) when ``stop()``."""
    opts, shape = params.options(), params.shape()
    it = iter(items)
    while batch := [(i, _sized(g, backends.settings, slot)) for i, g in islice(it, chunk)]:
        inputs = {i: _input(g, opts) for i, g in batch if not isinstance(g, Exception)}
        backends.prepare(slot, [inp for inp in inputs.values() if inp is not None])
        for index, game in batch:
            if stop():
                return
            if isinstance(game, Exception):
                yield Scored(index, False, None, error_line(index, game))
                continue
            try:
                data = backends.score(slot, game, opts, inp=inputs[index], shape=shape)
                body = report_json(data).decode()
            except Exception as err:
                if not isinstance(err, LeakageError):
                    log.exception("record %d (game %s)", index, game.id)
                yield Scored(index, False, game.id, error_line(index, err))
            else:
                yield Scored(index, True, game.id, body)


def _input(game: AnyTranscript, opts: ScoreOptions) -> GameInput | None:
    """The game's input to scoring, made once for both its preparation and its scoring;
    None when it cannot be made (scoring the game then raises the error for its line)."""
    try:
        return game_input(game, opts)
    except LeakageError:
        return None


def _sized(
    game: AnyTranscript | Exception, settings: Settings, slot: BackendSlot
) -> AnyTranscript | Exception:
    """The game, or its ``GameTooLarge`` when it is over the server's size limits (with
    the tokens of the backend's language model, if it has one)."""
    if isinstance(game, Exception):
        return game
    try:
        check_size(game, settings, slot.name, slot.backend)
    except LeakageError as err:
        return err
    return game


class ScoringPool:
    """Worker threads behind a bounded queue: past ``workers + queue_size`` tasks in flight
    a new one is refused at once with ``QueueFull`` (503 + Retry-After).

    The service has two: the scoring threads (``slow=False``: scores, batches, previews) and
    the slow pool (``slow=True``: splits and the report pages of jobs), so that a few slow
    requests can never take every scoring thread (issue 37: four splits at the cost limit
    held both scoring threads for 30 s, and two report pages of a 30-game job made a small
    score wait 8.8 s). Each pool has its own gauges and its own count of refusals."""

    def __init__(
        self, workers: int, queue_size: int, metrics: Metrics, *, slow: bool = False
    ) -> None:
        self.workers = workers
        self.limit = workers + queue_size
        self.metrics = metrics
        self.slow = slow
        self.in_flight = 0
        self._seconds = 0.01  # moving average of a task's duration, for Retry-After
        prefix = "leakage-slow" if slow else "leakage-score"
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix=prefix)

    def _admit(self) -> None:
        if self.in_flight >= self.limit:
            wait = max(1, math.ceil(self.in_flight * self._seconds / self.workers))
            if self.slow:
                self.metrics.slow_rejected.inc()
                raise SlowQueueFull(wait, self.workers, self.limit - self.workers)
            self.metrics.queue_rejected.inc()
            raise QueueFull(wait)
        self.in_flight += 1
        self._gauges()

    def _release(self, seconds: float) -> None:
        self.in_flight -= 1
        self._seconds = 0.9 * self._seconds + 0.1 * seconds
        self._gauges()

    def _gauges(self) -> None:
        running, depth = (
            (self.metrics.slow_running, self.metrics.slow_depth)
            if self.slow
            else (self.metrics.queue_running, self.metrics.queue_depth)
        )
        running.set(min(self.in_flight, self.workers))
        depth.set(max(self.in_flight - self.workers, 0))

    def _submit(self, fn: Callable[[], T]) -> Future[T]:
        loop = asyncio.get_running_loop()
        started = time.perf_counter()

        def done(_: Future[T]) -> None:
            seconds = time.perf_counter() - started
            with suppress(RuntimeError):  # the loop is closed: the server is shutting down
                loop.call_soon_threadsafe(self._release, seconds)

        future = self._executor.submit(fn)
        future.add_done_callback(done)
        return future

    def retry_after(self) -> int:
        """Seconds until the tasks in flight are likely done (for ``Retry-After``)."""
        return max(1, math.ceil(self.in_flight * self._seconds / self.workers))

    async def run(self, fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T:
        """Run ``fn(*args)`` on a worker thread (``QueueFull`` when the queue is full).

        With a ``timeout``: ``ScoreTimeout`` (503 + Retry-After) once it has passed; a task
        still queued then never runs (a running one finishes: threads cannot be stopped,
        which is why ``fn`` gets the deadline too, see ``Backends.score``)."""
        self._admit()
        future = self._submit(lambda: fn(*args))
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except (TimeoutError, ScoreTimeout):
            future.cancel()  # a task not started yet is dropped
            raise ScoreTimeout(timeout or 0.0, self.retry_after()) from None

    def stream(
        self, produce: Callable[[Callable[[bytes], None], threading.Event], None]
    ) -> AsyncIterator[bytes]:
        """Run ``produce(emit, stop)`` on one worker thread and yield what it emits, as it
        emits it. Admission happens now (so a full queue is a 503, not a broken stream);
        ``stop`` is set when the consumer goes away."""
        self._admit()
        loop = asyncio.get_running_loop()
        items: asyncio.Queue[bytes | None] = asyncio.Queue()
        stop = threading.Event()

        def put(item: bytes | None) -> None:
            try:
                loop.call_soon_threadsafe(items.put_nowait, item)
            except RuntimeError:  # loop closed
                stop.set()

        def task() -> None:
            try:
                produce(put, stop)
            finally:
                put(None)

        future = self._submit(task)

        async def lines() -> AsyncIterator[bytes]:
            try:
                while (item := await items.get()) is not None:
                    yield item
                future.result()
            finally:
                stop.set()

        return lines()

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)


class ReportCache:
    """Serialised reports by request key, bounded by their total size in bytes; the least
    recently used are dropped first (event loop only). A report larger than the whole
    budget is not kept."""

    def __init__(self, max_bytes: int, metrics: Metrics) -> None:
        self.max_bytes = max_bytes
        self.metrics = metrics
        self.bytes = 0
        self._items: OrderedDict[bytes, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: bytes) -> bytes | None:
        if not self.max_bytes:
            return None
        hit = self._items.get(key)
        if hit is None:
            self.metrics.cache_hits("report", 0, 1)
            return None
        self._items.move_to_end(key)
        self.metrics.cache_hits("report", 1, 0)
        return hit

    def put(self, key: bytes, value: bytes) -> None:
        size = len(key) + len(value)
        if size > self.max_bytes:
            return
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= len(key) + len(old)
        self._items[key] = value
        self.bytes += size
        while self.bytes > self.max_bytes:
            k, v = self._items.popitem(last=False)
            self.bytes -= len(k) + len(v)
