"""Pooling variants for sentence clues on a Chameleon card: is the log-linear pool the right form?

**What is measured.** The ensemble (``leakage/backends/ensemble.py``) pools its members
log-linearly: for an item of m clues, member b gives centred log-likelihood rows r_bi (clue i
x K candidates) and the log posterior is L = sum_b a_b sum_i r_bi (a_b = w_b / T_b; uniform
prior, softmax over the candidates). This benchmark fits other forms of the pool on the same
rows and measures whether any of them predicts the secret better:

- ``linear``: the shipped form, a_b > 0 fitted.
- ``floors``: each member's per-clue row becomes a contaminated likelihood
  q_bi = log((1 - eps_b) softmax(r_bi / T_b) + eps_b / K), L = sum_b w_b sum_i q_bi: a member
  that ranks the secret last with confidence costs at most log(K / eps_b) per clue. eps = 0
  is ``linear``.
- ``m_scale``: ``linear`` times m^-gamma (the clues of one game overlap, so evidence may add up
  less than linearly in m).
- ``mixture``: a linear opinion pool of each member's own posterior,
  P = sum_b pi_b softmax(a_b sum_i r_bi), pi on the simplex.
- ``mixture_poe``: the same mixture with the log-linear pool (own weights) as one more
  component.

With the speaker ``judge`` among the members, ``linear`` is also fitted without it
(``linear_without_judge``): whether the fourth member helps the pool.

**How.** Every variant is fitted on the card items of the **dev** secret words (m = 1, 2, 3
pooled, each item its m clues; minimising the mean log loss of the truth, L-BFGS-B, an L2 of
1e-3 on the log-parameters and the mixture logits) and measured per m on the dev and the
**frozen** words: top-1 (ties split), top-3 and log loss with 95% percentile bootstrap
intervals resampling secret words (1,000 resamples, seed 0); the paired difference
variant - ``linear`` on the same resamples; the multiplier of the log-posteriors that would
calibrate them per m (``benchmarks.adversary.sharpening``, its interval from 200 resamples of
items); and the rank, probability and
top 3 of "United Kingdom" in MAgIC's printed game (parameters fitted on the card items).

**Data** as ``benchmarks.studies.chameleon_cards`` builds it (its docstring has the sources and
licences): CK-Arena civilians' statements (``../shared/data/ck-arena-dev/logs``) against the
Chameleon cards holding their word, split dev/frozen by secret word (``split()``), and the MAgIC
United Kingdom fixture. Members are scored once (``RowMemo``); every variant reads the same
rows. Every card item is used, those with a clue short enough to be a ``word`` item too (the
shipped ``sentence_card`` fit leaves those out). Nothing from ``../shared`` is written: the result
file holds parameters and figures.

``python -m benchmarks.studies.pooling_variants`` (``--members cooccurrence,embedding`` for a cheap
run, about 1-2 minutes; the default four members take longer: the judge alone takes about 8 minutes
on the card items here in bf16; ``--precision fp32`` as in ``benchmarks.studies.chameleon_cards``).
Results in ``benchmarks/results/pooling_variants[_<rows>].json``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import log_softmax, logsumexp

from benchmarks.common import bootstrap_draws, padded_probs
from benchmarks.studies._cli import member_list, study_command, study_parser, write_study

MEMBERS = ("cooccurrence", "embedding", "judge", "listener")
CLUES = (1, 2, 3)
L2 = 1e-3
EPS_INIT = -3.0
"""Initial logit of each member's floor (eps about 0.05)."""
VARIANTS = {
    "linear": "L = sum_b a_b sum_i r_bi (the shipped form; a_b = w_b / T_b > 0)",
    "floors": "L = sum_b w_b sum_i log((1 - eps_b) softmax(r_bi / T_b) + eps_b / K): a member's "
    "cost per clue bounded by log(K / eps_b)",
    "m_scale": "L = m^-gamma sum_b a_b sum_i r_bi (evidence of overlapping clues adds up "
    "sublinearly when gamma > 0)",
    "mixture": "P = sum_b pi_b softmax(a_b sum_i r_bi) (a linear opinion pool of the members' "
    "own posteriors)",
    "mixture_poe": "mixture with the log-linear pool (own weights) as one more component",
}
JUDGE = "judge"

Rows = NDArray[np.float64]
"""One item's rows, members x clues x candidates (B x m x K), or a stack of such (n x B x m x K)."""


# -- the pools: rows in, log posteriors out ----------------------------------------------------


def linear_pool(rows: Rows, a: NDArray[np.float64]) -> NDArray[np.float64]:
    """log softmax(sum_b a_b sum_i r_bi): the shipped log-linear pool."""
    return log_softmax(np.einsum("...bmk,b->...k", rows, a), axis=-1)


def floor_pool(
    rows: Rows, temps: NDArray[np.float64], weights: NDArray[np.float64], eps: NDArray[np.float64]
) -> NDArray[np.float64]:
    """log softmax(sum_b w_b sum_i log((1 - eps_b) softmax(r_bi / T_b) + eps_b / K))."""
    k = rows.shape[-1]
    own = log_softmax(rows / temps[:, None, None], axis=-1)
    with np.errstate(divide="ignore"):  # eps = 0: log 0 = -inf, the linear pool
        q = np.logaddexp(
            np.log1p(-eps)[:, None, None] + own, (np.log(eps) - np.log(k))[:, None, None]
        )
    return log_softmax(np.einsum("...bmk,b->...k", q, weights), axis=-1)


def m_scale_pool(rows: Rows, a: NDArray[np.float64], gamma: float) -> NDArray[np.float64]:
    """log softmax(m^-gamma sum_b a_b sum_i r_bi), m = the item's number of clues."""
    m = rows.shape[-2]
    return log_softmax(float(m) ** -gamma * np.einsum("...bmk,b->...k", rows, a), axis=-1)


def mixture_pool(
    rows: Rows,
    a: NDArray[np.float64],
    pi: NDArray[np.float64],
    poe: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """log sum_b pi_b softmax(a_b sum_i r_bi); with ``poe`` (weights per member) the pool
    ``linear_pool(rows, poe)`` is one more component, weighed by the last entry of ``pi``."""
    comps = log_softmax(a[:, None] * rows.sum(axis=-2), axis=-1)
    if poe is not None:
        comps = np.concatenate([comps, linear_pool(rows, poe)[..., None, :]], axis=-2)
    with np.errstate(divide="ignore"):  # a component of weight 0
        return logsumexp(comps + np.log(pi)[:, None], axis=-2)


# -- parameters: an unconstrained vector per variant ------------------------------------------


def _sigmoid(x: NDArray[np.float64]) -> NDArray[np.float64]:
    out: NDArray[np.float64] = 1.0 / (1.0 + np.exp(-x))
    return out


def initial(variant: str, b: int) -> NDArray[np.float64]:
    """The starting vector of ``variant`` for ``b`` members (every multiplier 1, eps 0.05,
    gamma 0, pi uniform)."""
    if variant == "linear":
        return np.zeros(b)
    if variant == "floors":
        return np.concatenate([np.zeros(2 * b), np.full(b, EPS_INIT)])
    if variant == "m_scale":
        return np.zeros(b + 1)
    if variant == "mixture":
        return np.zeros(2 * b)
    if variant == "mixture_poe":
        return np.zeros(3 * b + 1)
    raise ValueError(f"unknown pooling variant {variant!r}: one of {', '.join(VARIANTS)}")


def unpack(variant: str, x: NDArray[np.float64], b: int) -> dict[str, Any]:
    """The parameters of ``variant`` from its unconstrained vector ``x`` (log-multipliers,
    logits of eps, gamma, softmax logits of pi)."""
    if variant in ("linear", "m_scale"):
        out: dict[str, Any] = {"a": np.exp(x[:b])}
        if variant == "m_scale":
            out["gamma"] = float(x[b])
        return out
    if variant == "floors":
        return {
            "temps": np.exp(x[:b]),
            "weights": np.exp(x[b : 2 * b]),
            "eps": _sigmoid(x[2 * b :]),
        }
    if variant == "mixture":
        return {"a": np.exp(x[:b]), "pi": np.exp(log_softmax(x[b:]))}
    if variant == "mixture_poe":
        return {
            "a": np.exp(x[:b]),
            "pi": np.exp(log_softmax(x[b : 2 * b + 1])),
            "poe": np.exp(x[2 * b + 1 :]),
        }
    raise ValueError(f"unknown pooling variant {variant!r}: one of {', '.join(VARIANTS)}")


def _penalised(variant: str, x: NDArray[np.float64], b: int) -> NDArray[np.float64]:
    """The entries the L2 applies to: log-multipliers and mixture logits, not eps or gamma."""
    if variant == "floors":
        return x[: 2 * b]
    if variant == "m_scale":
        return x[:b]
    return x


def log_posterior(variant: str, rows: Rows, params: Mapping[str, Any]) -> NDArray[np.float64]:
    """The pooled log posterior of ``variant`` with ``params`` (as ``unpack`` gives them)."""
    if variant == "linear":
        return linear_pool(rows, params["a"])
    if variant == "floors":
        return floor_pool(rows, params["temps"], params["weights"], params["eps"])
    if variant == "m_scale":
        return m_scale_pool(rows, params["a"], params["gamma"])
    if variant in ("mixture", "mixture_poe"):
        return mixture_pool(rows, params["a"], params["pi"], params.get("poe"))
    raise ValueError(f"unknown pooling variant {variant!r}: one of {', '.join(VARIANTS)}")


# -- the fit -----------------------------------------------------------------------------------


def _buckets(
    rows: Sequence[Rows], truth: Sequence[int]
) -> list[tuple[NDArray[np.int64], Rows, NDArray[np.int64]]]:
    """Items stacked by shape (m, K): (their indices, n x B x m x K rows, truths)."""
    shapes: dict[tuple[int, ...], list[int]] = {}
    for n, r in enumerate(rows):
        shapes.setdefault(r.shape, []).append(n)
    return [
        (np.array(ix), np.stack([rows[n] for n in ix]), np.array([truth[n] for n in ix]))
        for ix in shapes.values()
    ]


def predict(variant: str, rows: Sequence[Rows], params: Mapping[str, Any]) -> list[Rows]:
    """Each item's log posterior (K,) under ``variant``."""
    out: list[Rows] = [np.zeros(0)] * len(rows)
    for ix, stack, _ in _buckets(rows, [0] * len(rows)):
        for n, lp in zip(ix, log_posterior(variant, stack, params), strict=True):
            out[n] = lp
    return out


def fit(
    variant: str, rows: Sequence[Rows], truth: Sequence[int], *, l2: float = L2
) -> tuple[dict[str, Any], float]:
    """``variant``'s parameters minimising the mean log loss of ``truth`` over the items
    ``rows`` (each B x m x K) plus ``l2`` times the squared log-parameters (L-BFGS-B from
    ``initial``); the parameters and the mean log loss they reach."""
    from scipy.optimize import minimize

    b = rows[0].shape[0]
    buckets = _buckets(rows, truth)
    total = len(rows)

    def loss(x: NDArray[np.float64]) -> float:
        params = unpack(variant, x, b)
        s = 0.0
        for _, stack, t in buckets:
            lp = log_posterior(variant, stack, params)
            s -= float(lp[np.arange(t.size), t].sum())
        return s / total

    def objective(x: NDArray[np.float64]) -> float:
        return loss(x) + l2 * float(np.sum(_penalised(variant, x, b) ** 2))

    res = minimize(objective, initial(variant, b), method="L-BFGS-B")
    return unpack(variant, res.x, b), loss(res.x)


def fit_on(
    variant: str, rows: Sequence[Rows], dev: Sequence[int], truth: NDArray[np.int64]
) -> tuple[dict[str, Any], float, list[Rows]]:
    """``fit`` on the items ``dev`` of ``rows``, then ``predict`` every item: the parameters,
    the mean dev log loss and each item's log posterior."""
    params, dev_loss = fit(variant, [rows[n] for n in dev], [int(truth[n]) for n in dev])
    return params, dev_loss, predict(variant, rows, params)


def describe(params: Mapping[str, Any], members: Sequence[str]) -> dict[str, Any]:
    """Parameters for the result file: per member where they are per member."""
    out: dict[str, Any] = {}
    for k, v in params.items():
        if isinstance(v, float):
            out[k] = round(v, 4)
        elif k == "pi" and len(v) == len(members) + 1:
            out[k] = {
                **dict(zip(members, np.round(v[:-1], 4).tolist(), strict=True)),
                "poe": round(v[-1], 4),
            }
        else:
            out[k] = dict(zip(members, np.round(v, 4).tolist(), strict=True))
    return out


# -- figures -----------------------------------------------------------------------------------


def paired(
    pa: NDArray[np.float64],
    pb: NDArray[np.float64],
    truth: NDArray[np.int64],
    groups: Sequence[str],
) -> dict[str, Any]:
    """Per-item differences a - b of top-1 and log loss, with 95% intervals resampling
    ``groups`` (secret words; the resamples of ``grouped_figures`` for the same items)."""
    from benchmarks.adversary import rank_figures
    from benchmarks.studies.chameleon_cards import N_BOOT, SEED
    from leakage.calibration import item_log_loss

    draws = bootstrap_draws(groups, N_BOOT, SEED)
    out: dict[str, Any] = {"items": int(truth.size)}
    for name, d in (
        ("top1", rank_figures(pa, truth)["top1"] - rank_figures(pb, truth)["top1"]),
        ("log_loss", item_log_loss(pa, truth) - item_log_loss(pb, truth)),
    ):
        out[name] = round(float(d.mean()), 4)
        lo, hi = np.quantile([d[x].mean() for x in draws], [0.025, 0.975])
        out[f"{name}_ci95"] = [round(float(lo), 4), round(float(hi), 4)]
    return out


def evaluate(
    predictions: Mapping[str, Sequence[Rows]],
    truth: NDArray[np.int64],
    cells: Mapping[str, NDArray[np.int64]],
    groups: Sequence[str],
    baseline: Callable[[str], str | None],
    *,
    multiplier: bool = True,
) -> dict[str, Any]:
    """Per predictor and cell (m x side): figures, the paired difference against
    ``baseline(predictor)`` (none when it returns None) and, with ``multiplier``, the
    multiplier to calibrate."""
    from benchmarks.adversary import sharpening
    from benchmarks.studies.chameleon_cards import grouped_figures

    out: dict[str, Any] = {}
    for name, lps in predictions.items():
        base = baseline(name)
        out[name] = {}
        for cell, ix in cells.items():
            probs = padded_probs([lps[n] for n in ix])
            g = [groups[n] for n in ix]
            f = grouped_figures(probs, truth[ix], g)
            if multiplier:
                f["multiplier"], f["multiplier_ci95"] = sharpening(probs, truth[ix])
            if base is not None:
                other = padded_probs([predictions[base][n] for n in ix])
                f[f"minus_{base}"] = paired(probs, other, truth[ix], g)
            out[name][cell] = f
    return out


def uk_rank(log_post: Rows, candidates: Sequence[str], secret: str) -> dict[str, Any]:
    """Where a log posterior ranks the secret of MAgIC's game, its probability, the top 3."""
    p = np.exp(log_post)
    order = np.argsort(-p, kind="stable")
    at = list(candidates).index(secret)
    return {
        "rank": int((p > p[at]).sum()) + 1,
        "of": len(candidates),
        "p_secret": round(float(p[at]), 4),
        "top3": [[candidates[i], round(float(p[i]), 4)] for i in order[:3]],
    }


# -- the run -----------------------------------------------------------------------------------


def _print(results: Mapping[str, Any], uk: Mapping[str, Any]) -> None:
    for name, fit_ in results["fits"].items():
        print(f"  {name}: {fit_['parameters']}  (dev log loss {fit_['dev_log_loss']:.3f})")
    print("  per m (dev / frozen): top-1 [95%], top-3, log loss [95%], multiplier to calibrate")
    for name, cells in results["figures"].items():
        for cell, f in cells.items():
            line = (
                f"    {name:<22} {cell:<9} n={f['items']:<4} top-1 {f['top1']:.3f} "
                f"{f['top1_ci95']}  top-3 {f['top3']:.3f}  log loss {f['log_loss']:.3f} "
                f"{f['log_loss_ci95']}  x{f['multiplier']:.2f}"
            )
            print(line)
            for k, d in f.items():
                if k.startswith("minus_"):
                    print(
                        f"    {'':<22} {'- ' + k[6:]:<18} top-1 {d['top1']:+.3f} "
                        f"{d['top1_ci95']}  log loss {d['log_loss']:+.3f} {d['log_loss_ci95']}"
                    )
    print("  MAgIC United Kingdom game (8 candidates): rank of the secret, P(secret), top 3")
    for name, r in uk.items():
        top = ", ".join(f"{w} {p:.2f}" for w, p in r["top3"])
        print(f"    {name:<22} {r['rank']} of {r['of']}  P={r['p_secret']:.3f}  ({top})")


@dataclass(frozen=True)
class Pooled:
    """One pool fitted on the card items of the dev words (``CardRows.pool``)."""

    params: dict[str, Any]
    dev_log_loss: float
    predictions: list[Rows]
    """Each card item's log posterior."""
    uk: dict[str, Any]
    """``uk_rank`` of MAgIC's game."""


@dataclass
class CardRows:
    """The card items' rows of some members, and what the fits and figures need of them."""

    names: list[str]
    rows: list[Rows]
    """Each card item's rows, members x clues x candidates."""
    uk_rows: Rows
    """The rows of MAgIC's United Kingdom game."""
    uk_candidates: list[str]
    uk_secret: str
    uk_category: str
    truth: NDArray[np.int64]
    groups: list[str]
    sides: dict[str, str]
    """Each secret word (group) on its side, ``dev`` or ``frozen``."""
    dev: list[int]
    cells: dict[str, NDArray[np.int64]]
    """``m<m>_<side>``: the items with m clues on the dev or frozen words."""
    seconds: dict[str, float]
    logs: str
    cards_path: str
    _pools: dict[tuple[str, tuple[str, ...]], Pooled] = field(
        default_factory=dict, repr=False, compare=False
    )

    def pool(self, members: Sequence[str], variant: str = "linear") -> Pooled:
        """``variant`` over ``members`` fitted on the dev words (each pool fitted once)."""
        key = (variant, tuple(members))
        if key not in self._pools:
            keep = [self.names.index(n) for n in members]
            params, dev_loss, predictions = fit_on(
                variant, [r[keep] for r in self.rows], self.dev, self.truth
            )
            uk = uk_rank(
                log_posterior(variant, self.uk_rows[keep], params),
                self.uk_candidates,
                self.uk_secret,
            )
            self._pools[key] = Pooled(params, dev_loss, predictions, uk)
        return self._pools[key]


def card_rows(backends: Mapping[str, Any]) -> CardRows:
    """Score ``backends`` (name -> backend, each behind a ``RowMemo``) on the card items and
    MAgIC's game (as ``benchmarks.studies.chameleon_cards`` builds them)."""
    from benchmarks import chameleon_cards as cc
    from benchmarks.adversary import RowMemo
    from benchmarks.common import ck_arena_games

    logs, games = ck_arena_games()
    cards_path = cc.SHARED_DATA / "chameleon-cards" / "cards.json"
    scored = cc.Scored("card", cc.card_items(games, cc.load_cards(cards_path)))
    sides = cc.split(scored.items)
    fixture = cc.load_fixture()
    uk_set = cc.Scored("uk", [cc.Item(fixture, "uk", len(fixture.turns), "card", None, "uk")])
    seconds: dict[str, float] = {}
    for name, backend in backends.items():
        memo = RowMemo(backend)
        scored.score(name, memo)
        uk_set.score(name, memo)
        seconds[name] = scored.seconds[name]
        print(f"  {name}: card items {scored.seconds[name]:.1f} s", flush=True)
    names = list(backends)
    groups = [it.group for it in scored.items]
    return CardRows(
        names=names,
        rows=[np.stack([scored.rows[b][n] for b in names]) for n in range(len(scored.items))],
        uk_rows=np.stack([uk_set.rows[b][0] for b in names]),
        uk_candidates=list(uk_set.games[0].candidates),
        uk_secret=fixture.secret,
        uk_category=fixture.category,
        truth=np.array([g.truth[0] for g in scored.games], dtype=np.int64),
        groups=groups,
        sides=dict(sides),
        dev=[n for n, it in enumerate(scored.items) if sides[it.group] == "dev"],
        cells={
            f"m{m}_{side}": np.array(
                [n for n, it in enumerate(scored.items) if it.m == m and sides[it.group] == side]
            )
            for m in CLUES
            for side in ("dev", "frozen")
        },
        seconds=seconds,
        logs=str(logs),
        cards_path=str(cards_path),
    )


def run(members: Sequence[str] = MEMBERS, precision: str = "auto") -> dict[str, Any]:
    """Score ``members`` on the card items and MAgIC's game, fit every variant on the dev
    words, measure per m on dev and frozen words, write the result file."""
    from benchmarks import chameleon_cards as cc
    from benchmarks.adversary import build_members

    start = time.perf_counter()
    backends, load = build_members(members, precision, embedding_precision=precision)
    data = card_rows(backends)
    seconds: dict[str, Any] = {"load": load, **data.seconds}
    names, rows, truth = data.names, data.rows, data.truth
    groups, dev, cells = data.groups, data.dev, data.cells
    print(
        f"pooling_variants: {len(rows)} card items, {len(dev)} on dev words "
        f"({len({groups[n] for n in dev})} words), members {', '.join(names)}",
        flush=True,
    )

    fits: dict[str, Any] = {}
    predictions: dict[str, list[Rows]] = {}
    uk: dict[str, Any] = {}
    runs: list[tuple[str, str, list[int]]] = [(v, v, list(range(len(names)))) for v in VARIANTS]
    if JUDGE in names and len(names) > 1:
        runs.append(
            ("linear_without_judge", "linear", [i for i, b in enumerate(names) if b != JUDGE])
        )
    for label, variant, keep in runs:
        with_names = [names[i] for i in keep]
        t0 = time.perf_counter()
        pooled = data.pool(with_names, variant)
        params, dev_loss = pooled.params, pooled.dev_log_loss
        predictions[label] = pooled.predictions
        uk[label] = pooled.uk
        fits[label] = {
            "variant": variant,
            "members": with_names,
            "parameters": describe(params, with_names),
            "dev_log_loss": round(dev_loss, 4),
            "seconds": round(time.perf_counter() - t0, 2),
        }
        print(f"  fitted {label} in {fits[label]['seconds']:.1f} s", flush=True)

    def baseline(label: str) -> str | None:
        return None if label in ("linear", "linear_without_judge") else "linear"

    figures = evaluate(predictions, truth, cells, groups, baseline)
    if "linear_without_judge" in predictions:
        for cell, ix in cells.items():
            figures["linear"][cell]["minus_linear_without_judge"] = paired(
                padded_probs([predictions["linear"][n] for n in ix]),
                padded_probs([predictions["linear_without_judge"][n] for n in ix]),
                truth[ix],
                [groups[n] for n in ix],
            )
    seconds["total"] = round(time.perf_counter() - start, 1)
    results = {
        "data": {
            "card_items": len(rows),
            "items_by_cell": {c: int(ix.size) for c, ix in cells.items()},
            "dev_words": sorted({groups[n] for n in dev}),
            "frozen_words": sorted({g for g in groups if data.sides[g] == "frozen"}),
        },
        "backends": {n: b.info() for n, b in backends.items()},
        "fits": fits,
        "figures": figures,
        "magic_uk_game": uk,
        "seconds": seconds,
    }
    _print(results, uk)
    params_doc = {
        "members": names,
        "llm_precision": precision,
        "logs": data.logs,
        "cards": [cc.SHIPPED_CARDS, data.cards_path],
        "variants": VARIANTS,
        "fit": {
            "on": "card items of the dev words, m = 1-3 pooled",
            "l2": L2,
            "method": "L-BFGS-B",
        },
        "split": cc.SPLIT_RULE,
        "bootstrap": {
            "resamples": cc.N_BOOT,
            "seed": cc.SEED,
            "level": 0.95,
            "unit": "secret word",
        },
        "command": study_command("pooling_variants", precision, members, MEMBERS),
    }
    path = write_study("pooling_variants", backends, precision, params_doc, results)
    print(f"  wrote {path}  ({seconds['total']:.0f} s)")
    return results


if __name__ == "__main__":
    args = study_parser(
        "pooling_variants",
        __doc__,
        members=MEMBERS,
        members_help="comma-separated members to pool (default: all four; with judge, linear "
        "is also fitted without it)",
        precision_help="the LLM members' and the embedding's precision, as in "
        "benchmarks.studies.chameleon_cards; results in pooling_variants_<precision>.json",
        epilog="variants:\n" + "\n".join(f"  {k}: {v}" for k, v in VARIANTS.items()),
    ).parse_args()
    run(member_list(args.members), precision=args.precision)
