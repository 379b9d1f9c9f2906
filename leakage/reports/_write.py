"""Writing reports as they come: ``leakage score``'s three output formats, one report at a
time, so that a run holds none of them in memory.

Each format is written byte for byte as the whole list would be: ``json`` as
``json.dumps([report.model_dump(mode="json"), ...], indent=2)`` plus a newline (the brackets
and commas written around the reports as they arrive), ``jsonl`` as one
``model_dump_json()`` a line, ``table`` as :func:`~leakage.reports.print_reports` prints.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TextIO

from rich.console import Console

from leakage.reports._models import Report
from leakage.reports._table import report_table

ReportFormat = Literal["table", "json", "jsonl"]
"""The output formats of ``leakage score``."""

_INDENT = "  "


class ReportWriter:
    """Writes reports to ``fh`` in ``fmt`` one at a time; :meth:`close` ends the output (the
    JSON array's closing bracket). ``console`` renders tables (default: one on ``fh``)."""

    def __init__(self, fh: TextIO, fmt: ReportFormat, *, console: Console | None = None) -> None:
        if fmt not in ("table", "json", "jsonl"):
            raise ValueError(f"unknown report format {fmt!r}: table, json or jsonl")
        self.fh = fh
        self.fmt = fmt
        self.console = console if console is not None else Console(file=fh)
        self.written = 0
        """How many reports were written."""
        self._closed = False
        if fmt == "json":
            fh.write("[")

    def write(self, report: Report) -> None:
        if self._closed:
            raise ValueError("the report writer is closed")
        if self.fmt == "table":
            self.console.print(report_table(report))
            self.console.print()
        elif self.fmt == "jsonl":
            self.fh.write(report.model_dump_json() + "\n")
        else:
            text = json.dumps(report.model_dump(mode="json"), indent=2)
            lead = ",\n" if self.written else "\n"
            self.fh.write(lead + _INDENT + text.replace("\n", "\n" + _INDENT))
        self.written += 1
        if self.fmt != "table":
            self.fh.flush()

    def close(self) -> None:
        """End the output (idempotent); the stream itself stays open."""
        if self._closed:
            return
        self._closed = True
        if self.fmt == "json":
            self.fh.write(("\n]" if self.written else "]") + "\n")
        self.fh.flush()

    def __enter__(self) -> ReportWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def open_report_writer(fmt: ReportFormat, out: Path | None = None) -> Iterator[ReportWriter]:
    """A :class:`ReportWriter` on ``out`` (UTF-8; tables 160 columns wide, without colour) or
    on standard output (tables as wide as the terminal), closed on the way out, also when
    scoring stops early: what was written stays a complete document."""
    if out is None:
        with ReportWriter(sys.stdout, fmt, console=Console()) as writer:
            yield writer
        return
    with (
        out.open("w", encoding="utf-8") as fh,
        ReportWriter(fh, fmt, console=Console(file=fh, width=160, color_system=None)) as writer,
    ):
        yield writer
