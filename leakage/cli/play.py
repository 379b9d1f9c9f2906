"""``leakage play`` (games between agents) and ``leakage metrics`` (game metrics of logs)."""

from __future__ import annotations

import json
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from leakage.cli import app
from leakage.cli._errors import EXIT_INVALID_INPUT
from leakage.cli._options import (
    ROLES,
    DeviceOption,
    InputFormatOption,
    Lessons,
    NamesCommand,
    names_option,
)


class GameKind(StrEnum):
    chameleon = "chameleon"
    spygame = "spygame"


class Difficulty(StrEnum):
    hard = "hard"
    medium = "medium"
    easy = "easy"
    all = "all"


class Reflect(StrEnum):
    statement = "statement"
    round = "round"
    none = "none"


def game_seeds(seed: int, games: int) -> list[int]:
    """One seed per game, derived from the run's seed (the same run replays exactly)."""
    import numpy as np

    return [int(s) for s in np.random.SeedSequence(seed).generate_state(games)]


def print_metrics(rows_by_kind: dict[str, Any], console: Console) -> None:
    for kind, rows in rows_by_kind.items():
        table = Table(title=f"{kind} metrics (95% bootstrap CI over games)")
        for col in ("metric", "value", "95% CI", "games"):
            table.add_column(col, justify="left" if col == "metric" else "right")
        for r in rows:
            if r.value is None:
                table.add_row(r.metric, "n/a", r.reason or "", "0", style="dim")
            else:
                ci = f"{r.ci_low:.3f} - {r.ci_high:.3f}"
                table.add_row(r.metric, f"{r.value:.3f}", ci, str(r.games))
        console.print(table)


def _split_pairs(
    game: GameKind, pairs_from: Path | None, difficulty: Difficulty, games: int, seed: int
) -> list[Any] | None:
    """The pairs a SpyGame run plays from a split (``--pairs-from``), or None (cards)."""
    if pairs_from is None:
        if difficulty is not Difficulty.all:
            raise typer.BadParameter("needs --pairs-from DIR_OR_CSV", param_hint="--difficulty")
        return None
    if game is not GameKind.spygame:
        raise typer.BadParameter("is for spygame (word pairs)", param_hint="--pairs-from")
    from leakage.splits import draw_pairs, read_split

    return draw_pairs(read_split(pairs_from, difficulty.value), games, seed)


@app.command()
def play(
    game: Annotated[GameKind, typer.Argument(help="chameleon or spygame.")],
    agents: Annotated[
        str | None,
        typer.Option(
            help="One agent per role, e.g. non-chameleon=revealing,chameleon=posterior "
            "(chameleon game: non-chameleon revealing, concealing, amb, trivial, leakage-aware; "
            "chameleon posterior, random, copy, amb; "
            "spygame: associative, vague; both games, every role: pgm, pgm:llm[:MODEL], "
            "pgm:local[:MODEL], llm[:MODEL], local[:MODEL], cheatsheet:llm[:MODEL], "
            "cheatsheet:local[:MODEL])."
        ),
    ] = None,
    games: Annotated[int, typer.Option(min=1, help="Number of games.")] = 10,
    seed: Annotated[int, typer.Option(help="Run seed (each game's seed derives from it).")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the transcripts here (JSONL).")
    ] = None,
    players: Annotated[int | None, typer.Option(help="Players (default 4 / 5).")] = None,
    candidates: Annotated[int, typer.Option(help="Chameleon: candidates K per game.")] = 16,
    forbid_secret: Annotated[
        bool,
        typer.Option(
            help="Chameleon: saying the secret is an invalid move (Karabag & Topcu allow it)."
        ),
    ] = False,
    spies: Annotated[int, typer.Option(help="SpyGame: number of spies.")] = 1,
    rounds: Annotated[int, typer.Option(help="SpyGame: round limit.")] = 6,
    roles_known: Annotated[
        bool, typer.Option(help="SpyGame: tell players their role (MAgIC / CK-Arena).")
    ] = False,
    reflect: Annotated[
        Reflect | None,
        typer.Option(
            help="When players reflect (state their beliefs) before the vote: after every "
            "statement / clue, once a round after all descriptions (SpyGame only), or never. "
            "Default: statement for spygame (Gu et al.), none for chameleon (Karabag & Topcu)."
        ),
    ] = None,
    pairs_from: Annotated[
        Path | None,
        typer.Option(
            help="SpyGame: play the word pairs of a `leakage splits build` directory or split "
            "CSV (each pair once per pass, seeded order); default: pairs drawn from the cards."
        ),
    ] = None,
    difficulty: Annotated[
        Difficulty,
        typer.Option(help="SpyGame with --pairs-from: which split's pairs to play."),
    ] = Difficulty.all,
    budget: Annotated[
        float,
        typer.Option(
            help="leakage-aware, and the pgm non-chameleon: most P(secret) a clue may leave an "
            "adversary."
        ),
    ] = 0.25,
    service: Annotated[
        str | None, typer.Option(help="leakage-aware: ask this leakage service (base URL).")
    ] = None,
    llm_endpoint: Annotated[
        str | None, typer.Option(help="llm agents: an OpenAI-compatible base URL.")
    ] = None,
    index: Annotated[Path | None, typer.Option(help="Co-occurrence index for the tables.")] = None,
    memory: Annotated[
        Path | None,
        typer.Option(
            help="cheatsheet agents: keep their memories in this directory (GAME.ROLE.json), "
            "loaded at the start and saved after every game; default: for this run only."
        ),
    ] = None,
    curate_every: Annotated[
        int, typer.Option(min=1, help="cheatsheet agents: curate the memory every K games.")
    ] = 5,
    lessons: Annotated[
        Lessons,
        typer.Option(
            help="cheatsheet agents: lessons and curation by the llm, by rules, or auto (the "
            "LLM for an endpoint, rules for a local model)."
        ),
    ] = "auto",
    device: DeviceOption = "auto",
) -> None:
    """Play games between agents; transcripts in leakage.transcript/1, metrics at the end."""
    from leakage.backends import open_backend
    from leakage.cli import cli_paths, cli_variables
    from leakage.games import (
        ChameleonConfig,
        ChameleonGame,
        SpyGame,
        SpyGameConfig,
    )
    from leakage.games import (
        agents as agent_mod,
    )
    from leakage.games._loop import run
    from leakage.games.metrics import metrics_table

    spec = agent_mod.parse_spec(game.value, agents)
    if reflect is None:
        reflect = Reflect.none if game is GameKind.chameleon else Reflect.statement
    if game is GameKind.chameleon and reflect is Reflect.round:
        raise typer.BadParameter("round is for spygame (the Chameleon has one round of clues: "
                                 "use statement or none)", param_hint="--reflect")  # fmt: skip
    drawn = _split_pairs(game, pairs_from, difficulty, games, seed)
    spec_text = ",".join(f"{r}={a}" for r, a in spec.items())
    with (
        open_backend("cooccurrence", **({"index": index} if index else {})) as backend,
        agent_mod.AgentFactory(
            backend=backend,
            llm_endpoint=llm_endpoint,
            variables=cli_variables(),
            service_url=service,
            budget=budget,
            table_cache=cli_paths().games,
            memory=memory,
            curate_every=curate_every,
            lessons=lessons,
            device=device,
        ) as factory,
    ):
        roster = factory.agents(game.value, agents)
        names = {role: name for role, name in spec.items()}
        engine: ChameleonGame | SpyGame
        if game is GameKind.chameleon:
            engine = ChameleonGame(
                ChameleonConfig(
                    n_players=players or 4,
                    n_candidates=candidates,
                    forbid_secret=forbid_secret,
                    reflect=reflect is Reflect.statement,
                ),
                agents=names,
            )
        else:
            engine = SpyGame(
                SpyGameConfig(
                    n_players=players or 5,
                    n_spies=spies,
                    max_rounds=rounds,
                    roles_known=roles_known,
                    reflect=reflect is not Reflect.none,
                    reflect_after="round" if reflect is Reflect.round else "statement",
                ),
                agents=names,
            )
        transcripts = []
        start = time.perf_counter()
        for i, s in enumerate(game_seeds(seed, games)):
            meta: dict[str, Any] = {"agents": spec_text, "run_seed": seed}
            if drawn is None or not isinstance(engine, SpyGame):
                engine.reset(s, game_id=f"{game.value}-{seed}-{i}")
            else:
                pair = drawn[i]
                engine.reset(s, pair=(pair.civilian, pair.spy), game_id=f"{game.value}-{seed}-{i}")
                meta |= {
                    "difficulty": pair.difficulty,
                    "pair_similarity": pair.similarity,
                    "pair_source": pair.source,
                }
            run(engine, roster)
            transcripts.append(engine.transcript(meta))
        seconds = time.perf_counter() - start
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("w", encoding="utf-8") as fh:
            for t in transcripts:
                fh.write(t.model_dump_json() + "\n")
    console = Console()
    console.print(f"{games} {game.value} games ({spec_text}) in {seconds:.2f} s", highlight=False)
    print_metrics(metrics_table(transcripts), console)


@app.command(cls=NamesCommand)
def metrics(
    paths: Annotated[list[Path], typer.Argument(help="Game logs: files or directories.")],
    input_format: InputFormatOption = "auto",
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the metrics as JSON here.")
    ] = None,
    per_game: Annotated[
        Path | None, typer.Option(help="Write each game's (numerator, denominator) as JSONL.")
    ] = None,
    boot: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Game metrics (win rates, identification, votes, survival, ...) with bootstrap CIs."""
    from leakage.errors import InvalidInput
    from leakage.games.metrics import credit_win_rates, game_metrics, metrics_table
    from leakage.transcripts import SpyGameTranscript, iter_transcripts

    err = Console(stderr=True)
    good, bad = [], 0
    for item in iter_transcripts(paths, input_format=input_format):
        if isinstance(item, InvalidInput):
            bad += 1
            err.print(f"[red]error:[/red] {item}", highlight=False, soft_wrap=True)
        else:
            good.append(item)
    table = metrics_table(good, n_boot=boot, seed=seed)
    print_metrics(table, Console())
    spy = [t for t in good if isinstance(t, SpyGameTranscript)]
    if json_out is not None:
        doc = {
            "games": len(good),
            "bad_records": bad,
            "metrics": {k: [r.as_dict() for r in rows] for k, rows in table.items()},
            "credit_win_rates": credit_win_rates(spy),
        }
        json_out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    if per_game is not None:
        with per_game.open("w", encoding="utf-8") as fh:
            for t in good:
                fh.write(
                    json.dumps({"id": t.id, "game": t.game, "metrics": game_metrics(t)}) + "\n"
                )
    if bad:
        err.print(f"{bad} bad record(s) skipped; {len(good)} game(s) measured.", highlight=False)
        raise typer.Exit(EXIT_INVALID_INPUT)


@app.command("cheatsheet-tournament", cls=NamesCommand)
def cheatsheet_tournament(
    game: Annotated[GameKind, typer.Argument(help="chameleon or spygame.")],
    agents: Annotated[
        str,
        typer.Option(help="One agent per role, as for play; --role's must be llm or local."),
    ],
    role: Annotated[str, names_option(ROLES, metavar="<role>")],
    games: Annotated[int, typer.Option(min=2, help="Games per condition.")] = 10,
    seed: Annotated[int, typer.Option(help="Run seed (each game's seed derives from it).")] = 0,
    curate_every: Annotated[int, typer.Option(min=1, help="Curate every K games.")] = 5,
    lessons: Annotated[Lessons, typer.Option(help="Who writes the lessons, as for play.")] = "auto",
    players: Annotated[int | None, typer.Option(help="Players (default 4 / 5).")] = None,
    candidates: Annotated[int, typer.Option(help="Chameleon: candidates K per game.")] = 16,
    rounds: Annotated[int, typer.Option(help="SpyGame: round limit.")] = 6,
    llm_endpoint: Annotated[
        str | None, typer.Option(help="llm agents: an OpenAI-compatible base URL.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the result as JSON here.")
    ] = None,
    device: DeviceOption = "auto",
) -> None:
    """Gu et al.'s Dynamic Cheatsheet ablation: the same seeds played by the role's LLM player
    without and with a fresh cheatsheet; the role's win rates, their paired difference and
    its standard error."""
    from leakage.cli import cli_paths, cli_variables
    from leakage.games import ChameleonConfig, ChameleonGame, SpyGame, SpyGameConfig
    from leakage.games import agents as agent_mod
    from leakage.games.agents.cheatsheet import tournament

    spec = agent_mod.parse_spec(game.value, agents)
    if role not in spec:
        raise typer.BadParameter(
            f"{role!r} is not a role of {game.value} ({', '.join(spec)})", param_hint="--role"
        )
    with agent_mod.AgentFactory(
        llm_endpoint=llm_endpoint,
        variables=cli_variables(),
        table_cache=cli_paths().games,
        curate_every=curate_every,
        lessons=lessons,
        device=device,
    ) as factory:
        engine: ChameleonGame | SpyGame
        if game is GameKind.chameleon:
            engine = ChameleonGame(
                ChameleonConfig(n_players=players or 4, n_candidates=candidates), agents=spec
            )
        else:
            engine = SpyGame(SpyGameConfig(n_players=players or 5, max_rounds=rounds), agents=spec)
        start = time.perf_counter()
        result = tournament(
            factory, engine, spec, role, game_seeds(seed, games), game_id=f"{game.value}-{seed}"
        )
        seconds = time.perf_counter() - start
    console = Console()
    console.print(
        f"{games} paired {game.value} games ({role}={spec[role]} without / with a cheatsheet, "
        f"curated every {curate_every}) in {seconds:.0f} s",
        highlight=False,
    )
    table = Table()
    for col in ("", f"{role} win rate", "wins"):
        table.add_column(col, justify="left" if not col else "right")
    table.add_row(
        "without", f"{result.rate(result.wins_without):.3f}", str(sum(result.wins_without))
    )
    table.add_row("with", f"{result.rate(result.wins_with):.3f}", str(sum(result.wins_with)))
    table.add_row("difference", f"{result.difference:+.3f} ± {result.stderr:.3f} (SE)", "")
    console.print(table)
    for c in result.curations:
        console.print(f"curation after game {c['game']}: {c}", highlight=False)
    for lesson in result.memory:
        console.print(f"- {lesson}", highlight=False, soft_wrap=True)
    if json_out is not None:
        json_out.write_text(json.dumps(result.as_dict(), indent=2) + "\n", encoding="utf-8")
