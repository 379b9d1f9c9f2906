"""The listener through the library with the LLM client kind ``ctranslate2`` (int8) against
the torch listener (fp32): CK-Arena figures, speed, and the Codenames frozen top-1.

``CT2_FORCE_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2
.venv/bin/python -m benchmarks.ct2_listener [--games N] [--repeats R] [--no-figures]
[--no-codenames] [--backend listener|ensemble] [--out PATH]``

``--backend ensemble`` measures the shipped ensemble instead, its LLM members on each runtime
(each side pooled with the shipped fit for its rows); results in ``ct2_ensemble.json``.

Unlike ``benchmarks/quantized.py`` (which runs each runtime under a ``JudgeBackend`` of its
own), both sides here are what a user gets: ``create_backend("listener", precision="fp32")``
and ``create_backend("listener", client_kind="ctranslate2")``, scored with the library's
calls (``leakage.scoring.prepare`` + ``benchmarks._spygame.spygame_block`` for the figures, as
``benchmarks/adversary.py``'s ``ck_arena`` does; ``leakage.score_many`` for the speed, as
``leakage score -b listener`` does; ``benchmarks.adversary.Table`` for the Codenames items).
torch is held to fp32 (the target CPU has no bf16); set the ISA variables above to hold both
runtimes to AVX2 (they are recorded).

1. Speed: games/s of ``score_many`` over the first ``--games`` dev logs, the two clients
   interleaved ``--repeats`` times (the machine is shared: compare within a round), with the
   load average before and after each.
2. Figures: all 227 dev games: own-word accuracy and civilian-vs-spy AUC (all rounds, round 1),
   P(spy) after round 1 as an AUC, and their seconds.
3. Codenames: the listener's top-1 (and top-3, MRR) on the frozen and dev items.

Writes ``benchmarks/results/ct2_listener.json`` (``ct2_ensemble.json``; or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from benchmarks.common import machine, shared_data

ISA_VARIABLES = ("CT2_FORCE_CPU_ISA", "ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA")
CLIENTS = {
    "torch fp32": {"precision": "fp32"},
    "ctranslate2 int8": {"client_kind": "ctranslate2"},
}
ENSEMBLE_CLIENTS = {
    # the ensemble routes precision to every member that loads a model, and each LLM member
    # its own client kind; each side pools with the shipped fit for its rows
    "torch fp32": {"precision": "fp32"},
    "ctranslate2 int8": {
        "listener": {"client_kind": "ctranslate2"},
        "judge": {"client_kind": "ctranslate2"},
    },
}
SEED = 0


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def backends(kind: str = "listener") -> dict[str, Any]:
    from leakage import create_backend

    out = {}
    for name, options in (CLIENTS if kind == "listener" else ENSEMBLE_CLIENTS).items():
        start = time.perf_counter()
        out[name] = create_backend(kind, device="cpu", **options)
        print(f"{name}: loaded in {time.perf_counter() - start:.1f} s", flush=True)
    return out


def speed(members: dict[str, Any], games: list[Any], repeats: int) -> list[dict[str, Any]]:
    from leakage import score_many

    for backend in members.values():
        list(score_many(games[-1:], backend))  # warm: kernels, buffers
    runs = []
    for round_ in range(1, repeats + 1):
        for name, backend in members.items():
            before = _load()
            start = time.perf_counter()
            reports = list(score_many(games, backend))
            seconds = time.perf_counter() - start
            runs.append(
                {
                    "round": round_,
                    "client": name,
                    "games": len(reports),
                    "seconds": round(seconds, 2),
                    "games_per_s": round(len(reports) / seconds, 3),
                    "load_before": before,
                    "load_after": _load(),
                }
            )
            print(f"  round {round_} {name}: {runs[-1]}", flush=True)
        base = next(r for r in runs if r["round"] == round_ and r["client"] == "torch fp32")
        for r in runs:
            if r["round"] == round_:
                r["ratio_to_torch"] = round(r["games_per_s"] / base["games_per_s"], 3)
    return runs


def figures(members: dict[str, Any], games: list[Any]) -> dict[str, Any]:
    from benchmarks._spygame import print_spygame, spygame_block
    from leakage.scoring import prepare

    out: dict[str, Any] = {}
    for name, backend in members.items():
        before = _load()
        start = time.perf_counter()
        prepare(games, backend)
        block = spygame_block(games, backend, seed=SEED, ci=True)
        seconds = time.perf_counter() - start
        out[name] = {
            **block,
            "seconds": round(seconds, 1),
            "load_before": before,
            "load_after": _load(),
        }
        print_spygame(f"CK-Arena dev, {name} ({len(games)} games, {seconds:.0f} s)", block)
    return out


def codenames(members: dict[str, Any]) -> dict[str, Any]:
    from benchmarks.adversary import Table, load_codenames, report
    from leakage.calibration import dev_frozen_split

    table = Table("codenames", load_codenames(shared_data("codenames-guess-val", "games.jsonl")))
    dev_ids, frozen_ids = dev_frozen_split(table.ids)
    at = {g: i for i, g in enumerate(table.ids)}
    sides = {"dev": [at[g] for g in dev_ids], "frozen": [at[g] for g in frozen_ids]}
    for name, backend in members.items():
        table.score(name, backend)
        print(f"  codenames {name}: {table.seconds[name]} s", flush=True)
    out = report(table, sides)
    out["seconds"] = table.seconds
    return out


def run(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ct2_listener")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--no-figures", action="store_true")
    parser.add_argument("--no-codenames", action="store_true")
    parser.add_argument(
        "--backend",
        choices=("listener", "ensemble"),
        default="listener",
        help="the listener alone, or the shipped ensemble (its LLM members on each runtime)",
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.out is None:
        stem = "ct2_listener" if args.backend == "listener" else "ct2_ensemble"
        args.out = Path(__file__).parent / "results" / f"{stem}.json"
    from leakage import load_transcripts
    from leakage.runtime import cpu_supports_bf16

    logs = shared_data("ck-arena-dev", "logs")
    games, errors = load_transcripts([logs], input_format="ck-arena")
    if errors:
        raise ValueError(f"{logs}: {len(errors)} unreadable records")
    members = backends(args.backend)
    results: dict[str, Any] = {
        "machine": machine(),
        "backend": args.backend,
        "bf16_native": cpu_supports_bf16(),
        "isa": {k: os.environ.get(k, "native") for k in ISA_VARIABLES},
        "clients": {n: b.info() for n, b in members.items()},
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }
    print(f"speed: first {args.games} of {len(games)} games, {args.repeats} rounds", flush=True)
    results["speed"] = speed(members, games[: args.games], args.repeats)
    if not args.no_figures:
        results["figures"] = figures(members, games)
    if not args.no_codenames:
        results["codenames"] = codenames(members)
    results["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return results


if __name__ == "__main__":
    run()
