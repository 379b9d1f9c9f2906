"""``/v1/backends``, ``/healthz``, ``/readyz`` and ``/metrics``."""

from __future__ import annotations

import os

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from leakage.backends.cooccurrence import COUNT_SOURCES, CountSourceKind, LocalIndexSource
from leakage_service.deps import State
from leakage_service.redact import redact_paths
from leakage_service.schemas import (
    BackendsResponse,
    BackendStatus,
    CountSourceStatus,
    Readiness,
    error_responses,
)
from leakage_service.settings import Settings
from leakage_service.state import ServiceState

router = APIRouter()


def _source_status(name: str, kind: CountSourceKind, settings: Settings) -> CountSourceStatus:
    """A count source of the library's registry: the local index is configured when the
    server's index exists; any other when the variables of its ``key_env`` are set: in the
    service's settings for those it has (the shipped engines' keys, which it passes to them,
    ``Settings.variables``), in the environment for a source an installed distribution adds
    (which reads its own)."""
    if isinstance(kind, type) and issubclass(kind, LocalIndexSource):
        exists = settings.index_path.exists()
        return CountSourceStatus(name=name, kind="local", configured=exists, needs=[])
    needs = list(kind.key_env)
    known = set(Settings.variable_names().values())
    values = settings.variables()
    configured = all(((values if v in known else os.environ).get(v) or "").strip() for v in needs)
    return CountSourceStatus(name=name, kind="web", configured=configured, needs=needs)


@router.get(
    "/v1/backends",
    tags=["system"],
    summary="Backends and count sources on this server",
    response_model=BackendsResponse,
    responses=error_responses(401, 429),
)
async def backends(state: State) -> BackendsResponse:
    b = state.backends
    out = []
    times = b.load_times()
    for name in sorted(set(b.allowed) | set(b.slots) | set(state.settings.preload)):
        slot = b.slots.get(name)
        out.append(
            BackendStatus(
                name=name,
                enabled=name in b.allowed,
                loaded=slot is not None,
                preload=name in state.settings.preload,
                available=True if slot else (False if name in b.failed else None),
                reason=redact_paths(b.failed.get(name)),
                load_seconds=round(slot.loaded_seconds, 3) if slot else None,
                loading=b.is_loading(name),
                last_load_seconds=times.get(name),
                info=redact_paths(slot.backend.info()) if slot else None,
            )
        )
    sources = [
        _source_status(name, COUNT_SOURCES[name], state.settings) for name in COUNT_SOURCES.names()
    ]
    return BackendsResponse(backends=out, count_sources=sources)


@router.get("/healthz", tags=["system"], summary="Alive")
async def healthz() -> dict[str, str]:
    """200 while the process serves requests (no dependency checked)."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    tags=["system"],
    summary="Ready: models loaded, job worker running",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "Not ready."}},
)
async def readyz(request: Request) -> JSONResponse:
    state: ServiceState = request.app.state.service
    problems = state.readiness()
    body = Readiness(ready=not problems, problems=problems, loaded=sorted(state.backends.slots))
    return JSONResponse(body.model_dump(), status_code=503 if problems else 200)


@router.get(
    "/metrics",
    tags=["system"],
    summary="Prometheus metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}},
)
async def metrics(request: Request) -> Response:
    state: ServiceState = request.app.state.service
    return Response(generate_latest(state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
