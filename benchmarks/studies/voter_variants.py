"""The civilian voter's seat (issue 39): variants of its model on the CK-Arena dev logs.

Each civilian of each game, after round 1, its own word known, the other word marginalised
over the seat's shortlist under the pair prior (``leakage.seats``; the rows of the shipped
ensemble's statement fit over co-occurrence + the embedding read from the vocabulary index,
``leakage.seats.tiers``). Variants, every one computed on the same rows:

- ``lam``: the rows scaled by λ (0.25, 0.5, 1, 2) before the marginal (a sharper or flatter
  reader over a shortlist of 100+ words than over the pair its fit was made on);
- ``top``: the marginal over the M words of highest prior only (5, 20, all);
- ``self``: with or without the hypotheses "I am a spy";
- ``eb``: empirical Bayes: q(x) fitted once from every statement heard (each speaker holding
  the own word with ρ = (n − 1 − k)/(n − 1), or ρ = 0), then each player's statements'
  likelihood under q against the own word.

Figures: the seat's top pick is a spy (ties a random pick), P(spy) ROC AUC, on the dev side
(where a variant would be chosen) and the frozen side (pairs split as in
``benchmarks.studies.seats``); 95% bootstrap intervals over games (400 resamples) for the
base and the best on dev. Nothing is fitted. ``python -m benchmarks.studies.voter_variants``;
``benchmarks/results/voter_variants.json``.
"""

from __future__ import annotations

import time
from itertools import combinations
from typing import Any

import numpy as np

from benchmarks.common import bootstrap_ci, ck_arena_games, roc_auc, write_result

SEED = 0
LAMS = (0.25, 0.5, 1.0, 2.0)
TOPS = (5, 20, 100_000)


def frozen_side(game: Any) -> str:
    """The game's side of the frozen split by pair (as ``benchmarks.studies.seats``)."""
    from leakage.calibration import split_side

    a, b = sorted((game.words.civilian, game.words.spy))
    return split_side(f"ck-arena-pair:{a}|{b}")


def first_round(game: Any) -> int | None:
    """The game's first round number (its round 1, whatever the log numbers it)."""
    return min((t.round for t in game.turns if t.round is not None), default=None)


def _norm(x: np.ndarray) -> np.ndarray:
    return x - np.logaddexp.reduce(x)


def voter_variants_of(
    tab: np.ndarray, px_all: np.ndarray, speakers: list[str], players: list[str], seat: str, k: int
) -> dict[str, dict[str, float]]:
    from leakage.seats import voter_hypotheses, voter_loglik

    others = [p for p in players if p != seat]
    rx_all, rw_all = tab[:, :-1], tab[:, -1]
    out: dict[str, dict[str, float]] = {}
    for lam in LAMS:
        for top in TOPS:
            for self_spy in (True, False):
                order = np.argsort(-px_all)[:top]
                px = _norm(px_all[order])
                a = {j: np.zeros(len(order)) for j in others}
                b = dict.fromkeys(others, 0.0)
                for s, x, w in zip(speakers, lam * rx_all[:, order], lam * rw_all, strict=True):
                    a[s] = a[s] + x
                    b[s] += float(w)
                hyp = voter_hypotheses(players, seat, k)
                if not self_spy:
                    keep = [i for i, m in enumerate(hyp.holder_in) if not m]
                    hyp.sets = [hyp.sets[i] for i in keep]
                    hyp.holder_in = [False] * len(keep)
                    hyp.log_prior = hyp.log_prior[keep]
                p = hyp.posterior(voter_loglik(hyp, others, a, b, px))
                out[f"lam={lam} top={top} self={self_spy}"] = {
                    j: float(sum(q for q, s in zip(p, hyp.sets, strict=True) if j in s))
                    for j in others
                }
    n = len(players)
    for rho in ((n - 1 - k) / (n - 1), 0.0):
        mix = rx_all
        if rho > 0:
            mix = np.logaddexp(np.log(1 - rho) + rx_all, np.log(rho) + rw_all[:, None])
        lq = _norm(px_all + mix.sum(axis=0))
        score = dict.fromkeys(others, 0.0)
        for s, x, w in zip(speakers, rx_all, rw_all, strict=True):
            score[s] += float(np.logaddexp.reduce(lq + x)) - float(w)
        sets = [frozenset(c) for c in combinations(others, k)]
        logs = np.array([sum(score[j] for j in c) for c in sets])
        p = np.exp(logs - logs.max())
        p /= p.sum()
        out[f"eb rho={rho:.2f}"] = {
            j: float(sum(q for q, c in zip(p, sets, strict=True) if j in c)) for j in others
        }
    return out


def voter_figures(rows: list[dict[str, Any]], key: str, intervals: bool) -> dict[str, Any]:
    games = sorted({r["game"] for r in rows})
    by = {g: [r for r in rows if r["game"] == g] for g in games}

    def pick(idx: Any) -> float:
        hits = []
        for i in idx:
            for r in by[games[i]]:
                ps = r["variants"][key]
                best = max(ps.values())
                lead = [p for p, q in ps.items() if q == best]
                hits.append(sum(p in r["spies"] for p in lead) / len(lead))
        return float(np.mean(hits))

    def auc(idx: Any) -> float:
        sc, tr = [], []
        for i in idx:
            for r in by[games[i]]:
                ps = r["variants"][key]
                sc += list(ps.values())
                tr += [p in r["spies"] for p in ps]
        return roc_auc(np.array(sc), np.array(tr, dtype=bool))

    every = np.arange(len(games))
    out: dict[str, Any] = {"pick": round(pick(every), 3), "auc": round(auc(every), 3)}
    if intervals:
        out["pick_ci95"] = bootstrap_ci(pick, len(games), seed=SEED)
        out["auc_ci95"] = bootstrap_ci(auc, len(games), seed=SEED)
    return out


def run() -> dict[str, Any]:
    from leakage.backends import create_backend
    from leakage.seats import game_rows, read_pair_prior, seat_reader, seat_shortlist

    _, games = ck_arena_games()
    reader = seat_reader(create_backend("ensemble"))
    search, vocab, prior = reader.search, reader.vocab, read_pair_prior()
    vocab.add_candidates(sorted({w for g in games for w in (g.words.civilian, g.words.spy)}))
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()
    for gi, g in enumerate(games):
        first = first_round(g)
        civilians = [p.id for p in g.players if p.role == "civilian"]
        players = [p.id for p in g.players]
        table = game_rows(search, g, prior, seats=civilians, rounds=1)
        for c in civilians:
            heard = [t for t in g.turns if t.round == first and t.player != c]
            texts, speakers = [t.text for t in heard], [t.player for t in heard]
            lp = prior.log_prior(vocab, g.word_of(c))
            short = seat_shortlist(search, texts, lp, np.isfinite(lp))
            tab = table.table(texts, [*(vocab.index.words[r] for r in short), g.word_of(c)])
            px = np.array([lp[r] for r in short])
            rows.append(
                {
                    "game": gi,
                    "side": frozen_side(g),
                    "spies": sorted(g.spies()),
                    "variants": voter_variants_of(tab, px, speakers, players, c, len(g.spies())),
                }
            )
    keys = list(rows[0]["variants"])
    base = "lam=1.0 top=100000 self=True"
    dev = [r for r in rows if r["side"] == "dev"]
    ranked = sorted(keys, key=lambda k: -voter_figures(dev, k, False)["pick"])
    results: dict[str, Any] = {"seats": len(rows), "seconds": round(time.perf_counter() - start)}
    for side in ("dev", "frozen", "all"):
        sub = [r for r in rows if side == "all" or r["side"] == side]
        results[side] = {k: voter_figures(sub, k, k in (base, ranked[0])) for k in keys}
    results["best_on_dev"] = ranked[0]
    results["base"] = base
    for side in ("dev", "frozen", "all"):
        print(side, "base", results[side][base], "best on dev", ranked[0], results[side][ranked[0]])
    write_result("voter_variants", {}, results)
    return results


if __name__ == "__main__":
    run()
