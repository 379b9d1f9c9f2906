"""The pair prior: how likely each vocabulary word is to be the other word of a pair, given one.

SpyGame / Undercover pairs are chosen related (sun / moon, football / basketball): a player
who holds one word already knows much about the other. The prior is a conditional logit over
the open vocabulary, fitted on logged pairs rather than set by hand::

    log π(c | s) = β · cos(e_s, e_c) + γ · log(1 + frequency rank of c)  −  log Z(s)

cos is the cosine of the vocabulary index's vectors; the frequency rank is the word's row in
a ``wordfreq:N`` vocabulary (most frequent first; pair words are usually common nouns). The
own word s has probability 0. ``fit_pair_prior`` finds (β, γ) by maximum likelihood over the
pairs given, each in both directions (the game deals either word to the civilians). The
shipped fit (``leakage/data/pair_prior.json``) was fitted on the dev side of the CK-Arena dev
logs' pairs (``benchmarks/studies/seats.py``; docs/games.md, "Seats").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from leakage.errors import InvalidInput
from leakage.vocab import OpenVocabulary

PAIR_PRIOR_FORMAT = "leakage.pair-prior/1"


class PairPrior(BaseModel):
    """A fitted pair prior (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    format: str = PAIR_PRIOR_FORMAT
    beta: float
    """Weight of cos(e_s, e_c)."""
    gamma: float
    """Weight of log(1 + the word's row in the vocabulary)."""
    pairs: int = 0
    """How many pairs it was fitted on."""
    fitted_on: dict[str, Any] = {}
    """Where the pairs came from and how they were chosen."""

    def log_prior(self, vocab: OpenVocabulary, own: str) -> NDArray[np.float64]:
        """Unnormalised log π(c | own) for every vocabulary word (``-inf`` for ``own``).

        ``own`` outside the vocabulary is embedded (the vocabulary's encoder)."""
        index = vocab.index
        row = index.position(own)
        if row is not None:
            vec = index.vectors[row]
        else:
            vec = vocab.encoder.encode([own])[0].astype(np.float32)
            vec = vec / np.linalg.norm(vec)
        return self.from_cosines(index.vectors @ vec, own_rows=own_rows(vocab, own))

    def from_cosines(
        self, cosines: NDArray[Any], own_rows: Sequence[int] = ()
    ) -> NDArray[np.float64]:
        out = self.beta * np.asarray(cosines, dtype=np.float64) + self.gamma * _log_rank(
            len(cosines)
        )
        out[list(own_rows)] = -np.inf
        return out


def own_rows(vocab: OpenVocabulary, own: str) -> list[int]:
    """Rows that cannot be the other word: ``own`` and the words of its stem
    (``WordForms.inflections``: the other word of a pair is not the own word's plural or
    derivation). Compounds stay: windsurfing / surfing is a CK-Arena pair."""
    return [*vocab.index.positions(own), *vocab.forms.inflections(own)]


def _log_rank(n: int) -> NDArray[np.float64]:
    return np.log1p(np.arange(n, dtype=np.float64))


def fit_pair_prior(
    vocab: OpenVocabulary,
    pairs: Sequence[tuple[str, str]],
    *,
    fitted_on: dict[str, Any] | None = None,
) -> PairPrior:
    """Maximum-likelihood (β, γ) over ``pairs`` (each used in both directions).

    Pairs with a word outside the vocabulary are skipped (the other word could not be
    ranked); ``InvalidInput`` when none is left.
    """
    from scipy.optimize import minimize

    index = vocab.index
    usable = [
        (a, b)
        for a, b in dict.fromkeys(pairs)
        if a != b and index.position(a) is not None and index.position(b) is not None
    ]
    if not usable:
        raise InvalidInput("no pair has both words in the vocabulary: nothing to fit")
    log_rank = _log_rank(len(index))
    rows = []  # (cosines to the own word, row of the other word)
    for a, b in usable:
        for own, other in ((a, b), (b, a)):
            ro, rt = index.position(own), index.position(other)
            assert ro is not None and rt is not None
            rows.append((index.vectors @ index.vectors[ro], rt))
    cos = np.stack([r[0] for r in rows]).astype(np.float64)
    target = np.array([r[1] for r in rows])
    keep = np.ones_like(cos, dtype=bool)
    for i, (a, b) in enumerate(x for pair in usable for x in (pair, pair[::-1])):
        keep[i, own_rows(vocab, a)] = False
        keep[i, index.position(b)] = True

    def nll(theta: NDArray[np.float64]) -> float:
        z = theta[0] * cos + theta[1] * log_rank
        z = np.where(keep, z, -np.inf)
        m = z.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1))
        return float(-(z[np.arange(len(rows)), target] - lse).sum())

    fit = minimize(nll, x0=np.array([10.0, 0.0]), method="Nelder-Mead", options={"xatol": 1e-3})
    return PairPrior(
        beta=float(fit.x[0]),
        gamma=float(fit.x[1]),
        pairs=len(usable),
        fitted_on={**(fitted_on or {}), "skipped_pairs": len(set(pairs)) - len(usable)},
    )


def default_pair_prior_path() -> Any:
    """The shipped fit, a resource of the package."""
    return files("leakage") / "data" / "pair_prior.json"


def read_pair_prior(path: str | Path | None = None) -> PairPrior:
    """A pair prior from ``path`` (default: the shipped fit)."""
    source = default_pair_prior_path() if path is None else Path(path)
    try:
        return PairPrior.model_validate(json.loads(source.read_text("utf-8")))
    except (OSError, ValueError) as err:
        raise InvalidInput(f"{source}: not a pair prior ({err})") from err
