"""Likelihood backends: one protocol, optional abilities as protocols, a registry of factories.

Importing this package imports no backend: the registry names each (``base.BACKENDS``) and
imports it when it is first built."""

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
    cost_factor,
    costs,
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
    "cost_factor",
    "costs",
    "create_backend",
    "open_backend",
    "register_backend",
]
