"""Quality of the co-occurrence backend (default WordNet + MyThes index) on real LLM games.

1. CK-Arena dev logs: statement-level own-word accuracy and civilian-vs-spy ROC AUC (all
   rounds and round 1 only), and the round-1 spy posterior against the LLM players' own
   round-1 votes.
2. Liang et al.'s SpyGame logs (7 games): the same, small n.
3. Chameleon card probes (``benchmarks/_probes.py``, fixed before scoring): top-1 / top-3.
4. A sweep over estimator x beta on the CK-Arena statement figures and the probes.

The main figures use the library's default backend settings; the sweep says whether another
setting would be a better default. Needs ``../shared/data``; skips without it.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks._probes import PROBES, evaluate_probes
from benchmarks._spygame import print_spygame, spygame_block, statement_metrics, statement_table
from benchmarks.common import Skip, default_index, shared_data, write_result

ESTIMATORS = ("conditional", "npmi", "ngd")
BETAS = (10.0, 100.0)
SEED = 7


def _load(path: Any, input_format: str) -> tuple[list[Any], int]:
    from leakage import load_transcripts

    games, errors = load_transcripts([path], input_format=input_format)
    return games, len(errors)


@dataclass
class Reference:
    """The third-party reference data every quality figure is computed on."""

    ck_dir: Path
    liang_dir: Path
    cards_path: Path
    ck: list[Any] = field(default_factory=list)
    ck_bad: int = 0
    liang: list[Any] = field(default_factory=list)
    liang_bad: int = 0
    cards: list[dict[str, Any]] = field(default_factory=list)

    def paths(self) -> dict[str, str]:
        return {
            "ck_arena_logs": str(self.ck_dir),
            "spygame_liang": str(self.liang_dir),
            "cards": str(self.cards_path),
        }


def reference_paths() -> Reference:
    """The paths under ``../shared/data`` (``Skip`` when absent); nothing read yet."""
    return Reference(
        ck_dir=shared_data("ck-arena-dev", "logs"),
        liang_dir=shared_data("spygame-liang", "benchmark"),
        cards_path=shared_data("chameleon-cards", "cards.json"),
    )


def load_reference(ref: Reference) -> Reference:
    ref.ck, ref.ck_bad = _load(ref.ck_dir, "ck-arena")
    if not ref.ck:
        raise Skip(f"no CK-Arena game could be read from {ref.ck_dir}")
    ref.liang, ref.liang_bad = _load(ref.liang_dir, "spygame-liang")
    ref.cards = json.loads(ref.cards_path.read_text(encoding="utf-8"))
    return ref


def main_figures(backend: Any, ref: Reference, *, seed: int = SEED) -> dict[str, Any]:
    """CK-Arena, Liang and card-probe figures for any backend (printed as they come)."""
    results: dict[str, Any] = {}
    results["ck_arena"] = {"games": len(ref.ck), "unreadable_records": ref.ck_bad}
    results["ck_arena"].update(spygame_block(ref.ck, backend, seed=seed, ci=True))
    print_spygame(f"CK-Arena ({len(ref.ck)} games)", results["ck_arena"])

    results["spygame_liang"] = {
        "games": len(ref.liang),
        "unreadable_records": ref.liang_bad,
        "note": "7 games: small n, read as a sanity check, not a measurement",
    }
    results["spygame_liang"].update(spygame_block(ref.liang, backend, seed=seed, ci=False))
    print_spygame(f"Liang SpyGame ({len(ref.liang)} games, small n)", results["spygame_liang"])

    results["chameleon_probes"] = probe_figures(ref.cards, backend)
    return results


def probe_figures(cards: list[dict[str, Any]], backend: Any, label: str = "") -> dict[str, Any]:
    probes = evaluate_probes(cards, backend)
    probes["chance_top1"], probes["chance_top3"] = round(1 / 16, 3), round(3 / 16, 3)
    print(
        f"  Chameleon probes{label} ({probes['probes']} on {probes['cards']} cards): top-1 "
        f"{probes['top1']:.3f}, top-3 {probes['top3']:.3f} (chance 0.062 / 0.188), "
        f"{probes['flat_posteriors']} flat"
    )
    return probes


def run() -> dict[str, Any]:
    from leakage import create_backend
    from leakage.backends.cooccurrence import LocalIndexSource

    ref = reference_paths()
    index = default_index()
    start = time.perf_counter()
    source = LocalIndexSource(index)
    backend = create_backend("cooccurrence", source=source)
    results: dict[str, Any] = {"backend": backend.info()}
    print("quality: co-occurrence backend, library defaults", flush=True)
    ck, cards = load_reference(ref).ck, ref.cards
    results.update(main_figures(backend, ref))

    sweep = []
    for est in ESTIMATORS:
        for beta in BETAS:
            b = create_backend("cooccurrence", source=source, estimator=est, beta=beta)
            table = statement_table(ck, b)
            a = statement_metrics(table, ci=False)
            r1 = statement_metrics(table, round_only=1, ci=False)
            pr = evaluate_probes(cards, b)
            sweep.append(
                {
                    "estimator": est,
                    "beta": beta,
                    "ck_accuracy": a["accuracy"],
                    "ck_auc": a["roc_auc"],
                    "ck_round1_accuracy": r1["accuracy"],
                    "ck_round1_auc": r1["roc_auc"],
                    "probe_top1": pr["top1"],
                    "probe_top3": pr["top3"],
                    "probe_mrr": pr["mean_reciprocal_rank"],
                }
            )
    results["sweep"] = {
        "rows": sweep,
        "notes": [
            "tau (npmi, ngd) scales every log-likelihood of a clue alike, so it changes none "
            "of these rank and sign figures; ngd does not use beta",
            "best_* pick the first row with the highest value (ties keep the earlier row)",
        ],
        "best_ck_auc": max(sweep, key=lambda r: r["ck_auc"]),
        "best_probe_top1": max(sweep, key=lambda r: (r["probe_top1"], r["probe_top3"])),
    }
    print("  sweep (CK-Arena AUC all / round 1, probe top-1 / top-3):")
    for r in sweep:
        print(
            f"    {r['estimator']:<11} beta={r['beta']:<5g} AUC {r['ck_auc']:.3f} / "
            f"{r['ck_round1_auc']:.3f}   probes {r['probe_top1']:.3f} / {r['probe_top3']:.3f}"
        )
    source.close()
    results["seconds"] = round(time.perf_counter() - start, 1)
    params = {
        "index": str(index),
        **ref.paths(),
        "probes": [p._asdict() for p in PROBES],
        "sweep_estimators": ESTIMATORS,
        "sweep_betas": BETAS,
        "bootstrap_seed": SEED,
    }
    path = write_result("quality", params, results)
    print(f"  wrote {path}")
    return results
