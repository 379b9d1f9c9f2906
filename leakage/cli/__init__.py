"""The ``leakage`` command line: one module per command.

Every command module is imported here, to register its commands, so each imports at module
level only typer, rich and ``leakage.errors``: a command imports the libraries it uses (numpy,
pydantic, the backends, FAISS, ...) inside its function, so that starting the command line
(``--help``, ``guess``) does not pay for the others' (tests/test_cli_startup.py).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape

from leakage.cli._errors import exit_code
from leakage.errors import LeakageError

if TYPE_CHECKING:
    from leakage.paths import Paths

app = typer.Typer(
    name="leakage",
    help="Measure how much each clue in an LLM word game reveals the secret.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Markdown: a docstring's wrapped lines flow into paragraphs (in "rich" mode every line
    # break of the source would show).
    rich_markup_mode="markdown",
)


OTHER_VARIABLES = ("OPENAI_API_KEY", "SERPAPI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CSE_ID")
"""The variables the command line's settings read that do not start with ``LEAKAGE_``."""


def _reads_none() -> bool:
    """Whether none of the variables the command line's settings read is set (then they are
    the defaults, given without loading pydantic-settings)."""
    return not any(n.startswith("LEAKAGE_") or n in OTHER_VARIABLES for n in os.environ)


def cli_variables() -> dict[str, str]:
    """The library's variables (the LLM endpoint's ``LEAKAGE_LLM_*`` and ``OPENAI_API_KEY``,
    the web count sources' keys) that are set, read through the command line's settings,
    for the ``variables`` option of what a command opens: the library then reads no
    environment (its ``from_env`` factories are for direct library users)."""
    if _reads_none():
        return {}
    from leakage.cli._settings import CliSettings

    return CliSettings().variables()


def cli_paths() -> Paths:
    """Where the command line keeps its files: the home ``LEAKAGE_HOME`` names, read through
    the command line's settings (:class:`leakage.cli._settings.CliSettings`) each time it is
    asked. Those (and pydantic-settings) are loaded only when a ``LEAKAGE_*`` variable is
    set; with none, the paths are those of the default home, as the settings would say."""
    from leakage.paths import Paths, default_home

    if not any(name.startswith("LEAKAGE_") for name in os.environ):
        return Paths(default_home())
    from leakage.cli._settings import CliSettings

    return CliSettings().paths


from leakage.cli import (  # noqa: E402,F401  (register commands)
    batch,
    calibrate,
    corpus,
    play,
    schema,
    score,
    serve,
    splits,
    vocab,
)


def main() -> None:
    """Console-script entry point: library errors become one line and an exit code."""
    try:
        app()
    except LeakageError as err:
        Console(stderr=True).print(
            f"[red]error:[/red] {escape(str(err))}", highlight=False, soft_wrap=True
        )
        sys.exit(exit_code(err))
