"""Taboo first clues over the open vocabulary: the vocabulary as bare words or as glosses.

**Why.** In clembench's taboo a describer defines a target without its taboo words ("This is
the time of year when days are shortest and nights are longest."); the guesser has no card.
The open-vocabulary adversary (``OpenVocabulary``, docs/vocab.md) ranks every word of the
vocabulary by the cosine of its vector with the clue's. A definition is nearer the target's
own definition than the bare word, so the vocabulary can be embedded as ``"word: its first
WordNet gloss"`` (``leakage vocab build --texts gloss``).

**Data.** The taboo dev sample of ``../shared/data/clembench-dev`` (clembench-runs v1.6,
CC BY 4.0; Episodes from *clembench-runs* by the clembench authors (clp-research), github
clembench/clembench-runs, licensed CC BY 4.0. Changes: episodes selected, texts extracted to
JSONL. Benchmark: Chalamalasetti et al. 2023), each raw ``interactions.json`` read by the
``clembench-taboo`` adapter; the first clue the game master passed on (an episode whose first
reply was rejected has none and is left out). Sides by instance (``instance_side``).

**What is measured.** For the default vocabulary (``wordfreq:50000``, 48,032 words; the
bundled all-MiniLM-L6-v2; an exact ``numpy`` index) embedded both ways: the target's rank
among the vocabulary after the first clue (``OpenVocabulary.rank_of``; the clue's own words
left out, as ``leakage guess`` does; a target outside the vocabulary embedded the same way
and ranked among V + 1), top-1, top-10 and the median rank, on dev and frozen instances and
all, with 95% intervals resampling instances. No re-ranking by the ensemble's members (the
shortlist + re-rank is issue 39's); the ranking is the plain embedding one.

``python -m benchmarks.studies.taboo_vocab`` (builds both indexes under ``$LEAKAGE_HOME/vocab`` when
absent: a few minutes each on 2 busy cores). Results in ``benchmarks/results/taboo_vocab.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks.common import Skip, bootstrap_ci, shared_data, write_result
from leakage.encoders import open_encoder
from leakage.paths import default_paths
from leakage.transcripts import ChameleonTranscript, load_transcripts
from leakage.transcripts.adapters.clembench import instance_key, instance_side
from leakage.vocab import (
    OpenVocabulary,
    VectorIndex,
    build_vocabulary,
    default_vocab_dir,
    load_words,
)

WORDS = "wordfreq:50000"
MODEL = "all-MiniLM-L6-v2"


def first_clues() -> list[dict[str, Any]]:
    root = shared_data("clembench-dev", "taboo")
    rows = [json.loads(x) for x in (root / "taboo_dev.jsonl").read_text().splitlines() if x]
    out = []
    for row in rows:
        path = root / "raw" / f"v1.6__{row['model']}__{row['experiment']}__{row['episode']}.json"
        good, bad = load_transcripts([path], input_format="clembench-taboo")
        if bad:
            raise bad[0]
        (t,) = good
        assert isinstance(t, ChameleonTranscript)
        describer = next(p.id for p in t.players if p.role == "non-chameleon")
        clues = [x.text for x in t.turns if x.player == describer]
        if not clues:
            continue
        out.append(
            {
                "clue": clues[0],
                "target": str(t.secret),
                "instance": instance_key("taboo", row["experiment"], row["episode"]),
                "side": instance_side("taboo", row["experiment"], row["episode"]),
                "guesser_right_after_it": bool(row["turns"] and row["turns"][0]["guess"])
                and str(row["turns"][0]["guess"]).strip(" |").casefold() == t.secret.casefold()
                if t.secret
                else False,
            }
        )
    return out


def vocabulary(texts: str, encoder: Any) -> tuple[VectorIndex, float | None]:
    """The default vocabulary embedded as ``texts``, built (numpy kind) when absent."""
    folder = default_vocab_dir(encoder.name, WORDS, texts=texts)
    folder = folder.with_name(folder.name + "-numpy")
    if (folder / "meta.json").exists():
        return VectorIndex.load(folder), None
    start = time.perf_counter()
    index = build_vocabulary(load_words(WORDS), encoder, kind="numpy", texts=texts)  # type: ignore[arg-type]
    index.save(folder)
    return index, time.perf_counter() - start


def figures(items: Sequence[dict[str, Any]], ranks: Sequence[int]) -> dict[str, Any]:
    r = np.array(ranks)
    out: dict[str, Any] = {}
    for side in ("dev", "frozen", "all"):
        idx = [i for i, x in enumerate(items) if side == "all" or x["side"] == side]
        inst = sorted({items[i]["instance"] for i in idx})
        groups = [[i for i in idx if items[i]["instance"] == k] for k in inst]

        def stat(f: Any, groups: list[list[int]] = groups) -> Any:
            return lambda pick: float(f(np.array([r[i] for k in pick for i in groups[k]])))

        n = len(groups)
        out[side] = {
            "clues": len(idx),
            "instances": n,
            "top1": round(float((r[idx] == 1).mean()), 3),
            "top1_ci": bootstrap_ci(stat(lambda x: (x == 1).mean()), n, seed=1),
            "top10": round(float((r[idx] <= 10).mean()), 3),
            "top10_ci": bootstrap_ci(stat(lambda x: (x <= 10).mean()), n, seed=2),
            "median_rank": float(np.median(r[idx])),
            "median_rank_ci": bootstrap_ci(stat(np.median), n, seed=3),
        }
    return out


def run() -> dict[str, Any]:
    items = first_clues()
    encoder = open_encoder(MODEL, cache_path=str(default_paths().embeddings))
    results: dict[str, Any] = {
        "clues": len(items),
        "guessers_right_after_first_clue": round(
            float(np.mean([x["guesser_right_after_it"] for x in items])), 3
        ),
    }
    for texts in ("word", "gloss"):
        index, built = vocabulary(texts, encoder)
        vocab = OpenVocabulary(index, encoder)
        start = time.perf_counter()
        ranks = [vocab.rank_of(x["target"], [x["clue"]]).rank for x in items]
        results[texts] = {
            **figures(items, ranks),
            "vocabulary": len(index),
            "build_seconds": None if built is None else round(built, 1),
            "seconds_per_clue": round((time.perf_counter() - start) / len(items), 4),
            "ranks": ranks,
        }
    return results


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.parse_args(argv)
    try:
        results = run()
    except Skip as err:
        print(f"skipped: {err}")
        return 0
    path = write_result("taboo_vocab", {"words": WORDS, "model": MODEL}, results)
    for texts in ("word", "gloss"):
        for side in ("dev", "frozen", "all"):
            r = results[texts][side]
            print(
                f"{texts:5s} {side:6s} n={r['clues']:3d} top1 {r['top1']} {r['top1_ci']} "
                f"top10 {r['top10']} {r['top10_ci']} median {r['median_rank']} "
                f"{r['median_rank_ci']}"
            )
    print("->", path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
