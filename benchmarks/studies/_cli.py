"""What the card studies' command lines share: the parser with ``--members`` and
``--precision``, the command a result records, and the result file's name (a run whose LLM
members are not the default rows writes apart from the default run's figures)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import write_result

PRECISIONS = ("auto", "fp32", "bf16")
"""The LLM members' and the embedding's precisions a study takes (fp32: torch in fp32, the
rows of the shipped torch fit)."""


def study_parser(
    name: str,
    doc: str | None,
    *,
    precision_help: str,
    members: Sequence[str] | None = None,
    members_help: str = "",
    epilog: str | None = None,
) -> argparse.ArgumentParser:
    """The parser of ``python -m benchmarks.studies.NAME``: ``--members`` (comma-separated,
    default ``members``; none when None) and ``--precision``; :func:`member_list` reads
    ``--members``."""
    parser = argparse.ArgumentParser(
        prog=f"python -m benchmarks.studies.{name}",
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=epilog,
    )
    if members is not None:
        parser.add_argument("--members", default=",".join(members), help=members_help)
    parser.add_argument("--precision", choices=PRECISIONS, default="auto", help=precision_help)
    return parser


def member_list(text: str) -> tuple[str, ...]:
    """The members of a ``--members`` value."""
    return tuple(m.strip() for m in text.split(",") if m.strip())


def study_command(
    name: str,
    precision: str,
    members: Sequence[str] = (),
    default_members: Sequence[str] = (),
    more: str = "",
) -> str:
    """The command that reruns a study: ``--members`` when not the default, ``--precision``
    when not ``auto``, then ``more`` (the study's other options)."""
    return (
        f"python -m benchmarks.studies.{name}"
        + ("" if tuple(members) == tuple(default_members) else f" --members {','.join(members)}")
        + ("" if precision == "auto" else f" --precision {precision}")
        + more
    )


def write_study(
    name: str,
    backends: Mapping[str, Any],
    precision: str,
    parameters: dict[str, Any],
    results: dict[str, Any],
) -> Path:
    """``benchmarks/results/<name>[_<rows>].json``: int8 rows and torch fp32 rows are kept
    apart from the default run's figures (``<rows>``: the LLM members' rows, else the
    precision when not ``auto``)."""
    from leakage.backends.ensemble import llm_rows

    tag = llm_rows(backends) or ("" if precision == "auto" else precision)
    return write_result(name + (f"_{tag}" if tag else ""), parameters, results)
