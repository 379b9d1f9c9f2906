"""From co-occurrence counts to log-likelihoods.

``conditional`` (the default) is the published estimator P(r | w) = #(r AND w) / #(w) with
Dirichlet smoothing toward the clue's corpus rate:

    P(r | w) = (#(r AND w) + β · #(r)/N) / (#(w) + β)

It never divides by zero (β > 0) and one zero count never vetoes a candidate: a candidate
that never co-occurs with the clue keeps the background rate #(r)/N, and a clue unseen in
the corpus gets a half count. A clue term that co-occurs with *no* candidate is flat
(uninformative): otherwise the 1/(#(w) + β) left in the smoothed estimate would favour the
rarest candidate for no reason.

Plain PMI, log P(r|w) - log P(r), differs from ``conditional`` only by a per-clue constant
and gives the same posterior, so the two variants offered are scale-free scores turned into
log-likelihoods with a temperature τ:

* ``npmi``: normalised PMI, log(p(r,w) / (p(r) p(w))) / -log p(r,w), in [-1, 1];
* ``ngd``: minus the normalised Google distance,
  (max(log f_r, log f_w) - log f_rw) / (log N - min(log f_r, log f_w)).
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np
from numpy.typing import NDArray

Estimator = Literal["conditional", "npmi", "ngd"]
ESTIMATORS: tuple[str, ...] = get_args(Estimator)


def term_loglik(
    pair: NDArray[np.float64],
    term: NDArray[np.float64],
    cand: NDArray[np.float64],
    n_docs: float,
    *,
    estimator: str = "conditional",
    beta: float = 100.0,
    tau: float = 0.1,
) -> NDArray[np.float64]:
    """Log-likelihood of each clue term (rows) under each candidate (columns).

    ``pair[i, j]`` = #(term_i AND cand_j), ``term[i]`` = #(term_i), ``cand[j]`` = #(cand_j),
    ``n_docs`` = N. Rows whose pair counts are all zero come back as zeros (flat).
    """
    pair = np.asarray(pair, dtype=np.float64)
    fr = np.maximum(np.asarray(term, dtype=np.float64), 0.5)[:, None]
    fw = np.maximum(np.asarray(cand, dtype=np.float64), 0.5)[None, :]
    n = max(float(n_docs), 1.0)
    # Counts from web engines are estimates and can be inconsistent (#(r AND w) > #(w)).
    pair = np.minimum(pair, np.minimum(fr, fw))
    if estimator == "conditional":
        out = np.log(pair + beta * fr / n) - np.log(fw + beta)
    elif estimator == "npmi":
        p_rw = (pair + beta * fr * fw / (n * n)) / (n + beta)
        pmi = np.log(p_rw) - np.log(fr / n) - np.log(fw / n)
        out = (pmi / np.maximum(-np.log(p_rw), 1e-9)) / tau
    elif estimator == "ngd":
        log_rw = np.log(pair + 0.5)
        lr, lw = np.log(fr), np.log(fw)
        denom = np.maximum(np.log(n) - np.minimum(lr, lw), 1e-9)
        out = -((np.maximum(lr, lw) - log_rw) / denom) / tau
    else:
        raise ValueError(f"unknown estimator {estimator!r}; choose one of {', '.join(ESTIMATORS)}")
    flat = ~(pair > 0).any(axis=1)
    if flat.any():
        out[flat] = 0.0
    return out
