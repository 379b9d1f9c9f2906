"""The co-occurrence backend and its count sources (local FTS5 index, web engines).

``COUNT_SOURCES`` (the count-source registry) and ``count_source_names`` import nothing heavy;
the other names are imported from their modules on first use (PEP 562), so that listing the
count sources (a command line's ``--source`` choices) loads no numerical library.
"""

from typing import TYPE_CHECKING

from leakage.backends.cooccurrence._source import (
    COUNT_SOURCES,
    CountSource,
    CountSourceKind,
    Query,
    count_source_names,
    query_key,
)

# name -> the module it is imported from on first use.
_LAZY = {
    "POOLINGS": "leakage.backends.cooccurrence._backend",
    "CooccurrenceBackend": "leakage.backends.cooccurrence._backend",
    "open_count_source": "leakage.backends.cooccurrence._backend",
    "ESTIMATORS": "leakage.backends.cooccurrence._estimator",
    "term_loglik": "leakage.backends.cooccurrence._estimator",
    "LocalIndexSource": "leakage.backends.cooccurrence._local",
}

__all__ = [
    "COUNT_SOURCES",
    "ESTIMATORS",
    "POOLINGS",
    "CooccurrenceBackend",
    "CountSource",
    "CountSourceKind",
    "LocalIndexSource",
    "Query",
    "count_source_names",
    "open_count_source",
    "query_key",
    "term_loglik",
]

if TYPE_CHECKING:
    from leakage.backends.cooccurrence._backend import (
        POOLINGS,
        CooccurrenceBackend,
        open_count_source,
    )
    from leakage.backends.cooccurrence._estimator import ESTIMATORS, term_loglik
    from leakage.backends.cooccurrence._local import LocalIndexSource
else:

    def __getattr__(name: str) -> object:
        if name in _LAZY:
            import importlib

            value = getattr(importlib.import_module(_LAZY[name]), name)
            globals()[name] = value
            return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))
