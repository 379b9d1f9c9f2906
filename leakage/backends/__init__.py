"""Likelihood backends: one protocol, optional abilities as protocols, a registry of factories."""

from leakage.backends import cooccurrence, embedding, ensemble, judge  # noqa: F401  (register)
from leakage.backends.base import (
    CountPlan,
    LikelihoodBackend,
    SupportsCacheStats,
    SupportsClose,
    SupportsDryRun,
    SupportsEmbed,
    SupportsPrepare,
    SupportsTokenCount,
    backend_names,
    create_backend,
    open_backend,
    register_backend,
)

__all__ = [
    "CountPlan",
    "LikelihoodBackend",
    "SupportsCacheStats",
    "SupportsClose",
    "SupportsDryRun",
    "SupportsEmbed",
    "SupportsPrepare",
    "SupportsTokenCount",
    "backend_names",
    "create_backend",
    "open_backend",
    "register_backend",
]
