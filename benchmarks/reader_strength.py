"""The reader's strength on the shipped reference set (``leakage.reader``).

Each shipped backend's top-1 of the secret after all clues on ``attribute-cards`` (8-word
clembench guesswhat cards, the answerer's yes/no answers as clues; chance 1/8), written to
``leakage/data/reader_strength.json``, from which reports say how strong the reader behind
their figures is (``leakage.reader.lower_bound_note``), and to
``benchmarks/results/reader_strength.json``.

``--write-reference`` first rebuilds the reference set itself
(``leakage/data/reference_attribute_cards.json``) from ``../shared/data/clembench-dev``: the
guesswhat episodes of the frozen clembench instances (``instance_side``: no fit of the project
was chosen on them) whose log names the target and has an answered question, read by the
``clembench-guesswhat`` adapter. Episodes from *clembench-runs* by the clembench authors
(clp-research), github clembench/clembench-runs, licensed CC BY 4.0. Changes: episodes
selected, converted to leakage.transcript/1.

``python -m benchmarks.reader_strength [--write-reference] [--backends a,b]``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import Skip, clembench_dev, write_result
from leakage.backends import create_backend
from leakage.reader import REFERENCE_SETS, STRENGTH_FILE, measure_strength, reference_games
from leakage.transcripts import ChameleonTranscript, load_transcripts
from leakage.transcripts.adapters.clembench import instance_side

DATA = Path(__file__).resolve().parents[1] / "leakage" / "data"
BACKENDS = ("ensemble", "answers", "cooccurrence", "embedding", "listener", "judge")
ATTRIBUTION = (
    "Episodes from clembench-runs by the clembench authors (clp-research), github "
    "clembench/clembench-runs, licensed CC BY 4.0. Changes: episodes selected, converted to "
    "leakage.transcript/1. Benchmark: Chalamalasetti et al. 2023, EMNLP."
)


def write_reference() -> Path:
    root, rows = clembench_dev("guesswhat")
    out = []
    for row in rows:
        if instance_side("guesswhat", row["experiment"], row["episode"]) != "frozen":
            continue
        path = root / "raw" / f"{row['model']}__{row['experiment']}__{row['episode']}.json"
        (t,), _ = load_transcripts([path], input_format="clembench-guesswhat")
        assert isinstance(t, ChameleonTranscript)
        if t.secret is None or not t.meta["qa"]:
            continue
        meta = {
            **t.meta,
            "experiment": row["experiment"],
            "episode": row["episode"],
            "clembench_version": "v2.0",
            "licence": "CC-BY-4.0",
            "attribution": ATTRIBUTION,
        }
        out.append(t.model_copy(update={"meta": meta}).model_dump(mode="json"))
    path = DATA / REFERENCE_SETS["attribute-cards"]
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write-reference", action="store_true")
    ap.add_argument("--backends", default=",".join(BACKENDS))
    args = ap.parse_args(argv)
    if args.write_reference:
        try:
            print("wrote", write_reference())
        except Skip as err:
            print(f"skipped: {err}")
            return 0
    games = reference_games()
    readers: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    today = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d")
    for name in args.backends.split(","):
        backend = create_backend(name)
        start = time.perf_counter()
        strength = measure_strength(backend, games)
        seconds[name] = round((time.perf_counter() - start) / len(games), 4)
        strength.measured = f"{today}, this repository's default precision on a 2-core CPU"
        readers[name] = strength.model_dump()
        print(f"{name:12s} top1 {strength.top1} {strength.top1_ci} of {strength.games}")
    doc = {"format": "leakage.reader-strength/1", "command": "python -m benchmarks.reader_strength"}
    (DATA / STRENGTH_FILE).write_text(
        json.dumps({**doc, "readers": readers}, indent=2) + "\n", encoding="utf-8"
    )
    write_result("reader_strength", {"backends": list(readers)}, {**readers, "seconds": seconds})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
