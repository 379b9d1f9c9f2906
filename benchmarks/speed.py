"""Speed: building the default index, and scoring throughput with a cold and a warm count cache.

Index build: WordNet 3.0 (+ MyThes when ``/usr/share/mythes/th_en_US_v2.dat`` exists) into a
temporary directory, in a child process so that its peak RSS (the child's own high-water
mark, :func:`~leakage.batch._worker.peak_rss_mb`) is the build's alone; the child also
reports its peak after imports, before the build, so the build's own share can be read off.

Throughput: synthetic Chameleon games (``benchmarks/_games.py``), built up front, untimed;
``score_transcript`` over all of them (a) cold: a fresh ``LocalIndexSource`` (new SQLite
connection, empty posting and pair caches) and backend, and the clue/phrase normalisation
caches cleared; the index file itself is in the OS page cache, as it is after any earlier run;
(b) warm: the same games again on the same backend. Both are repeated three times (a fresh
source each time) and the medians reported: the machine is shared and single passes vary by
tens of percent. A last warm pass runs under cProfile and the hot spots are recorded, whether
or not the target is met.
"""

from __future__ import annotations

import cProfile
import json
import pstats
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import Stopwatch, default_index, mark, write_result

N_GAMES = 1000
SEED = 20250101
REPEATS = 3
TARGETS = {
    "build_seconds_max": 60.0,
    "build_file_mb_max": 150.0,
    "cold_games_per_s_min": 200.0,
    "warm_games_per_s_min": 5000.0,
}

_BUILD_CHILD = """
import json, sys, time
from pathlib import Path
from leakage.batch import peak_rss_mb
from leakage.corpus import build_index, default_documents
before = peak_rss_mb()
start = time.perf_counter()
docs, sources = default_documents()
info = build_index(Path(sys.argv[1]), docs, sources=sources)
seconds = time.perf_counter() - start
peak = peak_rss_mb()
print(json.dumps({"seconds": seconds, "size_bytes": info.size_bytes, "documents": info.documents,
                  "sources": info.sources, "rss_after_imports_mb": before, "peak_rss_mb": peak}))
"""


def bench_build() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="leakage-bench-") as tmp:
        out = Path(tmp) / "default.sqlite"
        proc = subprocess.run(
            [sys.executable, "-c", _BUILD_CHILD, str(out)],
            capture_output=True,
            text=True,
            check=True,
        )
    r = json.loads(proc.stdout)
    mb = r["size_bytes"] / 1e6
    return {
        "seconds": round(r["seconds"], 2),
        "file_mb": round(mb, 1),
        "documents": r["documents"],
        "sources": r["sources"],
        "peak_rss_mb": round(r["peak_rss_mb"], 1),
        "rss_after_imports_mb": round(r["rss_after_imports_mb"], 1),
        "rss_method": "VmHWM of a child process (its own peak: interpreter and imports "
        "included, not the memory of the process that started it)",
        "seconds_target_met": r["seconds"] <= TARGETS["build_seconds_max"],
        "file_mb_target_met": mb <= TARGETS["build_file_mb_max"],
    }


def _score_all(games: list[Any], backend: Any) -> float:
    from leakage import ScoreOptions, score_transcript

    options = ScoreOptions()
    with Stopwatch() as sw:
        for g in games:
            score_transcript(g, backend, options)
    return sw.seconds


# Where a game's time can go, by function (cumulative seconds in the profile).
_STAGES = {
    "backend.loglik (all of it)": ("_backend.py", "loglik"),
    "count source (LocalIndexSource.counts)": ("_local.py", "counts"),
    "posterior engine (posterior_traces, numpy)": ("posterior.py", "posterior_traces"),
    "backend.info (copied into each report)": ("_backend.py", "info"),
    "pydantic validation of the report (Report.model_validate)": ("main.py", "model_validate"),
    "score_transcript total": ("scoring.py", "score_transcript"),
}


def profile_pass(
    run_pass: Callable[[], object], n_games: int, stages: dict[str, tuple[str, str]]
) -> dict[str, Any]:
    """One scoring pass under cProfile: cumulative µs per game of each stage, top functions.

    ``stages`` maps a label to (file name suffix, function name); any backend's pass can be
    profiled this way (``benchmarks/embedding.py`` uses it for the embedding backend).
    """
    prof = cProfile.Profile()
    prof.enable()
    run_pass()
    prof.disable()
    stats = pstats.Stats(prof)
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    per_game_us = 1e6 / n_games
    out_stages = {}
    for label, (file_suffix, func) in stages.items():
        cum = sum(
            v[3] for (f, _, name), v in raw.items() if f.endswith(file_suffix) and name == func
        )
        out_stages[label] = round(cum * per_game_us, 1)
    top = sorted(raw.items(), key=lambda kv: kv[1][2], reverse=True)[:15]
    return {
        "tool": "cProfile (deterministic; adds overhead, so compare stages to each other)",
        "stage_us_per_game_cumulative": out_stages,
        "top_tottime": [
            {
                "function": f"{Path(f).name}:{line}({name})",
                "calls_per_game": round(v[1] / n_games, 1),
                "tottime_us_per_game": round(v[2] * per_game_us, 1),
                "cumtime_us_per_game": round(v[3] * per_game_us, 1),
            }
            for (f, line, name), v in top
        ],
    }


def _profile(games: list[Any], backend: Any) -> dict[str, Any]:
    from leakage import ScoreOptions, score_transcript

    options = ScoreOptions()

    def one_pass() -> None:
        for g in games:
            score_transcript(g, backend, options)

    return profile_pass(one_pass, len(games), _STAGES)


def bench_throughput(n_games: int = N_GAMES, seed: int = SEED) -> dict[str, Any]:
    from benchmarks._games import generate_games
    from leakage import create_backend
    from leakage.backends.cooccurrence import LocalIndexSource
    from leakage.corpus import clue_terms, normalize_phrase

    index = default_index()
    with Stopwatch() as gen:
        games, facts = generate_games(n_games, seed)
    cold_runs, warm_runs = [], []
    for _ in range(REPEATS):
        # Cold: nothing the library keeps between calls survives from the previous repeat.
        clue_terms.cache_clear()
        normalize_phrase.cache_clear()
        source = LocalIndexSource(index)
        backend = create_backend("cooccurrence", source=source)
        cold_runs.append(_score_all(games, backend))
        warm_runs.append(_score_all(games, backend))
        cached = {"postings": len(source._postings), "pairs": len(source._pairs)}
        profile = _profile(games, backend) if len(cold_runs) == REPEATS else None
        source.close()
    cold_s, warm_s = float(np.median(cold_runs)), float(np.median(warm_runs))
    cold_rate, warm_rate = n_games / cold_s, n_games / warm_s
    return {
        "games": n_games,
        "repeats": REPEATS,
        "generation_seconds_untimed": round(gen.seconds, 2),
        "generator": facts,
        "source_cache_after_a_pass": cached,
        "cold_seconds_median": round(cold_s, 3),
        "cold_seconds_all": [round(x, 3) for x in cold_runs],
        "cold_games_per_s": round(cold_rate, 1),
        "warm_seconds_median": round(warm_s, 3),
        "warm_seconds_all": [round(x, 3) for x in warm_runs],
        "warm_games_per_s": round(warm_rate, 1),
        "cold_target_met": cold_rate >= TARGETS["cold_games_per_s_min"],
        "warm_target_met": warm_rate >= TARGETS["warm_games_per_s_min"],
        # Profiled always (cheap), so that the figures say where a warm game's time goes
        # even when the target is met.
        "warm_profile": profile,
    }


def run() -> dict[str, Any]:
    print("speed: building the default index in a temporary directory ...", flush=True)
    build = bench_build()
    print(
        f"  build: {build['seconds']} s ({mark(build['seconds_target_met'])}, target <= 60 s), "
        f"{build['file_mb']} MB file ({mark(build['file_mb_target_met'])}, target <= 150 MB), "
        f"peak RSS {build['peak_rss_mb']} MB ({build['documents']:,} documents)"
    )
    print(f"speed: scoring {N_GAMES} synthetic Chameleon games, cold then warm ...", flush=True)
    tp = bench_throughput()
    print(
        f"  cold: {tp['cold_games_per_s']:,.0f} games/s ({mark(tp['cold_target_met'])}, "
        f"target >= 200); warm: {tp['warm_games_per_s']:,.0f} games/s "
        f"({mark(tp['warm_target_met'])}, target >= 5,000)"
    )
    if tp["warm_profile"]:
        print("  warm profile, cumulative µs per game (cProfile, inflated by its overhead):")
        for label, us in tp["warm_profile"]["stage_us_per_game_cumulative"].items():
            print(f"    {us:8.1f}  {label}")
    params = {"n_games": N_GAMES, "seed": SEED, "repeats": REPEATS, "targets": TARGETS}
    path = write_result("speed", params, {"index_build": build, "throughput": tp})
    print(f"  wrote {path}")
    return {"index_build": build, "throughput": tp}
