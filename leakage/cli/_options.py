"""Command-line options that several commands share, declared once, and the fixed sets of
values that options take.

An option that takes one of a fixed set of values is typed as a ``Literal`` of them: a bad
value is a usage error (exit code 2, one line naming the option and its choices) before
anything runs, and ``--help`` lists the choices: in the value column when they are short
(``<known|marginalise>``), else in the help text (``choices``), so that the column stays
narrow. The sets mirror the library's registries and constants (tests/test_cli.py checks
that they agree).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

import typer

Backend = Literal["cooccurrence", "embedding", "ensemble", "judge", "listener"]
"""``leakage.backends.backend_names()``."""
InputFormat = Literal["auto", "leakage", "ck-arena", "spygame-liang"]
"""``leakage.transcripts.INPUT_FORMATS``."""
SpyAssignment = Literal["known", "marginalise"]
"""``ScoreOptions.spy_assignment``."""
CountSource = Literal["local", "serpapi", "google-cse", "infini-gram"]
"""``local`` and ``leakage.backends.cooccurrence.web.WEB_SOURCES``."""
Estimator = Literal["conditional", "npmi", "ngd"]
"""``leakage.backends.cooccurrence.ESTIMATORS``."""
Pooling = Literal["mean", "sum"]
"""``leakage.backends.cooccurrence._backend.POOLINGS``."""
JudgeMode = Literal["likelihood", "elicitation"]
"""``leakage.backends.judge.MODES``."""
Precision = Literal["auto", "fp32", "bf16"]
"""``leakage._runtime.resolve_precision``."""
Normaliser = Literal["exact", "shortlist"]
"""``leakage.llm._local.NORMALISERS``."""
Direction = Literal["speaker", "listener"]
"""``leakage.backends.judge.DIRECTIONS``."""


def choices(kind: Any) -> str:
    """The values of a ``Literal`` type for a help text: ``a, b or c``."""
    values = get_args(kind)
    return ", ".join(values[:-1]) + f" or {values[-1]}" if len(values) > 1 else values[0]


BackendOption = Annotated[
    Backend,
    typer.Option(
        "--backend", "-b", metavar="<name>", help=f"Likelihood backend: {choices(Backend)}."
    ),
]
InputFormatOption = Annotated[
    InputFormat,
    typer.Option(
        metavar="<format>",
        help=f"Format of the inputs: {choices(InputFormat)} (auto: recognised by their shape).",
    ),
]
IncludeChameleonOption = Annotated[
    bool, typer.Option(help="Chameleon: let the chameleon's turns update the posterior too.")
]
SpyAssignmentOption = Annotated[
    SpyAssignment,
    typer.Option(help="SpyGame spy posterior: the civilian word is known, or marginalise over it."),
]
