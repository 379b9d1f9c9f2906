"""``leakage splits build``: word pairs cut into hard / medium / easy by description similarity."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from leakage.cli import app
from leakage.cli._options import DeviceOption, Names, NamesCommand, names_option

# Gu et al.'s cut points, written out so that registering this command does not import
# leakage.splits (numpy, pydantic; tests/test_cli_startup.py checks that they agree).
GU_HARD_ABOVE = 0.789
"""``leakage.splits.GU_HARD_ABOVE``."""
GU_EASY_BELOW = 0.735
"""``leakage.splits.GU_EASY_BELOW``."""

splits_app = typer.Typer(
    help="Keyword difficulty splits (hard / medium / easy) of word pairs.", no_args_is_help=True
)
app.add_typer(splits_app, name="splits")


def _describers() -> list[str]:
    from leakage.splits import DESCRIBERS

    return DESCRIBERS.names()


DESCRIBER_NAMES = Names(
    "Where descriptions come from: {names} (default: wordnet, or file).", _describers
)
"""``leakage.splits.DESCRIBERS``: the package's and those installed distributions add."""

_FLAGS = {"path": "--descriptions", "model": "--llm-model", "endpoint": "--llm-endpoint"}
"""The describer option each describer flag gives."""


class Method(StrEnum):
    terciles = "terciles"
    thresholds = "thresholds"


def _columns(value: str | None) -> tuple[str, str] | None:
    if value is None:
        return None
    parts = [p.strip() for p in value.split(",")]
    if len(parts) != 2 or not all(parts):
        raise typer.BadParameter("give two column names separated by a comma, e.g. word_a,word_b")
    return parts[0], parts[1]


@splits_app.command("build", cls=NamesCommand)
def build(
    pairs: Annotated[
        Path,
        typer.Argument(
            help="Pairs: CSV with a header, JSONL, or a JSON array of two-element lists.",
            exists=True,
            dir_okay=False,
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory to write the splits into.")],
    descriptions: Annotated[
        Path | None,
        typer.Option(
            help='Descriptions file: JSONL {"word", "description"} lines or CSV word,description '
            "(implies --describer file).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    describer: Annotated[str | None, names_option(DESCRIBER_NAMES, metavar="<name>")] = None,
    method: Annotated[Method, typer.Option(help="How to cut the ranked pairs.")] = (
        Method.terciles
    ),
    hard_above: Annotated[
        float,
        typer.Option(help="thresholds: hard when similarity > this (Gu et al.'s BGE-M3 value)."),
    ] = GU_HARD_ABOVE,
    easy_below: Annotated[
        float,
        typer.Option(help="thresholds: easy when similarity < this (Gu et al.'s BGE-M3 value)."),
    ] = GU_EASY_BELOW,
    sample: Annotated[
        int | None,
        typer.Option(
            min=1, help="Write a seeded sample of N pairs per split (error if one is smaller)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of --sample.")] = 0,
    model: Annotated[
        str,
        typer.Option(help="Embedding model: all-MiniLM-L6-v2 (bundled), BAAI/bge-m3, a folder."),
    ] = "all-MiniLM-L6-v2",
    columns: Annotated[
        str | None,
        typer.Option(help="The pair's two columns (CSV) or keys (JSON), e.g. word_a,word_b."),
    ] = None,
    cache: Annotated[
        bool,
        typer.Option(help="Keep descriptions and embeddings in $LEAKAGE_HOME across runs."),
    ] = True,
    llm_model: Annotated[
        str | None,
        typer.Option(
            help="--describer llm: smollm2-135m (bundled, default), a GGUF or model folder, or "
            "the endpoint's model name (default there: LEAKAGE_LLM_MODEL)."
        ),
    ] = None,
    llm_endpoint: Annotated[
        str | None,
        typer.Option(
            help="--describer llm: an OpenAI-compatible base URL (key from "
            "LEAKAGE_LLM_API_KEY); default: the bundled local model."
        ),
    ] = None,
    device: DeviceOption = "auto",
) -> None:
    """Rank word pairs by how similar their words' descriptions are; cut into hard (most
    similar), medium and easy. Pairs with a word the describer does not know go to
    unknown.csv (reported on standard error); the exit code is still 0 when any pair was
    split."""
    from leakage.cli import cli_paths
    from leakage.encoders import open_encoder
    from leakage.splits import (
        DESCRIBERS,
        SPLITS,
        CachedDescriber,
        Describer,
        VersionedDescriber,
        build_splits,
        create_describer,
        describer_options,
        read_pairs,
        write_splits,
    )

    paths = cli_paths()
    name = describer or ("file" if descriptions else "wordnet")
    takes = describer_options(name)
    given = {"path": descriptions, "model": llm_model, "endpoint": llm_endpoint}
    for key, value in given.items():
        if value is not None and key not in takes:
            for_whom = [n for n in DESCRIBERS if key in describer_options(n)]
            raise typer.BadParameter(
                f"is for --describer {' or '.join(for_whom)}, not {name}", param_hint=_FLAGS[key]
            )
    for key, needed in takes.items():
        if needed and given.get(key) is None:
            flag = f"{_FLAGS[key]} FILE" if key == "path" else _FLAGS.get(key, f"option {key}")
            raise typer.BadParameter(f"--describer {name} needs {flag}")
    if method is Method.thresholds and easy_below > hard_above:
        raise typer.BadParameter(
            f"{easy_below} is above --hard-above {hard_above}", param_hint="--easy-below"
        )
    pair_columns = _columns(columns)
    table = read_pairs(pairs, columns=pair_columns)

    options: dict[str, object] = {k: v for k, v in given.items() if v is not None}
    if "llm_cache" in takes:  # where an LLM describer's answers are kept
        options["llm_cache"] = str(paths.llm_responses)
    if device != "auto" and "device" in takes:  # where a local describer model runs
        options["device"] = device
    if "variables" in takes:  # an endpoint's LEAKAGE_LLM_*, read through the settings
        from leakage.cli import cli_variables

        options["variables"] = cli_variables()
    source: Describer = create_describer(name, **options)
    if cache and isinstance(source, VersionedDescriber):
        source = CachedDescriber(source, paths.descriptions)

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    encoder = open_encoder(model, disk_cache=cache, cache_path=str(paths.embeddings), device=device)
    try:
        result = build_splits(
            table,
            source,
            encoder,
            method=method.value,
            hard_above=hard_above,
            easy_below=easy_below,
            sample_size=sample,
            seed=seed,
        )
    finally:
        encoder.close()
    write_splits(result, out)

    s = result.summary
    for note in s.notes:
        err.print(f"[yellow]note:[/yellow] {note}")
    if s.unknown.pairs:
        shown = ", ".join(s.unknown.words[:8]) + (", ..." if len(s.unknown.words) > 8 else "")
        err.print(
            f"[yellow]unknown:[/yellow] {s.unknown.pairs} of {s.pairs_read} pairs not split, "
            f"{len(s.unknown.words)} word(s) unknown to the {s.describer} describer ({shown}); "
            f"see {out / 'unknown.csv'}"
        )
    if s.duplicates:
        err.print(
            f"[yellow]duplicates:[/yellow] {len(s.duplicates)} pair(s) occur more than once "
            f"(kept; listed in summary.json), e.g. {' / '.join(s.duplicates[0].pair)} at "
            f"{table.unit}s {', '.join(map(str, s.duplicates[0].lines))}"
        )
    con = Console(highlight=False, soft_wrap=True)
    con.print(
        f"{s.pairs_read - s.unknown.pairs} pairs split by {s.method} "
        f"({s.model}, {s.describer} descriptions):"
    )
    for name in SPLITS:
        st = s.similarity[name]
        rng = f"{st.min:.3f} - {st.max:.3f}, mean {st.mean:.3f}" if st.count else "-"
        picked = f" ({len(result.selected[name])} sampled)" if s.sample else ""
        con.print(f"  {name:<7}{st.count:>6} pairs{picked}  similarity {rng}")
    cuts = ", ".join(
        f"{k.replace('_', '/')} {v:.4f}" for k, v in s.cut_points.items() if v is not None
    )
    con.print(f"  cut points: {cuts or 'none'}")
    con.print(
        f"wrote {out}/: hard.csv medium.csv easy.csv all.csv unknown.csv descriptions.jsonl "
        "summary.json similarity_hist.png"
    )
