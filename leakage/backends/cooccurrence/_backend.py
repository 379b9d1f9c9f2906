"""The co-occurrence likelihood backend: counts from any ``CountSource`` -> log P(r | w)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from leakage.backends.base import Closing, CountPlan, SupportsClose, accepted_options
from leakage.backends.cooccurrence._estimator import ESTIMATORS, Estimator, term_loglik
from leakage.backends.cooccurrence._source import COUNT_SOURCES, CountSource, Query
from leakage.corpus import clue_terms, normalize_phrase

Pooling = Literal["mean", "sum"]
POOLINGS: tuple[str, ...] = get_args(Pooling)


class CooccurrenceBackend(Closing):
    """log P(clue | secret) from document co-occurrence counts.

    A clue is reduced to its terms (``clue_terms``); a multi-word candidate is one phrase.
    A clue's log-likelihood is the mean (``pooling="mean"``, the default: a sentence is
    one piece of evidence however long it is) or the sum (naive Bayes over its words) of
    its terms' log-likelihoods.

    ``close()`` closes the count source when the backend owns it (``owns_source``: the
    factory opened it from a name); a source passed in is the caller's to close.
    """

    name = "cooccurrence"

    def __init__(
        self,
        source: CountSource,
        *,
        estimator: Estimator = "conditional",
        beta: float = 100.0,
        tau: float = 0.1,
        pooling: Pooling = "mean",
        owns_source: bool = False,
    ) -> None:
        if estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {', '.join(ESTIMATORS)}")
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {', '.join(POOLINGS)}")
        if beta <= 0 or tau <= 0:
            raise ValueError("beta and tau must be positive")
        self.source = source
        self.estimator = estimator
        self.beta = beta
        self.tau = tau
        self.pooling = pooling
        self.owns_source = owns_source
        self.max_cached_rows = 200_000
        self._info: dict[str, Any] | None = None
        # (term, candidate phrases) -> log-likelihood row: a game's matrix is a few dict
        # look-ups once its clue words have been seen with that card.
        self._rows: dict[tuple[str, tuple[str, ...]], NDArray[np.float64]] = {}

    def info(self) -> dict[str, Any]:
        if self._info is None:
            self._info = {
                "backend": self.name,
                "estimator": self.estimator,
                "beta": self.beta,
                "tau": self.tau,
                "pooling": self.pooling,
                "count_source": self.source.info(),
            }
        return dict(self._info)

    @staticmethod
    def _plan(
        clues: Sequence[str], candidates: Sequence[str]
    ) -> tuple[list[tuple[str, ...]], list[str], list[str]]:
        per_clue = [clue_terms(c) for c in clues]
        terms = list(dict.fromkeys(t for ts in per_clue for t in ts))
        cands = [normalize_phrase(w) for w in candidates]
        return per_clue, terms, cands

    def queries(self, clues: Sequence[str], candidates: Sequence[str]) -> list[Query]:
        """Every count query scoring these clues needs (for dry runs and budgets)."""
        _, terms, cands = self._plan(clues, candidates)
        return (
            [(t,) for t in terms] + [(c,) for c in cands] + [(t, c) for t in terms for c in cands]
        )

    def dry_run(self, games: Iterable[tuple[Sequence[str], Sequence[str]]]) -> list[CountPlan]:
        """The distinct count queries scoring these games needs, and how many are not cached."""
        wanted: dict[Query, None] = {}
        for clues, candidates in games:
            wanted.update(dict.fromkeys(self.queries(clues, candidates)))
        missing = self.source.uncached(list(wanted))
        return [CountPlan(self.source.name, len(wanted), len(missing))]

    def close(self) -> None:
        """Close the count source if this backend opened it (idempotent)."""
        self._rows.clear()
        if self.owns_source and isinstance(self.source, SupportsClose):
            self.source.close()

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        per_clue = [clue_terms(c) for c in clues]
        cands = tuple(normalize_phrase(w) for w in candidates)
        out = np.zeros((len(clues), len(cands)))
        rows = self._rows
        missing = list(dict.fromkeys(t for ts in per_clue for t in ts if (t, cands) not in rows))
        if missing:
            self._fill_rows(missing, cands)
        for i, ts in enumerate(per_clue):
            if len(ts) == 1:
                out[i] = rows[(ts[0], cands)]
            elif ts:
                stacked = np.vstack([rows[(t, cands)] for t in ts])
                out[i] = stacked.mean(axis=0) if self.pooling == "mean" else stacked.sum(axis=0)
        return out

    def _fill_rows(self, terms: list[str], cands: tuple[str, ...]) -> None:
        """Count and estimate the rows of ``terms`` against ``cands`` in one batch of queries."""
        t, k = len(terms), len(cands)
        counts = self.source.counts(
            [(x,) for x in terms] + [(c,) for c in cands] + [(x, c) for x in terms for c in cands]
        )
        arr = np.asarray(counts, dtype=np.float64)
        term_ll = term_loglik(
            arr[t + k :].reshape(t, k),
            arr[:t],
            arr[t : t + k],
            self.source.total(),
            estimator=self.estimator,
            beta=self.beta,
            tau=self.tau,
        )
        if len(self._rows) + t > self.max_cached_rows:
            self._rows.clear()  # a crude bound; rows are cheap to recompute from cached counts
        for x, row in zip(terms, term_ll, strict=True):
            self._rows[(x, cands)] = row


def open_count_source(
    source: str = "local",
    *,
    index: str | Path | None = None,
    cache_path: str | Path | None = None,
    budget: int | None = None,
    endpoint: str | None = None,
    build_missing: bool = True,
    variables: Mapping[str, str] | None = None,
) -> CountSource:
    """Open a count source of ``COUNT_SOURCES`` by name: ``local`` (an FTS5 index), a web
    engine, or one an installed distribution adds. Each is given the options its ``open``
    names: ``index`` and ``build_missing`` the local index, ``cache_path`` (default:
    ``leakage.paths``' web counts), ``budget``, ``endpoint`` (a base URL instead of the
    engine's: a proxy, a self-hosted infini-gram) and ``variables`` a web engine.

    ``variables``: the values of the engines' key variables (``SERPAPI_API_KEY``,
    ``GOOGLE_API_KEY``, ``GOOGLE_CSE_ID``) as the caller read them; the command line and the
    service pass those of their settings. ``None``: the engine reads the environment
    (``from_env``), a convenience for direct library users.
    """
    kind = COUNT_SOURCES.pick(source, "count source")
    named, _ = accepted_options(kind.open)
    if "cache_path" in named and cache_path is None:
        from leakage.paths import default_paths

        cache_path = default_paths().web_counts
    given: dict[str, Any] = {
        "index": index,
        "build_missing": build_missing,
        "cache_path": Path(cache_path) if cache_path is not None else None,
        "budget": budget,
        "endpoint": endpoint,
        "variables": variables,
    }
    return kind.open(**{k: v for k, v in given.items() if k in named and v is not None})


def _cooccurrence(
    *,
    source: str | CountSource = "local",
    index: str | Path | None = None,
    cache_path: str | Path | None = None,
    budget: int | None = None,
    endpoint: str | None = None,
    variables: Mapping[str, str] | None = None,
    estimator: Estimator = "conditional",
    beta: float = 100.0,
    tau: float = 0.1,
    pooling: Pooling = "mean",
) -> CooccurrenceBackend:
    opened = isinstance(source, str)
    src = (
        open_count_source(
            source,
            index=index,
            cache_path=cache_path,
            budget=budget,
            endpoint=endpoint,
            variables=variables,
        )
        if isinstance(source, str)
        else source
    )
    return CooccurrenceBackend(
        src, estimator=estimator, beta=beta, tau=tau, pooling=pooling, owns_source=opened
    )
