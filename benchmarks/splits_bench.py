"""Splits: time to cut CK-Arena's 527 English pairs into hard / medium / easy, end to end.

Default describer (WordNet) and default model (the bundled all-MiniLM-L6-v2), terciles.

Each run is a fresh interpreter (``python -c``), as a user's command is: it imports the
library, loads the model (torch and sentence-transformers imports included, timed as
``model_load``), reads the pairs, describes the words (``describe``), embeds the descriptions
and partitions (``embed_and_partition``), and writes every output file (``write``, matplotlib
import included). ``wall`` is the child's whole life seen from the parent, interpreter start
included. Cold: a new, empty ``LEAKAGE_HOME`` (no description or embedding cache); warm: the
same home again. Three of each, medians reported: the machine is shared. One more run of the
real command (``leakage splits build``), cold and warm, checks that the command costs the same.

Also recorded from the cold run's output: the similarity distribution, the tercile cut
points, how the literature's BGE-M3 thresholds (0.789 / 0.735) would cut these MiniLM
similarities, and the share of pairs with a word WordNet does not know; the same figures for
SpyGame's 50 pairs.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import mark, shared_data, write_result

REPEATS = 3
_QUANTILES = {
    "min": 0.0,
    "p10": 0.1,
    "p25": 0.25,
    "median": 0.5,
    "p75": 0.75,
    "p90": 0.9,
    "max": 1.0,
}
TARGET_SECONDS = 60.0

_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from leakage.encoders import open_encoder
from leakage.splits import (CachedDescriber, WordNetDescriber, build_splits,
    default_description_cache_path, read_pairs, write_splits)
t = {"import_leakage": time.perf_counter() - t0}
s = time.perf_counter()
encoder = open_encoder()
t["model_load"] = time.perf_counter() - s
s = time.perf_counter()
table = read_pairs(sys.argv[1])
t["read_pairs"] = time.perf_counter() - s
s = time.perf_counter()
describer = CachedDescriber(WordNetDescriber(), default_description_cache_path())
describer.describe([w for p in table.pairs for w in (p.a, p.b)])
t["describe"] = time.perf_counter() - s
s = time.perf_counter()
result = build_splits(table, describer, encoder)
t["embed_and_partition"] = time.perf_counter() - s
s = time.perf_counter()
write_splits(result, sys.argv[2])
t["write"] = time.perf_counter() - s
t["in_process_total"] = time.perf_counter() - t0
t["texts_embedded"] = encoder.encoded
t["words_described"] = describer.described
encoder.close()
print(json.dumps(t))
"""


def _child(pairs: Path, out: Path, home: Path) -> dict[str, float]:
    env = {**os.environ, "LEAKAGE_HOME": str(home)}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(pairs), str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    stages = json.loads(proc.stdout)
    stages["wall"] = time.perf_counter() - start
    return stages


def _command(pairs: Path, out: Path, home: Path) -> float:
    env = {**os.environ, "LEAKAGE_HOME": str(home)}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "leakage", "splits", "build", str(pairs), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return time.perf_counter() - start


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(float(np.median([r[k] for r in runs])), 2) for k in runs[0]}


def _distribution(out: Path) -> dict[str, Any]:
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    with (out / "all.csv").open(encoding="utf-8", newline="") as fh:
        sims = np.array([float(r["similarity"]) for r in csv.DictReader(fh)])
    q = np.quantile(sims, list(_QUANTILES.values()))
    counts, edges = np.histogram(sims, bins=np.linspace(0.0, 1.0, 11))
    gu = {
        "hard (> 0.789)": int((sims > 0.789).sum()),
        "medium": int(((sims >= 0.735) & (sims <= 0.789)).sum()),
        "easy (< 0.735)": int((sims < 0.735).sum()),
    }
    return {
        "pairs_read": summary["pairs_read"],
        "pairs_split": int(sims.size),
        "unknown_pairs": summary["counts"]["unknown"],
        "unknown_pair_share": round(summary["counts"]["unknown"] / summary["pairs_read"], 4),
        "unknown_words": summary["unknown"]["words"],
        "duplicate_pairs": len(summary["duplicates"]),
        "similarity_quantiles": dict(zip(_QUANTILES, np.round(q, 4).tolist(), strict=True)),
        "similarity_mean": round(float(sims.mean()), 4),
        "similarity_std": round(float(sims.std()), 4),
        "histogram_0.1_bins": {
            f"{a:.1f}-{b:.1f}": int(c)
            for a, b, c in zip(edges[:-1], edges[1:], counts, strict=True)
        },
        "tercile_cut_points": summary["cut_points"],
        "tercile_counts": {k: summary["counts"][k] for k in ("hard", "medium", "easy")},
        "per_split": summary["similarity"],
        "gu_bge_m3_thresholds_on_these_similarities": gu,
    }


def run() -> dict[str, Any]:
    pairs = shared_data("ck-arena-dev", "pairs_en.csv")
    spygame = shared_data("spygame-liang", "keyword_set.json")
    print(f"splits: {REPEATS} cold + {REPEATS} warm runs on {pairs.name} ...", flush=True)
    cold, warm = [], []
    with tempfile.TemporaryDirectory(prefix="leakage-splits-bench-") as tmp:
        root = Path(tmp)
        for i in range(REPEATS):
            home = root / f"home{i}"
            cold.append(_child(pairs, root / f"cold{i}", home))
        for i in range(REPEATS):
            warm.append(_child(pairs, root / f"warm{i}", root / f"home{REPEATS - 1}"))
        command_cold = _command(pairs, root / "cmd-cold", root / "cmd-home")
        command_warm = _command(pairs, root / "cmd-warm", root / "cmd-home")
        dist = _distribution(root / "cold0")
        _child(spygame, root / "spygame", root / "home0")
        spy = _distribution(root / "spygame")

    cold_m, warm_m = _medians(cold), _medians(warm)
    met = cold_m["wall"] <= TARGET_SECONDS
    results = {
        "target_seconds_cold_end_to_end": TARGET_SECONDS,
        "cold_target_met": met,
        "cold_median_seconds": cold_m,
        "warm_median_seconds": warm_m,
        "cold_runs": [{k: round(v, 2) for k, v in r.items()} for r in cold],
        "warm_runs": [{k: round(v, 2) for k, v in r.items()} for r in warm],
        "command_seconds": {"cold": round(command_cold, 2), "warm": round(command_warm, 2)},
        "ck_arena_pairs_en": dist,
        "spygame_keyword_set": spy,
    }
    path = write_result(
        "splits",
        {
            "pairs": "ck-arena-dev/pairs_en.csv",
            "describer": "wordnet",
            "model": "all-MiniLM-L6-v2 (bundled; precision auto)",
            "method": "terciles",
            "repeats": REPEATS,
        },
        results,
    )
    print(
        f"  cold end to end {cold_m['wall']:.1f} s (target {TARGET_SECONDS:.0f} s: {mark(met)}): "
        f"model load {cold_m['model_load']:.1f} s, describe {cold_m['describe']:.1f} s, "
        f"embed + partition {cold_m['embed_and_partition']:.1f} s, write {cold_m['write']:.1f} s"
    )
    print(
        f"  warm end to end {warm_m['wall']:.1f} s: model load {warm_m['model_load']:.1f} s, "
        f"describe {warm_m['describe']:.2f} s, embed + partition "
        f"{warm_m['embed_and_partition']:.2f} s; the command itself: cold {command_cold:.1f} s, "
        f"warm {command_warm:.1f} s"
    )
    q, cuts = dist["similarity_quantiles"], dist["tercile_cut_points"]
    gu = "/".join(map(str, dist["gu_bge_m3_thresholds_on_these_similarities"].values()))
    print(
        f"  pairs_en.csv: {dist['pairs_split']} of {dist['pairs_read']} pairs split, "
        f"{dist['unknown_pair_share']:.1%} with an unknown word; similarity median "
        f"{q['median']:.3f} (p10 {q['p10']:.3f}, p90 {q['p90']:.3f}); tercile cuts "
        f"{cuts['hard_medium']:.4f} / {cuts['medium_easy']:.4f}; Gu's BGE-M3 thresholds "
        f"would give hard/medium/easy {gu}"
    )
    print(
        f"  keyword_set.json: {spy['pairs_split']} of {spy['pairs_read']} split, "
        f"{spy['unknown_pair_share']:.0%} with an unknown word; tercile cuts "
        f"{spy['tercile_cut_points']['hard_medium']:.4f} / "
        f"{spy['tercile_cut_points']['medium_easy']:.4f}"
    )
    print(f"  wrote {path}")
    return results


if __name__ == "__main__":
    run()
