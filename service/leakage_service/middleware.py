"""Pure ASGI middleware (no per-request task or body buffering, so streaming stays streaming).

``AccessLog`` (outermost): request id, one structured log line and the metrics per request,
the security headers of every response (``security_headers``), the read deadline of request
bodies (``LEAKAGE_BODY_TIMEOUT``: a body that stops arriving is a 503 ``timeout``), client
hang-ups (logged and counted as 499, without a traceback: a client that goes away is not a
server error), and the last line of defence: an exception nothing else handled becomes a
generic 500.
``HeadAsGet`` (inside ``AccessLog``): ``HEAD`` on a ``GET`` route answers as ``GET`` would,
without the body.
``Guard`` (inside CORS): the limit on failed authentication attempts per client address (on
by default), the rate limit (per API key; per client address for requests without a valid
key, so that guessing keys is limited too), API keys and the request size limit.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import math
import re
import sys
import time
import uuid
from typing import Any

from fastapi.responses import JSONResponse
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from leakage_service.errors import (
    BodyTimeout,
    PayloadTooLarge,
    error_body,
    internal_error_body,
)
from leakage_service.settings import Settings
from leakage_service.telemetry import Metrics

access_log = logging.getLogger("leakage.service.access")
log = logging.getLogger("leakage.service")

PUBLIC_PATHS = frozenset(
    {"/healthz", "/readyz", "/metrics", "/docs", "/docs/oauth2-redirect", "/openapi.json"}
    | {"/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"}
    | {"/docs/assets/favicon-32x32.png"}
    | {"/", "/ui"}
)
"""Paths that need no API key: probes, the scraper, the API's own description (and the
Swagger UI files ``/docs`` loads, served by the app), the explorer page."""
PUBLIC_PREFIXES = ("/ui/assets/",)
"""Folders that need no API key: the explorer page's files (no data in them; its data comes
from the API, with the key)."""
STATIC_PREFIXES = ("/docs/assets/", "/ui/assets/")
"""Folders of static files (Swagger UI's, the explorer's): cached by the browser as their
responses say, so no ``Cache-Control: no-store`` is added to them."""
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

_ALWAYS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
# Swagger UI's pages (FastAPI's HTML) start the bundle from an inline script, so their
# policy only forbids framing (and plugins, and another base); the explorer page sets its
# own, stricter one (routes/ui.py). Anything else (JSON, NDJSON, files) is never a page to
# render: nothing may load from it, and nothing may frame it.
_DOCS_PAGES = frozenset({"/docs", "/docs/oauth2-redirect"})
_DOCS_CSP = b"frame-ancestors 'none'; base-uri 'self'; object-src 'none'"
_DATA_CSP = b"default-src 'none'; frame-ancestors 'none'"


def security_headers(path: str, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` with the security headers a response lacks: ``nosniff``, no referrer,
    no framing (``X-Frame-Options`` and CSP ``frame-ancestors``), a CSP (the route's own
    wins), and ``Cache-Control: no-store`` (API answers hold a caller's data) unless the
    route says how to cache or the path is a static file's."""
    have = {name.lower() for name, _ in headers}
    out = list(headers)
    out += [(name, value) for name, value in _ALWAYS if name not in have]
    if b"content-security-policy" not in have:
        out.append((b"content-security-policy", _DOCS_CSP if path in _DOCS_PAGES else _DATA_CSP))
    if b"cache-control" not in have and not path.startswith(STATIC_PREFIXES):
        out.append((b"cache-control", b"no-store"))
    return out


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


CLIENT_CLOSED = 499
"""The status a request is logged and counted with when its client went away before the
response was sent whole (nginx's "client closed request"; no client ever receives it): a
hang-up mid-body, a malformed chunked body (uvicorn answers 400 itself and closes), or a
client that left mid-stream. Not a 5xx: no client can raise the server-error alerts."""


class AccessLog:
    def __init__(self, app: ASGIApp, metrics: Metrics, body_timeout: float = 10.0) -> None:
        self.app = app
        self.metrics = metrics
        self.body_timeout = body_timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"x-request-id")
        rid = given if given and _REQUEST_ID.match(given) else uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = rid
        start = time.perf_counter()
        status = 500
        started = False
        finished = False  # the response's last part is sent
        body_read = False  # the request's last part has arrived
        hung_up = False  # the client went away before the response was sent whole

        async def bounded_receive() -> Message:
            """The next message of the request; while its body is still arriving, one that
            takes longer than the body deadline is a ``BodyTimeout`` (after the body,
            ``receive`` only waits for a disconnect, as long as the response takes)."""
            nonlocal body_read, hung_up
            if body_read:
                message = await receive()
            else:
                try:
                    message = await asyncio.wait_for(receive(), self.body_timeout)
                except TimeoutError:
                    raise BodyTimeout(self.body_timeout) from None
            if message["type"] == "http.request" and not message.get("more_body", False):
                body_read = True
            elif message["type"] == "http.disconnect":
                body_read = True
                hung_up = hung_up or not finished
            return message

        async def send_with_id(message: Message) -> None:
            nonlocal status, started, finished
            if message["type"] == "http.response.start":
                status = message["status"]
                started = True
                message["headers"] = security_headers(
                    scope.get("path", ""),
                    [*message.get("headers", []), (b"x-request-id", rid.encode())],
                )
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                finished = True
            await send(message)

        try:
            await self.app(scope, bounded_receive, send_with_id)
        except BodyTimeout as err:  # raised where no handler was (a stream had started)
            if not started:
                await _refuse(
                    scope, bounded_receive, send_with_id, err.status_code, err.type,
                    err.message, dict(err.headers or {}), field="body",
                )  # fmt: skip
        except Exception:
            if hung_up or isinstance(_cause(), ClientDisconnect):
                hung_up = True  # what failed is the gone client's request: no traceback
            else:
                log.exception("unhandled error (request %s)", rid)
                status = 500
                if not started:
                    response = JSONResponse(internal_error_body(rid), status_code=500)
                    await response(scope, receive, send_with_id)
        finally:
            if hung_up:  # whatever the app sent after, no one received it
                status = CLIENT_CLOSED
            seconds = time.perf_counter() - start
            route = getattr(scope.get("route"), "path", None) or "<unmatched>"
            method = scope.get("method", "")
            self.metrics.requests.labels(route, method, str(status)).inc()
            self.metrics.latency.labels(route, method, str(status)).observe(seconds)
            if access_log.isEnabledFor(logging.INFO):
                line = {
                    "event": "request",
                    "request_id": rid,
                    "method": method,
                    "route": route,
                    "path": scope.get("path"),
                    "status": status,
                    "duration_ms": round(seconds * 1000, 2),
                    "client": (scope.get("client") or ("", 0))[0],
                    "key": scope["state"].get("key_id"),
                }
                if status == CLIENT_CLOSED:
                    line["note"] = "the client closed the connection before the response"
                access_log.info(json.dumps(line))


def _cause() -> BaseException | None:
    """The exception being handled, or what it was raised from (FastAPI turns a failed body
    read into a 400 raised from the read's exception)."""
    err = sys.exc_info()[1]
    while err is not None and not isinstance(err, ClientDisconnect) and err.__cause__ is not None:
        err = err.__cause__
    return err


class HeadAsGet:
    """``HEAD`` answered as ``GET`` without the body (its headers, ``Content-Length``
    included, as ``GET`` would send them): FastAPI's routes answer only the methods they
    name, so ``HEAD`` on a ``GET`` route would be a 405. A route with no ``GET`` is still a
    405."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return
        inner = {**scope, "method": "GET"}  # the same state dict: the request id, the key

        async def without_body(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        try:
            await self.app(inner, receive, without_body)
        finally:
            if "route" in inner:  # for the access log's route label
                scope["route"] = inner["route"]


class _Buckets:
    """Token buckets: ``burst`` requests at once, refilled at ``per_minute``."""

    def __init__(self, per_minute: float, burst: int) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self._state: dict[str, tuple[float, float]] = {}

    def _tokens(self, key: str, now: float) -> float:
        tokens, last = self._state.get(key, (self.burst, now))
        return min(self.burst, tokens + (now - last) * self.rate)

    def wait(self, key: str) -> float:
        """0 when a request would be allowed; else the seconds until one would be (nothing
        is taken)."""
        tokens = self._tokens(key, time.monotonic())
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def take(self, key: str) -> float:
        """0 when allowed; else the seconds until a request would be."""
        now = time.monotonic()
        tokens = self._tokens(key, now)
        if tokens >= 1.0:
            self._state[key] = (tokens - 1.0, now)
            if len(self._state) > 100_000:  # forget idle clients
                self._state = {k: v for k, v in self._state.items() if now - v[1] < 3600}
            return 0.0
        self._state[key] = (tokens, now)
        return (1.0 - tokens) / self.rate


class Guard:
    def __init__(self, app: ASGIApp, settings: Settings, metrics: Metrics) -> None:
        self.app = app
        self.settings = settings
        self.metrics = metrics
        self._keys = [
            (k.encode(), hashlib.sha256(k.encode()).hexdigest()[:8]) for k in settings.api_keys
        ]
        self._buckets = (
            _Buckets(settings.rate_limit, settings.rate_burst) if settings.rate_limit else None
        )
        self._failures = (
            _Buckets(settings.auth_failure_limit, settings.auth_failure_burst)
            if settings.api_keys and settings.auth_failure_limit
            else None
        )

    def _key_id(self, scope: Scope) -> str | None:
        """The id of the API key the request carries, compared in constant time with every
        configured key (no early exit); None when it carries no valid key."""
        auth = _header(scope, b"authorization") or ""
        token = auth[7:].strip() if auth[:7].lower() == "bearer " else _header(scope, b"x-api-key")
        given = (token or "").encode()
        found = None
        for key, key_id in self._keys:
            if hmac.compare_digest(given, key):
                found = key_id
        return found

    def _limit(self, scope: Scope) -> int:
        if scope.get("path") == "/v1/jobs" and scope.get("method") == "POST":
            return self.settings.max_upload_bytes
        return self.settings.max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES):
            await self.app(scope, receive, send)
            return
        address = (scope.get("client") or ("?", 0))[0]
        if self._failures is not None:
            # an address that has used up its failed attempts is refused before its key is
            # looked at, a valid one included: letting a good key through would tell a
            # guesser which guess was right, however many wrong ones were refused
            wait = self._failures.wait(address)
            if wait:
                self.metrics.rate_limited.inc()
                await _refuse(
                    scope, receive, send, 429, "rate_limited",
                    "too many failed authentication attempts from this address (limit: "
                    f"{self.settings.auth_failure_limit:g} a minute); retry later with a valid "
                    "API key",
                    {"Retry-After": str(max(1, math.ceil(wait)))},
                )  # fmt: skip
                return
        key_id = self._key_id(scope) if self._keys else None
        if key_id is not None:
            scope["state"]["key_id"] = key_id
        if self._buckets is not None:
            # a valid key has its own bucket; anything else, a wrong key included (key
            # guessing is not free), counts against the client's address
            who = f"key:{key_id}" if key_id else f"addr:{address}"
            wait = self._buckets.take(who)
            if wait:
                self.metrics.rate_limited.inc()
                await _refuse(
                    scope, receive, send, 429, "rate_limited",
                    f"rate limit of {self.settings.rate_limit:g} requests per minute reached",
                    {"Retry-After": str(max(1, math.ceil(wait)))},
                )  # fmt: skip
                return
        if self._keys and key_id is None:
            if self._failures is not None:
                self._failures.take(address)
            await _refuse(
                scope, receive, send, 401, "unauthorized",
                "missing or unknown API key: send 'Authorization: Bearer KEY' or "
                "'X-API-Key: KEY'",
                {"WWW-Authenticate": "Bearer"},
            )  # fmt: skip
            return
        limit = self._limit(scope)
        length = _header(scope, b"content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            err = PayloadTooLarge(limit)
            await _refuse(scope, receive, send, 413, err.type, err.message, None, field="body")
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise PayloadTooLarge(limit)
            return message

        await self.app(scope, counted, send)


async def _refuse(
    scope: Scope,
    receive: Receive,
    send: Send,
    status: int,
    type_: str,
    message: str,
    headers: dict[str, str] | None,
    **where: Any,
) -> None:
    body = error_body(type_, message, request_id=scope["state"].get("request_id"), **where)
    await JSONResponse(body, status_code=status, headers=headers)(scope, receive, send)
