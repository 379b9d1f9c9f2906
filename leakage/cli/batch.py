"""``leakage batch`` (score many games into Parquet, resumable) and ``leakage report`` (curves).

Details: docs/batch.md.
"""

from __future__ import annotations

import importlib
import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from leakage.cli import app
from leakage.cli._errors import EXIT_INVALID_INPUT
from leakage.cli._options import (
    BackendOption,
    BackendOptionsOption,
    DeviceOption,
    IncludeChameleonOption,
    InputFormatOption,
    NamesCommand,
    SeatOption,
    SeatShortlistOption,
    SeatVocabularyOption,
    SpyAssignmentOption,
    parse_backend_options,
)
from leakage.errors import BackendUnavailable, InvalidInput, LeakageError

if TYPE_CHECKING:
    from rich.progress import Progress


class Engine(StrEnum):
    local = "local"
    ray = "ray"


class GroupBy(StrEnum):
    model = "model"
    matchup = "matchup"
    difficulty = "difficulty"
    role = "role"
    speaker = "speaker"


def _progress(console: Console, enabled: bool) -> Progress:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]scoring[/bold]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("games"),
        TextColumn("{task.fields[rate]:>8.1f} games/s"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=not enabled,
    )


def _need_extra(module: str, extra: str) -> None:
    """A clear error, not a traceback from a worker, when an optional dependency is missing."""
    try:
        importlib.import_module(module)
    except ImportError as err:
        raise BackendUnavailable(
            f"this command needs the {extra!r} extra: pip install 'leakage[{extra}]' ({err})"
        ) from None


@app.command(cls=NamesCommand)
def batch(
    inputs: Annotated[
        list[str],
        typer.Argument(help="Files, directories or globs of JSON / JSONL / Parquet (.gz too)."),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Results directory.")],
    backend: BackendOption = "cooccurrence",
    input_format: InputFormatOption = "auto",
    workers: Annotated[
        int | None,
        typer.Option(
            help="Scoring processes, or Ray actors (0: score in this process; default: one "
            "per GPU when the models run on CUDA, else 1).",
            min=0,
        ),
    ] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue a killed or stopped run in --out.")
    ] = False,
    engine: Annotated[Engine, typer.Option(help="local (this machine) or ray.")] = Engine.local,
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Ray cluster to join ('auto', 'ray://host:10001'); implies --engine ray."
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Model of the embedding or judge backend.")
    ] = None,
    index: Annotated[
        Path | None, typer.Option(help="Co-occurrence: local FTS5 index (default: built on use).")
    ] = None,
    backend_option: BackendOptionsOption = None,
    include_chameleon: IncludeChameleonOption = False,
    spy_assignment: SpyAssignmentOption = "known",
    seat: SeatOption = None,
    seat_vocabulary: SeatVocabularyOption = None,
    seat_shortlist: SeatShortlistOption = None,
    difficulty: Annotated[
        Path | None,
        typer.Option(help="Splits directory or CSV giving each SpyGame word pair's difficulty."),
    ] = None,
    chunk_size: Annotated[int, typer.Option(help="Games per task sent to a worker.", min=1)] = 256,
    checkpoint_games: Annotated[
        int, typer.Option(help="Commit at least every this many games.", min=1)
    ] = 20_000,
    checkpoint_seconds: Annotated[
        float, typer.Option(help="Commit at least every this many seconds.", min=0.0)
    ] = 30.0,
    reports: Annotated[
        bool, typer.Option(help="Write reports.jsonl (one leakage.report/1 per game).")
    ] = True,
    progress: Annotated[bool, typer.Option(help="Show the progress bar.")] = True,
    device: DeviceOption = "auto",
) -> None:
    """Score many games into a Parquet step table, per-game reports and an errors file.

    Resumable: a killed run continues with --resume, scoring no game twice and losing none.
    Exit code 2 when any record was bad (listed in errors.jsonl, the rest is scored).
    """
    _need_extra("pyarrow", "batch")
    if engine == Engine.ray or ray_address:
        _need_extra("ray", "ray")
    from leakage.batch import BatchJob, run_batch
    from leakage.cli import cli_variables
    from leakage.scoring import ScoreOptions

    options = parse_backend_options(backend_option or [])
    if model:
        options["model"] = model
    if index:
        options["index"] = str(index)
    job = BatchJob(
        inputs=inputs,
        out=out,
        backend=backend,
        backend_options=options,
        input_format=input_format,
        options=ScoreOptions(
            include_chameleon=include_chameleon,
            spy_assignment=spy_assignment,
            seat=seat,
            seat_vocabulary=seat_vocabulary,
            seat_shortlist=seat_shortlist,
        ),
        workers=workers,
        engine="ray" if ray_address else engine.value,
        ray_address=ray_address,
        resume=resume,
        chunk_size=chunk_size,
        checkpoint_games=checkpoint_games,
        checkpoint_seconds=checkpoint_seconds,
        difficulty=difficulty,
        write_reports=reports,
        variables=cli_variables(),
        device=device,
    )
    err = Console(stderr=True)
    start = time.perf_counter()
    with _progress(err, progress) as bar:
        task = bar.add_task("scoring", total=None, rate=0.0)

        def on_progress(done: int, expected: int) -> None:
            rate = done / max(time.perf_counter() - start, 1e-9)
            bar.update(task, completed=done, total=max(expected, done), rate=rate)

        try:
            stats = run_batch(job, on_progress=on_progress if progress else None)
        except LeakageError as e:
            bar.stop()
            # Bad arguments (no inputs, --out holding another job) stop a run before it
            # starts; anything else (a backend failing) stops it part-way.
            if not isinstance(e, InvalidInput):
                err.print(
                    f"stopped; what was committed is in {out}: rerun with --resume to continue.",
                    highlight=False,
                )
            raise
    summary = (
        f"{stats.games:,} game(s) scored, {stats.failed:,} bad record(s)"
        + (f", {stats.skipped:,} already done" if stats.skipped else "")
        + f" in {stats.seconds:.1f} s ({stats.games_per_s:,.0f} games/s); results in {out}"
    )
    err.print(summary, highlight=False)
    if stats.failed:
        err.print(f"bad records: {out / 'errors.jsonl'}", highlight=False)
        raise typer.Exit(EXIT_INVALID_INPUT)


@app.command(
    short_help="Leakage curves, per-clue gain, most and least revealing clues: PNG, SVG, CSV, HTML."
)
def report(
    results: Annotated[
        Path, typer.Argument(help="A `leakage batch` results directory or a steps Parquet.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the report.")],
    by: Annotated[
        GroupBy,
        typer.Option(
            help="Group curves by this: speaker is the speaking player's own model and role "
            "(a clue belongs to the model that said it); model the models of all counted "
            "speakers of a game."
        ),
    ] = GroupBy.model,
    bootstrap: Annotated[
        int, typer.Option(help="Bootstrap replicates for the 95% intervals.", min=0)
    ] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    max_clues: Annotated[int, typer.Option(help="Longest curve, in clues.", min=1)] = 16,
    top: Annotated[int, typer.Option(help="How many most / least revealing clues.", min=0)] = 20,
    difficulty: Annotated[
        Path | None,
        typer.Option(help="Splits directory or CSV to (re)join SpyGame pairs' difficulty."),
    ] = None,
    compare: Annotated[
        tuple[str, str] | None,
        typer.Option(
            metavar="MODEL_A MODEL_B",
            help="Add the paired difference of two models' leakage per clue, in the games "
            "where both spoke (compare.csv, compare.png).",
        ),
    ] = None,
    plane: Annotated[
        bool,
        typer.Option(help="Add the reveal-vs-conceal plane (plane.csv, plane.png)."),
    ] = True,
    leaderboard: Annotated[
        bool,
        typer.Option(
            "--leaderboard",
            help="Also print the leaderboard (which model leaks least, per role; always in "
            "report.html, leaderboard.csv and leaderboard.json).",
        ),
    ] = False,
    min_games: Annotated[
        int,
        typer.Option(help="Leaderboard rows of fewer games are shown without a rank.", min=1),
    ] = 10,
) -> None:
    """Leakage curves (entropy and top-k after m clues, with bootstrap 95% intervals), per-clue
    information gain, most and least revealing clues, leakage by model: PNG, SVG, CSV, HTML."""
    _need_extra("pyarrow", "batch")
    _need_extra("matplotlib", "batch")
    from leakage.batch import load_difficulty
    from leakage.curves import build_report

    table = load_difficulty(difficulty) if difficulty else None
    rep = build_report(
        results,
        out,
        by=by.value,
        replicates=bootstrap,
        seed=seed,
        max_clues=max_clues,
        top=top,
        difficulty=table,
        compare=compare,
        plane=plane,
        min_games=min_games,
    )
    if leaderboard and rep.leaderboard is not None:
        from leakage.cli._leaderboard import print_leaderboard

        print_leaderboard(rep.leaderboard)
    typer.echo(f"{rep.games:,} games; wrote {len(rep.files)} files to {out} (open report.html)")
