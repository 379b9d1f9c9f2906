"""HTTP plumbing shared by the web count sources and the remote LLM client.

One rule for what is worth retrying (429, 5xx, transport errors; ``Retry-After`` honoured),
one tenacity retry policy, one way to size and share an ``httpx.AsyncClient``, the server's
own words about a failure, and running an async core from sync code.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import ssl
from collections.abc import AsyncIterator, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

_T = TypeVar("_T")


class Transient(Exception):
    """A failure worth retrying: 429, 5xx, a transport error, an infini-gram error payload."""

    def __init__(
        self, detail: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.retry_after = retry_after


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT by definition
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def transient_wait(state: RetryCallState, *, backoff: float, max_wait: float) -> float:
    """Seconds before the next attempt (a tenacity ``wait``): the server's ``Retry-After``
    when a :class:`Transient` carries one, else exponential backoff; capped by ``max_wait``."""
    exc = state.outcome.exception() if state.outcome is not None else None
    if isinstance(exc, Transient) and exc.retry_after is not None:
        return min(exc.retry_after, max_wait)
    return min(max_wait, backoff * 2.0 ** (state.attempt_number - 1))


def transient_retrying(max_attempts: int, *, backoff: float, max_wait: float) -> AsyncRetrying:
    """Up to ``max_attempts`` tries of a block that raises :class:`Transient` when it is
    worth retrying, waiting as :func:`transient_wait` says; the last failure is re-raised."""
    return AsyncRetrying(
        stop=stop_after_attempt(max_attempts),
        wait=lambda state: transient_wait(state, backoff=backoff, max_wait=max_wait),
        retry=retry_if_exception_type(Transient),
        reraise=True,
    )


def raise_if_transient(response: httpx.Response, message: str) -> None:
    """:class:`Transient` for a 429 or a 5xx, with the server's ``Retry-After`` (429, 503)."""
    status = response.status_code
    if status == 429 or status >= 500:
        retry_after = None
        if status in (429, 503):
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
        raise Transient(f"HTTP {status}: {message}", status=status, retry_after=retry_after)


@asynccontextmanager
async def http_client_scope(
    injected: httpx.AsyncClient | None, *, concurrency: int, timeout: float, agent: str
) -> AsyncIterator[httpx.AsyncClient]:
    """The injected client (its owner closes it), or a fresh one sized to ``concurrency``."""
    if injected is not None:
        yield injected
        return
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(
        timeout=timeout, limits=limits, headers={"User-Agent": agent}, verify=tls_context()
    ) as client:
        yield client


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context per process: building it (loading CA certificates) costs ~30 ms,
    and a fresh client is made for every sync ``counts()`` call."""
    return httpx.create_ssl_context()


def run_sync(make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
    """Run a coroutine to completion from sync code, in any thread.

    Inside a running event loop ``asyncio.run`` is refused, so the coroutine gets a loop of
    its own in a helper thread (blocking the caller's loop: async code should await the
    ``a``-method instead).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="leakage-web") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def error_message(response: httpx.Response) -> str:
    """The server's own words about a failure, from the usual JSON error shapes."""
    try:
        payload = response.json()
    except ValueError:
        return response.text[:200].strip() or response.reason_phrase
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict):  # Google: {"error": {"code", "message", "status"}}
            return str(error.get("message") or error)
        if error:  # SerpApi, infini-gram: {"error": "..."}
            return str(error)
        for key in ("message", "detail"):  # vLLM: {"object": "error", "message": ...}
            if isinstance(payload.get(key), str):
                return str(payload[key])
    return str(payload)[:200]
