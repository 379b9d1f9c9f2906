"""Command-line options that ``leakage score`` and ``leakage batch`` share, declared once."""

from __future__ import annotations

from typing import Annotated

import typer

BackendOption = Annotated[str, typer.Option("--backend", "-b", help="Likelihood backend.")]
IncludeChameleonOption = Annotated[
    bool, typer.Option(help="Chameleon: let the chameleon's turns update the posterior too.")
]
SpyAssignmentOption = Annotated[
    str, typer.Option(help="SpyGame spy posterior: 'known' civilian word, or 'marginalise'.")
]
