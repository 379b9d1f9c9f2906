"""Text encoders: the ``Encoder`` protocol, the caching wrapper, sentence-transformers models.

Importing this package does not import torch; building a ``SentenceTransformerEncoder`` does.
"""

from leakage._runtime import cpu_supports_bf16
from leakage.encoders._base import Encoder
from leakage.encoders._cache import CachedEncoder
from leakage.encoders._st import (
    DEFAULT_MODEL,
    MINILM_NAME,
    SentenceTransformerEncoder,
    default_cache_path,
    resolve_model,
)

__all__ = [
    "DEFAULT_MODEL",
    "MINILM_NAME",
    "CachedEncoder",
    "Encoder",
    "SentenceTransformerEncoder",
    "cpu_supports_bf16",
    "default_cache_path",
    "open_encoder",
    "resolve_model",
]


def open_encoder(
    model: str = DEFAULT_MODEL,
    *,
    precision: str = "auto",
    threads: int | None = None,
    cache_path: str | None = None,
    disk_cache: bool = True,
) -> CachedEncoder:
    """A cached sentence-transformers encoder (the usual way to get one)."""
    from pathlib import Path

    enc = SentenceTransformerEncoder(model, precision=precision, threads=threads)
    path = None if not disk_cache else Path(cache_path) if cache_path else default_cache_path()
    return CachedEncoder(enc, cache_path=path)
