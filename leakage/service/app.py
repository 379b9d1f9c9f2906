"""``create_app(settings)``: the FastAPI app, and the lifespan that loads what it serves with.

Start-up (before the server accepts a request): the default index is built if missing, the
preloaded backends are created, the job store is opened and jobs a stopped server left
running are resumed (or failed). Shut-down: the job worker finishes its current game and
leaves the job queued for the next start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.utils import get_openapi
from pydantic import TypeAdapter

from leakage import __version__
from leakage.errors import BackendUnavailable
from leakage.service.errors import install_error_handlers
from leakage.service.jobs import JobStore, JobWorker
from leakage.service.metrics import Metrics
from leakage.service.middleware import AccessLog, Guard
from leakage.service.runtime import Backends, ReportCache, ScoringPool
from leakage.service.schemas import JobPathRequest
from leakage.service.settings import Settings, get_settings
from leakage.transcripts import Transcript

log = logging.getLogger("leakage.service")


class ServiceState:
    """Everything the routes share; built by ``create_app``, filled in by the lifespan."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.backends = Backends(settings, self.metrics)
        self.pool = ScoringPool(settings.workers, settings.queue_size, self.metrics)
        self.cache = ReportCache(settings.report_cache, self.metrics)
        self.store: JobStore | None = None
        self.worker: JobWorker | None = None
        self.ready = False
        self.describer: Any = None

    def start(self) -> None:
        """Blocking start-up work (run on a thread by the lifespan)."""
        s = self.settings
        if s.index is None and not s.index_path.exists():
            from leakage.corpus import build_index, default_documents

            log.info("building the default index at %s", s.index_path)
            docs, sources = default_documents()
            build_index(s.index_path, docs, sources=sources)
        for name in s.preload:
            try:
                self.backends.get(name)
            except BackendUnavailable as err:
                if name == "cooccurrence":
                    raise
                log.warning("backend %s not loaded: %s", name, err)
        self.store = JobStore(s.jobs_path)
        recovered = self.store.recover(s.on_restart)
        if recovered:
            verb = "resuming" if s.on_restart == "resume" else "marked failed:"
            log.info("%s %d job(s) left running by the last server", verb, recovered)
        self.metrics.watch_jobs(self.store.counts)
        self.worker = JobWorker(self.store, self.backends, on_restart=s.on_restart)
        self.worker.start()

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()
        self.pool.shutdown()
        self.backends.close()
        if self.store is not None:
            self.store.close()

    def readiness(self) -> list[str]:
        problems = []
        if not self.ready:
            problems.append("starting or stopping")
        if self.worker is None or not self.worker.alive:
            problems.append("the job worker is not running")
        for name in self.settings.preload:
            if name not in self.backends.slots and name not in self.backends.failed:
                problems.append(f"backend {name} not loaded")
        if "cooccurrence" not in self.backends.slots:
            problems.append("backend cooccurrence not loaded")
        return problems


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    state: ServiceState = app.state.service
    start = time.perf_counter()
    await asyncio.to_thread(state.start)
    state.ready = True
    log.info("ready in %.1f s", time.perf_counter() - start)
    try:
        yield
    finally:
        state.ready = False
        await asyncio.to_thread(state.stop)


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema plus the transcript models, which routes reference by name (they
    read the body themselves, to accept third-party formats and JSONL)."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    transcript = TypeAdapter(Transcript).json_schema(ref_template="#/components/schemas/{model}")
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.update(transcript.pop("$defs", {}))
    components["Transcript"] = transcript
    components["JobPathRequest"] = JobPathRequest.model_json_schema(
        ref_template="#/components/schemas/{model}"
    )
    app.openapi_schema = schema
    return schema


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service app. ``settings`` defaults to ``Settings.from_env()`` (read once)."""
    from leakage.service.routes import jobs, score, splits, system

    settings = settings or get_settings()
    app = FastAPI(
        title="leakage",
        version=__version__,
        description="How much each clue in an LLM word game reveals the secret: per-turn "
        "posteriors and leakage of Chameleon and SpyGame transcripts.",
        lifespan=lifespan,
        redoc_url=None,
    )
    app.state.service = ServiceState(settings)
    for module in (score, jobs, splits, system):
        app.include_router(module.router)
    install_error_handlers(app)
    app.add_middleware(Guard, settings=settings, metrics=app.state.service.metrics)
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type", "X-Request-ID"],
            expose_headers=["X-Request-ID", "Retry-After"],
        )
    app.add_middleware(AccessLog, metrics=app.state.service.metrics)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app
