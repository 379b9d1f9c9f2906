"""Maximum-likelihood fits of temperatures and pooling weights (scipy's L-BFGS-B).

The model of an item is a softmax over its candidates of a linear pool of centred rows::

    P(truth = j) ∝ exp( Σ_b a_b · c_b[j] )

with one multiplier ``a_b >= 0`` per member. One member alone: ``a_b = 1 / T_b``, its
temperature. The ensemble: ``a_b = w_b / T_b`` with ``T_b`` fixed from the member's own fit
and ``w_b`` fitted jointly, so that a weight of 1 means "as trusted as when it is alone".
The negative log-likelihood is convex in ``a`` (a log-sum-exp of linear functions).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.errors import BackendUnavailable

MIN_MULTIPLIER = 1e-8
"""A fitted multiplier below this counts as 0: the member carries no information."""


def pooled_log_probs(
    rows: NDArray[np.float64], mask: NDArray[np.bool_], multipliers: NDArray[np.float64]
) -> NDArray[np.float64]:
    """log P over each item's candidates, ``-inf`` where there is no candidate.

    ``rows``: (members, items, K); ``multipliers``: (members,).
    """
    logits = np.tensordot(np.asarray(multipliers, dtype=np.float64), rows, axes=1)
    logits = np.where(mask, logits, -np.inf)
    top = logits.max(axis=1, keepdims=True)
    return logits - (top + np.log(np.exp(logits - top).sum(axis=1, keepdims=True)))


def pooled_probs(
    rows: NDArray[np.float64], mask: NDArray[np.bool_], multipliers: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Probabilities over each item's candidates (0 where there is no candidate)."""
    return np.exp(pooled_log_probs(rows, mask, multipliers))


def nll_and_grad(
    multipliers: NDArray[np.float64],
    rows: NDArray[np.float64],
    mask: NDArray[np.bool_],
    truth: NDArray[np.int64],
) -> tuple[float, NDArray[np.float64]]:
    """Mean negative log-likelihood of the truths (nats per item) and its gradient."""
    n = truth.size
    logp = pooled_log_probs(rows, mask, multipliers)
    items = np.arange(n)
    nll = -float(logp[items, truth].mean())
    p = np.exp(logp)
    # d/da_b of -log p_truth = E_p[c_b] - c_b[truth]
    expected = (rows * p[None]).sum(axis=2)
    grad = (expected - rows[:, items, truth]).mean(axis=1)
    return nll, grad


def _minimize() -> Any:
    try:
        from scipy.optimize import minimize
    except ImportError:
        raise BackendUnavailable(
            "fitting ensemble weights needs scipy; install it: pip install 'leakage[dev]' "
            "(or pip install scipy)"
        ) from None
    return minimize


def fit_multipliers(
    rows: NDArray[np.float64],
    mask: NDArray[np.bool_],
    truth: NDArray[np.int64],
    *,
    init: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Multipliers ``a >= 0`` (one per member) maximising the likelihood of the truths."""
    m = rows.shape[0]
    if truth.size == 0:
        raise ValueError("no items to fit on")
    if init is None:
        # Start where each member's pooled rows have unit spread on average.
        spread = np.array([np.abs(r[mask]).mean() if mask.any() else 1.0 for r in rows])
        init = 1.0 / (m * np.maximum(spread, 1e-6))
    result = _minimize()(
        nll_and_grad,
        np.asarray(init, dtype=np.float64),
        args=(rows, mask, truth),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * m,
        options={"maxiter": 500},
    )
    a = np.asarray(result.x, dtype=np.float64)
    return np.where(a < MIN_MULTIPLIER, 0.0, a)


def fit_temperature(
    rows: NDArray[np.float64], mask: NDArray[np.bool_], truth: NDArray[np.int64]
) -> float | None:
    """One member's temperature ``T`` (rows: items x K); None when it carries no information.

    A member whose best multiplier is 0 predicts best by saying nothing (uniform); it has no
    finite temperature.
    """
    (a,) = fit_multipliers(rows[None], mask, truth)
    return None if a == 0 else float(1.0 / a)
