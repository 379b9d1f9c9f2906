"""What one game costs the service, by ``max_game_cost``, and how long scoring it takes.

1. Realistic games: the OpenAPI example, the shipped examples (``corpora/examples``), games
   of ``leakage play chameleon`` / ``spygame`` (5 players, and 6 players with 2 spies), and
   the real logs in ``../shared/data`` (CK-Arena dev, SpyGame Liang et al., Codenames guess
   items; skipped without it). For each source: the games' size, their cost before this
   model (characters of turn text x candidates, x 1,000 on the judge and the ensemble) and
   now (``leakage_service.inputs.game_cost``), and how many the default limit refuses.
2. Scoring time, in this process, of games of several shapes on each backend as the service
   creates it (cold: each game has candidates and clue text no earlier game had, so the
   judge encodes every prompt and the co-occurrence backend looks every token up): wall and
   CPU seconds, the cost in units before and now, and seconds per unit now. The clue text
   is sentences of English words drawn by frequency (wordfreq), the density of the real
   statements (about 0.2 judge tokens a byte; the tokens are counted and recorded).
3. The same for the largest games the default limit admits on each backend, in English and
   on the judge and the ensemble also in the text that costs them most per byte (a digit and a
   letter alternating: one token a byte), timed on a game a tenth that size (the time is
   linear in the tokens).

    .venv/bin/python -m benchmarks.service_game_cost [--threads 2] [--backends a,b]
        [--no-survey | --no-timing] [--no-limit]

Keep the machine otherwise idle, or read the CPU seconds: ``load_average`` is recorded.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._games import chameleon_game
from benchmarks.common import REPO, SHARED_DATA, default_index, write_result

BACKENDS = ("cooccurrence", "embedding", "judge", "ensemble")
OLD_FACTOR = {"judge": 1000, "ensemble": 1000}
"""The model before: characters of turn text x candidates, x 1,000 on these backends."""
SEED = 20261124


def old_cost(game: Any, backend: str) -> int:
    chars = sum(len(t.text) for t in game.turns)
    return chars * len(game.candidates) * OLD_FACTOR.get(backend, 1)


# -- 1. realistic games -------------------------------------------------------------------


def _records(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    doc = json.loads(text)
    return doc if isinstance(doc, list) else [doc]


def _played(kind: str, *extra: str) -> list[Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "games.jsonl"
        command = [sys.executable, "-m", "leakage", "play", kind, "--games", "10", "--seed", "1"]
        subprocess.run(
            [*command, *extra, "--out", str(out)], check=True, capture_output=True, timeout=600
        )
        return _records(out)


def sources() -> dict[str, list[Any]]:
    """Records by source; the shared data's sources only where it is present."""
    from leakage_service.schemas import EXAMPLE_TRANSCRIPT

    examples = sorted((REPO / "corpora" / "examples").glob("*.json*"))
    out: dict[str, list[Any]] = {
        "OpenAPI example": [EXAMPLE_TRANSCRIPT],
        "corpora/examples": [r for p in examples for r in _records(p)],
        "leakage play chameleon": _played("chameleon"),
        "leakage play spygame": _played("spygame"),
        "leakage play spygame, 6 players, 2 spies": _played(
            "spygame", "--players", "6", "--spies", "2", "--roles-known"
        ),
    }
    shared = {
        "CK-Arena dev logs": sorted(glob.glob(str(SHARED_DATA / "ck-arena-dev/logs/*.json"))),
        "SpyGame (Liang et al.)": sorted(
            glob.glob(str(SHARED_DATA / "spygame-liang/benchmark/**/*.json"), recursive=True)
        ),
        "Codenames guess items": [str(SHARED_DATA / "codenames-guess-val/games.jsonl")],
    }
    for name, paths in shared.items():
        if paths and all(Path(p).exists() for p in paths):
            out[name] = [r for p in paths for r in _records(Path(p))]
    return out


def survey(judge: Any) -> list[dict[str, Any]]:
    """Each source's games: sizes, cost before and now, refused by the default limit. Now on
    the judge: before it is loaded (bytes) and after (``judge``'s tokens counted too)."""
    from leakage.transcripts import convert_record
    from leakage_service import Settings
    from leakage_service.inputs import game_cost

    limit = Settings.model_fields["max_game_cost"].default
    rows = []
    for name, records in sources().items():
        games = [convert_record(r, index=i) for i, r in enumerate(records)]
        row: dict[str, Any] = {"source": name, "games": len(games)}
        for what, values in (
            ("turns", [len(g.turns) for g in games]),
            ("text_bytes", [sum(len(t.text.encode()) for t in g.turns) for g in games]),
            ("candidates", [len(g.candidates) for g in games]),
        ):
            row[what] = {"median": statistics.median(values), "max": max(values)}
        for backend in ("cooccurrence", "judge"):  # embedding as co-occurrence, ensemble as judge
            old = [old_cost(g, backend) for g in games]
            new = [game_cost(g, backend).total for g in games]
            row[backend] = {
                "before_max": max(old),
                "before_refused": sum(c > limit for c in old),
                "now_max": max(new),
                "now_refused": sum(c > limit for c in new),
            }
        tokens = [game_cost(g, "judge", judge).total for g in games]
        row["judge"]["now_with_tokens_max"] = max(tokens)
        row["judge"]["now_with_tokens_refused"] = sum(c > limit for c in tokens)
        rows.append(row)
    return rows


# -- 2. timing ------------------------------------------------------------------------------


class Text:
    """English words drawn by frequency, never the same sentence twice."""

    def __init__(self, rng: random.Random) -> None:
        from wordfreq import top_n_list, zipf_frequency

        self.rng = rng
        self.words = [w for w in top_n_list("en", 20_000) if w.isalpha() and len(w) > 1]
        self.weights = [10 ** zipf_frequency(w, "en") for w in self.words]
        self.fresh = iter(self.words[3000:])
        """Candidate words, each used once (rarer words: no prompt the judge has seen)."""

    def sentence(self, size: int) -> str:
        out: list[str] = []
        while sum(len(w) + 1 for w in out) < size:
            out += self.rng.choices(self.words, self.weights, k=8)
        return " ".join(out)[:size].strip().capitalize()

    def hostile(self, size: int) -> str:
        """A digit and a letter alternating: one judge token a byte, the most bytes allow."""
        return "".join(
            self.rng.choice("0123456789" if i % 2 else "abcdefghijklmnopqrstuvwxyz")
            for i in range(size)
        )

    def candidates(self, k: int) -> list[str]:
        return [next(self.fresh) for _ in range(k)]


def chameleon(gid: str, candidates: list[str], clues: list[str]) -> dict[str, Any]:
    return chameleon_game(gid, candidates, clues)


def spygame(gid: str, candidates: list[str], clues: list[str]) -> dict[str, Any]:
    civ, spy, *distractors = candidates
    players = [{"id": "p1", "role": "spy", "word": spy}] + [
        {"id": f"p{i}", "role": "civilian", "word": civ} for i in range(2, 6)
    ]
    return {
        "format": "leakage.transcript/1",
        "game": "spygame",
        "id": gid,
        "words": {"civilian": civ, "spy": spy},
        "distractors": distractors,
        "players": players,
        "turns": [
            {"player": f"p{i % 5 + 1}", "text": c, "round": i // 5 + 1} for i, c in enumerate(clues)
        ],
    }


SHAPES: list[tuple[str, str, int, int, int]] = [
    # (name, game, candidates, turns, bytes a turn; 0: one word)
    ("Chameleon 16 cands x 4 one-word clues", "chameleon", 16, 4, 0),
    ("Chameleon 32 cands x 4 one-word clues", "chameleon", 32, 4, 0),
    ("Chameleon 16 cands x 4 clues of 50 B", "chameleon", 16, 4, 50),
    ("SpyGame 2 cands x 11 statements of 80 B", "spygame", 2, 11, 80),
    ("SpyGame 4 cands x 15 statements of 60 B", "spygame", 4, 15, 60),
]


def create(name: str, threads: int) -> Any:
    from leakage.backends import create_backend

    if name == "cooccurrence":
        return create_backend(name, index=default_index())
    if name == "embedding":
        return create_backend(name, disk_cache=False, threads=threads)
    if name == "judge":
        return create_backend(name, threads=threads)
    return create_backend(name, index=default_index(), threads=threads)


def time_game(backend: Any, name: str, doc: dict[str, Any]) -> dict[str, Any]:
    from leakage.scoring import score_transcript
    from leakage.transcripts import parse_transcript
    from leakage_service import Settings
    from leakage_service.inputs import game_cost

    limit = Settings.model_fields["max_game_cost"].default
    game = parse_transcript(doc)
    cost = game_cost(game, name, backend)  # as the service checks it once the backend is loaded
    wall, cpu = time.perf_counter(), time.process_time()
    score_transcript(game, backend)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "candidates": len(game.candidates),
        "turns": len(game.turns),
        "text_bytes": cost.text_bytes,
        "judge_tokens": cost.tokens,
        "units_before": old_cost(game, name) // OLD_FACTOR.get(name, 1),
        "refused_before": old_cost(game, name) > limit,
        "units_now": cost.units,
        "refused_now": cost.total > limit,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "cpu_ms_per_unit_now": round(1000 * cpu / cost.units, 3),
        "load_average_1_min": round(os.getloadavg()[0], 2),
    }


def largest(name: str) -> tuple[int, int]:
    """(candidates, bytes a turn of 10) of a SpyGame at the default limit on ``name``."""
    from leakage.backends import cost_factor
    from leakage_service import Settings
    from leakage_service.inputs import PROMPT_COST

    units = Settings.model_fields["max_game_cost"].default // cost_factor(name)
    k = 1000 if name in ("cooccurrence", "embedding") else 2
    per_turn = (units - 12 * k) // k - PROMPT_COST  # candidate words: at most 12 bytes each
    return k, min(per_turn // 10, 2000)


def timing(names: list[str], threads: int, *, at_limit: bool) -> dict[str, Any]:
    import torch

    torch.set_num_threads(threads)
    rng = random.Random(SEED)
    text = Text(rng)
    out: dict[str, Any] = {}
    for name in names:
        start = time.perf_counter()
        backend = create(name, threads)
        backend.loglik(["warm up"], ["one", "two"], category="Things")
        rows: dict[str, Any] = {"loaded_s": round(time.perf_counter() - start, 1)}
        make = {"chameleon": chameleon, "spygame": spygame}
        for label, kind, k, turns, size in SHAPES:
            cands = text.candidates(k)
            clues = [
                text.sentence(size) if size else text.rng.choice(text.words) for _ in range(turns)
            ]
            rows[label] = time_game(backend, name, make[kind](label, cands, clues))
            print(f"  {name:12s} {label:42s} {rows[label]}", flush=True)
        if at_limit:
            k, size = largest(name)
            cands = text.candidates(k)
            label = f"at the limit: SpyGame {k} cands x 10 statements of {size} B"
            rows[label] = time_game(
                backend, name, spygame(label, cands, [text.sentence(size) for _ in range(10)])
            )
            print(f"  {name:12s} {label:42s} {rows[label]}", flush=True)
            if name in ("judge", "ensemble"):
                label = f"hostile text: 2 cands x 10 of {size // 10} B (x 10: at the byte limit)"
                hostile = [text.hostile(size // 10) for _ in range(10)]
                doc = spygame(label, text.candidates(2), hostile)
                rows[label] = time_game(backend, name, doc)
                print(f"  {name:12s} {label:42s} {rows[label]}", flush=True)
        out[name] = rows
        del backend
    return out


def run(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.service_game_cost")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--no-survey", action="store_true", help="the timing only")
    parser.add_argument("--no-timing", action="store_true", help="the survey only")
    parser.add_argument("--no-limit", action="store_true", help="skip the games at the limit")
    args = parser.parse_args(argv)
    names = [n for n in args.backends.split(",") if n]
    results: dict[str, Any] = {}
    if not args.no_survey:
        results["survey"] = survey(create("judge", args.threads))
        for row in results["survey"]:
            print(json.dumps(row), flush=True)
    if not args.no_timing:
        results["timing"] = timing(names, args.threads, at_limit=not args.no_limit)
    path = write_result(
        "service_game_cost",
        {"threads": args.threads, "backends": names, "seed": SEED, "shapes": SHAPES},
        results,
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    run()
