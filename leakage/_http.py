"""HTTP plumbing shared by the web count sources and the remote LLM client.

One rule for what is worth retrying (429, 5xx, transport errors; ``Retry-After`` honoured),
one tenacity retry policy, one way to size and share an ``httpx.AsyncClient``, the server's
own words about a failure, running an async core from sync code, the per-run
:class:`QueryBudget` and the budgeted concurrent fetch (:func:`fetch_all`): bounded
concurrency, answers written to the cache in batches, a clean stop when the budget is spent
or a request fails.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

import httpx
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt

_T = TypeVar("_T")
_R = TypeVar("_R")  # a request
_A = TypeVar("_A")  # its answer

FLUSH_EVERY = 16
"""Answers per cache transaction in :func:`fetch_all`."""


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


class QueryBudget:
    """How many more requests this run may send; ``limit=None`` means no ceiling.

    Paid APIs bill per request, so a run is given a ceiling on the number of requests that
    actually go out (cache hits are free and never touch the budget). A request is charged
    once when it is first sent; its retries are not charged again, because the providers
    bill answered requests, not refused ones.

    Not thread-safe on its own: a web count source runs its requests on one event loop, and
    every ``take()`` happens on that loop between awaits; the remote LLM client, whose sync
    calls may come from several threads, takes it under its own lock.
    """

    def __init__(self, limit: int | None = None) -> None:
        if limit is not None and limit < 0:
            raise ValueError(f"a query budget cannot be negative (got {limit})")
        self.limit = limit
        self.spent = 0

    @property
    def remaining(self) -> int | None:
        """Requests left, or ``None`` when there is no ceiling."""
        return None if self.limit is None else self.limit - self.spent

    def take(self) -> bool:
        """Charge one request; ``False`` (and nothing charged) when the budget is spent."""
        if self.limit is not None and self.spent >= self.limit:
            return False
        self.spent += 1
        return True

    def __repr__(self) -> str:
        return f"QueryBudget(limit={self.limit}, spent={self.spent})"


@dataclass
class Fetched(Generic[_A]):
    """What :func:`fetch_all` got: the answers by key, and why it stopped early, if it did."""

    answered: dict[str, _A]
    starved: str | None = None
    """The reason ``charge`` gave for refusing a request (a budget is spent), else None."""


async def fetch_all(
    todo: Mapping[str, _R],
    send: Callable[[_R], Awaitable[_A]],
    *,
    gate: asyncio.Semaphore,
    charge: Callable[[], str | None],
    store: Callable[[list[tuple[str, _R, _A]]], None],
    failure: tuple[type[Exception], ...],
) -> Fetched[_A]:
    """Send every request of ``todo`` (distinct keys), at most ``gate`` at a time.

    Before a request goes out, ``charge()`` takes it from the budgets or says which one is
    spent; from then on, and after the first request that fails with one of the ``failure``
    types, nothing new is sent. Requests already in flight are allowed to finish (they are
    paid for). Answers go to ``store`` in batches of :data:`FLUSH_EVERY` and all of them
    before this returns or raises, so a stopped batch loses nothing it paid for. The first
    failure is raised; a spent budget is reported in :attr:`Fetched.starved` for the caller
    to word. Any other exception (a bug, a misconfiguration) is raised as it is.
    """
    answered: dict[str, _A] = {}
    pending: list[tuple[str, _R, _A]] = []
    failures: list[Exception] = []
    starved: list[str] = []

    def flush() -> None:
        if pending:
            store(list(pending))
            pending.clear()

    async def one(key: str, request: _R) -> None:
        async with gate:
            if failures or starved:
                return
            why = charge()
            if why is not None:
                starved.append(why)
                return
            try:
                answer = await send(request)
            except failure as exc:
                failures.append(exc)
                return
            answered[key] = answer
            pending.append((key, request, answer))
            if len(pending) >= FLUSH_EVERY:
                flush()

    try:
        async with asyncio.TaskGroup() as group:
            for key, request in todo.items():
                group.create_task(one(key, request))
    except ExceptionGroup as eg:  # a bug or a misconfiguration, not an API failure
        raise eg.exceptions[0] from eg
    finally:
        flush()
    if failures:
        raise failures[0]
    return Fetched(answered, starved[0] if starved else None)
