"""``leakage corpus build|info``: the local co-occurrence index."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from leakage.cli import app, cli_paths

corpus_app = typer.Typer(
    help="Build and inspect the local co-occurrence index.", no_args_is_help=True
)
app.add_typer(corpus_app, name="corpus")


@corpus_app.command("build")
def build(
    from_files: Annotated[
        list[Path] | None,
        typer.Option(
            "--from",
            help="Index these files instead of the default WordNet + MyThes corpus: .txt (a "
            "document per line) or .jsonl (a 'text' field), optionally .gz. Repeat for many.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Index file to write (default: the default index).")
    ] = None,
    text_field: Annotated[str, typer.Option(help="JSONL field holding the document text.")] = (
        "text"
    ),
) -> None:
    """Build an SQLite FTS5 co-occurrence index (replaces the file only on success)."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

    from leakage.corpus import build_index, default_documents, file_documents

    out = out or cli_paths().index
    err = Console(stderr=True)
    with Progress(
        TextColumn("[bold]indexing[/bold]"),
        BarColumn(),
        DownloadColumn() if from_files else TextColumn("{task.completed:,} documents"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        if from_files:
            total = sum(p.stat().st_size for p in from_files)
            task = progress.add_task("index", total=total)
            docs = file_documents(
                from_files,
                text_field=text_field,
                on_bytes=lambda n: progress.advance(task, n),
            )
            info = build_index(out, docs, sources=[str(p) for p in from_files])
        else:
            task = progress.add_task("index", total=None)
            docs, sources = default_documents()
            info = build_index(
                out, docs, sources=sources, progress=lambda n: progress.advance(task, n)
            )
    err.print(
        f"indexed {info.documents:,} documents from {', '.join(info.sources)} into {info.path} "
        f"({info.size_bytes / 1e6:.1f} MB, {info.built_seconds:.1f} s)",
        highlight=False,
    )


@corpus_app.command("info")
def info(
    index: Annotated[
        Path | None, typer.Option(help="Index file (default: the default index).")
    ] = None,
) -> None:
    """Show what an index holds."""
    from leakage.corpus import read_meta

    path = index or cli_paths().index
    meta = read_meta(path)
    typer.echo(f"index: {path}")
    for k, v in meta.items():
        typer.echo(f"{k}: {v}")
