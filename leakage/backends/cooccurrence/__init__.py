"""The co-occurrence backend and its count sources (local FTS5 index, web engines)."""

from leakage.backends.cooccurrence._backend import (
    POOLINGS,
    CooccurrenceBackend,
    open_count_source,
)
from leakage.backends.cooccurrence._estimator import ESTIMATORS, term_loglik
from leakage.backends.cooccurrence._local import LocalIndexSource
from leakage.backends.cooccurrence._source import CountSource, Query, query_key

__all__ = [
    "ESTIMATORS",
    "POOLINGS",
    "CooccurrenceBackend",
    "CountSource",
    "LocalIndexSource",
    "Query",
    "open_count_source",
    "query_key",
    "term_loglik",
]
