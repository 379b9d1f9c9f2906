"""The explorer page (``GET /ui``, ``/`` redirects to it) and its files (``/ui/assets/``), and
the example transcripts it offers (``GET /v1/examples``, ``GET /v1/examples/{name}``).

The page is static: an HTML file, a style sheet and a few ES modules shipped in the package
(``leakage_service/ui/``), served as they are (no build step, nothing from a CDN). It talks to
the server through the public API only, so the page and its files need no API key
(``middleware.PUBLIC_PATHS``, ``PUBLIC_PREFIXES``): they hold no data. The examples are the
top-level files of ``leakage/data/examples`` (package data, a link to ``corpora/examples``).
"""

from __future__ import annotations

import json
import os
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Request
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.types import Scope

from leakage.transcripts import jsonl_lines
from leakage_service.errors import ServiceError
from leakage_service.schemas import ExampleGame, ExampleInfo, ExamplesResponse, error_responses

UI_DIR = Path(__file__).resolve().parent.parent / "ui"
"""The page's files: ``index.html`` and ``assets/``."""
UI_ASSETS = "/ui/assets"

router = APIRouter()

_PAGE_HEADERS = {
    # everything from this server; inline SVG built by the scripts; no frames
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'self'",
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
}


@router.get("/", include_in_schema=False)
async def root(request: Request) -> RedirectResponse:
    """``/`` -> ``/ui``, keeping the query string (a shared view)."""
    url = request.scope.get("root_path", "").rstrip("/") + "/ui"
    if request.url.query:
        url += "?" + request.url.query
    return RedirectResponse(url, status_code=307)


@router.get("/ui", include_in_schema=False)
async def page() -> FileResponse:
    """The explorer page; its state lives in the query string, read by the page itself."""
    return FileResponse(UI_DIR / "index.html", media_type="text/html", headers=_PAGE_HEADERS)


def add_ui(app: FastAPI) -> None:
    """The page's routes and its files under ``/ui/assets`` (``.js`` served as JavaScript:
    browsers refuse a module of another type)."""
    app.include_router(router)
    app.mount(UI_ASSETS, _Assets(directory=UI_DIR / "assets"), name="ui-assets")


_ASSET_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}


class _Assets(StaticFiles):
    """The page's files, revalidated on each load (ETag) so that a new version is never
    mixed with an old one; their types set here, not taken from the host's MIME table."""

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        media = _ASSET_TYPES.get(Path(full_path).suffix)
        if media:
            response.headers["content-type"] = media
        response.headers["cache-control"] = "no-cache"
        response.headers["x-content-type-options"] = "nosniff"
        return response


# -- examples ---------------------------------------------------------------------------

ExampleName = Annotated[
    str,
    PathParam(
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        description="An example's name, as GET /v1/examples lists it (its file name without "
        "the extension), e.g. chameleon_sports.",
    ),
]
_KINDS = {".json": "application/json", ".jsonl": "application/x-ndjson"}


def examples_dir() -> Traversable:
    return files("leakage") / "data" / "examples"


def _example_files() -> dict[str, Traversable]:
    """name -> file, for the top-level ``.json`` / ``.jsonl`` files (not ``bad/``)."""
    folder = examples_dir()
    if not folder.is_dir():
        return {}
    out = {}
    for f in sorted(folder.iterdir(), key=lambda f: f.name):
        suffix = Path(f.name).suffix
        if f.is_file() and suffix in _KINDS:
            out[Path(f.name).stem] = f
    return out


def _records(text: str, suffix: str) -> list[Any]:
    if suffix == ".jsonl":
        return [json.loads(line) for line in jsonl_lines(text) if line.strip()]
    doc = json.loads(text)
    return doc if isinstance(doc, list) else [doc]


def _game(record: dict[str, Any]) -> ExampleGame:
    if record.get("game") == "spygame":
        words = record.get("words") or {}
        label = f"{words.get('civilian')} / {words.get('spy')}"
    else:
        label = str(record.get("category"))
    meta = record.get("meta") or {}
    return ExampleGame(
        id=str(record.get("id")),
        game=str(record.get("game")),
        label=label,
        players=len(record.get("players") or []),
        turns=len(record.get("turns") or []),
        matchup=meta.get("matchup"),
        difficulty=meta.get("difficulty"),
    )


@router.get(
    "/v1/examples",
    tags=["examples"],
    summary="The example transcripts this server ships",
    response_model=ExamplesResponse,
    responses=error_responses(401, 429),
)
async def list_examples() -> ExamplesResponse:
    """The example transcripts of the ``leakage`` package (``corpora/examples`` in the
    repository), each with its games; ``GET /v1/examples/{name}`` returns one."""
    out = []
    for name, f in _example_files().items():
        suffix = Path(f.name).suffix
        games = [_game(r) for r in _records(f.read_text("utf-8"), suffix)]
        out.append(
            ExampleInfo(
                name=name,
                file=f.name,
                media_type=_KINDS[suffix],
                games=games,
                links={"self": f"/v1/examples/{name}"},
            )
        )
    return ExamplesResponse(examples=out)


@router.get(
    "/v1/examples/{name}",
    tags=["examples"],
    summary="One example transcript file",
    response_class=Response,
    responses={
        200: {
            "description": "The file as shipped: one transcript (application/json) or one per "
            "line (application/x-ndjson); POST it to /v1/score or /v1/score/batch.",
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/Transcript"}},
                "application/x-ndjson": {"schema": {"type": "string"}},
            },
        },
        **error_responses(401, 404, 422, 429),
    },
)
async def get_example(name: ExampleName) -> Response:
    found = _example_files()
    f = found.get(name)
    if f is None:
        known = ", ".join(found) or "none on this server"
        raise ServiceError(
            404, "example_not_found", f"no example {name!r}; the examples: {known}", field="name"
        )
    return Response(f.read_bytes(), media_type=_KINDS[Path(f.name).suffix])
