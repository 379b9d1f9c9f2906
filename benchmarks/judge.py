"""The LLM judge and the ensemble: speed with each local model, and the quality table.

Speed (no reference data needed):

1. Likelihood scoring, ``LocalLM.score_many`` with the judge's own prompts: 16 candidates of a
   card x 4 clues = 64 (secret, clue) pairs. *New*: each repeat on a card whose prompts the
   model has not encoded yet; *seen*: the same card again (prompt states reused). Medians.
2. ``score_many`` over Chameleon games of 16 candidates and 4 counted clues (5 players, the
   synthetic games of ``benchmarks/_games.py``) with ``--backend judge`` for each local
   model and with ``--backend ensemble`` (shipped weights: co-occurrence + embedding + judge):
   one game per card, every card new (28 games), then 28 other games on the same cards;
   three times, each on a fresh backend, medians reported.

3. CK-Arena-style games (needs ``../shared/data``; skipped without it): the first
   ``CK_GAMES`` dev logs (six players, the word pair as the two candidates, sentence
   statements) through ``score_transcript`` with the Gemma judge, in games/s against the
   ``TARGET_CK_GAMES_PER_S`` target, on each path the CPU allows: fp32 with the exact
   normaliser, fp32 with the shortlist normaliser, and bf16 only where the CPU has native
   bf16. Each figure records the precision and normaliser it used, whether the CPU has bf16
   and the load average around it (the machine may be shared). The shortlist path's error is
   measured against the exact one on the same statements: the own-word log-odds (logit of the
   speaker's word's probability), own-word accuracy and civilian-vs-spy ROC AUC.

4. The listener direction on CK-Arena games (needs ``../shared/data``): the first
   ``CK_LISTENER_GAMES`` dev logs, all rounds, through ``score_many`` (the library's path: the
   backend's ``prepare`` scores every game's prompts in length-sorted batches, then ``loglik``
   per game) with ``create_backend("listener")``, on fp32 and on bf16 where native; beside it
   the same games one ``score_transcript`` at a time (no ``prepare``: one ``score_many`` of the
   model per game). Each figure records the precision, whether the CPU has bf16, the load
   average, own-word accuracy and civilian-vs-spy AUC, and the decoder tokens the games cost
   (every distinct prompt once, plus the candidates' later tokens), so that games/s can be
   read as tokens/s. Beside them, the ceiling this CPU puts on any such reader: the decoder's
   arithmetic per token (2 x its parameters outside the token embedding, attention over these
   short prompts left out, so an underestimate) and the rate this CPU's matrix product runs at
   on the decoder's largest layer shape, in the model's precision with its threads
   (``_matmul_gflops``); their ratio is the most tokens/s, hence games/s, the model could reach
   if nothing but its matrix products took time.

Quality (needs ``../shared/data``; skipped without it):

5. CK-Arena dev logs, every statement an item (candidates: the pair, truth: the speaker's
   word). For each backend alone and the shipped ensemble: own-word accuracy and
   civilian-vs-spy ROC AUC over all statements (bootstrap over games); log loss, top-1 and
   ECE on the held-out games of ``leakage calibrate``'s default split (seed 0, 30%) both as
   the backend says (T = 1) and with a temperature fitted on the training games; the ensemble
   refitted on that split as ``leakage calibrate`` does.
6. The card probes (``benchmarks/_probes.py``): top-1, top-3, log loss, ECE of the posterior.
7. Judges vs judges: Spearman correlation between CK-Arena's judge-LLM relevance score of each
   statement and each backend's log-odds of the speaker's own word.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks._games import clue_pools, generate_games, load_cards
from benchmarks._stats import bootstrap_ci, own_word_accuracy, roc_auc
from benchmarks.common import Skip, Stopwatch, default_index, shared_data, write_result

MODELS = ("gemma-3-270m", "smollm2-135m")
REPEATS = 5
GAMES_PER_PASS = 28
GAME_REPEATS = 3
SEED = 11
TARGET_JUDGE_GAMES_PER_S = 20.0
CK_GAMES = 20
TARGET_CK_GAMES_PER_S = 2.0
CK_LISTENER_GAMES = 40


def _median_ms(values: list[float]) -> float:
    return round(1000 * float(np.median(values)), 1)


def pair_speed(model: str) -> dict[str, Any]:
    from leakage.backends.judge import JudgeBackend, open_llm

    llm = open_llm(model)
    judge = JudgeBackend(llm)
    cards = load_cards()
    pools = clue_pools(cards)

    def pairs(card: dict[str, Any]) -> tuple[list[str], list[str]]:
        words = list(card["words"])
        prompts = [judge._prompt_for(w, card["category"], sentences=False) for w in words]
        clues = [judge.clue_template.format(clue=c) for c in pools[words[0]][:4]]
        return prompts, clues

    llm.score_many(*pairs(cards[-1]))  # warm-up: kernels, buffers
    new, seen = [], []
    for card in cards[:REPEATS]:
        prompts, clues = pairs(card)
        with Stopwatch() as sw:
            llm.score_many(prompts, clues)
        new.append(sw.seconds)
    prompts, clues = pairs(cards[0])
    for _ in range(REPEATS):
        with Stopwatch() as sw:
            llm.score_many(prompts, clues)
        seen.append(sw.seconds)
    n_pairs = len(prompts) * len(clues)
    return {
        "model": llm.info(),
        "pairs": n_pairs,
        "new_ms_median": _median_ms(new),
        "new_pairs_per_s": round(n_pairs / float(np.median(new))),
        "seen_ms_median": _median_ms(seen),
        "seen_pairs_per_s": round(n_pairs / float(np.median(seen))),
    }


def _one_game_per_card(seed: int) -> list[Any]:
    """``GAMES_PER_PASS`` games of 5 players (4 counted clues), each on a different card."""
    games, _ = generate_games(400, seed, n_players=5)
    chosen: dict[str, Any] = {}
    for g in games:
        chosen.setdefault(g.category + "|" + ",".join(g.candidates), g)
    out = list(chosen.values())[:GAMES_PER_PASS]
    if len(out) < GAMES_PER_PASS:
        raise RuntimeError(f"only {len(out)} distinct cards in the synthetic games")
    return out


def game_speed(backend_name: str, **options: Any) -> dict[str, Any]:
    """Median over ``GAME_REPEATS`` fresh backends (so that every card is new again) of the
    new-card pass and the seen-card pass that follows it."""
    from leakage import create_backend, score_many

    first, second = _one_game_per_card(SEED), _one_game_per_card(SEED + 1)
    new, seen = [], []
    for _ in range(GAME_REPEATS):
        backend = create_backend(backend_name, **options)
        list(score_many(_one_game_per_card(SEED + 2)[:1], backend))  # model load, kernels
        with Stopwatch() as sw:
            reports = list(score_many(first, backend))
        new.append(len(first) / sw.seconds)
        with Stopwatch() as sw:
            reports += list(score_many(second, backend))
        seen.append(len(second) / sw.seconds)
    return {
        "backend": backend_name,
        "options": {k: str(v) for k, v in options.items()},
        "games_per_pass": len(first),
        "candidates": len(first[0].candidates),
        "counted_clues": sorted({sum(s.counted for s in r.steps) for r in reports}),
        "repeats": GAME_REPEATS,
        "new_cards_games_per_s": round(float(np.median(new)), 2),
        "new_cards_games_per_s_all": [round(x, 2) for x in new],
        "seen_cards_games_per_s": round(float(np.median(seen)), 2),
        "seen_cards_games_per_s_all": [round(x, 2) for x in seen],
    }


def _ck_arena_paths() -> list[tuple[str, str]]:
    """(precision, normaliser) pairs to time: bf16 only where it is native."""
    from leakage.runtime import cpu_supports_bf16

    paths = [("fp32", "exact"), ("fp32", "shortlist")]
    if cpu_supports_bf16():
        paths.append(("bf16", "exact"))
    return paths


def _own_word_figures(steps: list[Any]) -> dict[str, Any]:
    p = np.clip(np.array([s.secret_probability for s in steps]), 1e-12, 1 - 1e-12)
    log_odds = np.log(p) - np.log1p(-p)
    civ = np.array([s.role != "spy" for s in steps])
    d = np.where(civ, log_odds, -log_odds)  # ll(civilian word) - ll(spy word)
    return {
        "log_odds": log_odds,
        "accuracy": round(own_word_accuracy(d, civ), 3),
        "roc_auc": round(roc_auc(d, civ), 3),
    }


def ck_arena_speed(model: str = "gemma-3-270m", n_games: int = CK_GAMES) -> dict[str, Any]:
    """Games/s of the judge on CK-Arena games, on each path; see the module docstring."""
    import os

    from leakage import create_backend, load_transcripts, score_transcript
    from leakage.runtime import cpu_supports_bf16

    ck_dir = shared_data("ck-arena-dev", "logs")
    transcripts, _ = load_transcripts([ck_dir], input_format="ck-arena")
    games, warm = transcripts[:n_games], transcripts[-1]
    statements = sum(len(t.turns) for t in games)
    runs: list[dict[str, Any]] = []
    figures: dict[tuple[str, str], dict[str, Any]] = {}
    for precision, normaliser in _ck_arena_paths():
        backend = create_backend("judge", model=model, precision=precision, normaliser=normaliser)
        score_transcript(warm, backend)  # kernels, buffers, the shortlist's factors
        load_before = [round(x, 2) for x in os.getloadavg()]
        with Stopwatch() as sw:
            reports = [score_transcript(t, backend) for t in games]
        figures[(precision, normaliser)] = _own_word_figures([s for r in reports for s in r.steps])
        rate = len(games) / sw.seconds
        runs.append(
            {
                "precision": backend.client.info()["precision"],
                "normaliser": normaliser,
                "games_per_s": round(rate, 3),
                "seconds": round(sw.seconds, 1),
                "target_met": rate >= TARGET_CK_GAMES_PER_S,
                "load_average_before": load_before,
                "load_average_after": [round(x, 2) for x in os.getloadavg()],
                "own_word_accuracy": figures[(precision, normaliser)]["accuracy"],
                "roc_auc": figures[(precision, normaliser)]["roc_auc"],
            }
        )
        del backend
    exact = figures[("fp32", "exact")]["log_odds"]
    fast = figures[("fp32", "shortlist")]["log_odds"]
    error = np.abs(fast - exact)
    return {
        "model": model,
        "bf16_native": cpu_supports_bf16(),
        "games": len(games),
        "statements": statements,
        "target_games_per_s": TARGET_CK_GAMES_PER_S,
        "runs": runs,
        "shortlist_vs_exact_log_odds": {
            "mean_abs": round(float(error.mean()), 4),
            "max_abs": round(float(error.max()), 4),
            "sign_changes": int((np.sign(fast) != np.sign(exact)).sum()),
            "exact_log_odds_sd": round(float(exact.std()), 3),
        },
    }


def _listener_tokens(backend: Any, transcripts: list[Any]) -> int:
    """Decoder tokens the listener's ``prepare`` runs for these games: every distinct prompt
    (BOS included) once, plus each candidate's tokens after the first."""
    from leakage.scoring import ScoreOptions, game_input

    tok = backend.client.tokenizer
    wanted: dict[str, set[str]] = {}
    for t in transcripts:
        inp = game_input(t, ScoreOptions())
        prompts, conts = backend._listener_requests(inp.clues, list(inp.candidates), inp.category)
        for p in prompts:
            wanted.setdefault(p, set()).update(conts)
    total = 0
    for p, conts in wanted.items():
        total += 1 + len(tok(p, add_special_tokens=False)["input_ids"])
        total += sum(max(len(tok(c, add_special_tokens=False)["input_ids"]) - 1, 0) for c in conts)
    return total


def _matmul_gflops(rows: int, inner: int, outer: int, dtype: Any, seconds: float = 2.0) -> float:
    """GFLOP/s of ``torch.matmul`` on (rows x inner) @ (inner x outer) in ``dtype`` with torch's
    current threads: the best a decoder layer of that shape can run on this CPU."""
    import torch

    a = torch.randn(rows, inner).to(dtype)
    b = torch.randn(inner, outer).to(dtype)
    torch.matmul(a, b)  # kernels
    n, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        torch.matmul(a, b)
        n += 1
    return 2.0 * rows * inner * outer * n / elapsed / 1e9


def _decoder_ceiling(backend: Any, tokens_per_game: float, tokens_per_s: float) -> dict[str, Any]:
    """The listener's arithmetic against this CPU's matrix-product rate; see the docstring."""
    import torch

    model = backend.client.hf_model
    embedding = model.get_input_embeddings().weight
    body = sum(p.numel() for p in model.parameters() if p is not embedding)
    flop_per_token = 2.0 * body
    config = model.config
    gflops = _matmul_gflops(512, config.hidden_size, config.intermediate_size, embedding.dtype)
    best = gflops * 1e9 / flop_per_token
    return {
        "decoder_parameters_without_embedding": body,
        "gflop_per_token": round(flop_per_token / 1e9, 3),
        "matmul_gflops": round(gflops, 1),
        "matmul_shape": [512, config.hidden_size, config.intermediate_size],
        "threads": torch.get_num_threads(),
        "achieved_gflops": round(tokens_per_s * flop_per_token / 1e9, 1),
        "ceiling_tokens_per_s": round(best),
        "ceiling_games_per_s": round(best / tokens_per_game, 3),
    }


def ck_arena_listener_speed(
    model: str = "gemma-3-270m", n_games: int = CK_LISTENER_GAMES
) -> dict[str, Any]:
    """Games/s of the listener on CK-Arena games, bulk and game by game; see the module
    docstring."""
    import os

    from leakage import create_backend, load_transcripts, score_many, score_transcript
    from leakage.runtime import cpu_supports_bf16

    ck_dir = shared_data("ck-arena-dev", "logs")
    transcripts, _ = load_transcripts([ck_dir], input_format="ck-arena")
    games, warm = transcripts[:n_games], transcripts[-1]
    statements = sum(len(t.turns) for t in games)
    precisions = ["fp32", *(["bf16"] if cpu_supports_bf16() else [])]
    runs: list[dict[str, Any]] = []
    for precision in precisions:
        backend = create_backend("listener", model=model, precision=precision)
        tokens = _listener_tokens(backend, games)
        list(score_many([warm], backend))  # kernels, buffers
        for path in ("prepare", "per_game"):
            load_before = [round(x, 2) for x in os.getloadavg()]
            with Stopwatch() as sw:
                if path == "prepare":
                    reports = list(score_many(games, backend))
                else:
                    backend.prepare([])  # forget the answers of the bulk path
                    reports = [score_transcript(t, backend) for t in games]
            rate = len(games) / sw.seconds
            fig = _own_word_figures([s for r in reports for s in r.steps])
            runs.append(
                {
                    "precision": backend.client.info()["precision"],
                    "threads": backend.client.info()["threads"],
                    "path": path,
                    "games_per_s": round(rate, 3),
                    "seconds": round(sw.seconds, 1),
                    "target_met": rate >= TARGET_CK_GAMES_PER_S,
                    "decoder_tokens_per_game": round(tokens / len(games), 1),
                    "tokens_per_s": round(tokens / sw.seconds),
                    "load_average_before": load_before,
                    "load_average_after": [round(x, 2) for x in os.getloadavg()],
                    "own_word_accuracy": fig["accuracy"],
                    "roc_auc": fig["roc_auc"],
                }
            )
        per_game = tokens / len(games)
        fastest = max(r["tokens_per_s"] for r in runs if r["precision"] == runs[-1]["precision"])
        runs[-1]["ceiling"] = runs[-2]["ceiling"] = _decoder_ceiling(backend, per_game, fastest)
        del backend
    return {
        "model": model,
        "backend": "listener",
        "bf16_native": cpu_supports_bf16(),
        "games": len(games),
        "statements": statements,
        "target_games_per_s": TARGET_CK_GAMES_PER_S,
        "runs": runs,
    }


# -- quality ------------------------------------------------------------------------------


def _probs(rows: np.ndarray, mask: np.ndarray, scale: float = 1.0) -> np.ndarray:
    from leakage.calibration import pooled_probs

    return pooled_probs(rows[None], mask, np.array([1.0 / scale]))


def _heldout(rows: np.ndarray, items: Any, test: np.ndarray, scale: float) -> dict[str, float]:
    from leakage.calibration import accuracy, expected_calibration_error, log_loss

    p = _probs(rows[test], items.mask[test], scale)
    truth = items.truth[test]
    return {
        "log_loss": round(log_loss(p, truth), 4),
        "top1": round(accuracy(p, truth), 3),
        "ece": round(expected_calibration_error(p, truth), 3),
    }


def _statement_figures(rows: np.ndarray, items: Any) -> dict[str, Any]:
    d = rows[:, 0] - rows[:, 1]  # candidates are (civilian word, spy word)
    civ = items.truth == 0
    groups = np.unique(items.game)
    by_game = [np.flatnonzero(items.game == g) for g in groups]

    def pick(idx: np.ndarray) -> np.ndarray:
        return np.concatenate([by_game[i] for i in idx])

    return {
        "accuracy": round(own_word_accuracy(d, civ), 3),
        "accuracy_ci95": bootstrap_ci(
            lambda i: own_word_accuracy(d[pick(i)], civ[pick(i)]), len(groups), seed=1
        ),
        "roc_auc": round(roc_auc(d, civ), 3),
        "roc_auc_ci95": bootstrap_ci(
            lambda i: roc_auc(d[pick(i)], civ[pick(i)]), len(groups), seed=2
        ),
    }


def _relevance_correlation(
    rows: np.ndarray, items: Any, relevance: np.ndarray
) -> dict[str, float | int]:
    from scipy.stats import spearmanr

    own = items.truth
    log_odds = rows[np.arange(own.size), own] - rows[np.arange(own.size), 1 - own]
    keep = np.isfinite(relevance)
    rho = spearmanr(log_odds[keep], relevance[keep])
    return {"spearman": round(float(rho.statistic), 3), "items": int(keep.sum())}


def quality(members: dict[str, Any]) -> dict[str, Any]:
    from benchmarks._probes import evaluate_probes
    from leakage import load_transcripts
    from leakage.calibration import (
        ENSEMBLE,
        build_item_set,
        calibrate,
        extract_items,
        member_rows,
        split_games,
    )

    ck_dir = shared_data("ck-arena-dev", "logs")
    cards_path = shared_data("chameleon-cards", "cards.json")
    cards = json.loads(cards_path.read_text(encoding="utf-8"))
    transcripts, bad = load_transcripts([ck_dir], input_format="ck-arena")
    games, skipped = extract_items(transcripts)
    by_id = {t.id: t for t in transcripts}
    relevance = np.array(
        [
            np.nan if s is None or s.get("relevance") is None else float(s["relevance"])
            for g in games
            for s in by_id[g.game_id].meta.get("turn_scores") or [None] * len(g.clues)
        ]
    )

    rows: dict[str, list[np.ndarray]] = {}
    seconds: dict[str, float] = {}
    for name, backend in members.items():
        start = time.perf_counter()
        rows[name] = member_rows(backend, games)
        seconds[name] = round(time.perf_counter() - start, 1)
        print(f"  {name}: {sum(len(g.clues) for g in games)} statements in {seconds[name]} s")
    base = [n for n in members if n != "ensemble"]
    items = build_item_set(games, {n: rows[n] for n in base})
    refit = calibrate(items, seed=0)
    _, test_idx = split_games(len(items.game_ids), seed=0)
    test = np.isin(items.game, test_idx)
    train = ~test
    all_rows = build_item_set(games, rows)

    table: dict[str, Any] = {}
    for name in members:
        r = all_rows.member(name)
        entry: dict[str, Any] = {"seconds_to_score": seconds[name]}
        entry["ck_arena_all_statements"] = _statement_figures(r, items)
        entry["ck_arena_heldout_as_is"] = _heldout(r, items, test, 1.0)
        if name in base:
            t = refit.temperatures[name]
            entry["temperature_fitted"] = t
            entry["ck_arena_heldout_fitted_T"] = refit.metrics[name].summary()
        entry["relevance_vs_ck_arena_judges"] = _relevance_correlation(r, items, relevance)
        probes = evaluate_probes(cards, members[name])
        entry["card_probes"] = {
            k: probes[k] for k in ("probes", "top1", "top3", "log_loss", "ece", "flat_posteriors")
        }
        table[name] = entry
    table["ensemble_refit_on_this_split"] = {
        "ck_arena_heldout": refit.metrics[ENSEMBLE].summary(),
        "weights": refit.fitted_weights,
        "verdict": refit.verdict(),
    }
    return {
        "ck_arena": {
            "logs": str(ck_dir),
            "games": len(games),
            "items": int(items.n_items),
            "train_items": int(train.sum()),
            "test_items": int(test.sum()),
            "unreadable_records": len(bad),
            "games_skipped": skipped,
        },
        "backends": table,
        "ensemble_weights_file": members["ensemble"].info().get("weights_file"),
    }


def _ck_speed(
    results: dict[str, Any],
    key: str,
    title: str,
    measure: Callable[[], dict[str, Any]],
    describe: Callable[[dict[str, Any]], tuple[str, str]],
) -> None:
    """One CK-Arena speed measurement into ``results[key]`` (skipped without the data),
    printed a line per run: ``describe(run)`` gives the line's head and its tail."""
    print(title, flush=True)
    try:
        results[key] = measure()
    except Skip as why:
        results[key] = {"skipped": str(why)}
        print(f"  skipped: {why}")
        return
    for r in results[key]["runs"]:
        head, tail = describe(r)
        met = "met" if r["target_met"] else "not met"
        print(
            f"  {head} (target {TARGET_CK_GAMES_PER_S}: {met}; "
            f"load {r['load_average_before'][0]}{tail})",
            flush=True,
        )


def run() -> dict[str, Any]:
    from leakage import create_backend
    from leakage.backends.cooccurrence import LocalIndexSource

    results: dict[str, Any] = {"pairs": [], "games": []}
    print("judge: likelihood scoring, 16 candidates x 4 clues", flush=True)
    for model in MODELS:
        r = pair_speed(model)
        results["pairs"].append(r)
        print(
            f"  {model}: new prompts {r['new_ms_median']} ms ({r['new_pairs_per_s']} pairs/s), "
            f"seen {r['seen_ms_median']} ms ({r['seen_pairs_per_s']} pairs/s)",
            flush=True,
        )
    print("judge / ensemble: score_many, 16 candidates, 4 counted clues", flush=True)
    for name, opts in (
        ("judge", {}),
        ("judge", {"model": "smollm2-135m"}),
        ("ensemble", {}),
    ):
        r = game_speed(name, **opts)
        results["games"].append(r)
        label = name + (f" ({opts['model']})" if opts else "")
        print(
            f"  {label}: new cards {r['new_cards_games_per_s']} games/s, "
            f"seen cards {r['seen_cards_games_per_s']} games/s",
            flush=True,
        )
    judge = results["games"][0]
    results["target_judge_games_per_s"] = TARGET_JUDGE_GAMES_PER_S
    results["judge_target_met_new_cards"] = (
        judge["new_cards_games_per_s"] >= TARGET_JUDGE_GAMES_PER_S
    )
    results["judge_target_met_seen_cards"] = (
        judge["seen_cards_games_per_s"] >= TARGET_JUDGE_GAMES_PER_S
    )

    _ck_speed(
        results,
        "ck_arena_games",
        f"judge: CK-Arena games ({CK_GAMES} dev logs, sentence statements)",
        ck_arena_speed,
        lambda r: (
            f"{r['precision']} / {r['normaliser']} normaliser: {r['games_per_s']} games/s",
            "",
        ),
    )
    _ck_speed(
        results,
        "ck_arena_listener",
        f"listener: CK-Arena games ({CK_LISTENER_GAMES} dev logs, all rounds)",
        ck_arena_listener_speed,
        lambda r: (
            f"{r['precision']} / {r['path']}: {r['games_per_s']} games/s, "
            f"{r['tokens_per_s']} tokens/s",
            f"; AUC {r['roc_auc']}; {r['ceiling']['achieved_gflops']} GFLOP/s of the CPU's "
            f"{r['ceiling']['matmul_gflops']} on a bare matrix product: at most "
            f"{r['ceiling']['ceiling_games_per_s']} games/s",
        ),
    )

    try:
        members = {
            "cooccurrence": create_backend(
                "cooccurrence", source=LocalIndexSource(default_index())
            ),
            "embedding": create_backend("embedding"),
            "judge": create_backend("judge"),
            "ensemble": create_backend("ensemble"),
        }
        print("judge: quality table (CK-Arena dev, card probes)", flush=True)
        results["quality"] = quality(members)
        for name, e in results["quality"]["backends"].items():
            if "ck_arena_all_statements" not in e:
                continue
            s, h, p = e["ck_arena_all_statements"], e["ck_arena_heldout_as_is"], e["card_probes"]
            print(
                f"  {name}: CK acc {s['accuracy']} AUC {s['roc_auc']}; held-out log loss "
                f"{h['log_loss']} ECE {h['ece']}; probes top-1 {p['top1']} log loss "
                f"{p['log_loss']} ECE {p['ece']}; rho(relevance) "
                f"{e['relevance_vs_ck_arena_judges']['spearman']}",
                flush=True,
            )
    except Skip as why:
        results["quality"] = {"skipped": str(why)}
        print(f"  quality skipped: {why}")
    write_result(
        "judge",
        {
            "models": MODELS,
            "repeats": REPEATS,
            "games_per_pass": GAMES_PER_PASS,
            "seed": SEED,
            "ck_games": CK_GAMES,
            "ck_listener_games": CK_LISTENER_GAMES,
        },
        results,
    )
    return results
