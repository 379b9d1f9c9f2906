"""``leakage schema``: print the JSON Schema of the transcript or report format."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated

import typer

from leakage.cli import app


class SchemaName(StrEnum):
    transcript = "transcript"
    report = "report"


@app.command()
def schema(
    name: Annotated[SchemaName, typer.Argument(help="Which format.")] = SchemaName.transcript,
) -> None:
    """Print the JSON Schema of leakage.transcript/1 (default) or leakage.report/1."""
    if name is SchemaName.transcript:
        from leakage.transcripts import transcript_json_schema

        doc = transcript_json_schema()
    else:
        from leakage.reports import Report

        doc = Report.model_json_schema()
        doc["title"] = "leakage.report/1"
    typer.echo(json.dumps(doc, indent=2))
