"""The async request core of the OpenAI-compatible client: requests built and sent (the
shared budgeted fetch of :mod:`leakage._http`), statuses and answers read, concurrency per
event loop, the request and token budgets, token and cost accounting."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx

from leakage._http import (
    QueryBudget,
    Transient,
    error_message,
    fetch_all,
    http_client_scope,
    raise_if_transient,
    transient_retrying,
)
from leakage.errors import BackendUnavailable, BudgetExhausted, LLMError
from leakage.llm._base import GenerationParams, Message, Usage
from leakage.llm._openai_wire import (
    _SCORE_NEEDS,
    Kind,
    _as_message,
    _Job,
    _Malformed,
    _NoPromptLogprobs,
    _parse_generation,
    _parse_score,
    _refuses_zero,
)
from leakage.llm._response_cache import ResponseCache, request_key

ENV_API_KEYS = ("LEAKAGE_LLM_API_KEY", "OPENAI_API_KEY")

_USER_AGENT = "leakage (LLM judge; https://pypi.org/project/leakage)"


class _RequestCore:
    """Requests, budgets and accounting of ``OpenAICompatibleClient`` (its private methods)."""

    base_url: str
    model: str
    name: str
    cache: ResponseCache | None
    concurrency: int
    timeout: float
    max_attempts: int
    backoff: float
    max_wait: float
    budget: QueryBudget
    budget_tokens: int | None
    tokens_spent: int
    prices: tuple[float, float] | None
    usage: Usage
    _api_key: str | None
    _client: httpx.AsyncClient | None
    _lock: threading.Lock
    _gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
    _score_max_tokens: int

    # -- requests ------------------------------------------------------------------------

    def _job(
        self, kind: Kind, body: dict[str, Any], keyed: Mapping[str, Any], split: int = 0
    ) -> _Job:
        return _Job(kind, request_key(self.model, kind, keyed), body, split)

    def _score_job(self, prompt: str, continuation: str) -> _Job:
        body = {
            "prompt": prompt + continuation,
            "echo": True,
            "logprobs": 1,
            "temperature": 0.0,
        }
        keyed = {"prompt": prompt, "continuation": continuation}
        return self._job("score", body, keyed, split=len(prompt))

    def _generation_job(self, request: Sequence[Message] | str, params: GenerationParams) -> _Job:
        body: dict[str, Any]
        if isinstance(request, str):
            kind: Kind = "completions"
            body = {"prompt": request}
        else:
            if not request:
                raise ValueError("a chat needs at least one message")
            kind = "chat"
            body = {"messages": [_as_message(m, i) for i, m in enumerate(request)]}
        body.update(max_tokens=params.max_tokens, temperature=params.temperature)
        if params.stop:
            body["stop"] = list(params.stop)
        if params.seed is not None:
            body["seed"] = params.seed
        top_logprobs = params.top_logprobs
        if top_logprobs and kind == "chat":
            body.update(logprobs=True, top_logprobs=top_logprobs)
        elif top_logprobs:
            body["logprobs"] = top_logprobs
        return self._job(kind, body, body)

    async def _answer(self, jobs: Sequence[_Job]) -> list[tuple[dict[str, Any], bool]]:
        """``(answer, from_cache)`` per job, in order; only uncached distinct jobs go out."""
        distinct = {job.key: job for job in jobs}
        known = self.cache.get_many(self.model, distinct) if self.cache is not None else {}
        if known:
            self._count_cached(len(known))
        todo = [job for key, job in distinct.items() if key not in known]
        fetched = await self._fetch_all(todo, n_distinct=len(distinct)) if todo else {}
        return [(known[j.key], True) if j.key in known else (fetched[j.key], False) for j in jobs]

    async def _fetch_all(self, todo: list[_Job], *, n_distinct: int) -> dict[str, dict[str, Any]]:
        """Send ``todo``; stop cleanly on a spent budget or a failure
        (:func:`~leakage._http.fetch_all`: every answer is cached before an error)."""

        def store(batch: list[tuple[str, _Job, dict[str, Any]]]) -> None:
            if self.cache is not None:
                self.cache.put_many(self.model, [(key, job.kind, a) for key, job, a in batch])

        async with self._client_scope() as client:

            async def send(job: _Job) -> dict[str, Any]:
                answer = await self._send(client, job)
                self._account(answer)
                return answer

            fetched = await fetch_all(
                {job.key: job for job in todo},
                send,
                gate=self._gate(),
                charge=self._charge,
                store=store,
                failure=(LLMError, BackendUnavailable),
            )
        if fetched.starved is not None:
            raise self._exhausted(fetched.starved, todo, fetched.answered, n_distinct)
        return fetched.answered

    async def _send(self, client: httpx.AsyncClient, job: _Job) -> dict[str, Any]:
        url = f"{self.base_url}/{'chat/completions' if job.kind == 'chat' else 'completions'}"
        retrying = transient_retrying(
            self.max_attempts, backoff=self.backoff, max_wait=self.max_wait
        )
        try:
            async for attempt in retrying:
                with attempt:
                    max_tokens = self._score_max_tokens
                    response = await self._post(client, url, job, max_tokens)
                    if job.kind == "score" and max_tokens == 0 and _refuses_zero(response):
                        self._score_max_tokens = 1  # remembered for the client's lifetime
                        response = await self._post(client, url, job, 1)
                    self._check_status(response, url, job)
                    return self._parse(response, url, job)
        except Transient as exc:
            raise LLMError(
                f"{self.name}: POST {url} failed after {self.max_attempts} attempts; "
                f"last error: {exc.detail}"
            ) from exc
        raise AssertionError("unreachable: tenacity either returns or raises")

    async def _post(
        self, client: httpx.AsyncClient, url: str, job: _Job, score_max_tokens: int
    ) -> httpx.Response:
        body = {"model": self.model, **job.body}
        if job.kind == "score":
            body["max_tokens"] = score_max_tokens
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        try:
            return await client.post(url, json=body, headers=headers)
        except httpx.TimeoutException as exc:
            raise Transient(f"{type(exc).__name__} (no answer within {self.timeout} s)") from exc
        except httpx.TransportError as exc:
            raise Transient(f"{type(exc).__name__}: {exc}".rstrip(": ")) from exc

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if self._api_key else text

    def _check_status(self, response: httpx.Response, url: str, job: _Job) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        message = self._redact(error_message(response))
        if status == 429 and "insufficient_quota" in response.text:
            raise LLMError(
                f"{self.name}: the account's quota is used up (HTTP 429 from {url}: {message}); "
                "waiting will not help: check the plan and billing (not retried)"
            )
        raise_if_transient(response, message)
        if status in (401, 403):
            raise LLMError(
                f"{self.name}: the endpoint rejected the API key (HTTP {status} from {url}: "
                f"{message}); pass api_key= or set {' or '.join(ENV_API_KEYS)} to a key "
                f"with access to model {self.model!r} (not retried)"
            )
        lowered = message.casefold()
        if job.kind == "score" and (
            status == 404 or any(w in lowered for w in ("echo", "logprob", "chat"))
        ):
            hint = (
                " (if the model name or base URL is wrong, fix that first)" if status == 404 else ""
            )
            raise BackendUnavailable(
                f"{self.name}: the endpoint cannot score continuations (HTTP {status} from POST "
                f"{url}: {message}){hint}: {_SCORE_NEEDS}"
            )
        if status == 404:
            raise LLMError(
                f"{self.name}: HTTP 404 from POST {url}: {message}. The model name "
                f"{self.model!r} or the path is wrong: base_url is the API root, usually ending "
                f"in /v1 (e.g. http://localhost:8000/v1), and GET {self.base_url}/models lists "
                "the served models (not retried)"
            )
        raise LLMError(f"{self.name}: HTTP {status} from POST {url}: {message} (not retried)")

    def _parse(self, response: httpx.Response, url: str, job: _Job) -> dict[str, Any]:
        try:
            payload = response.json()
        except ValueError as exc:
            raise LLMError(
                f"{self.name}: malformed JSON from POST {url} (HTTP {response.status_code}): "
                f"{self._redact(response.text[:120])!r}"
            ) from exc
        try:
            if job.kind == "score":
                return _parse_score(payload, job.split, len(job.body["prompt"]))
            return _parse_generation(job.kind, payload)
        except _Malformed as exc:
            raise LLMError(
                f"{self.name}: unreadable answer from POST {url}: {exc}; is this an "
                f"OpenAI-compatible endpoint? The answer began {response.text[:160]!r}"
            ) from exc
        except _NoPromptLogprobs as exc:
            raise BackendUnavailable(
                f"{self.name}: the endpoint at {url} {exc}: {_SCORE_NEEDS}"
            ) from exc

    # -- concurrency, budget, accounting -------------------------------------------------

    def _gate(self) -> asyncio.Semaphore:
        """The concurrency limit of the running event loop (shared by its concurrent calls)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            gate = self._gates.get(loop)
            if gate is None:
                gate = self._gates[loop] = asyncio.Semaphore(self.concurrency)
            return gate

    @asynccontextmanager
    async def _client_scope(self) -> AsyncIterator[httpx.AsyncClient]:
        async with http_client_scope(
            self._client, concurrency=self.concurrency, timeout=self.timeout, agent=_USER_AGENT
        ) as client:
            yield client

    def _charge(self) -> str | None:
        """Take one request from the budgets, or say which budget is spent."""
        with self._lock:
            if self.budget_tokens is not None and self.tokens_spent >= self.budget_tokens:
                return (
                    f"the token budget of {self.budget_tokens} is spent "
                    f"({self.tokens_spent} tokens used)"
                )
            if not self.budget.take():
                return f"the request budget of {self.budget.limit} is spent"
        return None

    def _exhausted(
        self, why: str, todo: list[_Job], answered: dict[str, Any], n_distinct: int
    ) -> BudgetExhausted:
        remaining = len(todo) - len(answered)
        done = n_distinct - remaining
        where = (
            f"The answers are cached in {self.cache.path}; run again with a larger budget to "
            "continue (cached requests cost nothing)."
            if self.cache is not None
            else "Pass cache_path= to keep answers across runs."
        )
        token_budget = why.startswith("the token")
        return BudgetExhausted(
            f"{self.name}: {why}: {done} of {n_distinct} distinct requests answered "
            f"({len(answered)} sent in this batch, {n_distinct - len(todo)} from the cache), "
            f"{remaining} remain. {where}",
            done=done,
            budget=(self.budget_tokens if token_budget else self.budget.limit) or 0,
        )

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        if self.prices is None:
            return 0.0
        return (prompt_tokens * self.prices[0] + completion_tokens * self.prices[1]) / 1e6

    def _model_usage(self) -> dict[str, float]:
        return self.usage.by_model.setdefault(
            self.model,
            {"requests": 0, "cached": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0},
        )

    def _account(self, answer: Mapping[str, Any]) -> None:
        prompt_tokens, completion_tokens = answer["prompt_tokens"], answer["completion_tokens"]
        cost = self._cost(prompt_tokens, completion_tokens)
        with self._lock:
            self.tokens_spent += prompt_tokens + completion_tokens
            self.usage.requests += 1
            self.usage.prompt_tokens += prompt_tokens
            self.usage.completion_tokens += completion_tokens
            self.usage.cost_usd += cost
            model = self._model_usage()
            model["requests"] += 1
            model["prompt_tokens"] += prompt_tokens
            model["completion_tokens"] += completion_tokens
            model["cost_usd"] += cost

    def _count_cached(self, n: int) -> None:
        with self._lock:
            self.usage.cached += n
            self._model_usage()["cached"] += n
