"""The one place library errors become exit codes and one-line messages."""

from __future__ import annotations

from leakage.errors import (
    BackendUnavailable,
    BudgetExhausted,
    CorpusError,
    CountSourceError,
    InvalidInput,
    LeakageError,
    LLMError,
    UnknownBackend,
)

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID_INPUT = 2
EXIT_UNAVAILABLE = 3
EXIT_COUNT_SOURCE = 4
EXIT_BUDGET = 5
EXIT_CORPUS = 6

_CODES: list[tuple[type[LeakageError], int]] = [
    (InvalidInput, EXIT_INVALID_INPUT),
    (UnknownBackend, EXIT_INVALID_INPUT),
    (BackendUnavailable, EXIT_UNAVAILABLE),
    (BudgetExhausted, EXIT_BUDGET),
    (CountSourceError, EXIT_COUNT_SOURCE),
    (LLMError, EXIT_COUNT_SOURCE),  # a remote endpoint failed, like a count source
    (CorpusError, EXIT_CORPUS),
]


def exit_code(err: LeakageError) -> int:
    for cls, code in _CODES:
        if isinstance(err, cls):
            return code
    return EXIT_INTERNAL
