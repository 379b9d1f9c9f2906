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
from typing import Any

from benchmarks._common import Skip, default_index, shared_data, write_result
from benchmarks._probes import PROBES, evaluate_probes
from benchmarks._spygame import spy_round1, statement_metrics, statement_table

ESTIMATORS = ("conditional", "npmi", "ngd")
BETAS = (10.0, 100.0)
SEED = 7


def _load(path: Any, input_format: str) -> tuple[list[Any], int]:
    from leakage import load_transcripts

    games, errors = load_transcripts([path], input_format=input_format)
    return games, len(errors)


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _spygame_block(games: list[Any], backend: Any, *, seed: int, ci: bool) -> dict[str, Any]:
    table = statement_table(games, backend)
    return {
        "statements_all_rounds": statement_metrics(table, seed=seed, ci=ci),
        "statements_round1": statement_metrics(table, round_only=1, seed=seed, ci=ci),
        "spy_after_round1": spy_round1(games, backend),
        "spy_after_round1_marginalised": spy_round1(games, backend, spy_assignment="marginalise"),
    }


def _print_spygame(label: str, block: dict[str, Any]) -> None:
    a, r1 = block["statements_all_rounds"], block["statements_round1"]
    print(
        f"  {label}: own-word accuracy {_fmt(a['accuracy'])} (round 1: {_fmt(r1['accuracy'])}), "
        f"civilian-vs-spy AUC {_fmt(a['roc_auc'])} (round 1: {_fmt(r1['roc_auc'])}) over "
        f"{a['statements']} statements, {a['tie_fraction']:.0%} tied"
    )
    s = block["spy_after_round1"]
    v = s["on_games_with_votes"]
    print(
        f"    spy after round 1: top suspect is a spy in {_fmt(s['posterior_top1_hit'])} of "
        f"{s['games']} games (chance {_fmt(s['posterior_top1_chance'])}); top-{{n spies}} set "
        f"holds one in {_fmt(s['posterior_top_set_hit'])} (chance "
        f"{_fmt(s['posterior_top_set_chance'])})"
    )
    print(
        f"    on the {s['games_with_round1_votes']} games with votes "
        f"({s['games_without_votes_skipped']} without, skipped): posterior top-1 "
        f"{_fmt(v['posterior_top1_hit'])}; civilian votes hit a spy {_fmt(v['civilian_vote_hit'])}"
        f" vs the posterior in the voter's seat {_fmt(v['posterior_in_civilian_voter_seat_hit'])}"
        f" (chance {_fmt(v['civilian_vote_chance'])}); plurality target "
        f"{_fmt(v['plurality_target_hit'])}"
    )
    m = block["spy_after_round1_marginalised"]
    print(
        f"    word assignment marginalised: top-1 {_fmt(m['posterior_top1_hit'])}, voter's seat "
        f"{_fmt(m['on_games_with_votes']['posterior_in_civilian_voter_seat_hit'])}"
    )


def run() -> dict[str, Any]:
    from leakage import create_backend
    from leakage.backends.cooccurrence import LocalIndexSource

    ck_dir = shared_data("ck-arena-dev", "logs")
    liang_dir = shared_data("spygame-liang", "benchmark")
    cards_path = shared_data("chameleon-cards", "cards.json")
    index = default_index()
    start = time.perf_counter()
    source = LocalIndexSource(index)
    backend = create_backend("cooccurrence", source=source)
    results: dict[str, Any] = {"backend": backend.info()}
    print("quality: co-occurrence backend, library defaults", flush=True)

    ck, ck_bad = _load(ck_dir, "ck-arena")
    if not ck:
        raise Skip(f"no CK-Arena game could be read from {ck_dir}")
    results["ck_arena"] = {"games": len(ck), "unreadable_records": ck_bad}
    results["ck_arena"].update(_spygame_block(ck, backend, seed=SEED, ci=True))
    _print_spygame(f"CK-Arena ({len(ck)} games)", results["ck_arena"])

    liang, liang_bad = _load(liang_dir, "spygame-liang")
    results["spygame_liang"] = {
        "games": len(liang),
        "unreadable_records": liang_bad,
        "note": "7 games: small n, read as a sanity check, not a measurement",
    }
    results["spygame_liang"].update(_spygame_block(liang, backend, seed=SEED, ci=False))
    _print_spygame(f"Liang SpyGame ({len(liang)} games, small n)", results["spygame_liang"])

    cards = json.loads(cards_path.read_text(encoding="utf-8"))
    probes = evaluate_probes(cards, backend)
    probes["chance_top1"], probes["chance_top3"] = round(1 / 16, 3), round(3 / 16, 3)
    results["chameleon_probes"] = probes
    print(
        f"  Chameleon probes ({probes['probes']} on {probes['cards']} cards): top-1 "
        f"{probes['top1']:.3f}, top-3 {probes['top3']:.3f} (chance 0.062 / 0.188), "
        f"{probes['flat_posteriors']} flat"
    )

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
        "ck_arena_logs": str(ck_dir),
        "spygame_liang": str(liang_dir),
        "cards": str(cards_path),
        "probes": [p._asdict() for p in PROBES],
        "sweep_estimators": ESTIMATORS,
        "sweep_betas": BETAS,
        "bootstrap_seed": SEED,
    }
    path = write_result("quality", params, results)
    print(f"  wrote {path}")
    return results
