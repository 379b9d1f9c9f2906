"""The likelihood-backend protocol and the backend registry.

A backend turns clues and candidate words into a clues x candidates matrix of
log P(clue | candidate is the secret). Backends are registered as *factories* so that heavy
imports (torch, faiss, transformers, HTTP clients) happen only when one is created, never
at ``import leakage``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from leakage.errors import UnknownBackend


@runtime_checkable
class LikelihoodBackend(Protocol):
    """Anything that scores clues against candidate secrets."""

    name: str

    def info(self) -> dict[str, Any]:
        """Name and settings (model, corpus, smoothing), copied into every report."""
        ...

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        """log P(clue_i | secret = candidate_j), shape (len(clues), len(candidates)).

        Rows need not be normalised; values are finite (backends smooth zero evidence).
        """
        ...


BackendFactory = Callable[..., LikelihoodBackend]
_REGISTRY: dict[str, BackendFactory] = {}


def register_backend(name: str) -> Callable[[BackendFactory], BackendFactory]:
    """Decorator: register a factory that builds the backend ``name`` from keyword options."""

    def deco(factory: BackendFactory) -> BackendFactory:
        _REGISTRY[name] = factory
        return factory

    return deco


def backend_names() -> list[str]:
    return sorted(_REGISTRY)


def create_backend(name: str, **options: Any) -> LikelihoodBackend:
    """Build a registered backend; ``UnknownBackend`` lists the names there are."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise UnknownBackend(
            f"unknown backend {name!r}; available: {', '.join(backend_names())}"
        ) from None
    return factory(**options)
