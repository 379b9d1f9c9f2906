"""The embedding likelihood backend: log P(r | w) from cosine similarity.

    log P(r | w) = cos(e_r, e_w) / τ  -  logsumexp_w' cos(e_r, e_w') / τ

over the game's candidates, with sentence-transformers vectors (the bundled
all-MiniLM-L6-v2 by default, BAAI/bge-m3 or any local model by name or path). A candidate
is embedded as the bare word (the default: "category: word" was not better in our
measurements) or through a template such as ``"{category}: {word}"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.backends.base import Closing, Device, Precision
from leakage.encoders import DEFAULT_ENCODER, DEFAULT_TAU, CachedEncoder, Encoder

__all__ = ["DEFAULT_TAU", "EmbeddingBackend"]


class EmbeddingBackend(Closing):
    """Softmax over cosine similarities between a clue and each candidate.

    ``close()`` closes the encoder's disk cache when the backend owns the encoder
    (``owns_encoder``: the factory opened it, or the backend wrapped a bare ``Encoder``).
    """

    name = "embedding"

    def __init__(
        self,
        encoder: CachedEncoder | Encoder,
        *,
        tau: float = DEFAULT_TAU,
        candidate_template: str = "{word}",
        owns_encoder: bool = False,
    ) -> None:
        if tau <= 0:
            raise ValueError("tau must be positive")
        if "{word}" not in candidate_template:
            raise ValueError("candidate_template must contain {word}")
        self.owns_encoder = owns_encoder or not isinstance(encoder, CachedEncoder)
        self.encoder = encoder if isinstance(encoder, CachedEncoder) else CachedEncoder(encoder)
        self.tau = tau
        self.candidate_template = candidate_template

    def info(self) -> dict[str, Any]:
        details = self.encoder.info()
        return {
            "backend": self.name,
            "model": self.encoder.name,
            "dimension": self.encoder.dimension,
            "tau": self.tau,
            "candidate_template": self.candidate_template,
            **{k: v for k, v in details.items() if k not in ("model", "dimension")},
        }

    def candidate_texts(self, candidates: Sequence[str], category: str | None) -> list[str]:
        return [self.candidate_template.format(word=w, category=category or "") for w in candidates]

    def prepare(self, games: Iterable[tuple[Sequence[str], Sequence[str], str | None]]) -> None:
        """Embed every clue and candidate of many games in large batches (optional hook)."""
        texts: list[str] = []
        for clues, candidates, category in games:
            texts.extend(clues)
            texts.extend(self.candidate_texts(candidates, category))
        self.encoder.warm(texts)

    def similarities(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        """Cosine similarity matrix (clues x candidates)."""
        if not clues:
            return np.zeros((0, len(candidates)))
        vecs = self.encoder.encode([*clues, *self.candidate_texts(candidates, category)])
        r, w = vecs[: len(clues)], vecs[len(clues) :]
        return (r @ w.T).astype(np.float64)

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        s = self.similarities(clues, candidates, category=category) / self.tau
        if s.size == 0:
            return s
        m = s.max(axis=1, keepdims=True)
        return s - (m + np.log(np.exp(s - m).sum(axis=1, keepdims=True)))

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors for ``texts`` (used by the SpyGame outlier score)."""
        return self.encoder.encode(texts)

    def cache_misses(self) -> int:
        """Texts this backend's encoder sent to the model (found in no cache) so far."""
        return self.encoder.encoded

    def close(self) -> None:
        """Close the encoder's disk cache if this backend opened it (idempotent)."""
        if self.owns_encoder:
            self.encoder.close()


def _embedding(
    *,
    model: str = "all-MiniLM-L6-v2",
    encoder: CachedEncoder | Encoder | None = None,
    tau: float = DEFAULT_TAU,
    candidate_template: str = "{word}",
    precision: Precision = "auto",
    threads: int | None = None,
    cache_path: str | None = None,
    disk_cache: bool = True,
    encoder_kind: str = DEFAULT_ENCODER,
    device: Device = "auto",
) -> EmbeddingBackend:
    """``encoder_kind``: the kind of encoder (``leakage.encoders.ENCODERS``) that builds
    ``model``, unless an ``encoder`` is given; ``device``: where it runs (``auto``: a CUDA
    device when torch sees one; ``leakage._runtime``)."""
    opened = encoder is None
    if encoder is None:
        from leakage.encoders import open_encoder

        encoder = open_encoder(
            model,
            precision=precision,
            threads=threads,
            cache_path=cache_path,
            disk_cache=disk_cache,
            kind=encoder_kind,
            device=device,
        )
    return EmbeddingBackend(
        encoder, tau=tau, candidate_template=candidate_template, owns_encoder=opened
    )
