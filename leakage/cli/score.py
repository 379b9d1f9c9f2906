"""``leakage score``: per-turn posteriors and leakage of one or more game transcripts."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.console import Console

from leakage.cli import app
from leakage.cli._errors import EXIT_BUDGET, EXIT_INVALID_INPUT
from leakage.cli._options import (
    BackendOption,
    BackendOptionsOption,
    CountSourceOption,
    DeviceOption,
    Direction,
    Estimator,
    IncludeChameleonOption,
    InputFormatOption,
    JudgeMode,
    NamesCommand,
    Normaliser,
    Pooling,
    Precision,
    SeatOption,
    SeatShortlistOption,
    SeatVocabularyOption,
    SpyAssignmentOption,
    backend_options,
    choices,
    with_variables,
)
from leakage.errors import BudgetExhausted, InvalidInput

if TYPE_CHECKING:
    from leakage.reports import ReportFormat
    from leakage.transcripts import AnyTranscript


class OutputFormat(StrEnum):
    table = "table"
    json = "json"
    jsonl = "jsonl"


FLAG_OPTIONS = {
    "source": "source",
    "index": "index",
    "cache": "cache_path",
    "budget": "budget",
    "estimator": "estimator",
    "beta": "beta",
    "tau": "tau",
    "pooling": "pooling",
    "model": "model",
    "judge_mode": "mode",
    "weights": "weights_path",
    "members": "members",
    "candidate_template": "candidate_template",
    "precision": "precision",
    "threads": "threads",
    "device": "device",
    "normaliser": "normaliser",
    "direction": "direction",
}
"""Typed flags of ``score`` (parameter name) and the backend option each sets; a flag is
passed only when given (the factories' defaults are the flags' defaults)."""


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the user gave the flag (by name: typer may bring its own click)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


@app.command(cls=NamesCommand)
def score(
    ctx: typer.Context,
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
    seat: SeatOption = None,
    seat_vocabulary: SeatVocabularyOption = None,
    seat_shortlist: SeatShortlistOption = None,
    source: CountSourceOption = "local",
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
    device: DeviceOption = "auto",
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
    backend_option: BackendOptionsOption = None,
) -> None:
    """Score transcripts: the posterior over the secret after every turn, entropy and gain.

    Bad records are reported on standard error, one line each, and skipped; the others are
    still scored and written. Exit code 2 when any record was bad.

    Backend options: the flags above that the user gives, and any other as -O KEY=VALUE; a
    backend given an option it does not take is an error. An ensemble routes them to its
    members (--index to co-occurrence, --model to every member that takes a model).
    """
    from leakage.backends import open_backend

    err = Console(stderr=True)
    read = _Read()
    games = _read_games(paths, input_format, read, err)

    flags = {
        key: (f"--{name.replace('_', '-')}", ctx.params[name])
        for name, key in FLAG_OPTIONS.items()
        if _given(ctx, name)
    }
    options = backend_options(
        backend,
        backend_option,
        flags,
        count_endpoint=endpoint if _given(ctx, "endpoint") else None,
        llm_endpoint=llm_endpoint if _given(ctx, "llm_endpoint") else None,
    )
    from leakage.scoring import ScoreOptions

    opts = ScoreOptions(
        include_chameleon=include_chameleon,
        spy_assignment=spy_assignment,
        seat=seat,
        seat_vocabulary=seat_vocabulary,
        seat_shortlist=seat_shortlist,
    )
    with open_backend(backend, **with_variables(backend, options)) as scorer:
        _score(scorer, _seated(games, opts, read, err), read, opts, dry_run, fmt, out, err)


@dataclass
class _Read:
    """What reading the inputs has met so far."""

    games: int = 0
    bad: int = 0


def _read_games(
    paths: Iterable[Path], input_format: str, read: _Read, err: Console
) -> Iterator[AnyTranscript]:
    """The good transcripts of ``paths`` as they are read; a bad record is said on standard
    error when it comes and counted in ``read``, as every game is."""
    from leakage.transcripts import iter_transcripts

    for item in iter_transcripts(paths, input_format=input_format):
        if isinstance(item, InvalidInput):
            read.bad += 1
            err.print(f"[red]error:[/red] {item}", highlight=False, soft_wrap=True)
        else:
            read.games += 1
            yield item


def _seated(
    games: Iterator[AnyTranscript], opts: Any, read: _Read, err: Console
) -> Iterator[AnyTranscript]:
    """The games that have the seat asked for; another is a bad record, said and counted
    (the others are still scored)."""
    from leakage.scoring import game_input

    for g in games:
        if opts.seat is not None:
            try:
                game_input(g, opts)
            except InvalidInput as exc:
                read.bad += 1
                err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
                continue
        yield g


def _score(
    scorer: Any,
    games: Iterator[AnyTranscript],
    read: _Read,
    opts: Any,
    dry_run: bool,
    fmt: OutputFormat,
    out: Path | None,
    err: Console,
) -> None:
    """Score the games as they are read and write each report as it comes (none is held)."""
    from leakage.reports import open_report_writer
    from leakage.scoring import score_many

    if dry_run:
        _dry_run(scorer, games, read, opts, err)
        raise typer.Exit(EXIT_INVALID_INPUT if read.bad else 0)

    stopped: BudgetExhausted | None = None
    with open_report_writer(cast("ReportFormat", fmt.value), out) as writer:
        try:
            for report in score_many(games, scorer, opts):
                writer.write(report)
        except BudgetExhausted as exc:
            stopped = exc
    scored = writer.written
    if stopped is not None:
        for _ in games:  # the games not reached, counted (and their bad records said)
            pass
        err.print(
            f"[red]stopped:[/red] {stopped} Scored {scored} of {read.games} games; "
            "rerun with a larger --budget to continue (answered queries are cached).",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_BUDGET)
    if read.bad:
        err.print(f"{read.bad} bad record(s) skipped; {scored} game(s) scored.", highlight=False)
        raise typer.Exit(EXIT_INVALID_INPUT)


def _dry_run(
    scorer: Any, games: Iterator[AnyTranscript], read: _Read, opts: Any, err: Console
) -> None:
    from leakage.backends import SupportsDryRun
    from leakage.scoring import scored_clues

    plans = (
        scorer.dry_run((scored_clues(g, opts), g.candidates) for g in games)
        if isinstance(scorer, SupportsDryRun)
        else []
    )
    for _ in games:  # a backend that reads none of them: still count them, say the bad ones
        pass
    if not plans:
        err.print(f"backend {scorer.name!r} sends no count queries; nothing to estimate.")
        return
    for plan in plans:
        typer.echo(
            f"{read.games} games need {plan.queries:,} distinct count queries; "
            f"{plan.uncached:,} are not cached and would be sent to {plan.source}."
        )
