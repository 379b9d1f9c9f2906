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

from fastapi import Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from pydantic import TypeAdapter
from swagger_ui_bundle import swagger_ui_path

from leakage import __version__
from leakage.transcripts import Transcript
from leakage_service.deps import one_value_each
from leakage_service.errors import install_error_handlers
from leakage_service.middleware import AccessLog, Guard, HeadAsGet
from leakage_service.patterns import NOT_BLANK
from leakage_service.schemas import JobPathRequest
from leakage_service.settings import Settings, get_settings
from leakage_service.state import ServiceState

log = logging.getLogger("leakage.service")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    state: ServiceState = app.state.service
    start = time.perf_counter()
    await asyncio.to_thread(state.start)
    # The schema (about a second to build) is what every /v1 request's query check reads
    # (deps.one_value_each): built here, as the backends are loaded, rather than in the
    # first request a client sends after a start (the first view of a job, say).
    await asyncio.to_thread(app.openapi)
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
    _this_server(schema, app.state.service)
    app.openapi_schema = schema
    return schema


def _this_server(schema: dict[str, Any], state: ServiceState) -> None:
    """What this server's validation enforces, stated in its schema too, so that a request
    the schema allows is not refused for it: the backends it enables (an enum) and its size
    limits on a transcript (``check_size``; the totals per game and the rules across
    fields, such as a turn's player being one of the players, are in the descriptions)."""
    s = state.settings
    for item in schema.get("paths", {}).values():
        for op in item.values():
            for param in op.get("parameters", []) if isinstance(op, dict) else []:
                if param.get("name") == "backend" and param.get("in") == "query":
                    keep = {k: v for k, v in param["schema"].items() if "Length" not in k}
                    param["schema"] = {**keep, "enum": state.backends.allowed}
    comps = schema["components"]["schemas"]
    text = {"maxLength": s.max_text_chars, "pattern": NOT_BLANK}  # not blank, as validated
    comps["Turn"]["properties"]["text"].update(text)
    cham = comps["ChameleonTranscript"]["properties"]
    cham["candidates"].update(maxItems=s.max_candidates)
    cham["candidates"]["items"].update(text)
    cham["category"].update(maxLength=s.max_text_chars)
    spy = comps["SpyGameTranscript"]["properties"]
    spy["distractors"].update(maxItems=s.max_candidates - 2)
    spy["distractors"]["items"].update(maxLength=s.max_text_chars)
    for word in ("civilian", "spy"):
        comps["SpyWords"]["properties"][word].update(maxLength=s.max_text_chars)
    for game in (cham, spy):
        game["turns"].update(maxItems=s.max_turns)


DOCS_ASSETS = "/docs/assets"
"""Where Swagger UI's files are served (middleware.PUBLIC_PATHS lists the three /docs uses)."""


def _add_docs(app: FastAPI) -> None:
    """Swagger UI at ``/docs`` with its script, style sheet and icon served by the service
    itself (from swagger-ui-bundle-v2), so that the page works offline: FastAPI's own
    ``/docs`` loads them from a CDN."""
    app.mount(DOCS_ASSETS, StaticFiles(directory=swagger_ui_path), name="swagger-ui")

    @app.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "").rstrip("/")
        return get_swagger_ui_html(
            openapi_url=root + "/openapi.json",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon-32x32.png",
            oauth2_redirect_url=root + "/docs/oauth2-redirect",
        )

    @app.get("/docs/oauth2-redirect", include_in_schema=False)
    async def docs_oauth2_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service app. ``settings`` defaults to ``Settings.from_env()`` (read once)."""
    from leakage_service.routes import jobs, score, seats, splits, system, transcripts, ui

    settings = settings or get_settings()
    app = FastAPI(
        title="leakage",
        version=__version__,
        description="How much each clue in an LLM word game reveals the secret: per-turn "
        "posteriors and leakage of Chameleon and SpyGame transcripts.",
        lifespan=lifespan,
        docs_url=None,  # _add_docs: Swagger UI without a CDN
        redoc_url=None,
        dependencies=[Depends(one_value_each)],
    )
    # no 307 from /v1/jobs/ to /v1/jobs: Starlette builds that Location from the Host
    # header, so a request with "Host: evil.example" was sent there; a path with a trailing
    # slash is a 404 that names the path without it (errors._http_error)
    app.router.redirect_slashes = False
    _add_docs(app)
    app.state.service = ServiceState(settings)
    for module in (score, transcripts, seats, jobs, splits, system):
        app.include_router(module.router)
    ui.add_ui(app)  # the explorer page at /ui, its files and the examples it offers
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
    app.add_middleware(HeadAsGet)
    app.add_middleware(
        AccessLog, metrics=app.state.service.metrics, body_timeout=settings.body_timeout
    )
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app
