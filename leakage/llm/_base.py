"""The LLM layer: one client protocol for local causal LMs and remote OpenAI-compatible APIs.

Two abilities, because the judge needs both:

* ``score``: log-probabilities of given continuations after a prompt (the likelihood judge:
  log P(clue | "the secret is w")). Local models compute it exactly from the logits, reusing
  the prompt's KV cache across continuations; remote endpoints use ``echo`` + ``logprobs`` on
  the completions API where the server offers it.
* ``generate``: text from a chat or a plain prompt (the elicitation judge, descriptions,
  ratings), with ``top_logprobs`` of the first generated token when available.

Abilities beyond these are optional and declared as protocols, in the style of the
backends' (``leakage.backends.base``): ``SupportsScoreMany``, ``SupportsScoreGroups``,
``SupportsScoreEach`` (batched scoring) and ``SupportsTokenizer`` (a model run here, whose
tokenizer can be read). A caller asks ``isinstance(client, SupportsScoreGroups)`` and takes
a slower path without it; a client (or a test fake) needs no base class to have one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from typing_extensions import Unpack

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str


class GenerationOptions(TypedDict, total=False):
    """The keywords ``generate`` takes, each optional: the fields of ``GenerationParams``
    (``stop`` may also be one string or None there)."""

    max_tokens: int
    temperature: float
    top_logprobs: int
    stop: Sequence[str] | str | None
    seed: int | None


@dataclass(frozen=True)
class GenerationParams:
    """How to generate, checked once for every client: ``generate(messages, **options)``
    builds one with ``GenerationParams.of(**options)``."""

    max_tokens: int = 256
    """Most tokens to generate (at least 1)."""
    temperature: float = 0.0
    """0: greedy; above 0: sampled at this temperature."""
    top_logprobs: int = 0
    """Per generated token, this many of the likeliest tokens and their log-probabilities
    (``Generation.top_logprobs``; 0: none)."""
    stop: tuple[str, ...] = ()
    """Generation ends before the first of these strings."""
    seed: int | None = None
    """Seeds the sampler when ``temperature`` > 0 (None: the client's own; an endpoint
    passes it on as the API's ``seed``)."""

    def __post_init__(self) -> None:
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1 (got {self.max_tokens})")
        if not math.isfinite(self.temperature) or self.temperature < 0:
            raise ValueError(f"temperature must be 0 or more (got {self.temperature})")
        if self.top_logprobs < 0:
            raise ValueError(f"top_logprobs cannot be negative (got {self.top_logprobs})")
        if not isinstance(self.stop, tuple) or not all(isinstance(x, str) for x in self.stop):
            raise ValueError(f"stop is a sequence of strings (got {self.stop!r})")

    @classmethod
    def of(cls, **options: Unpack[GenerationOptions]) -> GenerationParams:
        """The parameters ``generate``'s keywords say (a ``stop`` string is one stop, None
        none); ``TypeError`` names a keyword that is not one."""
        unknown = sorted(set(options) - GENERATION_KEYWORDS)
        if unknown:
            raise TypeError(f"generate() got unexpected keyword(s): {', '.join(unknown)}")
        given: dict[str, Any] = dict(options)
        stop = given.pop("stop", None)
        return cls(**given, stop=(stop,) if isinstance(stop, str) else tuple(stop or ()))


GENERATION_KEYWORDS = frozenset(f.name for f in fields(GenerationParams))
"""The keywords ``generate`` takes."""


@dataclass(frozen=True)
class Generation:
    """One generated answer."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    top_logprobs: list[dict[str, float]] | None = None
    """Per generated token (as far as the server returned them): token -> log-probability of
    the most likely alternatives at that position."""
    cached: bool = False
    """True when the answer came from the response cache (no tokens spent)."""


@dataclass
class Usage:
    """Token and cost accounting for one client over its lifetime."""

    requests: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    by_model: dict[str, dict[str, float]] = field(default_factory=dict)


@runtime_checkable
class LLMClient(Protocol):
    """A language model the judge can ask."""

    name: str
    """Model identity (part of cache keys and reports)."""

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        """Σ log P(token) over each continuation's tokens, given ``prompt`` (natural log).

        The prompt is encoded once; every continuation is scored after it. A continuation's
        first token is conditioned on the whole prompt (no whitespace is added: put the
        separator at the end of the prompt or the start of the continuation).
        """
        ...

    def generate(
        self, messages: Sequence[Message] | str, **options: Unpack[GenerationOptions]
    ) -> Generation:
        """A completion of a chat (a list of messages) or of a plain prompt (a string);
        ``options`` are ``GenerationParams``' fields (``max_tokens``, ``temperature``,
        ``top_logprobs``, ``stop``, ``seed``)."""
        ...

    def info(self) -> dict[str, object]:
        """Model name and settings, for reports."""
        ...


@runtime_checkable
class SupportsScoreMany(Protocol):
    """Scores every continuation after every prompt in one call (the local model encodes
    the prompts together; an endpoint sends the pairs concurrently)."""

    def score_many(
        self, prompts: Sequence[str], continuations: Sequence[str]
    ) -> NDArray[np.float64]:
        """``out[i, j]`` = Σ log P(``continuations[j]`` | ``prompts[i]``), shape (P, C)."""
        ...


@runtime_checkable
class SupportsScoreGroups(Protocol):
    """Scores several (prompts, continuations) groups in one call, more cheaply than one
    ``score_many`` per group (a local model projects them onto the vocabulary together)."""

    def score_groups(
        self, groups: Sequence[tuple[Sequence[str], Sequence[str]]]
    ) -> list[NDArray[np.float64]]:
        """One ``score_many`` block per group, in order."""
        ...


@runtime_checkable
class SupportsScoreEach(Protocol):
    """Scores many prompts, each with continuations of its own, in one call (a local model
    batches prompts of every item by length)."""

    def score_each(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[NDArray[np.float64]]:
        """``out[k][j]`` = Σ log P(``items[k][1][j]`` | ``items[k][0]``)."""
        ...


@runtime_checkable
class SupportsTokenizer(Protocol):
    """Runs the model here, with a transformers tokenizer a caller may read (to count
    tokens, or to build the text a chat template makes); an endpoint has none."""

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer."""
        ...
