"""The encoder protocol: texts in, unit-length vectors out.

An encoder implements one batch method, ``encode_batch``; everything else (single texts,
batching, caching by content hash, skipping what is already embedded) is derived once in
``CachedEncoder``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray


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
