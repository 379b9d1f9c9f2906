"""Game runner: scripted-agent throughput, a 200-game tournament, leakage curves, the
leakage-aware agent's gain, and the theory check (``python -m benchmarks games``).

Throughput: Chameleon games between scripted agents on the shipped cards, the association
tables of all 28 cards built first (timed separately: they are built once and cached), the
games then timed over ``N_SPEED`` seeds, median of ``REPEATS`` passes. Target: ≥ 500 games/s.

Tournament: ``N_TOURNAMENT`` games per matchup (same seeds for every matchup), non-chameleon
revealing / concealing / amb / leakage-aware (budget 0.25, library oracle) against the
posterior chameleon; the metrics table of each; leakage curves (the adversary's mean P(secret)
and entropy after each non-chameleon clue, scored with the co-occurrence backend); the win
rate gain of leakage-aware over revealing with a paired bootstrap CI. Theory: the check of
Propositions 1-3 (N = 4..12, K = 3(N+1)) and its plot.

PGM tournament: what MAgIC's PGM-aware agent changes in SpyGame (5 players, one spy, roles
untold, reflections after every statement). ``N_PGM`` games per matchup, the same seeds (pair,
seats) for each of civilians {associative, vague, pgm} × spy {associative, vague, pgm}; the
metrics table of each, and the paired difference in the spy's win rate when one side plays
``pgm`` instead of ``associative`` against the same opponents (bootstrap over games).

Chameleon PGM tournament: the same for The Chameleon (4 players, K = 16, reflections after
every clue): ``N_TOURNAMENT`` games per matchup, the same seeds for non-chameleons
{revealing, pgm} × chameleon {posterior, pgm}; the metrics table of each and the paired
differences in the non-chameleons' win rate when either side plays ``pgm``.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import REPO, Stopwatch, default_index, mark, write_result

N_SPEED = 2000
N_TOURNAMENT = 200
REPEATS = 3
SEED = 20251122
TARGET_GAMES_PER_S = 500.0
IMG = REPO / "docs" / "img"
MATCHUPS = ("revealing", "concealing", "amb", "leakage-aware")
N_PGM = 100
SPY_AGENTS = ("associative", "vague", "pgm")
PGM_METRICS = ("spy_win_rate", "judgement", "self_awareness", "reasoning", "vote_rate")
CHAMELEON_PGM = {"non-chameleon": ("revealing", "pgm"), "chameleon": ("posterior", "pgm")}
CHAMELEON_PGM_METRICS = (
    "non_chameleon_win_rate",
    "identification_rate",
    "second_chance_guess_rate",
    "judgement",
    "deception",
    "reasoning",
    "self_awareness",
)


def _throughput(factory: Any, cards: Any, spec: str) -> float:
    from leakage.cli.play import game_seeds
    from leakage.games import ChameleonGame, play_chameleon

    agents = factory.agents("chameleon", spec)
    game = ChameleonGame(cards=cards)
    seeds = game_seeds(SEED, N_SPEED)
    rates = []
    for _ in range(REPEATS):
        with Stopwatch() as sw:
            for s in seeds:
                play_chameleon(agents, seed=s, game=game)
        rates.append(N_SPEED / sw.seconds)
    return statistics.median(rates)


def _curves(transcripts: list[Any], backend: Any) -> dict[str, list[float]]:
    from leakage.scoring import score_transcript

    p_secret: list[list[float]] = [[], [], []]
    entropy: list[list[float]] = [[], [], []]
    for t in transcripts:
        steps = [s for s in score_transcript(t, backend).steps if s.counted]
        for m, s in enumerate(steps[:3]):
            p_secret[m].append(s.secret_probability or 0.0)
            entropy[m].append(s.entropy_bits)
    return {
        "mean_p_secret": [float(np.mean(x)) for x in p_secret],
        "mean_entropy_bits": [float(np.mean(x)) for x in entropy],
    }


def _plot_curves(curves: dict[str, Any], path: Path, k: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.6, 3.6), dpi=100)
    for name, c in curves.items():
        ax.plot([0, 1, 2, 3], [1 / k, *c["mean_p_secret"]], marker="o", label=name)
    ax.set_xlabel("non-chameleon clues heard")
    ax.set_ylabel("adversary's mean P(secret)")
    ax.set_xticks([0, 1, 2, 3])
    ax.legend(fontsize=8)
    ax.set_title("Leakage curves, co-occurrence adversary (200 games each)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _paired(a: np.ndarray, b: np.ndarray) -> dict[str, Any]:
    """Mean of ``a - b`` over the same seeds, with a 95% bootstrap CI over games."""
    diff = a - b
    rng = np.random.default_rng(0)
    boots = diff[rng.integers(len(diff), size=(2000, len(diff)))].mean(axis=1)
    return {
        "difference": float(diff.mean()),
        "ci95": [float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))],
    }


def _pgm_tournament(factory: Any, cards: Any) -> dict[str, Any]:
    from leakage.cli.play import game_seeds
    from leakage.games import SpyGame, SpyGameConfig, play_spygame
    from leakage.games.metrics import metrics_table

    game = SpyGame(SpyGameConfig(), cards=cards)
    seeds = game_seeds(SEED + 2, N_PGM)
    matchups: dict[str, Any] = {}
    spy_wins: dict[tuple[str, str], np.ndarray] = {}
    for civ in SPY_AGENTS:
        for spy in SPY_AGENTS:
            spec = f"civilian={civ},spy={spy}"
            agents = factory.agents("spygame", spec)
            with Stopwatch() as sw:
                games = [play_spygame(agents, seed=s, game=game) for s in seeds]
            rows = metrics_table(games, seed=0)["spygame"]
            spy_wins[civ, spy] = np.array(
                [t.meta.get("winner_role") == "spy" for t in games], float
            )
            matchups[spec] = {
                "seconds": round(sw.seconds, 2),
                "metrics": [r.as_dict() for r in rows],
            }
            shown = {r.metric: r.value for r in rows if r.metric in PGM_METRICS}
            print(f"  {spec:>34}: " + ", ".join(
                f"{k} {'n/a' if v is None else f'{v:.3f}'}" for k, v in shown.items()
            ))  # fmt: skip
    gains = {}
    for other in SPY_AGENTS:
        gains[f"spy=pgm vs spy=associative, civilian={other}"] = _paired(
            spy_wins[other, "pgm"], spy_wins[other, "associative"]
        )
        gains[f"civilian=pgm vs civilian=associative, spy={other} (spy win rate)"] = _paired(
            spy_wins["pgm", other], spy_wins["associative", other]
        )
    for k, g in gains.items():
        print(f"  {k}: {g['difference']:+.3f} {[round(x, 3) for x in g['ci95']]}")
    return {"games_per_matchup": N_PGM, "matchups": matchups, "spy_win_rate_gains": gains}


def _chameleon_pgm_tournament(factory: Any, cards: Any) -> dict[str, Any]:
    from leakage.cli.play import game_seeds
    from leakage.games import ChameleonConfig, ChameleonGame, play_chameleon
    from leakage.games.metrics import metrics_table

    game = ChameleonGame(ChameleonConfig(reflect=True), cards=cards)
    seeds = game_seeds(SEED + 3, N_TOURNAMENT)
    matchups: dict[str, Any] = {}
    wins: dict[tuple[str, str], np.ndarray] = {}
    for nc in CHAMELEON_PGM["non-chameleon"]:
        for ch in CHAMELEON_PGM["chameleon"]:
            spec = f"non-chameleon={nc},chameleon={ch}"
            agents = factory.agents("chameleon", spec)
            with Stopwatch() as sw:
                games = [play_chameleon(agents, seed=s, game=game) for s in seeds]
            rows = metrics_table(games, seed=0)["chameleon"]
            wins[nc, ch] = np.array([t.meta["outcome"] == "chameleon_caught" for t in games], float)
            matchups[spec] = {
                "seconds": round(sw.seconds, 2),
                "invalid_reflections": sum(len(t.meta["invalid_moves"]) for t in games),
                "metrics": [r.as_dict() for r in rows],
            }
            shown = {r.metric: r for r in rows if r.metric in CHAMELEON_PGM_METRICS}
            print(f"  {spec:>40}: " + ", ".join(
                f"{k} n/a" if r.value is None else f"{k} {r.value:.3f}" for k, r in shown.items()
            ))  # fmt: skip
    gains = {}
    for other in CHAMELEON_PGM["chameleon"]:
        gains[f"non-chameleon=pgm vs revealing, chameleon={other}"] = _paired(
            wins["pgm", other], wins["revealing", other]
        )
    for other in CHAMELEON_PGM["non-chameleon"]:
        gains[f"chameleon=pgm vs posterior, non-chameleon={other}"] = _paired(
            wins[other, "pgm"], wins[other, "posterior"]
        )
    for k, g in gains.items():
        print(f"  {k}: {g['difference']:+.3f} {[round(x, 3) for x in g['ci95']]}")
    return {
        "games_per_matchup": N_TOURNAMENT,
        "reflect": "statement",
        "matchups": matchups,
        "non_chameleon_win_rate_gains": gains,
    }


def run() -> None:
    from leakage.backends import create_backend
    from leakage.cli.play import game_seeds
    from leakage.games import ChameleonGame, load_cards, play_chameleon, theory
    from leakage.games.agents import AgentFactory
    from leakage.games.metrics import metrics_table

    backend = create_backend("cooccurrence", index=default_index())
    factory = AgentFactory(backend=backend, budget=0.25)
    cards = load_cards()
    with Stopwatch() as sw:
        for c in cards:
            factory.tables.get(c.words, c.category)
    tables_s = sw.seconds
    speed = {
        spec: round(_throughput(factory, cards, spec), 1)
        for spec in (
            "non-chameleon=revealing,chameleon=posterior",
            "non-chameleon=concealing,chameleon=random",
            "non-chameleon=amb,chameleon=posterior",
        )
    }
    print(f"  tables for {len(cards)} cards: {tables_s:.1f} s; games/s: {speed}")

    seeds = game_seeds(SEED + 1, N_TOURNAMENT)
    game = ChameleonGame(cards=cards)
    tournament: dict[str, Any] = {}
    wins: dict[str, np.ndarray] = {}
    curves: dict[str, Any] = {}
    for name in MATCHUPS:
        agents = factory.agents("chameleon", f"non-chameleon={name},chameleon=posterior")
        with Stopwatch() as sw:
            games = [play_chameleon(agents, seed=s, game=game) for s in seeds]
        rows = metrics_table(games, seed=0)["chameleon"]
        tournament[name] = {
            "seconds": round(sw.seconds, 2),
            "metrics": [r.as_dict() for r in rows],
        }
        wins[name] = np.array([t.meta["outcome"] == "chameleon_caught" for t in games], float)
        curves[name] = _curves(games, backend)
        win = next(r for r in rows if r.metric == "non_chameleon_win_rate")
        print(f"  {name:>13} vs posterior: non-chameleon win {win.value:.3f} "
              f"[{win.ci_low:.3f}, {win.ci_high:.3f}]  P(secret) after 1-3 clues "
              f"{[round(x, 3) for x in curves[name]['mean_p_secret']]}")  # fmt: skip
    paired = _paired(wins["leakage-aware"], wins["revealing"])
    gain = {
        "leakage_aware_win_rate": float(wins["leakage-aware"].mean()),
        "revealing_win_rate": float(wins["revealing"].mean()),
        "gain": paired["difference"],
        "ci95": paired["ci95"],
        "method": "paired over the same 200 seeds (same card, secret, seats); bootstrap over games",
    }
    print(f"  leakage-aware gain over revealing: {gain['gain']:+.3f} {gain['ci95']}")

    pgm = _pgm_tournament(factory, cards)
    chameleon_pgm = _chameleon_pgm_tournament(factory, cards)

    IMG.mkdir(parents=True, exist_ok=True)
    _plot_curves(curves, IMG / "games_leakage.png", 16)
    with Stopwatch() as sw:
        rows = theory.check(range(4, 13), l=3, games=20_000, seed=0)
    theory.plot_check(rows, IMG / "games_theory.png")
    trivial = theory.simulate(theory.trivial(16), 4, games=100_000, seed=1)
    print(f"  theory: {sum(r.respected for r in rows)}/{len(rows)} bounds respected "
          f"({sw.seconds:.1f} s); trivial N=4 K=16: {trivial.win_rate:.4f}")  # fmt: skip
    met = min(speed.values()) >= TARGET_GAMES_PER_S
    print(f"  >= {TARGET_GAMES_PER_S:.0f} scripted games/s: {mark(met)}")
    write_result(
        "games",
        {
            "n_speed": N_SPEED,
            "repeats": REPEATS,
            "n_tournament": N_TOURNAMENT,
            "seed": SEED,
            "backend": "cooccurrence (default index)",
            "leakage_aware_budget": 0.25,
            "n_pgm": N_PGM,
        },
        {
            "tables_seconds": round(tables_s, 1),
            "games_per_s": speed,
            "games_per_s_target": TARGET_GAMES_PER_S,
            "target_met": met,
            "tournament": tournament,
            "leakage_curves": curves,
            "leakage_aware_gain": gain,
            "pgm_tournament": pgm,
            "chameleon_pgm_tournament": chameleon_pgm,
            "theory": theory.rows_as_dicts(rows),
            "trivial_n4_k16": {"win_rate": trivial.win_rate, "stderr": trivial.stderr},
        },
    )
