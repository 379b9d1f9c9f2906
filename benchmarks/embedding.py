"""The embedding backend (bundled all-MiniLM-L6-v2): throughput, games/s, and quality.

1. **Model load and embedding throughput.** Load time in a child process (imports of torch
   and sentence-transformers, the first load, which also pays transformers' lazy imports,
   then a reload in fp32 and in bf16). Then, in this process, words/s (the most frequent
   English words of ``wordfreq``, alphabetic only) and descriptions/s (a seeded sample of
   distinct CK-Arena statements; WordNet glosses when the shared data is absent) for fp32 and
   bf16 on ``THREADS`` torch threads, and on 1 thread for comparison. Texts go through a fresh
   in-memory ``CachedEncoder.warm`` (the path ``prepare`` takes: chunks of 256 texts, the
   encoder's batch size of 128 inside); one untimed warm-up batch of other words first;
   ``RATE_REPEATS`` passes, median reported.
2. **Games/s** for ``score --backend embedding``: the speed benchmark's 1,000 synthetic
   Chameleon games (``benchmarks/_games.py``, same seed), ``list(score_many(games, backend))``
   on ``create_backend("embedding", disk_cache=False, threads=THREADS)``. *Cold*: a fresh
   backend (new encoder, empty in-memory cache), so the pass includes embedding every clue
   and candidate; the model load is timed separately and excluded. *Warm*: the same games
   again on the same backend. ``REPEATS`` repeats, medians reported; one warm pass under
   cProfile (always). One cold pass each in fp32 and on 1 thread, for comparison.
   The 2-thread figures are measured again in a child process with
   ``OMP_WAIT_POLICY=PASSIVE`` (see ``bench_passive``): on a shared machine the default
   spinning of GNU OpenMP makes 2 threads on 2 cores many times slower than 1 thread.
3. **Quality**, the figures of ``benchmarks/quality.py`` computed with the same code for the
   co-occurrence backend (library defaults) and the embedding backend (library defaults:
   τ = 0.05, bare-word candidates, ``precision="auto"``), side by side; the SpyGame outlier
   score after round 1 against the LLM players' own round-1 votes; a paired bootstrap of
   the CK-Arena statement figures (embedding minus co-occurrence); the card probes with
   candidates embedded as ``"{category}: {word}"``; a τ sweep of the round-1 spy posterior.

The machine may be shared: the load average is recorded before and after each timed part.
Needs the ``embedding`` extra; the quality part needs ``../shared/data`` and is recorded as
skipped without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import numpy as np

from benchmarks.common import Skip, Stopwatch, default_index, mark, write_result

MODEL = "all-MiniLM-L6-v2"
THREADS = 2
N_GAMES = 1000
SEED = 20250101  # the speed benchmark's games
REPEATS = 3
RATE_REPEATS = 2
N_WORDS = 1000
N_DESCRIPTIONS = 300
DESCRIPTION_SEED = 11
TAUS = (0.02, 0.05, 0.1)
CATEGORY_TEMPLATE = "{category}: {word}"
QUALITY_SEED = 7  # bootstrap seed of benchmarks/quality.py
TARGETS = {"cold_games_per_s_min": 100.0, "warm_games_per_s_min": 2000.0}

_LOAD_CHILD = """
import json, sys, time
t0 = time.perf_counter()
import torch, sentence_transformers
t1 = time.perf_counter()
from leakage.encoders import SentenceTransformerEncoder
model, threads = sys.argv[1], int(sys.argv[2])
first = SentenceTransformerEncoder(model, precision="auto", threads=threads)
t2 = time.perf_counter()
reload = {}
for precision in ("fp32", "bf16"):
    s = time.perf_counter()
    SentenceTransformerEncoder(model, precision=precision, threads=threads)
    reload[precision] = time.perf_counter() - s
print(json.dumps({"import_seconds": t1 - t0, "first_load_seconds": t2 - t1,
                  "first_load_precision": first.precision, "reload_seconds": reload,
                  "torch": torch.__version__,
                  "sentence_transformers": sentence_transformers.__version__}))
"""


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _busy(seconds: float = 1.0) -> float | None:
    """Percent of all CPU time spent busy over ``seconds`` (other processes: we sleep)."""
    import time

    def sample() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as fh:
            ticks = [int(x) for x in fh.readline().split()[1:]]
        return sum(ticks), ticks[3] + ticks[4]  # total, idle + iowait

    try:
        total1, idle1 = sample()
        time.sleep(seconds)
        total2, idle2 = sample()
    except (OSError, ValueError, IndexError):
        return None
    return round(100.0 * (1 - (idle2 - idle1) / max(total2 - total1, 1)), 1)


# --------------------------------------------------------------------------- 1. throughput


def _words(n: int) -> list[str]:
    import wordfreq

    top = wordfreq.top_n_list("en", 4 * n)
    return [w for w in top if w.isalpha()][:n]


def _descriptions(n: int) -> tuple[list[str], str]:
    """A seeded sample of distinct CK-Arena statements (WordNet glosses without the data)."""
    from benchmarks.common import SHARED_DATA

    logs = SHARED_DATA / "ck-arena-dev" / "logs"
    if logs.exists():
        from leakage import load_transcripts

        games, _ = load_transcripts([logs], input_format="ck-arena")
        texts = sorted({t.text for g in games for t in g.turns})
        source = f"distinct CK-Arena statements ({logs})"
    else:
        from leakage.corpus import wordnet_documents

        texts = sorted({d.split(" ; ")[1] for d in wordnet_documents() if " ; " in d})
        source = "WordNet 3.0 glosses (CK-Arena data absent)"
    rng = np.random.default_rng(DESCRIPTION_SEED)
    pick = rng.choice(len(texts), size=min(n, len(texts)), replace=False)
    return [texts[i] for i in sorted(pick)], source


def bench_load(threads: int = THREADS) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_CHILD, MODEL, str(threads)],
        capture_output=True,
        text=True,
        check=True,
    )
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "import_torch_and_sentence_transformers_seconds": round(r["import_seconds"], 2),
        "first_load_seconds": round(r["first_load_seconds"], 2),
        "first_load_precision": r["first_load_precision"],
        "reload_seconds": {k: round(v, 2) for k, v in r["reload_seconds"].items()},
        "torch": r["torch"],
        "sentence_transformers": r["sentence_transformers"],
        "method": "fresh child process; the first load also pays transformers' lazy imports",
    }


def _rate(encoder: Any, texts: list[str]) -> float:
    from leakage.encoders import CachedEncoder

    cached = CachedEncoder(encoder)  # empty, in memory only
    with Stopwatch() as sw:
        cached.warm(texts)
    assert cached.encoded == len(set(texts))
    return len(texts) / sw.seconds


RATE_CONFIGS = ((THREADS, "fp32"), (THREADS, "bf16"), (1, "fp32"), (1, "bf16"))


def bench_embedding_rates(
    words: list[str],
    descriptions: list[str],
    configs: tuple[tuple[int, str], ...] = RATE_CONFIGS,
    *,
    verbose: bool = True,
) -> list[dict[str, Any]]:
    from leakage.encoders import SentenceTransformerEncoder

    warmup = _words(N_WORDS + 64)[N_WORDS:]
    rows: list[dict[str, Any]] = []
    for threads, precision in configs:
        busy = _busy()
        load_before = _load()
        with Stopwatch() as load:
            enc = SentenceTransformerEncoder(MODEL, precision=precision, threads=threads)
        with Stopwatch() as first:
            enc.encode_batch(warmup)
        w = [_rate(enc, words) for _ in range(RATE_REPEATS)]
        d = [_rate(enc, descriptions) for _ in range(RATE_REPEATS)]
        rows.append(
            {
                "threads": enc.threads,
                "precision": enc.precision,
                "load_seconds_in_process": round(load.seconds, 2),
                "first_batch_seconds_untimed": round(first.seconds, 2),
                "words_per_s": round(float(np.median(w)), 1),
                "words_per_s_all": [round(x, 1) for x in w],
                "descriptions_per_s": round(float(np.median(d)), 1),
                "descriptions_per_s_all": [round(x, 1) for x in d],
                "load_average_1min": [load_before, _load()],
                "cpu_busy_percent_before": busy,
            }
        )
        r = rows[-1]
        if not verbose:
            continue
        print(
            f"  {precision} on {enc.threads} thread(s): {r['words_per_s']:,.0f} words/s, "
            f"{r['descriptions_per_s']:,.0f} descriptions/s (machine {busy}% busy before; load "
            f"avg {load_before} -> {r['load_average_1min'][1]})",
            flush=True,
        )
    return rows


# --------------------------------------------------------------------------- 2. games/s

# Where a warm game's time goes (cumulative seconds in the profile, by file suffix and name).
_STAGES = {
    "score_transcript (all of a game)": ("scoring.py", "score_transcript"),
    "prepare hook (CachedEncoder.warm over the chunk)": ("scoring.py", "prepare"),
    "backend.loglik": ("backends/embedding.py", "loglik"),
    "CachedEncoder.encode (dict look-ups, np.stack)": ("_cache.py", "encode"),
    "candidate_texts (template formatting)": ("backends/embedding.py", "candidate_texts"),
    "posterior_trace (numpy)": ("posterior.py", "posterior_trace"),
    "backend.info (copied into each report)": ("backends/embedding.py", "info"),
    "pydantic model construction (Step, Summary, Report)": ("main.py", "__init__"),
}


def _score_pass(games: list[Any], backend: Any) -> float:
    from leakage.scoring import score_many

    with Stopwatch() as sw:
        reports = list(score_many(games, backend))
    assert len(reports) == len(games)
    return sw.seconds


def _fresh_backend(precision: str = "auto", threads: int = THREADS) -> tuple[Any, float]:
    from leakage import create_backend

    with Stopwatch() as load:
        backend = create_backend(
            "embedding", model=MODEL, disk_cache=False, precision=precision, threads=threads
        )
    return backend, load.seconds


VARIANTS = (("fp32", THREADS), ("auto", 1))


def _one_pass(games: list[Any], precision: str, threads: int) -> dict[str, Any]:
    """One cold and one warm pass on a fresh backend."""
    b, load_s = _fresh_backend(precision, threads)
    busy, la = _busy(), _load()
    cold = _score_pass(games, b)
    warm = _score_pass(games, b)
    return {
        "precision": b.info()["precision"],
        "threads": b.info()["threads"],
        "load_seconds": round(load_s, 2),
        "cold_games_per_s": round(len(games) / cold, 1),
        "warm_games_per_s": round(len(games) / warm, 1),
        "load_average_1min": [la, _load()],
        "cpu_busy_percent_before": busy,
        "passes": 1,
    }


def bench_games() -> dict[str, Any]:
    from benchmarks._games import generate_games
    from benchmarks.speed import profile_pass
    from leakage.scoring import ScoreOptions, scored_clues

    with Stopwatch() as gen:
        games, facts = generate_games(N_GAMES, SEED)
    texts = {c for g in games for c in scored_clues(g, ScoreOptions())}
    texts |= {w for g in games for w in g.candidates}
    cold_runs, warm_runs, loads, encoded = [], [], [], 0
    busy = _busy()
    load_avg = [_load()]
    backend = None
    for _ in range(REPEATS):
        backend, load_s = _fresh_backend()
        loads.append(load_s)
        cold_runs.append(_score_pass(games, backend))
        encoded = backend.encoder.encoded
        warm_runs.append(_score_pass(games, backend))
    assert backend is not None
    load_avg.append(_load())
    profile = profile_pass(lambda: _score_pass(games, backend), N_GAMES, _STAGES)
    info = backend.info()
    variants = [_one_pass(games, precision, threads) for precision, threads in VARIANTS]
    cold_s, warm_s = float(np.median(cold_runs)), float(np.median(warm_runs))
    cold_rate, warm_rate = N_GAMES / cold_s, N_GAMES / warm_s
    return {
        "games": N_GAMES,
        "repeats": REPEATS,
        "backend": info,
        "generation_seconds_untimed": round(gen.seconds, 2),
        "generator": facts,
        "distinct_texts_to_embed": len(texts),
        "texts_embedded_in_a_cold_pass": encoded,
        "model_load_seconds_excluded": [round(x, 2) for x in loads],
        "cold_seconds_median": round(cold_s, 3),
        "cold_seconds_all": [round(x, 3) for x in cold_runs],
        "cold_games_per_s": round(cold_rate, 1),
        "cold_games_per_s_all": [round(N_GAMES / x, 1) for x in cold_runs],
        "warm_seconds_median": round(warm_s, 3),
        "warm_seconds_all": [round(x, 3) for x in warm_runs],
        "warm_games_per_s": round(warm_rate, 1),
        "warm_games_per_s_all": [round(N_GAMES / x, 1) for x in warm_runs],
        "cold_target_met": cold_rate >= TARGETS["cold_games_per_s_min"],
        "warm_target_met": warm_rate >= TARGETS["warm_games_per_s_min"],
        "load_average_1min_before_after": load_avg,
        "cpu_busy_percent_before": busy,
        "warm_profile": profile,
        "single_pass_variants": variants,
    }


# ------------------------------------------------------------- OMP_WAIT_POLICY=PASSIVE

PASSIVE_CONFIGS = ((THREADS, "fp32"), (THREADS, "bf16"))


def passive_child() -> None:
    """Run in a child with ``OMP_WAIT_POLICY=PASSIVE``: the 2-thread rates and one games pass."""
    from benchmarks._games import generate_games

    words = _words(N_WORDS)
    descriptions, _ = _descriptions(N_DESCRIPTIONS)
    rates = bench_embedding_rates(words, descriptions, PASSIVE_CONFIGS, verbose=False)
    games, _ = generate_games(N_GAMES, SEED)
    one = _one_pass(games, "auto", THREADS)
    print(json.dumps({"rates": rates, "games_one_pass": one}))


def bench_passive() -> dict[str, Any]:
    """The same 2-thread figures with libgomp told not to spin (``OMP_WAIT_POLICY=PASSIVE``).

    torch's CPU wheels use GNU OpenMP, whose worker threads spin while waiting for each
    other; when another process holds one of the two cores, a 2-thread forward pass waits on
    a descheduled thread at every parallel region. The variable must be set before torch is
    loaded, hence a child process.
    """
    from benchmarks.common import REPO

    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    proc = subprocess.run(
        [sys.executable, "-c", "from benchmarks.embedding import passive_child; passive_child()"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env=env,
    )
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    out["environment"] = "OMP_WAIT_POLICY=PASSIVE, fresh child process"
    return out


# --------------------------------------------------------------------------- 3. quality


def _get(d: dict[str, Any], path: str) -> Any:
    for key in path.split("."):
        if d is None:
            return None
        d = d.get(key)  # type: ignore[assignment]
    return d


# (label, path in a main_figures() result, chance or None); the JSON and the docs table.
_SIDE_BY_SIDE = (
    ("CK-Arena own-word accuracy, all rounds", "ck_arena.statements_all_rounds.accuracy", 0.5),
    ("CK-Arena own-word accuracy, round 1", "ck_arena.statements_round1.accuracy", 0.5),
    ("CK-Arena civilian-vs-spy AUC, all rounds", "ck_arena.statements_all_rounds.roc_auc", 0.5),
    ("CK-Arena civilian-vs-spy AUC, round 1", "ck_arena.statements_round1.roc_auc", 0.5),
    (
        "spy posterior top-1 is a spy after round 1 (known)",
        "ck_arena.spy_after_round1.posterior_top1_hit",
        0.333,
    ),
    (
        "spy posterior top-2 holds a spy (known)",
        "ck_arena.spy_after_round1.posterior_top_set_hit",
        0.6,
    ),
    (
        "spy posterior top-1 (marginalised)",
        "ck_arena.spy_after_round1_marginalised.posterior_top1_hit",
        0.333,
    ),
    (
        "spy posterior in the civilian voter's seat (known)",
        "ck_arena.spy_after_round1.on_games_with_votes.posterior_in_civilian_voter_seat_hit",
        0.4,
    ),
    (
        "spy posterior in the civilian voter's seat (marginalised)",
        "ck_arena.spy_after_round1_marginalised.on_games_with_votes."
        "posterior_in_civilian_voter_seat_hit",
        0.4,
    ),
    (
        "outlier score top-1 is a spy after round 1",
        "ck_arena.spy_after_round1.outliers_after_round1.top1_hit",
        0.333,
    ),
    (
        "outlier score top-2 holds a spy",
        "ck_arena.spy_after_round1.outliers_after_round1.top_set_hit",
        0.6,
    ),
    (
        "outlier score in the civilian voter's seat",
        "ck_arena.spy_after_round1.outliers_after_round1.on_games_with_votes."
        "outlier_in_civilian_voter_seat_hit",
        0.4,
    ),
    (
        "LLM civilians' round-1 votes hit a spy (the players, not a backend)",
        "ck_arena.spy_after_round1.on_games_with_votes.civilian_vote_hit",
        0.4,
    ),
    ("Liang own-word accuracy, all rounds", "spygame_liang.statements_all_rounds.accuracy", 0.5),
    ("Liang civilian-vs-spy AUC, all rounds", "spygame_liang.statements_all_rounds.roc_auc", 0.5),
    (
        "Liang spy posterior top-1 after round 1 (7 games)",
        "spygame_liang.spy_after_round1.posterior_top1_hit",
        0.25,
    ),
    (
        "Liang outlier top-1 after round 1 (7 games)",
        "spygame_liang.spy_after_round1.outliers_after_round1.top1_hit",
        0.25,
    ),
    ("card probes top-1", "chameleon_probes.top1", 0.062),
    ("card probes top-3", "chameleon_probes.top3", 0.188),
    ("card probes mean reciprocal rank", "chameleon_probes.mean_reciprocal_rank", None),
    ("card probes flat posteriors", "chameleon_probes.flat_posteriors", None),
)


def _tau_row(backend: Any, ref: Any) -> dict[str, Any]:
    from benchmarks._probes import evaluate_probes
    from benchmarks._spygame import spy_round1, statement_metrics, statement_table

    table = statement_table(ref.ck, backend)
    known = spy_round1(ref.ck, backend)
    marg = spy_round1(ref.ck, backend, spy_assignment="marginalise")
    probes = evaluate_probes(ref.cards, backend)
    return {
        "tau": backend.tau,
        "known_top1": known["posterior_top1_hit"],
        "known_top_set": known["posterior_top_set_hit"],
        "known_voter_seat": known["on_games_with_votes"]["posterior_in_civilian_voter_seat_hit"],
        "marginalised_top1": marg["posterior_top1_hit"],
        "marginalised_top_set": marg["posterior_top_set_hit"],
        "marginalised_voter_seat": marg["on_games_with_votes"][
            "posterior_in_civilian_voter_seat_hit"
        ],
        "ck_accuracy": statement_metrics(table, ci=False)["accuracy"],
        "ck_auc": statement_metrics(table, ci=False)["roc_auc"],
        "ck_round1_auc": statement_metrics(table, round_only=1, ci=False)["roc_auc"],
        "probe_top1": probes["top1"],
        "probe_mrr": probes["mean_reciprocal_rank"],
    }


def _paired_difference(
    cooc: dict[str, np.ndarray], emb: dict[str, np.ndarray], *, round_only: int | None = None
) -> dict[str, Any]:
    """Embedding minus co-occurrence on the same statements, paired bootstrap over games."""
    from benchmarks._stats import bootstrap_ci, own_word_accuracy, roc_auc

    assert np.array_equal(cooc["civilian"], emb["civilian"])
    assert np.array_equal(cooc["game"], emb["game"])
    keep = np.ones(cooc["d"].size, bool) if round_only is None else cooc["round"] == round_only
    dc, de, civ, game = cooc["d"][keep], emb["d"][keep], cooc["civilian"][keep], cooc["game"][keep]
    groups = np.unique(game)
    by_game = [np.flatnonzero(game == g) for g in groups]

    def pick(idx: np.ndarray) -> np.ndarray:
        return np.concatenate([by_game[i] for i in idx])

    def acc(idx: np.ndarray) -> float:
        i = pick(idx)
        return own_word_accuracy(de[i], civ[i]) - own_word_accuracy(dc[i], civ[i])

    def auc(idx: np.ndarray) -> float:
        i = pick(idx)
        return roc_auc(de[i], civ[i]) - roc_auc(dc[i], civ[i])

    everything = np.arange(len(groups))
    return {
        "accuracy_difference": round(acc(everything), 3),
        "accuracy_difference_ci95": bootstrap_ci(acc, len(groups), seed=QUALITY_SEED),
        "auc_difference": round(auc(everything), 3),
        "auc_difference_ci95": bootstrap_ci(auc, len(groups), seed=QUALITY_SEED + 1),
        "method": "embedding minus co-occurrence on the same statements; percentile "
        "bootstrap over games (400 resamples), the same games resampled for both",
    }


def bench_quality() -> dict[str, Any]:
    from benchmarks._spygame import statement_table
    from benchmarks.quality import load_reference, main_figures, probe_figures, reference_paths
    from leakage import create_backend
    from leakage.backends.cooccurrence import LocalIndexSource
    from leakage.backends.embedding import EmbeddingBackend
    from leakage.scoring import prepare

    ref = reference_paths()
    index = default_index()
    load_reference(ref)
    out: dict[str, Any] = {"reference": ref.paths(), "index": str(index)}

    print("  co-occurrence backend, library defaults (the code of benchmarks/quality.py):")
    source = LocalIndexSource(index)
    cooc = create_backend("cooccurrence", source=source)
    with Stopwatch() as sw:
        out["cooccurrence"] = {"backend": cooc.info(), **main_figures(cooc, ref)}
    out["cooccurrence"]["seconds"] = round(sw.seconds, 1)
    cooc_table = statement_table(ref.ck, cooc)
    source.close()

    print("  embedding backend, library defaults:")
    emb, load_s = _fresh_backend()
    with Stopwatch() as sw:
        prepare(ref.ck + ref.liang, emb)
    out["embedding_prepare"] = {
        "texts_embedded": emb.encoder.encoded,
        "seconds": round(sw.seconds, 1),
        "model_load_seconds": round(load_s, 2),
    }
    with Stopwatch() as sw:
        out["embedding"] = {"backend": emb.info(), **main_figures(emb, ref)}
    out["embedding"]["seconds"] = round(sw.seconds, 1)
    emb_table = statement_table(ref.ck, emb)
    out["ck_arena_paired_difference"] = {
        "all_rounds": _paired_difference(cooc_table, emb_table),
        "round1": _paired_difference(cooc_table, emb_table, round_only=1),
    }
    pd = out["ck_arena_paired_difference"]
    print(
        "  CK-Arena, embedding minus co-occurrence (paired bootstrap over games): accuracy "
        f"{pd['all_rounds']['accuracy_difference']:+.3f} "
        f"{pd['all_rounds']['accuracy_difference_ci95']}, AUC "
        f"{pd['all_rounds']['auc_difference']:+.3f} {pd['all_rounds']['auc_difference_ci95']}; "
        f"round 1 AUC {pd['round1']['auc_difference']:+.3f} {pd['round1']['auc_difference_ci95']}"
    )

    templated = EmbeddingBackend(emb.encoder, tau=emb.tau, candidate_template=CATEGORY_TEMPLATE)
    probes_cat = probe_figures(ref.cards, templated, label=f' with "{CATEGORY_TEMPLATE}"')
    bare = {r["clue"]: r["rank"] for r in out["embedding"]["chameleon_probes"]["rows"]}
    probes_cat["changed_vs_bare_word"] = [
        {
            "clue": r["clue"],
            "expected": r["expected"],
            "rank_bare": bare[r["clue"]],
            "rank_category": r["rank"],
        }
        for r in probes_cat["rows"]
        if r["rank"] != bare[r["clue"]]
    ]
    out["embedding_probes_category_template"] = probes_cat

    sweep = [_tau_row(EmbeddingBackend(emb.encoder, tau=tau), ref) for tau in TAUS]
    out["tau_sweep"] = {
        "rows": sweep,
        "notes": [
            "d = log P(s | civilian word) - log P(s | spy word) = (cos_civ - cos_spy) / tau, so "
            "own-word accuracy, AUC and probe ranks do not depend on tau (the columns show it)",
            "with the assignment known, P(player is a spy) is increasing in that player's "
            "summed -d, so the top-1 and top-2 picks cannot change with tau either (up to "
            "ties); with the assignment marginalised the two assignments are weighted by "
            "exp(±Σd / tau) and the ranking can change",
        ],
    }
    print("  tau sweep (spy posterior after round 1: known top-1 / marginalised top-1 / seat):")
    for r in sweep:
        print(
            f"    tau={r['tau']:<5g} known {r['known_top1']:.3f}, marginalised "
            f"{r['marginalised_top1']:.3f}, voter's seat known {r['known_voter_seat']:.3f} / "
            f"marginalised {r['marginalised_voter_seat']:.3f}; AUC {r['ck_auc']:.3f}"
        )

    side = []
    for label, path, chance in _SIDE_BY_SIDE:
        side.append(
            {
                "figure": label,
                "cooccurrence": _get(out["cooccurrence"], path),
                "embedding": _get(out["embedding"], path),
                "chance": chance,
                "path": path,
            }
        )
    out["side_by_side"] = side
    print("  side by side (co-occurrence | embedding | chance):")
    for r in side:
        c, e = r["cooccurrence"], r["embedding"]
        print(
            f"    {'n/a' if c is None else c!s:>6} | {'n/a' if e is None else e!s:>6} | "
            f"{'' if r['chance'] is None else r['chance']!s:>5}  {r['figure']}"
        )
    return out


# --------------------------------------------------------------------------- run


def run() -> dict[str, Any]:
    try:
        import sentence_transformers  # noqa: F401
        import torch  # noqa: F401
    except ImportError as err:
        raise Skip(f"needs the embedding extra (torch, sentence-transformers): {err}") from err
    results: dict[str, Any] = {
        "load_average_1min_at_start": _load(),
        "cpu_busy_percent_before_start": _busy(),
    }
    print(
        f"embedding: machine busy {results['cpu_busy_percent_before_start']}% over 1 s before "
        f"the start (other processes), load average {results['load_average_1min_at_start']}"
    )

    print(f"embedding: model load ({MODEL}, child process) ...", flush=True)
    results["model_load"] = load = bench_load()
    print(
        f"  imports {load['import_torch_and_sentence_transformers_seconds']} s, first load "
        f"{load['first_load_seconds']} s ({load['first_load_precision']}), reload fp32 "
        f"{load['reload_seconds']['fp32']} s, bf16 {load['reload_seconds']['bf16']} s"
    )
    print(f"embedding: throughput ({N_WORDS} words, {N_DESCRIPTIONS} descriptions) ...")
    words = _words(N_WORDS)
    descriptions, desc_source = _descriptions(N_DESCRIPTIONS)
    results["throughput"] = {
        "words": {"n": len(words), "source": "wordfreq.top_n_list('en'), alphabetic only"},
        "descriptions": {
            "n": len(descriptions),
            "source": desc_source,
            "mean_words": round(float(np.mean([len(d.split()) for d in descriptions])), 1),
        },
        "batching": "CachedEncoder.warm: chunks of 256 texts, encoder batch size 128",
        "rows": bench_embedding_rates(words, descriptions),
    }

    print("embedding: the 2-thread figures again with OMP_WAIT_POLICY=PASSIVE (child) ...")
    results["omp_wait_policy_passive"] = pv = bench_passive()
    for r in pv["rates"]:
        print(
            f"  {r['precision']} on {r['threads']} threads: {r['words_per_s']:,.0f} words/s, "
            f"{r['descriptions_per_s']:,.0f} descriptions/s (machine "
            f"{r['cpu_busy_percent_before']}% busy before)"
        )
    o = pv["games_one_pass"]
    print(
        f"  games, one pass, {o['precision']} on {o['threads']} threads: cold "
        f"{o['cold_games_per_s']:,.0f}, warm {o['warm_games_per_s']:,.0f} games/s"
    )

    print(f"embedding: scoring {N_GAMES} synthetic Chameleon games, cold then warm ...")
    results["games"] = g = bench_games()
    print(
        f"  cold: {g['cold_games_per_s']:,.0f} games/s ({mark(g['cold_target_met'])}, target "
        f">= 100; model load {g['model_load_seconds_excluded'][0]} s excluded); warm: "
        f"{g['warm_games_per_s']:,.0f} games/s ({mark(g['warm_target_met'])}, target >= 2,000)"
    )
    print(
        f"    all cold {g['cold_games_per_s_all']}, all warm {g['warm_games_per_s_all']} "
        f"(machine {g['cpu_busy_percent_before']}% busy before)"
    )
    for v in g["single_pass_variants"]:
        print(
            f"    one pass, {v['precision']} on {v['threads']} thread(s): cold "
            f"{v['cold_games_per_s']:,.0f}, warm {v['warm_games_per_s']:,.0f} games/s"
        )
    print("  warm profile, cumulative µs per game (cProfile, inflated by its overhead):")
    for label, us in g["warm_profile"]["stage_us_per_game_cumulative"].items():
        print(f"    {us:8.1f}  {label}")

    print("embedding: quality, side by side with co-occurrence ...", flush=True)
    try:
        with Stopwatch() as sw:
            results["quality"] = bench_quality()
        results["quality"]["seconds"] = round(sw.seconds, 1)
    except Skip as why:
        results["quality"] = {"skipped": str(why)}
        print(f"  quality skipped: {why}")
    results["load_average_1min_at_end"] = _load()
    params = {
        "model": MODEL,
        "threads": THREADS,
        "precision": "auto (bf16 where the CPU has avx512_bf16 or amx_bf16, else fp32)",
        "tau": 0.05,
        "candidate_template": "{word}",
        "n_games": N_GAMES,
        "games_seed": SEED,
        "repeats": REPEATS,
        "rate_repeats": RATE_REPEATS,
        "omp_wait_policy_in_environment": os.environ.get("OMP_WAIT_POLICY"),
        "n_words": N_WORDS,
        "n_descriptions": N_DESCRIPTIONS,
        "descriptions_seed": DESCRIPTION_SEED,
        "taus": TAUS,
        "category_template": CATEGORY_TEMPLATE,
        "bootstrap_seed": QUALITY_SEED,
        "targets": TARGETS,
    }
    path = write_result("embedding", params, results)
    print(f"  wrote {path}")
    return results
