"""What the parts of ``LocalLM`` share: the model state they read, the encoded prompts."""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from leakage._runtime import PassBudget


def cache_keyword(module: Any) -> str:
    """The keyword a transformers model's ``forward`` takes its KV cache by: ``cache`` from
    transformers 5.24 (which deprecates ``past_key_values``, to be removed in 5.40), and
    ``past_key_values`` before it. Read off the signature, so that each installed version
    gets the name it documents and no deprecation warning."""
    params = inspect.signature(module.forward).parameters
    return "cache" if "cache" in params else "past_key_values"


@dataclass
class _PromptStates:
    """A group of encoded prompts: what their continuations are scored after."""

    cache: Any
    """``DynamicCache`` over the left-padded prompts (never extended: copied per use)."""
    mask: Any
    """(P, W) attention mask, 0 on the left padding (on the model's device)."""
    lens: Any
    """(P,) prompt lengths in tokens (on the CPU: read element by element)."""
    last: Any
    """(P, H) final hidden state at each prompt's last token."""
    lse: Any
    """(P,) float32 log Σ exp of the next-token logits after each prompt (computed with the
    first continuations, in the same projection)."""


class _LocalState:
    """The attributes ``LocalLM.__init__`` sets and its parts (``_head``, ``_passes``,
    ``_score``, ``_generate``) read: declared once here, for the type checker."""

    name: str
    precision: str
    device: str
    """The resolved torch device (``cpu``, ``cuda:N``, ``mps``): weights, caches and the
    tensors each pass reads live there; index tensors are built on the CPU and moved once."""
    _budget: PassBudget
    normaliser: str
    _torch: Any
    _tok: Any
    _model: Any
    _config: Any
    _decoder: Any
    _cache_kw: str
    """``cache_keyword`` of the decoder and of the whole model (the same in every version)."""
    _head_w: Any
    _head_b: Any
    _softcap: float
    _window: int
    _vocab_size: int
    _raw: Any
    _f32: Any
    _approx: Any
    _low_rank: tuple[Any, Any] | None
    _bos: list[int]
    _start: list[int]
    _pad: int
    _eos: frozenset[int]
    _generator: Any
    _lock: threading.Lock
    _cache_prompts: int
    _states: OrderedDict[tuple[tuple[int, ...], ...], _PromptStates]
