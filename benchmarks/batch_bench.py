"""Batch scoring (``leakage batch``): games/s against the backend's raw rate, memory, resume.

1. **100,000 synthetic Chameleon games** (``benchmarks/_games.py``, ten seeded blocks of
   10,000, written once to a temporary JSONL file, untimed). *Raw rate*: a child process
   reads the file in blocks of 1,000 lines, parses them (untimed) and times
   ``score_many`` over them with one co-occurrence backend: what the backend itself does,
   without I/O or bookkeeping. *Batch*: ``python -m leakage batch FILE --out DIR --workers W
   --no-progress`` for W = 1 and 2, timed from the manifest (the run itself: reading,
   parsing, scoring, Parquet, reports, checkpoints; process start-up excluded) and on the
   wall clock (everything). Raw, 1 worker and 2 workers run in turn, three rounds; the
   medians are compared. Peak memory: the peak RSS (``VmHWM``) of the parent and of each
   worker, as the run records them in its manifest; the same run on the first 25,000
   games shows whether it grows with the number of games.
2. **CK-Arena dev logs** (227 games; skipped without ``../shared/data``), 1 and 2 workers,
   for the co-occurrence backend and the embedding backend (bundled MiniLM), each *cold*
   (a fresh ``LEAKAGE_HOME`` holding only the corpus index: empty embedding cache) then
   *warm* (the same ``LEAKAGE_HOME`` again: the vectors the first run stored in
   ``embeddings.sqlite``, shared by the workers, are read back).
3. **Scaling** with candidates K = 16, 64, 256 (m = 4 counted clues) and with clues
   m = 4, 8, 16 (K = 16): 5,000 games each, candidates drawn from several cards of the card
   set; raw µs per game and batch games/s (``--workers 0``: in one process, so that the
   per-game costs compare without a worker's start-up).
4. **Resume at scale**: the 100,000-game run with 2 workers, committing every 5 s, killed
   (SIGKILL to its process group) once three checkpoints are committed, then resumed with
   ``--resume``; every game must appear exactly once.

The machine is shared: the load average is recorded before each timed part.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import SHARED_DATA, default_index, mark, write_result

N_GAMES = 100_000
BLOCK = 10_000
SEED = 20250101
SCALE_GAMES = 5_000
REPEATS = 3
SMALL_RUN = 25_000
"""The memory check's smaller run: more step rows (4 per game) than one Parquet row group
(65,536), so that both runs hold a full row group at their peak."""
KILL_AFTER_COMMITS = 3
TARGETS = {"batch_vs_raw_min": 0.80, "resume_lost_games": 0}

_RAW_CHILD = """
import json, sys, time
from leakage import create_backend
from leakage.batch import peak_rss_mb
from leakage.scoring import score_many
from leakage.transcripts import parse_transcript
backend = create_backend(sys.argv[2], **json.loads(sys.argv[3]))
backend.loglik(["warm up"], ["model", "load"])  # a lazily loaded model loads untimed
n, seconds, block = 0, 0.0, []
def run(block):
    start = time.perf_counter()
    k = sum(1 for _ in score_many(block, backend))
    return k, time.perf_counter() - start
with open(sys.argv[1], encoding="utf-8") as fh:
    for line in fh:
        block.append(parse_transcript(json.loads(line)))
        if len(block) == 1000:
            k, s = run(block); n += k; seconds += s; block = []
if block:
    k, s = run(block); n += k; seconds += s
print(json.dumps({"games": n, "seconds": seconds, "peak_rss_mb": peak_rss_mb()}))
"""


def load() -> float:
    return round(os.getloadavg()[0], 2)


def write_games(path: Path, n: int, seed: int = SEED) -> None:
    from benchmarks._games import generate_games

    with path.open("w", encoding="utf-8") as fh:
        for b in range(0, n, BLOCK):
            games, _ = generate_games(min(BLOCK, n - b), seed + b)
            fh.writelines(g.model_dump_json(exclude_none=True) + "\n" for g in games)


def raw_rate(path: Path, backend: str = "cooccurrence", **options: Any) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", _RAW_CHILD, str(path), backend, json.dumps(options)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    r = json.loads(proc.stdout)
    return {
        "games": r["games"],
        "seconds": round(r["seconds"], 2),
        "games_per_s": round(r["games"] / r["seconds"], 1),
        "peak_rss_mb": round(r["peak_rss_mb"], 1),
        "load": load(),
    }


def _env(home: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if home is not None:
        env["LEAKAGE_HOME"] = str(home)
    return env


def batch_command(inputs: list[str], out: Path, workers: int, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "leakage", "batch", *inputs, "--out", str(out),
        "--workers", str(workers), "--no-progress", *extra,
    ]  # fmt: skip


def run_batch_cli(
    inputs: list[str], out: Path, workers: int, *extra: str, home: Path | None = None
) -> dict[str, Any]:
    """One ``leakage batch`` run; its figures from the manifest, plus the wall clock."""
    before = load()
    start = time.perf_counter()
    proc = subprocess.run(
        batch_command(inputs, out, workers, *extra),
        capture_output=True, text=True, env=_env(home),
    )  # fmt: skip
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 2):
        raise RuntimeError(f"leakage batch failed ({proc.returncode}): {proc.stderr[-2000:]}")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    run = manifest["runs"][-1]
    return {
        "workers": workers,
        "games": run["games"],
        "failed": run["failed"],
        "run_seconds": run["seconds"],
        "games_per_s": run["records_per_s"],
        "steady_games_per_s": run["steady_records_per_s"],
        "startup_seconds": run["first_result_seconds"],
        "wall_seconds": round(wall, 2),
        "wall_games_per_s": round((run["games"] + run["failed"]) / wall, 1),
        "parent_peak_rss_mb": round(run["parent_peak_rss_mb"] or 0, 1),
        "worker_peak_rss_mb": round(run["worker_peak_rss_mb"] or 0, 1),
        "load_before": before,
    }


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return sorted(runs, key=lambda r: r["games_per_s"])[len(runs) // 2]


def bench_synthetic(tmp: Path, games: Path) -> dict[str, Any]:
    """Raw, then batch with 1 and 2 workers, ``REPEATS`` times in turn (the machine's two
    cores slow each other down when both are busy, by 12-27% for two raw runs at once, and
    a pipeline of two processes varies from run to run): medians and ranges."""
    raws: list[dict[str, Any]] = []
    batch: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    for rep in range(REPEATS):
        raw = raw_rate(games)
        raws.append(raw)
        print(f"  raw: {raw['games_per_s']:,.0f} games/s (load {raw['load']})", flush=True)
        for w in (1, 2):
            r = run_batch_cli([str(games)], tmp / f"syn-{w}-{rep}", w)
            shutil.rmtree(tmp / f"syn-{w}-{rep}", ignore_errors=True)
            r["vs_raw_same_round"] = round(r["games_per_s"] / raw["games_per_s"], 3)
            batch[w].append(r)
            print(
                f"  batch, {w} worker(s): {r['games_per_s']:,.0f} games/s "
                f"({r['vs_raw_same_round']:.2f} x this round's raw), wall {r['wall_seconds']} s, "
                f"peak RSS parent {r['parent_peak_rss_mb']} MB, worker "
                f"{r['worker_peak_rss_mb']} MB (load {r['load_before']})",
                flush=True,
            )
    raw = _median_run(raws)
    out: dict[str, Any] = {"raw": raw, "raw_runs": raws}
    for w, runs in batch.items():
        med = _median_run(runs)
        rates = [r["games_per_s"] for r in runs]
        out[f"workers_{w}"] = {
            **med,
            "vs_raw": round(med["games_per_s"] / raw["games_per_s"], 3),
            "vs_raw_range": [round(x / raw["games_per_s"], 3) for x in (min(rates), max(rates))],
            "target_met": med["games_per_s"] / raw["games_per_s"] >= TARGETS["batch_vs_raw_min"],
            "runs": runs,
        }
        print(
            f"  batch, {w} worker(s), median of {REPEATS}: {med['games_per_s']:,.0f} games/s = "
            f"{out[f'workers_{w}']['vs_raw']:.2f} x median raw "
            f"(runs {out[f'workers_{w}']['vs_raw_range'][0]:.2f}-"
            f"{out[f'workers_{w}']['vs_raw_range'][1]:.2f})",
            flush=True,
        )
    small = tmp / "first25k.jsonl"
    with games.open(encoding="utf-8") as src, small.open("w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i == SMALL_RUN:
                break
            dst.write(line)
    small_run = run_batch_cli([str(small)], tmp / "syn-small", 1)
    big = batch[1][-1]
    out["memory_growth"] = {
        "games_small": small_run,
        "parent_mb_small_vs_100k": [small_run["parent_peak_rss_mb"], big["parent_peak_rss_mb"]],
        "worker_mb_small_vs_100k": [small_run["worker_peak_rss_mb"], big["worker_peak_rss_mb"]],
    }
    return out


def bench_breakdown(games: Path, n: int = 5_000) -> dict[str, Any]:
    """Where a batch game's time goes, per stage, in this process (µs per game, median of 3):
    the stages the batch path adds beside the scoring that the raw rate measures, split as
    a pool of one worker splits them: the parent parses, shapes the step rows and writes;
    the worker scores, gathers the rows' numbers and shapes the report lines. The first
    ``n`` games, scored once untimed first, so that scoring is warm and its share is the
    smallest it gets; the garbage collector tuned as in a batch run."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from leakage import create_backend
    from leakage.batch import StepColumns, StepNumbers, fewer_collections, report_json, row_context
    from leakage.scoring import game_input, report_data, score_inputs, score_many
    from leakage.transcripts import RawRecord, to_transcript

    with games.open(encoding="utf-8") as fh:
        lines = [next(fh) for _ in range(n)]
    backend = create_backend("cooccurrence")
    name, info = backend.name, backend.info()
    records = [RawRecord(str(games), i, f"line {i + 1}", x) for i, x in enumerate(lines)]
    parsed: list[Any] = [to_transcript(r) for r in records]
    inputs = [game_input(t) for t in parsed]
    contexts = [
        row_context(r.source, r.record, t, x.counted)
        for r, t, x in zip(records, parsed, inputs, strict=True)
    ]
    numbers: list[Any] = score_inputs(inputs, backend)
    datas = [
        report_data(x, c.report, nb, name, info)
        for x, c, nb in zip(inputs, contexts, numbers, strict=True)
    ]

    def parse() -> None:
        for r in records:
            t: Any = to_transcript(r)
            inp = game_input(t)
            row_context(r.source, r.record, t, inp.counted)

    def step_numbers(games: list[Any] = numbers) -> Any:
        gathered = StepNumbers()
        for nb in games:
            gathered.add(nb)
        return gathered.arrays()

    arrays = step_numbers()
    lines = [report_json(d) + b"\n" for d in datas]
    back = [
        (step_numbers(numbers[at : at + 256]), b"".join(lines[at : at + 256]))
        for at in range(0, n, 256)
    ]

    def rows() -> Any:
        cols = StepColumns()
        for x, c in zip(inputs, contexts, strict=True):
            cols.add(c, x, name)
        return cols.to_batch(arrays)

    def sent() -> None:
        for at in range(0, n, 256):
            reports = [c.report for c in contexts[at : at + 256]]
            pickle.loads(pickle.dumps((inputs[at : at + 256], reports)))

    batch = rows()
    out = games.parent / "breakdown.parquet"
    stages = {
        "raw: score_many (both stages, pydantic reports)": lambda: list(
            score_many(parsed, backend)
        ),
        "parent: parse and validate, game input and row context": parse,
        "both: game inputs and report contexts pickled and unpickled": sent,
        "both: rows' numbers and report lines pickled and unpickled": lambda: [
            pickle.loads(pickle.dumps(x)) for x in back
        ],
        "worker: backend stage (score_inputs, chunks of 256)": lambda: [
            score_inputs(inputs[at : at + 256], backend) for at in range(0, n, 256)
        ],
        "worker: step rows' numbers": step_numbers,
        "worker: report data": lambda: [
            report_data(x, c.report, nb, name, info)
            for x, c, nb in zip(inputs, contexts, numbers, strict=True)
        ],
        "worker: report JSON": lambda: [report_json(d) for d in datas],
        "parent: step rows": rows,
        "parent: Parquet": lambda: pq.write_table(pa.Table.from_batches([batch]), out),
    }
    result = {}
    with fewer_collections():
        for label, fn in stages.items():
            times = []
            for _ in range(3):
                start = time.perf_counter()
                fn()
                times.append(time.perf_counter() - start)
            result[label] = round(1e6 * float(np.median(times)) / n, 1)
    result["load"] = load()
    return result


def bench_ck_arena(tmp: Path) -> dict[str, Any]:
    logs = SHARED_DATA / "ck-arena-dev" / "logs"
    if not logs.is_dir():
        return {"skipped": f"needs {logs}"}
    out: dict[str, Any] = {}
    index = default_index()
    for backend, extra in (("cooccurrence", ()), ("embedding", ())):
        for w in (1, 2):
            home = tmp / f"home-{backend}-{w}"
            (home / "corpus").mkdir(parents=True)
            os.symlink(index, home / "corpus" / "default.sqlite")
            threads = ("-O", f"threads={2 // w}") if backend == "embedding" else ()
            args = ("--input-format", "ck-arena", "--backend", backend, *extra, *threads)
            for state in ("cold", "warm"):
                r = run_batch_cli(
                    [str(logs)], tmp / f"ck-{backend}-{w}-{state}", w, *args, home=home
                )
                out[f"{backend}_workers_{w}_{state}"] = r
                print(
                    f"  ck-arena {backend}, {w} worker(s), {state}: {r['games_per_s']:,.1f} "
                    f"games/s (wall {r['wall_seconds']} s, worker RSS {r['worker_peak_rss_mb']} "
                    f"MB, load {r['load_before']})",
                    flush=True,
                )
    return out


def bench_ck_arena_vs_raw(tmp: Path) -> dict[str, Any]:
    """The embedding backend, cold, where scoring dominates: the CK-Arena games converted to
    native JSONL (untimed), raw (one process, no disk cache) against ``leakage batch`` with
    one worker and an empty cache, its steady rate (after the first chunk of 32: model load
    and worker start-up left out). A run times about two seconds of scoring, so raw and
    batch run in turn for three rounds and the medians are compared."""
    from leakage.transcripts import load_transcripts

    logs = SHARED_DATA / "ck-arena-dev" / "logs"
    if not logs.is_dir():
        return {"skipped": f"needs {logs}"}
    games, _ = load_transcripts([logs], input_format="ck-arena")
    path = tmp / "ck.jsonl"
    path.write_text("".join(g.model_dump_json() + "\n" for g in games), encoding="utf-8")
    raws, batches = [], []
    for i in range(REPEATS):
        raws.append(raw_rate(path, "embedding", disk_cache=False, threads=2))
        home = tmp / f"home-ck-raw-{i}"
        (home / "corpus").mkdir(parents=True)
        os.symlink(default_index(), home / "corpus" / "default.sqlite")
        args = ("-b", "embedding", "-O", "threads=2", "--chunk-size", "32")
        batches.append(run_batch_cli([str(path)], tmp / f"ck-raw-{i}", 1, *args, home=home))
    raw = float(np.median([r["games_per_s"] for r in raws]))
    steady = float(np.median([r["steady_games_per_s"] or 0 for r in batches]))
    ratios = [
        (b["steady_games_per_s"] or 0) / r["games_per_s"]
        for r, b in zip(raws, batches, strict=True)
    ]
    out = {
        "raw_runs": raws,
        "batch_workers_1_runs": batches,
        "raw_games_per_s_median": round(raw, 1),
        "batch_steady_games_per_s_median": round(steady, 1),
        "steady_vs_raw": round(steady / raw, 3),
        "steady_vs_raw_range": [round(min(ratios), 3), round(max(ratios), 3)],
    }
    print(
        f"  ck-arena embedding, cold, median of {REPEATS}: raw {raw:.1f} games/s, batch "
        f"steady {steady:.1f} games/s ({out['steady_vs_raw']:.2f} x raw, runs "
        f"{min(ratios):.2f}-{max(ratios):.2f})",
        flush=True,
    )
    return out


def scaled_games(path: Path, n: int, k: int, m: int, seed: int) -> None:
    """Chameleon games with K candidates (the secret's card, then words of other cards) and
    m counted clues (m non-chameleons and one chameleon)."""
    from benchmarks._games import clue_pools, load_cards

    rng = np.random.default_rng(seed)
    cards = load_cards()
    pools = clue_pools(cards)
    with path.open("w", encoding="utf-8") as fh:
        for g in range(n):
            order = rng.permutation(len(cards))
            words: list[str] = []
            for c in order:
                words += [w for w in cards[c]["words"] if w not in words]
                if len(words) >= k:
                    break
            words = words[:k]
            secret = words[int(rng.integers(16))]
            seat = int(rng.integers(m + 1))
            players, turns = [], []
            for p in range(m + 1):
                pool = pools[words[int(rng.integers(1, k))] if p == seat else secret]
                role = "chameleon" if p == seat else "non-chameleon"
                players.append({"id": f"p{p}", "role": role})
                turns.append({"player": f"p{p}", "text": pool[int(rng.integers(len(pool)))]})
            doc = {
                "format": "leakage.transcript/1", "game": "chameleon", "id": f"k{k}-m{m}-{g}",
                "category": cards[order[0]]["category"], "candidates": words, "secret": secret,
                "players": players, "turns": turns,
            }  # fmt: skip
            fh.write(json.dumps(doc) + "\n")


def bench_scaling(tmp: Path) -> dict[str, Any]:
    """Raw and ``--workers 0`` for each K and m. The batch run's time includes its one-off
    costs (opening the index, pyarrow's first use, which imports pandas when it is
    installed, the Parquet writer); its steady rate (after the first chunk) leaves them out."""
    out = {}
    for k, m in ((16, 4), (64, 4), (256, 4), (16, 8), (16, 16)):
        path = tmp / f"scale-k{k}-m{m}.jsonl"
        scaled_games(path, SCALE_GAMES, k, m, SEED)
        raw = raw_rate(path)
        r = run_batch_cli([str(path)], tmp / f"scale-k{k}-m{m}", 0)
        out[f"K{k}_m{m}"] = {
            "K": k,
            "m": m,
            "raw_us_per_game": round(1e6 / raw["games_per_s"], 1),
            "raw_games_per_s": raw["games_per_s"],
            "batch_games_per_s": r["games_per_s"],
            "vs_raw": round(r["games_per_s"] / raw["games_per_s"], 3),
            "batch_steady_games_per_s": r["steady_games_per_s"],
            "first_chunk_seconds": r["startup_seconds"],
            "load": raw["load"],
        }
        print(
            f"  K={k:>3} m={m:>2}: raw {raw['games_per_s']:,.0f} games/s "
            f"({1e6 / raw['games_per_s']:,.0f} µs/game), batch {r['games_per_s']:,.0f} games/s "
            f"(steady {r['steady_games_per_s'] or 0:,.0f})",
            flush=True,
        )
    return out


def bench_resume(tmp: Path, games: Path) -> dict[str, Any]:
    import pyarrow.dataset as ds

    from leakage.batch import checkpoints

    out = tmp / "resume"
    cmd = batch_command([str(games)], out, 2, "--checkpoint-seconds", "5")
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    while proc.poll() is None and checkpoints(out) < KILL_AFTER_COMMITS:
        time.sleep(0.2)
    killed = proc.poll() is None
    if killed:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True)
    table = ds.dataset(out / "steps").to_table(columns=["record", "step"])
    records = table.filter(ds.field("step") == 0)["record"].to_numpy()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    skipped = manifest["runs"][-1]["skipped"]
    lost = N_GAMES - len(np.unique(records))
    return {
        "killed_mid_run": killed,
        "committed_before_kill": skipped,
        "resume_exit_code": resumed.returncode,
        "games_once": len(np.unique(records)),
        "games_twice_or_more": int(len(records) - len(np.unique(records))),
        "games_lost": int(lost),
        "target_met": killed and lost == 0 and len(records) == N_GAMES,
    }


def run() -> dict[str, Any]:
    default_index()
    tmp = Path(tempfile.mkdtemp(prefix="leakage-batch-bench-"))
    try:
        games = tmp / "games.jsonl"
        print(f"batch: writing {N_GAMES:,} synthetic games (untimed) ...", flush=True)
        write_games(games, N_GAMES)
        print("batch: 100,000 synthetic games", flush=True)
        syn = bench_synthetic(tmp, games)
        syn["breakdown_us_per_game"] = bd = bench_breakdown(games)
        print(f"  per game (µs, in one process): {bd}", flush=True)
        print("batch: CK-Arena dev logs", flush=True)
        ck = bench_ck_arena(tmp)
        ck["embedding_cold_vs_raw"] = bench_ck_arena_vs_raw(tmp)
        print("batch: scaling with K and m", flush=True)
        scaling = bench_scaling(tmp)
        print("batch: kill -9 and resume at 100,000 games", flush=True)
        resume = bench_resume(tmp, games)
        print(
            f"  resume: {resume['games_once']:,} games once, {resume['games_lost']} lost, "
            f"{resume['games_twice_or_more']} twice ({mark(resume['target_met'])})"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    results = {"synthetic": syn, "ck_arena": ck, "scaling": scaling, "resume": resume}
    params = {"n_games": N_GAMES, "seed": SEED, "scale_games": SCALE_GAMES, "targets": TARGETS}
    path = write_result("batch", params, results)
    print(f"  wrote {path}")
    return results
