"""Running the app on uvicorn: ``python -m leakage_service`` and ``leakage serve`` (which finds
``serve`` through the ``leakage.service`` entry point, so the library never imports this
package)."""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import sys
from typing import Any

import uvicorn

from leakage.errors import InvalidInput
from leakage_service.app import create_app
from leakage_service.settings import Settings


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


def is_loopback(host: str) -> bool:
    """Whether ``host`` (what uvicorn binds) reaches this machine only: ``localhost`` or a
    loopback address. Anything else (``0.0.0.0``, ``::``, a public address, another host
    name) is public."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, settings: Settings) -> None:
    """``InvalidInput`` when the server would listen on a public address with no API keys
    and the operator did not say that is intended."""
    if settings.api_keys or settings.allow_public_without_keys or is_loopback(host):
        return
    raise InvalidInput(
        f"refusing to serve on {host} without API keys: anyone who can reach it could use "
        "the server; set LEAKAGE_API_KEYS, or LEAKAGE_ALLOW_PUBLIC_WITHOUT_KEYS=1 if it is "
        "meant to be open (or listen on 127.0.0.1)"
    )


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    workers: int | None = None,
    log_level: str | None = None,
    device: str | None = None,
) -> None:
    """Serve the API until stopped. Settings come from ``LEAKAGE_*`` variables; ``workers``,
    ``log_level`` and ``device`` override theirs. Bad settings raise ``InvalidInput`` naming
    the variable, and so does a public ``host`` without API keys (``check_exposure``); a
    device that is not there is ``DeviceUnavailable`` before the server starts
    (``check_device_setting``)."""
    settings = Settings.from_env(workers=workers, log_level=log_level, device=device)
    check_exposure(host, settings)
    check_device_setting(settings)
    configure_logging(settings.log_level)
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_config=None,
        access_log=False,  # the service logs one structured line per request itself
        timeout_graceful_shutdown=15,
        server_header=False,  # no "server: uvicorn" banner
        **proxy_options(settings),
    )


def check_device_setting(settings: Settings) -> None:
    """A device named in the settings (``LEAKAGE_DEVICE``, ``--device``) is there, or
    ``DeviceUnavailable`` saying what torch found: the server does not start to answer 503s
    for every model. ``auto`` needs no check, and without torch no backend loads a model."""
    from importlib.util import find_spec

    if settings.device == "auto" or find_spec("torch") is None:
        return
    import torch

    from leakage.runtime import resolve_device

    resolve_device(settings.device, torch)


def proxy_options(settings: Settings) -> dict[str, Any]:
    """uvicorn's forwarded-header options: believe ``X-Forwarded-For`` and
    ``X-Forwarded-Proto`` from the proxies ``LEAKAGE_TRUSTED_PROXIES`` names, and from no one
    when it names none. uvicorn's own default trusts 127.0.0.1 (and reads
    ``FORWARDED_ALLOW_IPS``), which let any local client choose the address its failed key
    attempts count against, and what the access log records, by sending the header."""
    proxies = settings.trusted_proxies
    if not proxies:
        return {"proxy_headers": False, "forwarded_allow_ips": []}
    # uvicorn trusts every peer only for "*" alone; in a list it would be a literal name
    return {"proxy_headers": True, "forwarded_allow_ips": ["*"] if "*" in proxies else proxies}


def main(argv: list[str] | None = None) -> int:
    """``python -m leakage_service [--host H] [--port P] [--workers N] [--log-level L]``."""
    from leakage.errors import LeakageError

    parser = argparse.ArgumentParser(prog="python -m leakage_service", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on")
    parser.add_argument("--workers", type=int, default=None, help="scoring threads")
    parser.add_argument("--log-level", default=None, help="debug, info, warning, error")
    parser.add_argument("--device", default=None, help="auto, cpu, cuda, cuda:N or mps")
    args = parser.parse_args(argv)
    try:
        serve(
            args.host,
            args.port,
            workers=args.workers,
            log_level=args.log_level,
            device=args.device,
        )
    except LeakageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0
