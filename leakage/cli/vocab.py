"""``leakage vocab build|info`` and ``leakage guess``: the open vocabulary.

``guess`` ranks a whole vocabulary (by default the 50,000 most frequent English words) given
clues: what an adversary would guess without the candidate list, and where the secret ranks.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from leakage.cli import app, cli_paths
from leakage.cli._options import DeviceOption
from leakage.errors import InvalidInput

if TYPE_CHECKING:
    from leakage.encoders import CachedEncoder
    from leakage.paths import Paths
    from leakage.vocab import GuessResult, VectorIndex

# The library's defaults, written out so that registering these commands imports neither
# the backends nor numpy (tests/test_cli_startup.py checks that they agree).
DEFAULT_MODEL = "all-MiniLM-L6-v2"
"""``leakage.encoders.DEFAULT_MODEL``."""
DEFAULT_TAU = 0.05
"""``leakage.backends.embedding.DEFAULT_TAU``."""
DEFAULT_RERANK = "cooccurrence,embedding"
"""``leakage.vocab.WORD_MEMBERS`` (not imported here: the command line starts without numpy)."""
DEFAULT_SHORTLIST = 200
"""``leakage.vocab.DEFAULT_SHORTLIST``."""

vocab_app = typer.Typer(
    help="Build and inspect open-vocabulary indexes (for `leakage guess`).", no_args_is_help=True
)
app.add_typer(vocab_app, name="vocab")


class Kind(StrEnum):
    auto = "auto"
    flat = "flat"
    hnsw = "hnsw"
    ivf = "ivf"
    numpy = "numpy"


class Texts(StrEnum):
    word = "word"
    gloss = "gloss"


class GuessFormat(StrEnum):
    table = "table"
    json = "json"


def _model_ref(model: str) -> tuple[str, str]:
    """(encoder name, what to reopen it by): a local folder is remembered by its path."""
    from leakage.encoders import resolve_model

    name, _ = resolve_model(model)
    folder = Path(model).expanduser()
    return name, str(folder.resolve()) if folder.exists() else name


def _build(
    words: str,
    model: str,
    kind: str,
    out: Path,
    err: Console,
    paths: Paths,
    device: str,
    texts: str = "word",
):
    """Embed and index a word list with a progress bar; returns (index, encoder)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from leakage.encoders import open_encoder
    from leakage.vocab import VectorIndex, embed_words, load_words, word_texts

    word_list = load_words(words)
    _, ref = _model_ref(model)
    err.print(f"loading {model} ...", highlight=False)
    encoder = open_encoder(model, cache_path=str(paths.embeddings), device=device)
    with Progress(
        TextColumn("[bold]embedding[/bold]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("words"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        task = progress.add_task("embedding", total=len(word_list.words))
        vectors = embed_words(
            word_texts(word_list.words, texts),
            encoder,
            progress=lambda n: progress.advance(task, n),
        )
    with err.status(f"indexing {len(word_list.words):,} vectors ({kind}) ..."):
        index = VectorIndex.build(
            word_list.words,
            vectors,
            model=encoder.name,
            kind=kind,
            source=word_list.source,
            model_ref=ref,
            texts=texts,  # type: ignore[arg-type]
        )
        index.save(out)
    size = sum(p.stat().st_size for p in out.iterdir())
    err.print(
        f"indexed {len(index):,} words from {word_list.source} with {encoder.name} "
        f"({index.kind}) into {out} ({size / 1e6:.1f} MB)",
        highlight=False,
        soft_wrap=True,
    )
    return index, encoder


@vocab_app.command("build")
def build(
    words: Annotated[
        str,
        typer.Option(
            help="wordfreq:N (the N most frequent English words, alphabetic, >= 2 letters) "
            "or a text file with one word per line."
        ),
    ] = "wordfreq:50000",
    model: Annotated[str, typer.Option(help="Embedding model: name or local folder.")] = (
        DEFAULT_MODEL
    ),
    kind: Annotated[
        Kind, typer.Option(help="Index kind; auto picks by vocabulary size (docs/vocab.md).")
    ] = Kind.auto,
    out: Annotated[
        Path | None,
        typer.Option(help="Index folder (default: $LEAKAGE_HOME/vocab/<model>-<words>/)."),
    ] = None,
    device: DeviceOption = "auto",
    texts: Annotated[
        Texts,
        typer.Option(
            help="What each word is embedded as: the word, or 'word: its first WordNet gloss' "
            "(gloss: reads definition-like clues better; docs/vocab.md). Default folder "
            "ends in -gloss."
        ),
    ] = Texts.word,
) -> None:
    """Embed a word list and save a vector index of it (replaced only on success)."""
    from leakage.vocab import default_vocab_dir

    paths = cli_paths()
    if out is None:
        name, _ = _model_ref(model)
        out = default_vocab_dir(name, words, home=paths.home, texts=texts.value)
    _build(words, model, kind.value, out, Console(stderr=True), paths, device, texts.value)


@vocab_app.command("info")
def info(
    vocab: Annotated[Path | None, typer.Option(help="Index folder (default: the default).")] = (
        None
    ),
    model: Annotated[str, typer.Option(help="Model of the default index.")] = DEFAULT_MODEL,
) -> None:
    """Show what a vocabulary index holds."""
    from leakage.vocab import default_vocab_dir, read_meta

    path = vocab or default_vocab_dir(_model_ref(model)[0], home=cli_paths().home)
    typer.echo(f"index: {path}")
    for key, value in read_meta(path).model_dump().items():
        typer.echo(f"{key}: {value}")


def _lazy_encoder(index: VectorIndex, model: str, paths: Paths, device: str) -> CachedEncoder:
    """The encoder of ``open_encoder(model)`` (disk cache, precision auto), whose model is
    loaded on ``device``, and torch imported, only when a text is neither in the index nor in
    the cache."""
    from leakage.encoders import CachedEncoder, SentenceTransformerEncoder
    from leakage.vocab import LazyEncoder

    lazy = LazyEncoder(
        index.model, index.dimension, lambda: SentenceTransformerEncoder(model, device=device)
    )
    return CachedEncoder(lazy, cache_path=paths.embeddings)


def guess_document(index: VectorIndex, result: GuessResult) -> dict[str, Any]:
    """What ``guess -f json`` prints: the vocabulary, then the result's fields."""
    return {
        "vocabulary": {
            "source": index.meta.source,
            "model": index.model,
            "kind": index.kind,
            "count": len(index),
        },
        **result.model_dump(mode="json"),
    }


@app.command()
def guess(
    clues: Annotated[list[str], typer.Argument(help="The clues given so far.")],
    vocab: Annotated[
        Path | None,
        typer.Option(help="Vocabulary index folder (default: wordfreq:50000, built on first use)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="Embedding model (default: the index's, or all-MiniLM-L6-v2)."),
    ] = None,
    top: Annotated[int, typer.Option(help="How many guesses to show.", min=1)] = 10,
    secret: Annotated[str | None, typer.Option(help="Also show where this word ranks.")] = None,
    exclude: Annotated[
        list[str] | None, typer.Option(help="Leave this word out of the ranking (repeatable).")
    ] = None,
    keep_clues: Annotated[
        bool, typer.Option("--keep-clues", help="Do not leave the clue words themselves out.")
    ] = False,
    keep_forms: Annotated[
        bool,
        typer.Option(
            "--keep-forms",
            help="Do not leave out the clues' own forms (plurals, derivations, shared stems).",
        ),
    ] = False,
    tau: Annotated[float, typer.Option(help="Softmax temperature τ.", min=1e-6)] = DEFAULT_TAU,
    rerank: Annotated[
        str,
        typer.Option(
            help="Ensemble members that re-rank the shortlist (comma-separated, with their "
            "fitted weights for word clues), or 'none' for the embedding scores alone.",
        ),
    ] = DEFAULT_RERANK,
    shortlist: Annotated[
        int, typer.Option(help="How many words the members re-rank.", min=1)
    ] = DEFAULT_SHORTLIST,
    fmt: Annotated[GuessFormat, typer.Option("--format", "-f", help="Output format.")] = (
        GuessFormat.table
    ),
    device: DeviceOption = "auto",
) -> None:
    """What would an adversary guess from these clues, without the candidate list?

    Ranks every word of the vocabulary by Σ cos(clue, word) / τ, then re-ranks the
    --shortlist best with the ensemble's --rerank members (their mass kept, so the
    probabilities are over the whole vocabulary), and prints the top guesses. The clues and
    their own forms (plurals, derivations, shared stems) are left out. Clues that are words
    of the vocabulary take their vectors from the index; the embedding model is loaded only
    for other clues (and a secret outside the vocabulary) not already in the embedding cache.
    """
    from leakage.vocab import (
        OpenVocabulary,
        ShortlistPosterior,
        VectorIndex,
        default_vocab_dir,
        read_meta,
        reranked_guess,
        vocabulary_pool,
    )

    err = Console(stderr=True)
    paths = cli_paths()
    if vocab is None:
        name, _ = _model_ref(model or DEFAULT_MODEL)
        path = default_vocab_dir(name, home=paths.home)
        if not (path / "meta.json").is_file():
            err.print(
                f"building the default vocabulary index at {path} (first use) ...",
                highlight=False,
                soft_wrap=True,
            )
            index, encoder = _build(
                "wordfreq:50000", model or DEFAULT_MODEL, "auto", path, err, paths, device
            )
        else:
            index = VectorIndex.load(path, model=name)
            encoder = _lazy_encoder(index, model or DEFAULT_MODEL, paths, device)
    else:
        if not vocab.exists():
            raise InvalidInput(
                f"{vocab}: no vocabulary index here; build it with "
                f"`leakage vocab build --out {vocab}`"
            )
        meta = read_meta(vocab)
        # Check the model before loading it: a mismatch is the user's to fix (exit 2).
        index = VectorIndex.load(vocab, model=_model_ref(model)[0] if model else None)
        encoder = _lazy_encoder(index, model or meta.model_ref or meta.model, paths, device)
    open_vocab = OpenVocabulary(index, encoder, tau=tau)
    members = [m.strip() for m in rerank.split(",") if m.strip()]
    guess = open_vocab.guess
    if members != ["none"]:
        pool = vocabulary_pool(open_vocab, members)
        guess = partial(reranked_guess, ShortlistPosterior(open_vocab, pool, shortlist=shortlist))
    result = guess(
        clues,
        top=top,
        exclude=exclude or (),
        exclude_clues=not keep_clues,
        exclude_forms=not keep_forms,
        secret=secret,
    )
    if fmt is GuessFormat.json:
        doc = guess_document(index, result)
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return
    out = Console()
    out.print(
        f"guesses from {', '.join(repr(c) for c in result.clues)} among {result.ranked:,} "
        f"words ({index.meta.source}, {index.model}"
        + (f"; re-ranked by {result.reranked_by}" if result.reranked_by else "")
        + ")",
        highlight=False,
        soft_wrap=True,
    )
    table = Table()
    table.add_column("rank", justify="right")
    table.add_column("word")
    table.add_column("Σ cos", justify="right")
    table.add_column("P", justify="right")
    for g in result.guesses:
        style = "bold" if result.secret and g.word == result.secret.word else None
        table.add_row(
            str(g.rank), g.word, f"{g.similarity:.3f}", f"{g.probability:.3f}", style=style
        )
    out.print(table)
    if result.excluded:
        out.print(f"left out: {', '.join(result.excluded)}", highlight=False, soft_wrap=True)
    if result.forms:
        out.print(
            f"left out as the clues' forms ({len(result.forms)}): {', '.join(result.forms)}",
            highlight=False,
            soft_wrap=True,
        )
    if result.secret is not None:
        s = result.secret
        where = "" if s.in_vocabulary else " (not in the vocabulary; ranked as if it were)"
        out.print(
            f"secret {s.word!r}: rank {s.rank:,} of {s.of:,}, P = {s.probability:.3g}, "
            f"Σ cos = {s.similarity:.3f}{where}",
            highlight=False,
            soft_wrap=True,
        )
