"""SpyGame / Undercover from the players' own seats, on the CK-Arena dev logs (issue 39).

**The spy's seat** (``leakage.seats.spy_seat``): each spy of each game, its own word known,
the civilians' word over the open vocabulary (wordfreq:50000 + the pair words the logs use
that it lacks, added in memory as ``OpenVocabulary.add_candidates`` adds a game's
candidates), after every round-1 statement of the other players. Figures: the civilians'
word's rank after round 1 (top-1, top-10, median), and per statement its probability, the
entropy over the vocabulary and the gain in bits; for three readers: the pair prior alone,
stage 1 (prior + the statements' cosines at a fitted temperature) and the shortlist re-ranked
by the pool (default: the shipped ensemble's statement fit over co-occurrence and the
embedding member; ``--members`` for others, ``--members ensemble`` for the shipped default
ensemble with its listener).

**The civilian voter's seat** (``leakage.seats.voter_seat``): each civilian that voted in
round 1, its own word known, the other word marginalised over a shortlist, its own role
unknown: P(j is a spy) for every other player after round 1. Figures: its top pick is a spy
(ties count as a random pick), against the civilians' own round-1 votes; every other
player's P(spy) as a spy-vs-civilian score, pooled (ROC AUC). Beside them the outside seats
computed by the existing code (``benchmarks._spygame.spy_round1`` with ``spy_assignment``
``known`` and ``marginalise``) with the same pool.

**Fitting, and the frozen side.** Pairs repeat across games (football / basketball 13
times), so the dev/frozen split (``leakage.calibration``'s hash, one third frozen) is drawn
by *pair* (id ``ck-arena-pair:<a>|<b>``, words sorted). Two things are fitted, on the dev
side only: the pair prior's (β, γ) (``fit_pair_prior`` on the dev pairs) and the stage-1
temperature τ (grid, the best mean log-probability of the civilians' word after round 1 on
dev games), then stage 1's weight λ in the re-rank (``stage1_weight``, grid 0, 0.5, 1: the
best mean log-probability of the civilians' word after round 1 on dev games). Every figure
is given for dev, frozen and all games; the frozen games' pairs
were seen by no fit. Intervals: 95% percentile bootstrap over games (400 resamples).

``python -m benchmarks.seats`` (``--write-prior`` writes the fitted prior to
``leakage/data/pair_prior.json``). Results in ``benchmarks/results/seats[_<members>].json``.
Data: CK-Arena logs (``../shared/data/ck-arena-dev/logs``, Xu et al. 2025, "none stated:
evaluation only"); nothing from it is written but the fitted numbers.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import bootstrap_ci, ck_arena_games, roc_auc, write_result

SHORTLIST = 100
TAUS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
LAMBDAS = (0.0, 0.5, 1.0)
"""Grid of stage 1's weight in the re-rank (``ShortlistPosterior(stage1_weight=)``)."""
SEED = 0
PRIOR_FILE = Path(__file__).resolve().parents[1] / "leakage" / "data" / "pair_prior.json"


def _side(game: Any) -> str:
    from leakage.calibration import split_side

    a, b = sorted((game.words.civilian, game.words.spy))
    return split_side(f"ck-arena-pair:{a}|{b}")


def _round1(game: Any) -> int | None:
    return min((t.round for t in game.turns if t.round is not None), default=None)


def _fit_tau(vocab: Any, games: list[Any], prior: Any) -> tuple[float, dict[str, float]]:
    """Stage-1 τ with the best mean log q(civilians' word) after round 1, dev games only."""
    texts = sorted({t.text for g in games for t in g.turns})
    vecs = vocab.encoder.encode(texts).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    by_text = dict(zip(texts, vecs, strict=True))
    items = []
    for g in games:
        first = _round1(g)
        for spy in sorted(g.spies()):
            heard = [t.text for t in g.turns if t.round == first and t.player != spy]
            if not heard:
                continue
            cos = (vocab.index.vectors @ np.stack([by_text[x] for x in heard]).T).sum(axis=1)
            lp = prior.log_prior(vocab, g.word_of(spy))
            items.append((lp, cos.astype(np.float64), vocab.index.position(g.words.civilian)))
    # A civilians' word the seat rules out (the own word's inflection) has no log q: left out.
    items = [x for x in items if np.isfinite(x[0][x[2]])]
    scores = {}
    for tau in TAUS:
        total = []
        for lp, cos, row in items:
            z = lp + cos / tau
            finite = np.isfinite(z)
            total.append(z[row] - np.logaddexp.reduce(z[finite]))
        scores[str(tau)] = round(float(np.mean(total)), 4)
    best = max(TAUS, key=lambda t: scores[str(t)])
    return best, scores


def _fit_lambda(
    vocab: Any, backend: Any, games: list[Any], prior: Any, tau: float, shortlist: int
) -> tuple[float, dict[str, float]]:
    """Stage 1's weight λ in the re-rank with the best mean log P(civilians' word) after
    round 1, dev games only (a floor of 1e-12 for a word ruled out)."""
    from leakage.seats import spy_seat
    from leakage.vocab import ShortlistPosterior

    scores = {}
    for lam in LAMBDAS:
        search = ShortlistPosterior(vocab, backend, shortlist=shortlist, tau=tau, stage1_weight=lam)
        logs = [
            np.log(max(seat.steps[-1].probability, 1e-12))
            for g in games
            for spy in sorted(g.spies())
            if (seat := spy_seat(search, g, spy, prior, rounds=1)).steps
        ]
        scores[str(lam)] = round(float(np.mean(logs)), 4)
        print(
            f"  λ = {lam}: mean log P(civilians' word) on dev games {scores[str(lam)]}", flush=True
        )
    best = max(LAMBDAS, key=lambda x: scores[str(x)])
    return best, scores


def _rank_figures(ranks: list[float], game_of: list[int], seed: int) -> dict[str, Any]:
    if not ranks:
        return {"seats": 0, "games": 0}
    r = np.array(ranks, dtype=np.float64)
    g = np.array(game_of)
    groups = np.unique(g)
    by = [np.flatnonzero(g == x) for x in groups]

    def pick(idx: Any) -> Any:
        return r[np.concatenate([by[i] for i in idx])]

    return {
        "seats": int(r.size),
        "games": int(groups.size),
        "top1": round(float((r <= 1).mean()), 3),
        "top1_ci95": bootstrap_ci(lambda i: float((pick(i) <= 1).mean()), len(by), seed=seed),
        "top10": round(float((r <= 10).mean()), 3),
        "top10_ci95": bootstrap_ci(lambda i: float((pick(i) <= 10).mean()), len(by), seed=seed),
        "median_rank": float(np.median(r)),
        "median_rank_ci95": bootstrap_ci(lambda i: float(np.median(pick(i))), len(by), seed=seed),
    }


def spy_seats(
    games: list[Any], search: Any, base: Any, prior: Any, sides: list[str]
) -> dict[str, Any]:
    """The spy's seat after every round-1 statement of the others: pool, stage 1, prior."""
    from leakage.seats import spy_seat

    rows: list[dict[str, Any]] = []
    seconds = 0.0
    steps: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for gi, g in enumerate(games):
        for spy in sorted(g.spies()):
            start = time.perf_counter()
            seat = spy_seat(search, g, spy, prior, rounds=1)
            seconds += time.perf_counter() - start
            plain = spy_seat(base, g, spy, prior, rounds=1)
            if not seat.steps:
                continue
            worst = len(search.vocab.index)
            rows.append(
                {
                    "game": gi,
                    "side": sides[gi],
                    "pool": seat.steps[-1].rank or worst,
                    "stage1": plain.steps[-1].rank or worst,
                    "prior": seat.prior_rank or worst,
                }
            )
            for k, st in enumerate(seat.steps, start=1):
                s = steps[k]
                s["rank"].append(st.rank or worst)
                s["p"].append(st.probability)
                s["entropy"].append(st.entropy_bits)
                s["gain"].append(st.gain_bits)
                s["mass"].append(st.shortlist_mass)
            steps[0]["entropy"].append(seat.prior_entropy_bits)
            steps[0]["rank"].append(seat.prior_rank or worst)
    out: dict[str, Any] = {"seconds_pool": round(seconds, 1)}
    for side in ("all", "dev", "frozen"):
        sub = [r for r in rows if side == "all" or r["side"] == side]
        out[side] = {
            reader: _rank_figures([r[reader] for r in sub], [r["game"] for r in sub], SEED)
            for reader in ("pool", "stage1", "prior")
        }
    out["per_statement"] = {
        str(k): {
            "seats": len(v["rank"]),
            "median_rank": float(np.median(v["rank"])),
            "top10": round(float(np.mean(np.array(v["rank"]) <= 10)), 3),
            **{
                f"mean_{name}": round(float(np.mean(v[name])), 3)
                for name in ("p", "entropy", "gain", "mass")
                if v.get(name)
            },
        }
        for k, v in sorted(steps.items())
    }
    return out


def voter_seats(games: list[Any], search: Any, prior: Any, sides: list[str]) -> dict[str, Any]:
    """Each civilian voter's seat after round 1, against its own round-1 vote."""
    from leakage.seats import game_rows, voter_seat

    per_game: list[dict[str, Any]] = []
    seconds = 0.0
    for gi, g in enumerate(games):
        first = _round1(g)
        votes = [v for v in g.votes if v.round == first and g.player(v.voter).role == "civilian"]
        civilians = [p.id for p in g.players if p.role == "civilian"]
        spies = g.spies()
        start = time.perf_counter()
        table = game_rows(search, g, prior, seats=civilians, rounds=1)
        seats = {c: voter_seat(search, g, c, prior, rounds=1, rows=table) for c in civilians}
        seconds += time.perf_counter() - start
        hits, vote_hits, scores, truth = [], [], [], []
        for c, seat in seats.items():
            top = max(seat.p_spy.values())
            leaders = [p for p, q in seat.p_spy.items() if q == top]
            pick_hit = sum(p in spies for p in leaders) / len(leaders)
            scores += list(seat.p_spy.values())
            truth += [p in spies for p in seat.p_spy]
            vote = [v for v in votes if v.voter == c]
            if vote:
                hits.append(pick_hit)
                vote_hits.append(float(vote[0].target in spies))
        per_game.append(
            {
                "side": sides[gi],
                "hits": hits,
                "vote_hits": vote_hits,
                "all_hits": [
                    sum(p in spies for p in ls) / len(ls)
                    for s in seats.values()
                    for ls in [[p for p, q in s.p_spy.items() if q == max(s.p_spy.values())]]
                ],
                "scores": scores,
                "truth": truth,
            }
        )
    out: dict[str, Any] = {"seconds": round(seconds, 1)}
    for side in ("all", "dev", "frozen"):
        sub = [r for r in per_game if side == "all" or r["side"] == side]

        def ratio(key: str, idx: Any, sub: list[dict[str, Any]] = sub) -> float:
            vals = [h for i in idx for h in sub[i][key]]
            return float(np.mean(vals)) if vals else float("nan")

        def auc(idx: Any, sub: list[dict[str, Any]] = sub) -> float:
            s = np.array([x for i in idx for x in sub[i]["scores"]])
            t = np.array([x for i in idx for x in sub[i]["truth"]], dtype=bool)
            return roc_auc(s, t)

        every = np.arange(len(sub))
        out[side] = {
            "games": len(sub),
            "civilian_votes": sum(len(r["hits"]) for r in sub),
            "seat_pick_hit": round(ratio("hits", every), 3),
            "seat_pick_hit_ci95": bootstrap_ci(lambda i: ratio("hits", i), len(sub), seed=SEED),
            "civilian_vote_hit": round(ratio("vote_hits", every), 3),
            "civilian_vote_hit_ci95": bootstrap_ci(
                lambda i: ratio("vote_hits", i), len(sub), seed=SEED
            ),
            "seat_pick_hit_every_civilian": round(ratio("all_hits", every), 3),
            "p_spy_auc": round(auc(every), 3),
            "p_spy_auc_ci95": bootstrap_ci(auc, len(sub), seed=SEED + 2),
        }
    return out


def run(
    members: str = "cooccurrence,embedding",
    shortlist: int = SHORTLIST,
    games_limit: int | None = None,
    civilian: bool = True,
    outside: bool = True,
    write_prior: bool = False,
    tau: float | None = None,
    stage1_weight: float | None = None,
) -> dict[str, Any]:
    """The seats on the CK-Arena dev logs. With ``games_limit`` (a seeded sample) the
    shipped pair prior is used instead of a fit on the sample's pairs; ``tau`` and
    ``stage1_weight`` given skip their fits (for a costly pool on a few games)."""
    from benchmarks.common import spy_round1
    from leakage.backends import create_backend
    from leakage.encoders import CachedEncoder, open_encoder
    from leakage.seats import fit_pair_prior, read_pair_prior
    from leakage.vocab import (
        OpenVocabulary,
        ShortlistPosterior,
        VectorIndex,
        build_vocabulary,
        default_vocab_dir,
        load_words,
        vocabulary_pool,
    )

    _, games = ck_arena_games()
    if games_limit:
        rng = np.random.default_rng(SEED)
        games = [games[i] for i in sorted(rng.choice(len(games), games_limit, replace=False))]
    encoder = CachedEncoder(open_encoder("all-MiniLM-L6-v2"))
    path = default_vocab_dir(encoder.name)
    if (path / "meta.json").is_file():
        index = VectorIndex.load(path, encoder=encoder)
    else:
        index = build_vocabulary(load_words("wordfreq:50000"), encoder)
        index.save(path)
    vocab = OpenVocabulary(index, encoder)
    size = len(index)
    pair_words = sorted({w for g in games for w in (g.words.civilian, g.words.spy)})
    added = vocab.add_candidates(pair_words)
    sides = [_side(g) for g in games]
    dev_pairs = sorted(
        {(g.words.civilian, g.words.spy) for g, s in zip(games, sides, strict=True) if s == "dev"}
    )
    prior = (
        read_pair_prior()
        if games_limit
        else fit_pair_prior(
            vocab,
            dev_pairs,
            fitted_on={
                "data": "CK-Arena dev logs' pairs (../shared/data/ck-arena-dev/logs), dev side "
                "of the frozen split by pair id ck-arena-pair:<a>|<b>",
                "vocabulary": f"wordfreq:50000 ({size} words) + {added} pair words",
                "command": "python -m benchmarks.seats --write-prior",
            },
        )
    )
    if write_prior and not games_limit:
        PRIOR_FILE.write_text(prior.model_dump_json(indent=2) + "\n", "utf-8")
    dev_games = [g for g, s in zip(games, sides, strict=True) if s == "dev"]
    tau_scores: dict[str, float] = {}
    if tau is None:
        tau, tau_scores = _fit_tau(vocab, dev_games, prior)
    if members == "ensemble":
        backend = create_backend("ensemble")
    else:
        backend = vocabulary_pool(vocab, [m.strip() for m in members.split(",")], kind="statement")
    lam_scores: dict[str, float] = {}
    if stage1_weight is None:
        lam, lam_scores = _fit_lambda(vocab, backend, dev_games, prior, tau, shortlist)
    else:
        lam = stage1_weight
    search = ShortlistPosterior(vocab, backend, shortlist=shortlist, tau=tau, stage1_weight=lam)
    base = ShortlistPosterior(vocab, None, shortlist=shortlist, tau=tau)
    results: dict[str, Any] = {
        "games": len(games),
        "games_by_side": {s: sides.count(s) for s in ("dev", "frozen")},
        "pairs_by_side": {
            s: len(
                {
                    (g.words.civilian, g.words.spy)
                    for g, x in zip(games, sides, strict=True)
                    if x == s
                }
            )
            for s in ("dev", "frozen")
        },
        "vocabulary": {"wordfreq_50000": size, "pair_words_added": added},
        "prior": prior.model_dump(),
        "stage1_tau": tau,
        "stage1_tau_mean_log_q_dev": tau_scores,
        "stage1_weight": lam,
        "stage1_weight_mean_log_p_dev": lam_scores,
        "members": members,
        "pool": backend.info() if hasattr(backend, "info") else None,
        "shortlist": shortlist,
    }
    start = time.perf_counter()
    results["spy_seat_after_round1"] = spy_seats(games, search, base, prior, sides)
    results["spy_seat_seconds_per_game"] = round(
        results["spy_seat_after_round1"]["seconds_pool"] / len(games), 3
    )
    print(f"spy seat: {time.perf_counter() - start:.0f} s", flush=True)
    _print_spy(results["spy_seat_after_round1"])
    if civilian:
        results["civilian_seat_after_round1"] = voter_seats(games, search, prior, sides)
        results["civilian_seat_seconds_per_game"] = round(
            results["civilian_seat_after_round1"]["seconds"] / len(games), 3
        )
        _print_voter(results["civilian_seat_after_round1"])
    if outside:
        for assignment, seat in (("known", "outside-known"), ("marginalise", "outside-pair")):
            block = spy_round1(games, backend, spy_assignment=assignment)
            v = block["on_games_with_votes"]
            results[seat] = {
                "spy_assignment": assignment,
                "seat_pick_hit": v["posterior_in_civilian_voter_seat_hit"],
                "seat_pick_hit_ci95": v["posterior_in_civilian_voter_seat_hit_ci95"],
                "civilian_vote_hit": v["civilian_vote_hit"],
                "p_spy_auc": block["spy_posterior_auc"],
                "p_spy_auc_ci95": block["spy_posterior_auc_ci95"],
            }
            print(f"  {seat}: {results[seat]}")
    params = {
        "members": members,
        "shortlist": shortlist,
        "games_limit": games_limit,
        "tau": tau,
        "stage1_weight": lam,
    }
    tag = "" if members == "cooccurrence,embedding" else "_" + members.replace(",", "-")
    if games_limit:
        tag += f"_{games_limit}games"
    write_result("seats" + tag, params, results)
    return results


def _print_spy(block: dict[str, Any]) -> None:
    for side in ("all", "dev", "frozen"):
        for reader, f in block[side].items():
            if not f["seats"]:
                continue
            print(
                f"  spy seat, {side:6s} {reader:6s}: top-10 {f['top10']} {f['top10_ci95']}, "
                f"median rank {f['median_rank']} {f['median_rank_ci95']}, top-1 {f['top1']} "
                f"({f['seats']} seats)"
            )
    for k, v in block["per_statement"].items():
        print(f"    after statement {k}: {v}")


def _print_voter(block: dict[str, Any]) -> None:
    for side in ("all", "dev", "frozen"):
        f = block[side]
        print(
            f"  civilian seat, {side:6s}: pick is a spy {f['seat_pick_hit']} "
            f"{f['seat_pick_hit_ci95']} vs their votes {f['civilian_vote_hit']} "
            f"{f['civilian_vote_hit_ci95']}; P(spy) AUC {f['p_spy_auc']} {f['p_spy_auc_ci95']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.seats", description=__doc__)
    parser.add_argument("--members", default="cooccurrence,embedding")
    parser.add_argument("--shortlist", type=int, default=SHORTLIST)
    parser.add_argument("--games", type=int, default=None, help="a seeded sample of games")
    parser.add_argument("--no-civilian", action="store_true")
    parser.add_argument("--no-outside", action="store_true")
    parser.add_argument("--write-prior", action="store_true")
    parser.add_argument("--tau", type=float, default=None, help="stage 1's τ (default: fit)")
    parser.add_argument(
        "--stage1-weight", type=float, default=None, help="λ in the re-rank (default: fit)"
    )
    a = parser.parse_args(argv)
    run(
        a.members,
        a.shortlist,
        a.games,
        not a.no_civilian,
        not a.no_outside,
        a.write_prior,
        a.tau,
        a.stage1_weight,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
