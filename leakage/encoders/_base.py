"""The encoder protocol: texts in, unit-length vectors out.

An encoder implements one batch method, ``encode_batch``; everything else (single texts,
batching, caching by content hash, skipping what is already embedded) is derived once in
``CachedEncoder``.

The kinds of encoder are a registry (``ENCODERS``, entry-point group ``leakage.encoders``):
name -> a factory ``(model, *, precision, threads, device) -> Encoder``; ``open_encoder`` builds one
by kind, sentence-transformers by default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from leakage._registry import Registry

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

DEFAULT_TAU = 0.05
"""The softmax temperature over cosine similarities of these vectors that the embedding
backend and the vocabulary's guesses use by default (``leakage.backends.embedding`` and
``leakage.vocab`` re-export it)."""


@runtime_checkable
class Encoder(Protocol):
    """Anything that embeds a batch of texts."""

    name: str
    """Model identity, e.g. ``sentence-transformers/all-MiniLM-L6-v2`` or ``BAAI/bge-m3``;
    part of every cache key and of every report."""

    dimension: int
    """Length of each vector."""

    def encode_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors of shape (len(texts), dimension), float32, each of unit L2 norm."""
        ...

    def info(self) -> dict[str, Any]:
        """``model``, ``dimension`` and what else decides the vectors (precision, ...), copied
        into the reports of the backends that use it."""
        ...


EncoderFactory = Callable[..., Encoder]
"""``(model, *, precision, threads, device) -> Encoder``: ``precision`` is ``auto``,
``fp32`` or ``bf16``, ``threads`` the CPU threads (None: the runtime's choice), ``device``
the device policy's value (``auto``, ``cpu``, ``cuda``, ``cuda:N``, ``mps``; a factory
without one is only ever asked for ``auto``); a factory that has no use for one ignores it."""

DEFAULT_ENCODER = "sentence-transformers"
"""The kind ``open_encoder`` builds unless told otherwise."""

ENCODERS: Registry[EncoderFactory] = Registry(
    "leakage.encoders",
    builtin={DEFAULT_ENCODER: "leakage.encoders._st:SentenceTransformerEncoder"},
)
"""The kinds of encoder: the package's own (imported when first built) and those of installed
distributions (entry-point group ``leakage.encoders``, each naming a factory like these)."""
