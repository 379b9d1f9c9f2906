"""The civilian voter's seat (issue 39) with the whole pool re-ranking the best K words.

The spy's seat gained most from letting the whole ensemble pool (co-occurrence, embedding and
the LLM listener) re-rank each step's best ``SEAT_FINE`` words, their mass kept
(``leakage.seats``, two tiers). This study tries the same on the civilian voter's seat, whose
rows come from the cheap tier only (``benchmarks.studies.voter_variants``): for each
civilian after round 1, its own word w, the other word x marginalised over the seat's
shortlist under the pair prior π(x | w), and for each statement i it heard, the K words of
highest π(x | w) · e^{L[i, x]} (``stmt``: the words that statement alone favours most) or of
the marginal after statements 1..i (``cum``: as the spy seat's steps) plus w, re-ranked by
the whole pool: row i over that set becomes the pool's row, shifted so that its mass
log Σ e^{L[i, ·]} over the set is the cheap row's (the rest of the row is kept). The pool is
asked once per game over every word any civilian's set needs (per-row constants the same for
every seat). The voter's posterior is then the library's (``voter_hypotheses``,
``voter_loglik``: the whole shortlist, "I am a spy" kept), on rows as they are and × 0.5
(the best of ``voter_variants`` on dev).

Figures as ``voter_variants``: the seat's top pick is a spy (ties a random pick), P(spy) ROC
AUC, dev and frozen sides (pairs split as ``benchmarks.studies.seats``), 95% bootstrap
intervals over games (400 resamples), each variant's pick minus the base's paired by game,
and CPU seconds a game for the cheap rows and for the pool's. A seeded sample of the dev
games (``--games``, ``--seed``); every variant on the same games and rows. Nothing is fitted.
``python -m benchmarks.studies.voter_pool [--games N] [--seed S] [--fine 10,30]``;
``benchmarks/results/voter_pool.json``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from benchmarks.common import bootstrap_ci, ck_arena_games, write_result
from benchmarks.studies.voter_variants import (
    first_round,
    frozen_side,
    voter_figures,
    voter_variants_of,
)

SEED = 0
BASE = "lam=1.0 top=100000 self=True"
HALF = "lam=0.5 top=100000 self=True"


def _sets(tab: np.ndarray, px: np.ndarray, k: int, mode: str) -> list[np.ndarray]:
    """Per statement, the shortlist columns the pool re-ranks (the own word's column added)."""
    rx = tab[:, :-1]
    own = tab.shape[1] - 1
    out = []
    acc = px.copy()
    for i in range(len(tab)):
        acc = acc + rx[i]
        score = px + rx[i] if mode == "stmt" else acc
        top = np.argsort(-score, kind="stable")[: min(k, len(px))]
        out.append(np.append(top, own))
    return out


def _refined(tab: np.ndarray, pool: np.ndarray, sets: list[np.ndarray]) -> np.ndarray:
    """``tab`` with row i over ``sets[i]`` the pool's, its mass over the set kept."""
    out = tab.copy()
    for i, cols in enumerate(sets):
        cheap, whole = tab[i, cols], pool[i, cols]
        out[i, cols] = whole - np.logaddexp.reduce(whole) + np.logaddexp.reduce(cheap)
    return out


def _diff(rows: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """Pick of ``a`` minus pick of ``b`` over the same seats, paired by game."""
    games = sorted({r["game"] for r in rows})
    by = {g: [r for r in rows if r["game"] == g] for g in games}

    def hit(r: dict[str, Any], key: str) -> float:
        ps = r["variants"][key]
        best = max(ps.values())
        lead = [p for p, q in ps.items() if q == best]
        return sum(p in r["spies"] for p in lead) / len(lead)

    def stat(idx: Any) -> float:
        d = [hit(r, a) - hit(r, b) for i in idx for r in by[games[i]]]
        return float(np.mean(d))

    every = np.arange(len(games))
    return {"diff": round(stat(every), 3), "ci95": bootstrap_ci(stat, len(games), seed=SEED)}


def run(games_n: int = 40, seed: int = SEED, fines: tuple[int, ...] = (10, 30)) -> dict[str, Any]:
    from leakage.backends import create_backend
    from leakage.seats import game_rows, read_pair_prior, seat_reader, seat_shortlist

    _, games = ck_arena_games()
    rng = np.random.default_rng(seed)
    if games_n < len(games):
        games = [games[i] for i in sorted(rng.choice(len(games), games_n, replace=False))]
    reader = seat_reader(create_backend("ensemble"))
    if reader.fine is None:
        raise RuntimeError("the shipped ensemble has no costly tier: nothing to re-rank with")
    search, vocab, prior = reader.search, reader.vocab, read_pair_prior()
    vocab.add_candidates(sorted({w for g in games for w in (g.words.civilian, g.words.spy)}))
    modes = [(m, k) for m in ("stmt", "cum") for k in fines]
    rows: list[dict[str, Any]] = []
    cheap_cpu, pool_cpu = [], []
    for gi, g in enumerate(games):
        first = first_round(g)
        civilians = [p.id for p in g.players if p.role == "civilian"]
        players = [p.id for p in g.players]
        t0 = time.process_time()
        table = game_rows(search, g, prior, seats=civilians, rounds=1)
        seats = []
        for c in civilians:
            heard = [t for t in g.turns if t.round == first and t.player != c]
            texts, speakers = [t.text for t in heard], [t.player for t in heard]
            lp = prior.log_prior(vocab, g.word_of(c))
            short = seat_shortlist(search, texts, lp, np.isfinite(lp))
            words = [*(vocab.index.words[r] for r in short), g.word_of(c)]
            tab = table.table(texts, words)
            px = np.array([lp[r] for r in short])
            px = px - np.logaddexp.reduce(px)
            sets = {mk: _sets(tab, px, mk[1], mk[0]) for mk in modes}
            seats.append((c, texts, speakers, words, tab, px, sets))
        t1 = time.process_time()
        need = sorted({s[3][j] for s in seats for st in s[6].values() for cols in st for j in cols})
        pool_vals = np.asarray(reader.fine.loglik(table.texts, need), dtype=np.float64)
        col = {w: j for j, w in enumerate(need)}
        trow = {t: i for i, t in enumerate(table.texts)}
        t2 = time.process_time()
        cheap_cpu.append(t1 - t0)
        pool_cpu.append(t2 - t1)
        for c, texts, speakers, words, tab, px, sets in seats:
            k = len(g.spies())
            out: dict[str, dict[str, float]] = {}
            base = voter_variants_of(tab, px, speakers, players, c, k)
            out["base"], out["base x0.5"] = base[BASE], base[HALF]
            for (mode, kk), st in sets.items():
                # pool rows over this seat's words where needed (other columns unused)
                pool = np.full(tab.shape, np.nan)
                used = sorted({int(j) for cols in st for j in cols})
                for j in used:
                    pool[:, j] = pool_vals[[trow[t] for t in texts], col[words[j]]]
                got = voter_variants_of(_refined(tab, pool, st), px, speakers, players, c, k)
                out[f"pool {mode} K={kk}"] = got[BASE]
                out[f"pool {mode} K={kk} x0.5"] = got[HALF]
            rows.append(
                {"game": gi, "side": frozen_side(g), "spies": sorted(g.spies()), "variants": out}
            )
        print(f"game {gi + 1}/{len(games)} cheap {t1 - t0:.2f}s pool {t2 - t1:.2f}s", flush=True)
    keys = list(rows[0]["variants"])
    results: dict[str, Any] = {
        "games": len(games),
        "seats": len(rows),
        "cpu_s_per_game": {
            "cheap_rows": round(float(np.mean(cheap_cpu)), 3),
            "pool_rows": round(float(np.mean(pool_cpu)), 3),
        },
    }
    for side in ("dev", "frozen", "all"):
        sub = [r for r in rows if side == "all" or r["side"] == side]
        results[side] = {
            "n_games": len({r["game"] for r in sub}),
            "n_seats": len(sub),
            **{kk: voter_figures(sub, kk, True) for kk in keys},
            "pick_minus_base": {kk: _diff(sub, kk, "base") for kk in keys if kk != "base"},
        }
    for side in ("dev", "frozen", "all"):
        for kk in keys:
            f = results[side][kk]
            print(side, kk, f["pick"], f["pick_ci95"], f["auc"], f["auc_ci95"])
    print(results["cpu_s_per_game"])
    write_result("voter_pool", {"games": games_n, "seed": seed, "fine": list(fines)}, results)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="seeded sample of dev games")
    parser.add_argument("--seed", type=int, default=SEED, help="of the sample of games")
    parser.add_argument("--fine", default="10,30", help="K values, comma-separated")
    a = parser.parse_args()
    run(a.games, a.seed, tuple(int(x) for x in a.fine.split(",") if x))
