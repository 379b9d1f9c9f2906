"""``leakage serve``: the HTTP service on uvicorn (the ``service`` extra)."""

from __future__ import annotations

import json
import logging
import sys
from typing import Annotated

import typer

from leakage.cli import app
from leakage.errors import BackendUnavailable

INSTALL_HINT = "pip install 'leakage[service]'"


class _JsonLines(logging.Formatter):
    """One JSON object per log line: time, level, logger, message (+ exception)."""

    def format(self, record: logging.LogRecord) -> str:
        doc = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        msg = record.getMessage()
        try:
            parsed = json.loads(msg) if msg.startswith("{") else None
        except json.JSONDecodeError:
            parsed = None
        doc.update(parsed if isinstance(parsed, dict) else {"message": msg})
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False)


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_JsonLines())
    for name in ("leakage", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False


@app.command(short_help="Serve the HTTP API (OpenAPI at /docs); settings in docs/service.md.")
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=0, max=65535)] = 8000,
    workers: Annotated[
        int | None, typer.Option(help="Scoring threads (LEAKAGE_WORKERS, default 2).", min=1)
    ] = None,
    log_level: Annotated[
        str | None, typer.Option(help="debug, info, warning, error (LEAKAGE_LOG_LEVEL).")
    ] = None,
) -> None:
    """Serve the HTTP API (OpenAPI at /docs). Settings come from LEAKAGE_* variables
    (docs/service.md): LEAKAGE_HOME, LEAKAGE_API_KEYS, LEAKAGE_ALLOWED_PATHS, ..."""
    try:
        import uvicorn

        from leakage.service import Settings, create_app
    except ImportError as err:
        raise BackendUnavailable(
            f"the HTTP service needs its extra: {INSTALL_HINT} ({err})"
        ) from err

    settings = Settings.from_env(workers=workers, log_level=log_level)
    configure_logging(settings.log_level)
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_config=None,
        access_log=False,  # the service logs one structured line per request itself
        timeout_graceful_shutdown=15,
    )
