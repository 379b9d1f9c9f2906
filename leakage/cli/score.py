"""``leakage score``: per-turn posteriors and leakage of one or more game transcripts."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from leakage.cli import app
from leakage.cli._errors import EXIT_BUDGET, EXIT_INVALID_INPUT
from leakage.cli._options import (
    BackendOption,
    CountSource,
    Direction,
    Estimator,
    IncludeChameleonOption,
    InputFormatOption,
    JudgeMode,
    Normaliser,
    Pooling,
    Precision,
    SpyAssignmentOption,
    choices,
)
from leakage.errors import BudgetExhausted, InvalidInput

if TYPE_CHECKING:
    from leakage.reports import Report


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    jsonl = "jsonl"


def _backend_options(
    source: str,
    index: Path | None,
    cache: Path | None,
    budget: int | None,
    endpoint: str | None,
    **estimator: Any,
) -> dict[str, Any]:
    return {
        "source": source,
        "index": index,
        "cache_path": cache,
        "budget": budget,
        "endpoint": endpoint,
        **estimator,
    }


def _write(reports: list[Report], fmt: OutputFormat, out: Path | None) -> None:
    from leakage.reports import print_reports

    if fmt is OutputFormat.table:
        if out is None:
            print_reports(reports, Console())
        else:
            with out.open("w", encoding="utf-8") as fh:
                print_reports(reports, Console(file=fh, width=160, color_system=None))
        return
    if fmt is OutputFormat.json:
        text = json.dumps([r.model_dump(mode="json") for r in reports], indent=2) + "\n"
    else:
        text = "".join(r.model_dump_json() + "\n" for r in reports)
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")


@app.command()
def score(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Transcript files, directories or globs: JSON / JSONL / Parquet (.gz too)."
        ),
    ],
    backend: BackendOption = "cooccurrence",
    input_format: InputFormatOption = "auto",
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="Output format.")] = (
        OutputFormat.table
    ),
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write here instead of standard output.")
    ] = None,
    include_chameleon: IncludeChameleonOption = False,
    spy_assignment: SpyAssignmentOption = "known",
    source: Annotated[
        CountSource, typer.Option(metavar="<source>", help=f"Count source: {choices(CountSource)}.")
    ] = "local",
    index: Annotated[
        Path | None, typer.Option(help="Local FTS5 index (default: built on first use).")
    ] = None,
    cache: Annotated[Path | None, typer.Option(help="Web count cache file (SQLite).")] = None,
    budget: Annotated[int | None, typer.Option(help="Most web queries this run may send.")] = None,
    endpoint: Annotated[
        str | None, typer.Option(help="Base URL of the web count API (a proxy, a self-hosted one).")
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print how many uncached count queries the batch needs."),
    ] = False,
    estimator: Annotated[
        Estimator,
        typer.Option(metavar="<name>", help=f"Co-occurrence estimator: {choices(Estimator)}."),
    ] = "conditional",
    beta: Annotated[float, typer.Option(help="Dirichlet smoothing strength β.")] = 100.0,
    tau: Annotated[
        float | None,
        typer.Option(help="Temperature: of cosine for embedding (0.05), of npmi / ngd (0.1)."),
    ] = None,
    pooling: Annotated[Pooling, typer.Option(help="How a sentence's words combine.")] = "mean",
    model: Annotated[
        str | None,
        typer.Option(
            help="embedding: all-MiniLM-L6-v2 (default), BAAI/bge-m3, a folder; judge: "
            "gemma-3-270m (default), smollm2-135m, a GGUF/folder, or the endpoint's model name."
        ),
    ] = None,
    judge_mode: Annotated[
        JudgeMode,
        typer.Option(
            metavar="<mode>",
            help="Judge: likelihood (log P(clue | secret)) or elicitation (the model is asked).",
        ),
    ] = "likelihood",
    llm_endpoint: Annotated[
        str | None,
        typer.Option(
            help="Judge: an OpenAI-compatible base URL (key from LEAKAGE_LLM_API_KEY); "
            "default: the local model."
        ),
    ] = None,
    weights: Annotated[
        Path | None, typer.Option(help="Ensemble: weights file (default: the shipped one).")
    ] = None,
    members: Annotated[
        str | None, typer.Option(help="Ensemble: members, e.g. cooccurrence,embedding,judge.")
    ] = None,
    candidate_template: Annotated[
        str, typer.Option(help="How candidates are embedded, e.g. '{category}: {word}'.")
    ] = "{word}",
    precision: Annotated[
        Precision, typer.Option(help="Embedding / judge precision (auto: bf16 where native).")
    ] = "auto",
    threads: Annotated[int | None, typer.Option(help="Torch threads for embedding.")] = None,
    normaliser: Annotated[
        Normaliser,
        typer.Option(
            help="Local judge: exact log-softmax over the vocabulary, or shortlist (faster "
            "without bf16, approximate: docs/llm.md)."
        ),
    ] = "exact",
    direction: Annotated[
        Direction,
        typer.Option(
            help="Judge likelihood direction: speaker = P(clue | secret); listener = "
            "P(secret | clue) against an empty clue (one prompt per clue, faster; docs/llm.md)."
        ),
    ] = "speaker",
) -> None:
    """Score transcripts: the posterior over the secret after every turn, entropy and gain.

    Bad records are reported on standard error, one line each, and skipped; the others are
    still scored and written. Exit code 2 when any record was bad.
    """
    from leakage.backends import create_backend
    from leakage.scoring import ScoreOptions, score_many
    from leakage.transcripts import iter_transcripts

    err = Console(stderr=True)
    bad = 0
    games = []
    for item in iter_transcripts(paths, input_format=input_format):
        if isinstance(item, InvalidInput):
            bad += 1
            err.print(f"[red]error:[/red] {item}", highlight=False, soft_wrap=True)
        else:
            games.append(item)

    temperature = {} if tau is None else {"tau": tau}
    options: dict[str, Any] = {}
    if backend == "cooccurrence":
        options = _backend_options(
            source, index, cache, budget, endpoint,
            estimator=estimator, beta=beta, pooling=pooling, **temperature,
        )  # fmt: skip
    elif backend == "embedding":
        options = {
            "candidate_template": candidate_template,
            "precision": precision,
            "threads": threads,
            **({"model": model} if model else {}),
            **temperature,
        }
    elif backend == "judge":
        options = {
            "mode": judge_mode,
            "endpoint": llm_endpoint,
            "precision": precision,
            "threads": threads,
            **({"normaliser": normaliser} if normaliser != "exact" else {}),
            **({"direction": direction} if direction != "speaker" else {}),
            **({"model": model} if model else {}),
        }
    elif backend == "listener":
        options = {
            "endpoint": llm_endpoint,
            "precision": precision,
            "threads": threads,
            **({"model": model} if model else {}),
        }
    elif backend == "ensemble":
        options = {
            **({"weights_path": weights} if weights else {}),
            **(
                {"members": [m.strip() for m in members.split(",") if m.strip()]} if members else {}
            ),
        }
    scorer = create_backend(backend, **options)
    opts = ScoreOptions(include_chameleon=include_chameleon, spy_assignment=spy_assignment)
    if dry_run:
        _dry_run(scorer, games, opts, err)
        raise typer.Exit(EXIT_INVALID_INPUT if bad else 0)

    reports: list[Report] = []
    stopped: BudgetExhausted | None = None
    try:
        for report in score_many(games, scorer, opts):
            reports.append(report)
    except BudgetExhausted as exc:
        stopped = exc
    _write(reports, fmt, out)
    if stopped is not None:
        err.print(
            f"[red]stopped:[/red] {stopped} Scored {len(reports)} of {len(games)} games; "
            "rerun with a larger --budget to continue (answered queries are cached).",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_BUDGET)
    if bad:
        err.print(f"{bad} bad record(s) skipped; {len(reports)} game(s) scored.", highlight=False)
        raise typer.Exit(EXIT_INVALID_INPUT)


def _dry_run(scorer: Any, games: list[Any], opts: Any, err: Console) -> None:
    from leakage.scoring import scored_clues

    queries_of = getattr(scorer, "queries", None)
    source = getattr(scorer, "source", None)
    if queries_of is None or source is None:
        err.print(f"backend {scorer.name!r} sends no count queries; nothing to estimate.")
        return
    wanted: dict[tuple[str, ...], None] = {}
    for g in games:
        for q in queries_of(scored_clues(g, opts), g.candidates):
            wanted.setdefault(q, None)
    missing = source.uncached(list(wanted))
    typer.echo(
        f"{len(games)} games need {len(wanted):,} distinct count queries; "
        f"{len(missing):,} are not cached and would be sent to {source.name}."
    )
