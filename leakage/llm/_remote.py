"""An :class:`~leakage.llm.LLMClient` for any OpenAI-compatible endpoint.

vLLM, Ollama, the llama.cpp server and OpenAI itself all speak ``POST /chat/completions``
(a list of messages) and most also ``POST /completions`` (a plain prompt). This client uses
the first for chats and the second for plain prompts, and scores continuations (the
likelihood judge) with the completions API's ``echo`` + ``logprobs``: the server returns
the log-probability of every token of ``prompt + continuation`` and the client sums those
of the continuation. Servers that do not echo prompt logprobs (OpenAI's chat models,
Ollama, the llama.cpp server at the time of writing) are detected and refused with
:class:`~leakage.errors.BackendUnavailable`, never scored as zero.

The HTTP machinery is shared with the web count sources (:mod:`leakage._http`): the
``Retry-After`` parser and backoff policy, the TLS context, the sync-from-async runner, the
query budget and the budgeted concurrent fetch. Around it:

- a persistent SQLite response cache (:class:`~._response_cache.ResponseCache`), so the
  same request never goes out twice, across runs and processes;
- budgets in requests and in tokens: when one is spent the batch stops cleanly with
  :class:`~leakage.errors.BudgetExhausted` and what was answered stays cached;
- retries for 429 (honouring ``Retry-After``), 5xx, timeouts and transport errors; other
  4xx and unreadable answers fail at once with :class:`~leakage.errors.LLMError`;
- bounded concurrency (one semaphore per event loop) and an async core with sync wrappers;
- token and cost accounting in :class:`~leakage.llm.Usage`.

Environment variables are read in one place, :meth:`OpenAICompatibleClient.from_env`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import httpx
import numpy as np

from leakage._http import (
    QueryBudget,
    Transient,
    error_message,
    fetch_all,
    http_client_scope,
    raise_if_transient,
    run_sync,
    transient_retrying,
)
from leakage.errors import BackendUnavailable, BudgetExhausted, LLMError
from leakage.llm._base import Generation, Message, Usage
from leakage.llm._response_cache import ResponseCache, request_key

OPENAI_BASE_URL = "https://api.openai.com/v1"
ENV_BASE_URL = "LEAKAGE_LLM_BASE_URL"
ENV_MODEL = "LEAKAGE_LLM_MODEL"
ENV_API_KEYS = ("LEAKAGE_LLM_API_KEY", "OPENAI_API_KEY")

_USER_AGENT = "leakage (LLM judge; https://pypi.org/project/leakage)"
_SCORE_NEEDS = (
    "the likelihood judge needs an endpoint whose completions API echoes the prompt with its "
    "logprobs (echo + logprobs, e.g. vLLM); the elicitation judge works with any chat endpoint"
)

Kind = Literal["chat", "completions", "score"]


@dataclass(frozen=True)
class _Job:
    """One distinct request: its endpoint kind, cache key and body (without ``model``)."""

    kind: Kind
    key: str
    body: dict[str, Any]
    split: int = 0
    """score: where the continuation starts in ``body["prompt"]``."""


class _Malformed(Exception):
    """A 2xx answer lacks a field or has one of the wrong type."""

    def __init__(self, path: str, problem: str = "is missing") -> None:
        super().__init__(f"{path} {problem}")
        self.path = path


class _NoPromptLogprobs(Exception):
    """The server answered a score request without the prompt's token logprobs."""


def _dig(node: Any, *steps: str | int, where: str = "") -> Any:
    """``node[steps[0]][steps[1]]...``, raising :class:`_Malformed` with the JSON path."""
    path = where
    for step in steps:
        if isinstance(step, int):
            path = f"{path}[{step}]"
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                raise _Malformed(path)
        else:
            path = f"{path}.{step}" if path else step
            if not isinstance(node, dict) or step not in node:
                raise _Malformed(path)
        node = node[step]
    return node


def _number(value: Any, path: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise _Malformed(path, f"is {value!r}, not a number")


def _list(value: Any, path: str) -> list[Any]:
    if isinstance(value, list):
        return value
    raise _Malformed(path, f"is {type(value).__name__}, not a list")


def _tokens_used(payload: Any) -> tuple[int, int]:
    """``(prompt_tokens, completion_tokens)``; 0 when the server sends no usage."""
    usage = payload.get("usage") if isinstance(payload, dict) else None
    if not isinstance(usage, dict):
        return 0, 0

    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))


def _chat_top_logprobs(logprobs: Any) -> list[dict[str, float]] | None:
    """Chat format: ``logprobs.content[i].top_logprobs[j].{token, logprob}``."""
    if not isinstance(logprobs, dict) or logprobs.get("content") is None:
        return None
    where = "choices[0].logprobs.content"
    out: list[dict[str, float]] = []
    for i, entry in enumerate(_list(logprobs["content"], where)):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict):
            raise _Malformed(at, f"is {type(entry).__name__}, not an object")
        alternatives = _list(entry.get("top_logprobs") or [], f"{at}.top_logprobs")
        position: dict[str, float] = {}
        for j, alt in enumerate(alternatives):
            alt_at = f"{at}.top_logprobs[{j}]"
            position[str(_dig(alt, "token", where=alt_at))] = _number(
                _dig(alt, "logprob", where=alt_at), f"{alt_at}.logprob"
            )
        if not position:  # logprobs without alternatives: the chosen token only
            position[str(_dig(entry, "token", where=at))] = _number(
                _dig(entry, "logprob", where=at), f"{at}.logprob"
            )
        out.append(position)
    return out


def _legacy_top_logprobs(logprobs: Any) -> list[dict[str, float]] | None:
    """Completions format: ``logprobs.top_logprobs[i]`` is a ``{token: logprob}`` dict."""
    if not isinstance(logprobs, dict) or logprobs.get("top_logprobs") is None:
        return None
    where = "choices[0].logprobs.top_logprobs"
    out: list[dict[str, float]] = []
    for i, position in enumerate(_list(logprobs["top_logprobs"], where)):
        if position is None:  # the first echoed token has no logprob
            out.append({})
            continue
        if not isinstance(position, dict):
            raise _Malformed(f"{where}[{i}]", f"is {type(position).__name__}, not an object")
        out.append({str(t): _number(v, f"{where}[{i}][{t!r}]") for t, v in position.items()})
    return out


def _parse_generation(kind: Kind, payload: Any) -> dict[str, Any]:
    choice = _dig(payload, "choices", 0)
    if kind == "chat":
        text = _dig(choice, "message", "content", where="choices[0]")
        top = _chat_top_logprobs(choice.get("logprobs"))
        path = "choices[0].message.content"
    else:
        text = _dig(choice, "text", where="choices[0]")
        top = _legacy_top_logprobs(choice.get("logprobs"))
        path = "choices[0].text"
    if text is None:  # the chat format allows null content (a refusal, a tool call)
        text = ""
    if not isinstance(text, str):
        raise _Malformed(path, f"is {type(text).__name__}, not a string")
    prompt_tokens, completion_tokens = _tokens_used(payload)
    return {
        "text": text,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "top_logprobs": top,
    }


def _parse_score(payload: Any, split: int, end: int) -> dict[str, Any]:
    """Σ logprob of the echoed tokens covering ``text[split:end]`` (legacy logprobs format).

    A token counts when it starts inside the continuation, or starts in the prompt and
    reaches into it (``"is " + "cat"`` is often tokenised ``" is", " cat"``: the
    continuation's first word must not be lost). Tokens at or after ``end`` were generated.
    """
    choice = _dig(payload, "choices", 0)
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(logprobs, dict):
        raise _NoPromptLogprobs("returned no logprobs (choices[0].logprobs is empty)")
    where = "choices[0].logprobs"
    for name in ("token_logprobs", "text_offset"):
        if name not in logprobs:
            raise _NoPromptLogprobs(f"returned no {where}.{name} (the completions format)")
    values = _list(logprobs["token_logprobs"], f"{where}.token_logprobs")
    offsets = _list(logprobs["text_offset"], f"{where}.text_offset")
    if len(values) != len(offsets):
        raise _Malformed(
            f"{where}.token_logprobs",
            f"has {len(values)} entries but text_offset has {len(offsets)}",
        )
    for i, offset in enumerate(offsets):
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise _Malformed(f"{where}.text_offset[{i}]", f"is {offset!r}, not an integer")
    if not any(offset < end for offset in offsets):
        raise _NoPromptLogprobs(
            "did not echo the prompt: logprobs came back for generated tokens only"
        )
    total = 0.0
    for i, start in enumerate(offsets):
        if start >= end:
            continue
        stop = offsets[i + 1] if i + 1 < len(offsets) else end
        if start >= split or stop > split:
            if values[i] is None:
                raise _Malformed(f"{where}.token_logprobs[{i}]", "is null for a scored token")
            total += _number(values[i], f"{where}.token_logprobs[{i}]")
    prompt_tokens, completion_tokens = _tokens_used(payload)
    return {
        "logprob": total,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
    }


def _refuses_zero(response: httpx.Response) -> bool:
    """The server refused ``max_tokens: 0`` (vLLM before echo-only support, others)."""
    return response.status_code in (400, 422) and "max_tokens" in error_message(response)


def _as_message(item: Any, index: int) -> dict[str, str]:
    if isinstance(item, Message):
        return {"role": item.role, "content": item.content}
    if isinstance(item, Mapping) and isinstance(item.get("content"), str) and item.get("role"):
        return {"role": str(item["role"]), "content": item["content"]}
    raise TypeError(f"messages[{index}] is {item!r}: expected a leakage.llm.Message")


class OpenAICompatibleClient:
    """An OpenAI-compatible endpoint as an :class:`~leakage.llm.LLMClient`.

    ``base_url`` is the API root (``http://localhost:8000/v1``); ``api_key`` is sent as a
    bearer token when given (local servers need none). ``cache_path`` names a SQLite file
    of answers (``None``: no cache). ``budget_requests`` caps the requests sent, and
    ``budget_tokens`` the prompt + completion tokens spent, over the client's lifetime
    (cache hits are free; requests already in flight when a budget runs out finish).
    ``prices`` is ``(prompt, completion)`` in USD per million tokens, for :attr:`usage`.
    An injected ``client`` (an ``httpx.AsyncClient``) is used for the async methods and
    left open; by default each call opens and closes its own.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        cache_path: str | os.PathLike[str] | None = None,
        concurrency: int = 4,
        timeout: float = 60.0,
        max_attempts: int = 5,
        backoff: float = 0.5,
        max_wait: float = 60.0,
        budget_tokens: int | None = None,
        budget_requests: int | None = None,
        prices: tuple[float, float] | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not base_url.strip():
            raise ValueError("base_url is empty (e.g. http://localhost:8000/v1)")
        if not model.strip():
            raise ValueError("model is empty: name the model the endpoint serves")
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1 (got {concurrency})")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1 (got {max_attempts})")
        if budget_tokens is not None and budget_tokens < 0:
            raise ValueError(f"a token budget cannot be negative (got {budget_tokens})")
        if prices is not None and (len(prices) != 2 or min(prices) < 0):
            raise ValueError(f"prices is (prompt, completion) USD per 1M tokens, got {prices!r}")
        self.base_url = base_url.strip().rstrip("/")
        self.model = model.strip()
        self.name = self.model
        self.cache = ResponseCache(cache_path) if cache_path is not None else None
        self.concurrency = concurrency
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_wait = max_wait
        self.budget = QueryBudget(budget_requests)
        self.budget_tokens = budget_tokens
        self.tokens_spent = 0
        self.prices = None if prices is None else (float(prices[0]), float(prices[1]))
        self.usage = Usage()
        self._api_key = api_key or None
        self._client = client
        self._lock = threading.Lock()  # budget and usage: sync calls may come from threads
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._gates = weakref.WeakKeyDictionary()
        self._score_max_tokens = 0  # 1 once the server refuses max_tokens=0

    @classmethod
    def from_env(
        cls, *, cache_path: str | os.PathLike[str] | None = None, **kw: Any
    ) -> OpenAICompatibleClient:
        """A client configured by ``LEAKAGE_LLM_BASE_URL`` (default: OpenAI's API),
        ``LEAKAGE_LLM_MODEL`` and ``LEAKAGE_LLM_API_KEY`` or ``OPENAI_API_KEY``; keyword
        arguments win over the environment."""
        base_url = kw.pop("base_url", None) or os.environ.get(ENV_BASE_URL, "").strip()
        model = kw.pop("model", None) or os.environ.get(ENV_MODEL, "").strip()
        api_key = kw.pop("api_key", None)
        for var in ENV_API_KEYS:
            api_key = api_key or os.environ.get(var, "").strip() or None
        if not model:
            raise BackendUnavailable(
                f"the LLM endpoint needs a model name: set {ENV_MODEL} (export {ENV_MODEL}=...) "
                "to a model the endpoint serves, or pass model="
            )
        if not base_url:
            if api_key is None:
                raise BackendUnavailable(
                    f"no LLM endpoint configured: set {ENV_BASE_URL} to an OpenAI-compatible "
                    f"server (e.g. http://localhost:8000/v1 for vLLM), or set "
                    f"{' or '.join(ENV_API_KEYS)} to use OpenAI's API"
                )
            base_url = OPENAI_BASE_URL
        return cls(base_url, model, api_key, cache_path=cache_path, **kw)

    # -- the LLMClient protocol ---------------------------------------------------------

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        """Σ log P(token) of each continuation after ``prompt`` (natural log)."""
        return [float(x) for x in self.score_many([prompt], continuations)[0]]

    def generate(
        self,
        messages: Sequence[Message] | str,
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        top_logprobs: int = 0,
        stop: Sequence[str] | None = None,
    ) -> Generation:
        """A chat completion (a list of messages) or a text completion (a string)."""
        return run_sync(
            lambda: self.agenerate(
                messages,
                max_tokens=max_tokens,
                temperature=temperature,
                top_logprobs=top_logprobs,
                stop=stop,
            )
        )

    def info(self) -> dict[str, object]:
        """Model, endpoint and settings, for reports (never the key)."""
        return {
            "client": "openai-compatible",
            "model": self.model,
            "base_url": self.base_url,
            "cache": None if self.cache is None else str(self.cache.path),
            "concurrency": self.concurrency,
            "timeout": self.timeout,
            "max_attempts": self.max_attempts,
            "budget_requests": self.budget.limit,
            "budget_tokens": self.budget_tokens,
            "prices_usd_per_1m_tokens": self.prices,
        }

    # -- batches and the async core ------------------------------------------------------

    def score_many(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """``(len(prompts), len(continuations))`` log-probabilities (sync :meth:`ascore_many`)."""
        return run_sync(lambda: self.ascore_many(prompts, continuations))

    async def ascore_many(self, prompts: Sequence[str], continuations: Sequence[str]) -> np.ndarray:
        """Every continuation scored after every prompt, concurrently within the limit.

        One completions request per pair (``echo``, ``logprobs``, ``max_tokens`` 0, or 1
        where the server refuses 0); an empty continuation scores 0 without a request.
        """
        if isinstance(prompts, str) or isinstance(continuations, str):
            raise TypeError("prompts and continuations are sequences of strings, not a string")
        jobs: list[_Job | None] = [
            self._score_job(p, c) if c else None for p in prompts for c in continuations
        ]
        answers = await self._answer([j for j in jobs if j is not None])
        it = iter(answers)
        flat = [0.0 if j is None else float(next(it)[0]["logprob"]) for j in jobs]
        return np.asarray(flat, dtype=np.float64).reshape(len(prompts), len(continuations))

    async def agenerate(
        self,
        messages: Sequence[Message] | str,
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        top_logprobs: int = 0,
        stop: Sequence[str] | None = None,
    ) -> Generation:
        """The async :meth:`generate`."""
        (generation,) = await self.agenerate_many(
            [messages],
            max_tokens=max_tokens,
            temperature=temperature,
            top_logprobs=top_logprobs,
            stop=stop,
        )
        return generation

    def generate_many(
        self,
        requests: Sequence[Sequence[Message] | str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        top_logprobs: int = 0,
        stop: Sequence[str] | None = None,
    ) -> list[Generation]:
        """One :class:`Generation` per chat or prompt, in order (sync :meth:`agenerate_many`)."""
        return run_sync(
            lambda: self.agenerate_many(
                requests,
                max_tokens=max_tokens,
                temperature=temperature,
                top_logprobs=top_logprobs,
                stop=stop,
            )
        )

    async def agenerate_many(
        self,
        requests: Sequence[Sequence[Message] | str],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        top_logprobs: int = 0,
        stop: Sequence[str] | None = None,
    ) -> list[Generation]:
        """Generations for many chats or prompts, concurrently within the limit."""
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1 (got {max_tokens})")
        if top_logprobs < 0:
            raise ValueError(f"top_logprobs cannot be negative (got {top_logprobs})")
        if isinstance(stop, str):
            stop = [stop]
        jobs = [
            self._generation_job(r, max_tokens, temperature, top_logprobs, stop) for r in requests
        ]
        return [
            Generation(
                text=a["text"],
                prompt_tokens=a["prompt_tokens"],
                completion_tokens=a["completion_tokens"],
                top_logprobs=a["top_logprobs"],
                cached=cached,
            )
            for a, cached in await self._answer(jobs)
        ]

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

    def _generation_job(
        self,
        request: Sequence[Message] | str,
        max_tokens: int,
        temperature: float,
        top_logprobs: int,
        stop: Sequence[str] | None,
    ) -> _Job:
        body: dict[str, Any]
        if isinstance(request, str):
            kind: Kind = "completions"
            body = {"prompt": request}
        else:
            if not request:
                raise ValueError("a chat needs at least one message")
            kind = "chat"
            body = {"messages": [_as_message(m, i) for i, m in enumerate(request)]}
        body.update(max_tokens=max_tokens, temperature=temperature)
        if stop:
            body["stop"] = list(stop)
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

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient({self.base_url!r}, {self.model!r})"


__all__ = ["OpenAICompatibleClient"]
