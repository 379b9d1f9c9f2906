"""Likelihood backends: one protocol, a registry of factories."""

from leakage.backends import cooccurrence, embedding, ensemble, judge  # noqa: F401  (register)
from leakage.backends.base import (
    LikelihoodBackend,
    backend_names,
    create_backend,
    register_backend,
)

__all__ = ["LikelihoodBackend", "backend_names", "create_backend", "register_backend"]
