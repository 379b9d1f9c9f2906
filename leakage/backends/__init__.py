"""Likelihood backends: one protocol, a registry of factories."""

from leakage.backends import cooccurrence  # noqa: F401  (registers "cooccurrence")
from leakage.backends.base import (
    LikelihoodBackend,
    backend_names,
    create_backend,
    register_backend,
)

__all__ = ["LikelihoodBackend", "backend_names", "create_backend", "register_backend"]
