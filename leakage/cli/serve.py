"""``leakage serve``: a thin launcher for the HTTP service, which is its own distribution
(``service/``, import name ``leakage_service``). The library does not import it: the service
registers its ``serve`` function under the ``leakage.service`` entry point group."""

from __future__ import annotations

from typing import Annotated

import typer

from leakage.cli import app
from leakage.errors import BackendUnavailable

INSTALL_HINT = "pip install leakage-service (from this repository: pip install -e ./service)"


def _service_serve():  # type: ignore[no-untyped-def]
    from importlib.metadata import entry_points

    found = entry_points(group="leakage.service", name="serve")
    if not found:
        raise BackendUnavailable(f"the HTTP service is not installed: {INSTALL_HINT}")
    try:
        return next(iter(found)).load()
    except ImportError as err:
        raise BackendUnavailable(
            f"the HTTP service could not be loaded ({err}): {INSTALL_HINT}"
        ) from err


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
    device: Annotated[
        str | None,
        typer.Option(
            metavar="<device>",
            help="Where the models run: auto, cpu, cuda, cuda:N or mps (LEAKAGE_DEVICE, "
            "default auto: a CUDA GPU when torch sees one).",
        ),
    ] = None,
) -> None:
    """Serve the HTTP API (OpenAPI at /docs). Settings come from LEAKAGE_* variables
    (docs/service.md): LEAKAGE_HOME, LEAKAGE_API_KEYS, LEAKAGE_ALLOWED_PATHS, ...

    The service is the separate package `leakage-service` (this repository's `service/`)."""
    _service_serve()(host, port, workers=workers, log_level=log_level, device=device)
