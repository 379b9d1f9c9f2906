"""Count sources backed by web search APIs: SerpApi (Google), Google Custom Search, infini-gram.

The published estimator of clue leakage in The Chameleon reads P(r | w) ≈ #(r AND w) / #(w)
off web search hit counts. These sources answer such counts over HTTP and share one
machinery, written once in :class:`WebCountSource`:

- a persistent SQLite cache (:class:`~._cache.CountCache`), so a query never goes out twice,
  across runs and processes; :meth:`~WebCountSource.uncached` is the dry run;
- a per-run query budget (:class:`~leakage._http.QueryBudget`): when it is spent the batch stops
  cleanly with :class:`~leakage.errors.BudgetExhausted` and what was answered stays cached;
- retries with exponential backoff for 429, 5xx and transport errors, honouring
  ``Retry-After``; other 4xx fail at once (401/403: the key is rejected);
- bounded concurrency (a semaphore) on one ``httpx.AsyncClient``;
- an async core (:meth:`~WebCountSource.acounts`) and the sync ``counts()`` of the
  ``CountSource`` protocol.

Each concrete source only says how a query is written, sent and read back. Its keys come in
by name (``from_variables``: the documented variables' values, which the command line and the
service read through their settings and pass on); ``from_env`` reads them from the
environment, a convenience for direct library users.
"""

from __future__ import annotations

import asyncio
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Self

import httpx

from leakage._http import (
    QueryBudget,
    Transient,
    error_message,
    fetch_all,
    http_client_scope,
    raise_if_transient,
    retry_after_seconds,
    run_sync,
    transient_retrying,
)
from leakage.errors import BackendUnavailable, BudgetExhausted, CountSourceError, InvalidInput

from ._cache import CountCache
from ._source import Query, query_key

GOOGLE_PAGES_ESTIMATE = 25e9
"""Default N for the Google engines: an order-of-magnitude guess of the pages behind a hit
count. Google does not publish it; it enters the estimator only through the smoothing prior
β·#(r)/N, so the order of magnitude is what matters. Override with ``total=``."""

_USER_AGENT = "leakage (co-occurrence counts; https://pypi.org/project/leakage)"


def _norm(phrase: str) -> str:
    """The phrase as the cache key sees it: case-folded, single spaces, no double quotes."""
    return " ".join(phrase.replace('"', " ").casefold().split())


def _as_count(value: object, field: str, source: str, text: str) -> int:
    """An API's count field as an int (Google sends a string, SerpApi an int)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.replace(",", "").strip().isdigit():
        return int(value.replace(",", ""))
    raise CountSourceError(f"{source}: query {text!r}: {field} is {value!r}, not a count")


def _require_key(variables: Mapping[str, str], var: str, source: str, what: str) -> str:
    """The documented key variable ``var`` from ``variables`` (the values a caller read:
    ``os.environ`` for ``from_env``, the command line's or the service's settings); missing
    or blank is ``BackendUnavailable`` naming the variable."""
    value = (variables.get(var) or "").strip()
    if not value:
        raise BackendUnavailable(
            f"the {source} count source needs {what}: set the environment variable {var} "
            f"(export {var}=...) or pass it to the constructor"
        )
    return value


class WebCountSource(ABC):
    """The shared machinery of HTTP count sources; subclasses say how to ask and read back.

    A subclass provides ``name``, ``endpoint`` (what else besides the query decides the
    number, part of the cache key), ``format_query``, ``_send`` and ``_parse``.
    """

    name: str
    key_env: tuple[str, ...] = ()
    """Environment variables holding this source's credentials (for messages)."""

    allows_empty_query = False

    def __init__(
        self,
        *,
        cache_path: str | os.PathLike[str],
        base_url: str,
        total: float | None,
        budget: int | None = None,
        timeout: float = 30.0,
        concurrency: int = 4,
        max_attempts: int = 5,
        backoff: float = 0.5,
        max_wait: float = 60.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1 (got {concurrency})")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1 (got {max_attempts})")
        self.base_url = base_url
        self.cache = CountCache(cache_path)
        self.budget = QueryBudget(budget)
        self.timeout = timeout
        self.concurrency = concurrency
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_wait = max_wait
        self._total = total
        self._client = client

    # -- what a subclass provides ------------------------------------------------------

    @property
    @abstractmethod
    def endpoint(self) -> str:
        """What, besides the query, decides the count (index, engine id, locale)."""

    @abstractmethod
    def format_query(self, query: Query) -> str:
        """The query in the API's own syntax."""

    @abstractmethod
    async def _send(self, client: httpx.AsyncClient, text: str) -> httpx.Response:
        """Send one formatted query."""

    @abstractmethod
    def _parse(self, payload: Any, text: str) -> tuple[int, bool | None]:
        """``(count, approx)`` from a 2xx JSON payload; raises CountSourceError or Transient."""

    def _key_rejected(self, status: int, message: str) -> bool:
        return status in (401, 403)

    def _quota_used_up(self, status: int, message: str) -> bool:
        """A 429 that waiting will not fix (plan or daily quota spent): fail without retrying."""
        return False

    @classmethod
    @abstractmethod
    def from_variables(
        cls,
        variables: Mapping[str, str],
        *,
        cache_path: str | os.PathLike[str],
        budget: int | None = None,
        **kw: Any,
    ) -> Self:
        """Build the source, its keys (keyword arguments win) from ``variables``: the values of
        the variables ``key_env`` names, as the caller read them (reads no environment)."""

    @classmethod
    def from_env(
        cls, *, cache_path: str | os.PathLike[str], budget: int | None = None, **kw: Any
    ) -> Self:
        """``from_variables`` over the environment: a convenience for direct library users.
        The command line and the service read the variables through their settings and
        pass them (``open(variables=...)``), so neither calls this."""
        return cls.from_variables(os.environ, cache_path=cache_path, budget=budget, **kw)

    @classmethod
    def open(
        cls,
        *,
        cache_path: str | os.PathLike[str],
        budget: int | None = None,
        endpoint: str | None = None,
        variables: Mapping[str, str] | None = None,
    ) -> Self:
        """The count source registry's way to open it: at ``endpoint`` instead of the
        engine's URL when given, its keys from ``variables`` (the values of ``key_env`` the
        caller read; ``None``: the environment, ``from_env``)."""
        extra: dict[str, Any] = {"base_url": endpoint} if endpoint else {}
        if variables is None:
            return cls.from_env(cache_path=cache_path, budget=budget, **extra)
        return cls.from_variables(variables, cache_path=cache_path, budget=budget, **extra)

    def info(self) -> dict[str, Any]:
        """What produced the counts, for reports (never the key)."""
        return {
            "source": self.name,
            "endpoint": self.endpoint,
            "base_url": self.base_url,
            "cache": str(self.cache.path),
            "budget": self.budget.limit,
        }

    def close(self) -> None:  # noqa: B027 (part of the source interface, nothing to do)
        """Nothing to release: HTTP clients and SQLite connections live for one call."""

    # -- the CountSource protocol ----------------------------------------------------

    def total(self) -> float:
        """N, the number of documents (or tokens) the counts are out of."""
        if self._total is None:
            raise CountSourceError(f"{self.name}: no total configured; pass total=")
        return float(self._total)

    def counts(self, queries: Sequence[Query]) -> list[int]:
        """One count per query, in order (sync wrapper of :meth:`acounts`)."""
        return run_sync(lambda: self.acounts(queries))

    def uncached(self, queries: Sequence[Query]) -> list[Query]:
        """The distinct queries not yet cached: what :meth:`counts` would send (dry run)."""
        keys = [self._key(q) for q in queries]
        known = self.cache.get_many(self.name, self.endpoint, keys)
        return [q for k, q in self._distinct(queries, keys) if k not in known]

    async def acounts(self, queries: Sequence[Query]) -> list[int]:
        """One count per query, in order; only uncached distinct queries go out."""
        keys = [self._key(q) for q in queries]
        known = self.cache.get_many(self.name, self.endpoint, keys)
        todo = [(k, q) for k, q in self._distinct(queries, keys) if k not in known]
        if todo:
            await self._fetch_all(todo, known, n_distinct=len(set(keys)))
        return [known[k] for k in keys]

    # -- machinery ---------------------------------------------------------------------

    def _key(self, query: Query) -> str:
        if isinstance(query, str):
            raise InvalidInput(f"{self.name}: a query is a tuple of phrases, got {query!r}")
        if not query and not self.allows_empty_query:
            raise InvalidInput(f"{self.name}: a query needs at least one phrase")
        if any(not _norm(p) for p in query):
            raise InvalidInput(f"{self.name}: query {query!r} has an empty phrase")
        self._check_query(query)
        return query_key(query)

    def _check_query(self, query: Query) -> None:  # noqa: B027 (an optional hook)
        """Refuse, before anything is sent, a query this API cannot answer."""

    @staticmethod
    def _distinct(queries: Sequence[Query], keys: list[str]) -> list[tuple[str, Query]]:
        first: dict[str, Query] = {}
        for k, q in zip(keys, queries, strict=True):
            first.setdefault(k, q)
        return list(first.items())

    @asynccontextmanager
    async def _client_scope(self) -> AsyncIterator[httpx.AsyncClient]:
        async with http_client_scope(
            self._client, concurrency=self.concurrency, timeout=self.timeout, agent=_USER_AGENT
        ) as client:
            yield client

    async def _fetch_all(
        self, todo: list[tuple[str, Query]], known: dict[str, int], *, n_distinct: int
    ) -> None:
        """Fetch ``todo`` into ``known`` and the cache; stop cleanly on budget or failure
        (:func:`~leakage._http.fetch_all`: what was answered is cached before an error)."""

        def store(batch: list[tuple[str, Query, tuple[int, bool | None]]]) -> None:
            self.cache.put_many(
                self.name,
                self.endpoint,
                [(key, count, approx) for key, _, (count, approx) in batch],
            )

        async with self._client_scope() as client:
            fetched = await fetch_all(
                dict(todo),
                lambda query: self._fetch_one(client, query),
                gate=asyncio.Semaphore(self.concurrency),
                charge=lambda: None if self.budget.take() else "spent",
                store=store,
                failure=(CountSourceError,),
            )
        answered = fetched.answered
        known.update((key, count) for key, (count, _) in answered.items())
        if fetched.starved is not None:
            remaining = len(todo) - len(answered)
            done = n_distinct - remaining
            raise BudgetExhausted(
                f"{self.name}: the query budget of {self.budget.limit} is spent: "
                f"{done} of {n_distinct} distinct queries answered "
                f"({len(answered)} fetched in this batch), {remaining} remain. "
                f"The answers are cached in {self.cache.path}; run again with a larger "
                "budget to continue (cached queries cost nothing).",
                done=done,
                budget=self.budget.limit or 0,
            )

    async def _fetch_one(self, client: httpx.AsyncClient, query: Query) -> tuple[int, bool | None]:
        text = self.format_query(query)
        retrying = transient_retrying(
            self.max_attempts, backoff=self.backoff, max_wait=self.max_wait
        )
        try:
            async for attempt in retrying:
                with attempt:
                    try:
                        response = await self._send(client, text)
                    except httpx.TransportError as exc:
                        raise Transient(f"{type(exc).__name__}: {exc}".rstrip(": ")) from exc
                    self._check_status(response, text)
                    return self._parse(self._json(response, text), text)
        except Transient as exc:
            raise CountSourceError(
                f"{self.name}: query {text!r} failed after {self.max_attempts} attempts; "
                f"last error: {exc.detail}"
            ) from exc
        raise AssertionError("unreachable: tenacity either returns or raises")

    def _check_status(self, response: httpx.Response, text: str) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        message = error_message(response)
        if status == 429 and self._quota_used_up(status, message):
            raise CountSourceError(
                f"{self.name}: the API quota is used up (HTTP 429: {message}); waiting will "
                f"not help: raise the plan's limit or wait for its reset (query {text!r})"
            )
        raise_if_transient(response, message)
        if self._key_rejected(status, message):
            where = " and ".join(self.key_env) or "the credentials"
            raise CountSourceError(
                f"{self.name}: the API key is rejected (HTTP {status}: {message}); "
                f"check {where} (not retried)"
            )
        raise CountSourceError(
            f"{self.name}: query {text!r} failed with HTTP {status}: {message} (not retried)"
        )

    def _json(self, response: httpx.Response, text: str) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise CountSourceError(
                f"{self.name}: malformed JSON in the answer to query {text!r} "
                f"(HTTP {response.status_code}): {response.text[:120]!r}"
            ) from exc


__all__ = ["GOOGLE_PAGES_ESTIMATE", "WebCountSource", "retry_after_seconds"]
