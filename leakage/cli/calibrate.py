"""``leakage calibrate``: fit ensemble temperatures and weights on logged games, held out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from leakage.cli import app
from leakage.cli._errors import EXIT_INVALID_INPUT
from leakage.cli._options import (
    BackendOptionsOption,
    DeviceOption,
    InputFormatOption,
    NamesCommand,
    parse_backend_options,
    with_variables,
)
from leakage.errors import BackendUnavailable, DeviceUnavailable, InvalidInput

CANDIDATE_MEMBERS = ("cooccurrence", "embedding", "listener")
"""Members tried when --members is not given: those of these that are registered. The LLM
reads each clue once as the listener; the speaker judge (``judge``) reads it once per
candidate, about 4x the time on CK-Arena, for a held-out log loss 0.008 nats lower there
(docs/calibration.md): add it with --members."""


def _members(value: str | None) -> list[str]:
    """The members to fit: ``--members`` checked as the ensemble checks it (registered
    backends, none twice, not the ensemble: else a usage error), or those of
    ``CANDIDATE_MEMBERS`` that are registered."""
    from leakage.backends import backend_names
    from leakage.backends.ensemble import parse_members

    if value is None:
        registered = set(backend_names())
        return [n for n in CANDIDATE_MEMBERS if n in registered]
    try:
        return parse_members(value) or []
    except InvalidInput as err:
        message = str(err).removeprefix("ensemble: ")
        raise typer.BadParameter(message, param_hint="--members") from None


def _table(result: Any) -> Table:
    from leakage.calibration import ENSEMBLE, EQUAL_POOL

    table = Table(
        title=f"held-out: {len(result.test_games)} games, {result.test_items} items "
        f"(trained on {len(result.train_games)} games, {result.train_items} items)"
    )
    for col in ("predictor", "scale (T)", "weight", "log loss", "top-1 acc", "ECE", "items"):
        table.add_column(col, justify="left" if col == "predictor" else "right")
    for name in [*result.members, EQUAL_POOL, ENSEMBLE]:
        m = result.metrics[name]
        if name in result.members:
            t = result.temperatures[name]
            scale = "-" if t is None else f"{t:.4g}"
            weight = "alone"
        elif name == EQUAL_POOL:
            scale, weight = "each T", "1 each"
        else:
            scale, weight = "each T", "fitted"
        table.add_row(
            name.replace("_", "-"),
            scale,
            weight,
            f"{m.log_loss:.4f}",
            f"{m.accuracy:.3f}",
            f"{m.ece:.3f}",
            str(m.items),
            style="bold" if name == ENSEMBLE else None,
        )
    return table


@app.command(
    cls=NamesCommand,
    short_help="Fit the members' temperatures and the ensemble's weights on logged games.",
)
def calibrate(
    paths: Annotated[list[Path], typer.Argument(help="Logged games: transcript files or folders.")],
    input_format: InputFormatOption = "auto",
    members: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated member backends, e.g. cooccurrence,embedding,listener,judge "
            f"(default: those of {', '.join(CANDIDATE_MEMBERS)} that are installed)."
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Weights file to write (leakage.ensemble-weights/1)."),
    ] = Path("ensemble_weights.json"),
    report: Annotated[
        Path | None,
        typer.Option(help="Also write calibration.json and reliability.png into this folder."),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the train/test split of games.")] = 0,
    test_fraction: Annotated[
        float, typer.Option(min=0.01, max=0.99, help="Share of games held out for testing.")
    ] = 0.3,
    resamples: Annotated[
        int, typer.Option(min=100, help="Bootstrap resamples (over held-out games).")
    ] = 2000,
    index: Annotated[
        Path | None, typer.Option(help="Co-occurrence: local FTS5 index (default: built on use).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Embedding model (default: the bundled all-MiniLM-L6-v2).")
    ] = None,
    note: Annotated[str | None, typer.Option(help="A note to store in the weights file.")] = None,
    device: DeviceOption = "auto",
    backend_option: BackendOptionsOption = None,
) -> None:
    """Fit each member's temperature and the ensemble's weights on a training split of the
    games (maximum likelihood of the truth), and report log loss, top-1 accuracy and
    calibration error on the held-out games. If the ensemble is worse than its best member
    beyond noise, the weights written use that member alone. Bad records are reported on
    standard error and skipped (exit code 2 when any was bad).

    Member options: --index, --model (the embedding member's), --device (every member that
    loads a model), and any other as -O KEY=VALUE,
    routed to the members that take it (-O 'listener={"model": "smollm2-135m"}' for one)."""
    from leakage.backends import SupportsClose, create_backend
    from leakage.backends.ensemble import route_options
    from leakage.calibration import (
        build_item_set,
        extract_items,
        member_rows,
        write_reliability_diagram,
    )
    from leakage.calibration import calibrate as fit
    from leakage.transcripts import iter_transcripts
    from leakage.transcripts._files import expand_inputs

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    names = _members(members)
    if not names:
        raise BackendUnavailable(
            f"none of {', '.join(CANDIDATE_MEMBERS)} is registered; name members with --members"
        )
    bad = 0
    transcripts = []
    for item in iter_transcripts(paths, input_format=input_format):
        if isinstance(item, InvalidInput):
            bad += 1
            err.print(f"[red]error:[/red] {item}")
        else:
            transcripts.append(item)
    games, skipped = extract_items(transcripts)
    for reason, count in skipped.items():
        err.print(f"[yellow]skipped:[/yellow] {count} game(s): {reason}")
    if len(games) < 2:
        raise InvalidInput(
            f"calibration needs at least 2 games with items, got {len(games)} from "
            f"{', '.join(map(str, paths))}"
        )

    options: dict[str, Any] = parse_backend_options(backend_option or [])
    if index is not None:
        if "index" in options:
            raise InvalidInput("option 'index' is given twice: by --index and by -O index=...")
        options["index"] = index
    if model is not None:  # the embedding member's, not the judge's
        own = options.setdefault("embedding", {})
        if not isinstance(own, dict) or "model" in own:
            raise InvalidInput("the embedding model is given twice: by --model and by -O")
        own["model"] = model
    if device != "auto":  # to every member that loads a model
        if "device" in options:
            raise InvalidInput("option 'device' is given twice: by --device and by -O device=...")
        options["device"] = device
    routed = route_options(names, with_variables("ensemble", options))
    rows = {}
    member_info = {}
    n_items = sum(len(g.clues) for g in games)
    for name in names:
        try:
            backend = create_backend(name, **routed[name])
        except DeviceUnavailable:
            raise  # the device, not the member: leaving it out would not help
        except BackendUnavailable as exc:
            others = ",".join(n for n in names if n != name) or "OTHER"
            raise BackendUnavailable(
                f"member {name!r} is unavailable: {exc} (or leave it out: --members {others})"
            ) from exc
        try:
            with err.status(f"scoring {n_items:,} items of {len(games)} games with {name}"):
                rows[name] = member_rows(backend, games)
            member_info[name] = backend.info()
        finally:
            if isinstance(backend, SupportsClose):
                backend.close()

    result = fit(
        build_item_set(games, rows), seed=seed, test_fraction=test_fraction, resamples=resamples
    )
    con = Console(highlight=False, soft_wrap=True)
    con.print(_table(result))
    weights = ", ".join(f"{n} {result.fitted_weights[n]:.4g}" for n in result.members)
    con.print(f"ensemble weights (multiplying each member's centred rows / its T): {weights}")
    con.print(f"ensemble: {result.verdict()}")
    if result.fallback:
        con.print(f"[bold red]{result.fallback}[/bold red]")

    files = len(expand_inputs(paths))
    fitted_on = {
        "paths": [str(p) for p in paths],
        "files": files,
        "input_format": input_format,
        "games": len(games),
        "items": n_items,
        "games_skipped": skipped,
        "bad_records": bad,
    }
    doc = result.weights_document(fitted_on=fitted_on, member_info=member_info, note=note)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    written = [str(out)]
    if report is not None:
        report.mkdir(parents=True, exist_ok=True)
        payload = {"fitted_on": fitted_on, "member_info": member_info, **result.to_dict()}
        (report / "calibration.json").write_text(
            json.dumps(payload, indent=2) + "\n", encoding="utf-8"
        )
        write_reliability_diagram(result, report / "reliability.png")
        written += [str(report / "calibration.json"), str(report / "reliability.png")]
    con.print(f"wrote {', '.join(written)}")
    if bad:
        err.print(f"{bad} bad record(s) skipped; {len(transcripts)} game(s) read.")
        raise typer.Exit(EXIT_INVALID_INPUT)
