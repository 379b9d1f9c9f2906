"""The spy's seat with the default ensemble: speed against quality (issue 39, target >= 1
CK-Arena game a second on this CPU).

The seat as ``leakage score --seat spy -b ensemble`` computes it (``leakage.seats``,
``spygame_seat_trace``), after round 1 of a seeded sample of the CK-Arena dev games, every
spy of a game a holder. Paths, on the same games in one run:

- ``cheap``: the members that load no model (co-occurrence, the embedding read from the
  vocabulary index) re-rank the shortlist of 100; no LLM.
- ``tiers-K`` (K = 10, 20, 30, 50 unless ``--fine``; 30 is the default, ``SEAT_FINE``):
  the cheap members re-rank the shortlist, then the whole statement pool (co-occurrence,
  embedding, the LLM listener) re-ranks each step's K best words, asked once per game for
  every spy.
- ``one-tier``: the whole statement pool re-ranks the shortlist of 100 itself; on the first
  ``--one-tier-games`` games, its figures paired with the others' on those games.
- ``as-given``: the ensemble as ``create_backend("ensemble")`` gives it re-ranks the
  shortlist of 100 (what ``benchmarks.studies.seats --members ensemble`` timed at 47.9 s a
  game): over a shortlist its item type is ``sentence_card``, whose fit weighs the judge
  (Gemma-3-270M read once per candidate) too; on the first ``--as-given-games`` games.

``--shortlist N`` and ``--tau T`` set the shortlist and stage 1's temperature of every path
of the run (default ``SEAT_SHORTLIST``, ``SEAT_TAU``; the result file's name then says so).

The local listener keeps its last 512 prompts' states in memory (``prompt_cache``), so
within one run an LLM path after another reads a game more cheaply; ``--paths tiers-30
--fine 30`` times one path alone (the cost of reading each game for the first time), each
path in its own process.

Before timing, one untimed pass of ``cheap`` over every game and of each LLM path over the
first game warms the caches (statement embeddings, co-occurrence counts) and loads the
models; then each game is scored by every path in turn. Figures per path: seconds a game
(wall) and CPU seconds of the process a game (``time.process_time``: every thread, so the
figure to read when other work shares the machine; above wall time when torch runs on more
than one thread), games a second, and the civilians' word after round 1: top-10 share,
median rank, mean log P (floor 1e-12); 95% percentile bootstrap intervals over games (400
resamples), and each path's difference from ``cheap`` paired by game. The machine is shared
with other work when run in a session: timings are noisy, compare paths within one run.

``python -m benchmarks seat_speed [--games N] [--one-tier-games N] [--fine K,...]
[--shortlist N] [--tau T] [--paths P,...] [--seed S]``; results in
``benchmarks/results/seat_speed.json``. Data: CK-Arena dev logs (``../shared/data``, Xu et
al. 2025, evaluation only); nothing from them is written but the figures.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from benchmarks.common import bootstrap_ci, ck_arena_games, write_result

SEED = 0
FINE = (10, 20, 30, 50)


def _torch_threads() -> int | None:
    try:
        import torch
    except ImportError:
        return None
    return int(torch.get_num_threads())


def _round1(game: Any) -> tuple[list[str], list[str]]:
    first = min((t.round for t in game.turns if t.round is not None), default=None)
    turns = [t for t in game.turns if t.round == first]
    return [t.text for t in turns], [t.player for t in turns]


def _seat(reader: Any, game: Any) -> tuple[list[dict[str, Any]], float, float]:
    """Every spy's figures after round 1, and the wall and the process's CPU seconds the seat
    took."""
    from leakage.seats import spygame_seat_trace

    texts, speakers = _round1(game)
    players = [p.id for p in game.players]
    start, cpu = time.perf_counter(), time.process_time()
    trace = spygame_seat_trace(
        "spy",
        texts=texts,
        speakers=speakers,
        players=players,
        player_words=[game.word_of(p) for p in players],
        civilian_word=game.words.civilian,
        candidates=list(game.candidates),
        backend=None,
        reader=reader,
    )
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    worst = len(reader.vocab.index)
    last = trace.views[-1] if trace.views else {}
    out = [
        {"rank": v["secret_rank"] or worst, "p": max(v["secret_probability"] or 0.0, 1e-12)}
        for v in last.values()
    ]
    return out, seconds, cpu


def _figures(
    rows: list[list[dict[str, Any]]], seconds: list[float], cpu: list[float]
) -> dict[str, Any]:
    """Per-path figures; ``rows[g]``: game g's spies."""
    games = len(rows)

    def top10(idx: Any) -> float:
        r = [s["rank"] for i in idx for s in rows[i]]
        return float(np.mean(np.array(r) <= 10)) if r else float("nan")

    def median(idx: Any) -> float:
        return float(np.median([s["rank"] for i in idx for s in rows[i]]))

    def logp(idx: Any) -> float:
        return float(np.mean([np.log(s["p"]) for i in idx for s in rows[i]]))

    every = np.arange(games)
    timed = seconds
    per_game = float(np.mean(timed))
    cpu_game = float(np.mean(cpu))
    return {
        "games": games,
        "seats": sum(len(r) for r in rows),
        "seconds_per_game": round(per_game, 3),
        "seconds_per_game_ci95": bootstrap_ci(
            lambda i: float(np.mean(np.asarray(timed)[i])), len(timed), seed=SEED
        ),
        "games_per_second": round(1 / per_game, 2) if per_game else None,
        "cpu_seconds_per_game": round(cpu_game, 3),
        "cpu_seconds_per_game_ci95": bootstrap_ci(
            lambda i: float(np.mean(np.asarray(cpu)[i])), len(cpu), seed=SEED
        ),
        "games_per_cpu_second": round(1 / cpu_game, 2) if cpu_game else None,
        "top10": round(top10(every), 3),
        "top10_ci95": bootstrap_ci(top10, games, seed=SEED),
        "median_rank": median(every),
        "median_rank_ci95": bootstrap_ci(median, games, seed=SEED),
        "mean_log_p": round(logp(every), 3),
        "mean_log_p_ci95": bootstrap_ci(logp, games, seed=SEED),
    }


def _paired(a: list[list[dict[str, Any]]], b: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """b − a on the same games: top-10 share and mean log P, with intervals."""
    n = min(len(a), len(b))

    def diff(idx: Any, key: str) -> float:
        def val(rows: list[list[dict[str, Any]]], s: dict[str, Any]) -> float:
            return float(s["rank"] <= 10) if key == "top10" else float(np.log(s["p"]))

        x = [val(a, s) for i in idx for s in a[i]]
        y = [val(b, s) for i in idx for s in b[i]]
        return float(np.mean(y) - np.mean(x))

    every = np.arange(n)
    out: dict[str, Any] = {}
    for key in ("top10", "mean_log_p"):

        def stat(idx: Any, key: str = key) -> float:
            return diff(idx, key)

        out[key] = {
            "difference": round(diff(every, key), 3),
            "ci95": bootstrap_ci(stat, n, seed=SEED + 1),
        }
    return out


def run(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks seat_speed")
    parser.add_argument("--games", type=int, default=40, help="seeded sample of dev games")
    parser.add_argument("--one-tier-games", type=int, default=10)
    parser.add_argument("--as-given-games", type=int, default=2)
    parser.add_argument("--seed", type=int, default=SEED, help="of the sample of games")
    parser.add_argument(
        "--fine",
        default=",".join(str(k) for k in FINE),
        help="comma-separated words the whole pool re-ranks per step: one path tiers-K each",
    )
    parser.add_argument(
        "--shortlist", type=int, default=None, help="the cheap tier's (default SEAT_SHORTLIST)"
    )
    parser.add_argument("--tau", type=float, default=None, help="stage 1's (default SEAT_TAU)")
    parser.add_argument(
        "--paths",
        default="",
        help="comma-separated paths to run (default: all); result "
        "file seat_speed_<paths>_seed<S>.json",
    )
    args = parser.parse_args(argv or [])

    from leakage.backends import create_backend
    from leakage.seats import SEAT_TAU, SeatReader, read_pair_prior, seat_reader, tiers
    from leakage.vocab import ShortlistPosterior

    _, games = ck_arena_games()
    rng = np.random.default_rng(args.seed)
    games = [games[i] for i in sorted(rng.choice(len(games), args.games, replace=False))]
    ensemble = create_backend("ensemble")
    default = seat_reader(ensemble)
    vocab, prior = default.vocab, read_pair_prior()
    cheap_pool, whole = tiers(ensemble, vocab)
    shortlist = args.shortlist or default.search.shortlist
    tau = SEAT_TAU if args.tau is None else args.tau

    def reader(backend: Any, fine: Any, k: int) -> SeatReader:
        search = ShortlistPosterior(vocab, backend, shortlist=shortlist, tau=tau)
        return SeatReader(vocab, prior, search, fine, k, default.vocabulary)

    paths: dict[str, tuple[SeatReader, list[Any]]] = {"cheap": (reader(cheap_pool, None, 0), games)}
    for k in (int(x) for x in args.fine.split(",") if x):
        paths[f"tiers-{k}"] = (reader(cheap_pool, whole, k), games)
    paths["one-tier"] = (reader(whole, None, 0), games[: args.one_tier_games])
    paths["as-given"] = (reader(ensemble, None, 0), games[: args.as_given_games])
    if args.paths:
        keep = args.paths.split(",")
        paths = {n: p for n, p in paths.items() if n in keep or n == "cheap"}
    for g in games:  # warm-up, untimed
        _seat(paths["cheap"][0], g)
    for rd, _ in paths.values():
        _seat(rd, games[0])
    found: dict[str, list[Any]] = {name: [] for name in paths}
    seconds: dict[str, list[float]] = {name: [] for name in paths}
    cpu: dict[str, list[float]] = {name: [] for name in paths}
    for i, g in enumerate(games):
        for name, (rd, chosen) in paths.items():
            if i < len(chosen):
                figures, s, c = _seat(rd, g)
                found[name].append(figures)
                seconds[name].append(s)
                cpu[name].append(c)
        print(f"game {i + 1}/{len(games)}", flush=True)
    rows: dict[str, list[list[dict[str, Any]]]] = {}
    results: dict[str, Any] = {
        "games": len(games),
        "seat": "spy, after round 1, every spy of a game",
        "reader": {
            **default.info(),
            "seat_shortlist": shortlist,
            "seat_tau": tau,
            "seat_fine_words": "per path (fine_words)",
        },
        "torch_threads": _torch_threads(),
        "paths": {},
    }
    for name in paths:
        rows[name] = found[name]
        results["paths"][name] = {
            "fine_words": paths[name][0].fine_words if paths[name][0].fine else 0,
            **_figures(found[name], seconds[name], cpu[name]),
        }
        print(f"{name:9s} {results['paths'][name]}", flush=True)
    results["paired_vs_cheap"] = {
        name: _paired(rows["cheap"], found) for name, found in rows.items() if name != "cheap"
    }
    if "one-tier" in rows:
        results["paired_vs_one_tier"] = {
            name: _paired(rows["one-tier"], rows[name][: len(rows["one-tier"])])
            for name in rows
            if name not in ("one-tier", "as-given")
        }
    for key in ("paired_vs_cheap", "paired_vs_one_tier"):
        print(key, results.get(key))
    tag = f"_{args.paths.replace(',', '-')}_seed{args.seed}" if args.paths else ""
    if args.shortlist is not None:
        tag += f"_shortlist{shortlist}"
    if args.tau is not None:
        tag += f"_tau{tau:g}"
    write_result("seat_speed" + tag, vars(args), results)
    return results


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])
