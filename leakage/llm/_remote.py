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

Its documented variables are interpreted in one place,
:meth:`OpenAICompatibleClient.from_variables`, given their values (the command line and the
service read them through their settings); :meth:`~OpenAICompatibleClient.from_env` reads
them from the environment, for direct library users.
The wire format is read in :mod:`~leakage.llm._openai_wire`, the requests are sent, budgeted
and accounted in :mod:`~leakage.llm._openai_requests`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx
import numpy as np

from leakage._http import QueryBudget, run_sync
from leakage.errors import BackendUnavailable
from leakage.llm._base import Generation, GenerationParams, Message, Usage
from leakage.llm._openai_requests import ENV_API_KEYS, _RequestCore
from leakage.llm._openai_wire import _Job
from leakage.llm._response_cache import ResponseCache

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from leakage.llm._base import GenerationOptions

OPENAI_BASE_URL = "https://api.openai.com/v1"
ENV_BASE_URL = "LEAKAGE_LLM_BASE_URL"
ENV_MODEL = "LEAKAGE_LLM_MODEL"


class OpenAICompatibleClient(_RequestCore):
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
        arguments win over the environment.

        ``from_variables`` over the environment: a convenience for direct library users. The
        command line and the service read these variables through their settings and pass
        them on (``from_variables``), so neither calls this. ``cache_path`` is explicit (the
        callers pass :attr:`leakage.paths.Paths.llm_responses`)."""
        return cls.from_variables(os.environ, cache_path=cache_path, **kw)

    @classmethod
    def from_variables(
        cls,
        variables: Mapping[str, str],
        *,
        cache_path: str | os.PathLike[str] | None = None,
        **kw: Any,
    ) -> OpenAICompatibleClient:
        """A client configured by ``base_url``, ``model`` and ``api_key``, else by the values
        of ``LEAKAGE_LLM_BASE_URL`` (default: OpenAI's API when a key is given),
        ``LEAKAGE_LLM_MODEL`` and ``LEAKAGE_LLM_API_KEY`` or ``OPENAI_API_KEY`` in
        ``variables``, as the caller read them (the command line's and the service's
        settings); reads no environment (nor does the constructor, which takes all three)."""
        base_url = kw.pop("base_url", None) or (variables.get(ENV_BASE_URL) or "").strip()
        model = kw.pop("model", None) or (variables.get(ENV_MODEL) or "").strip()
        api_key = kw.pop("api_key", None)
        for var in ENV_API_KEYS:
            api_key = api_key or (variables.get(var) or "").strip() or None
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
        self, messages: Sequence[Message] | str, **options: Unpack[GenerationOptions]
    ) -> Generation:
        """A chat completion (a list of messages) or a text completion (a string);
        ``options`` are ``GenerationParams``' fields."""
        params = GenerationParams.of(**options)
        return run_sync(lambda: self._agenerate_many([messages], params))[0]

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
        self, messages: Sequence[Message] | str, **options: Unpack[GenerationOptions]
    ) -> Generation:
        """The async :meth:`generate`."""
        (generation,) = await self._agenerate_many([messages], GenerationParams.of(**options))
        return generation

    def generate_many(
        self,
        requests: Sequence[Sequence[Message] | str],
        **options: Unpack[GenerationOptions],
    ) -> list[Generation]:
        """One :class:`Generation` per chat or prompt, in order (sync :meth:`agenerate_many`)."""
        params = GenerationParams.of(**options)
        return run_sync(lambda: self._agenerate_many(requests, params))

    async def agenerate_many(
        self,
        requests: Sequence[Sequence[Message] | str],
        **options: Unpack[GenerationOptions],
    ) -> list[Generation]:
        """Generations for many chats or prompts, concurrently within the limit."""
        return await self._agenerate_many(requests, GenerationParams.of(**options))

    async def _agenerate_many(
        self, requests: Sequence[Sequence[Message] | str], params: GenerationParams
    ) -> list[Generation]:
        jobs = [self._generation_job(r, params) for r in requests]
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

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient({self.base_url!r}, {self.model!r})"


__all__ = [
    "ENV_API_KEYS",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "OPENAI_BASE_URL",
    "OpenAICompatibleClient",
]
