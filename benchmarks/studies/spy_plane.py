"""The reveal-vs-conceal plane of SpyGame from the spy's seat: are its axes two dimensions?
(issue 39, item 5)

Reads a step table scored with ``--seat spy`` (``leakage batch ... --seat spy``) through
``leakage.curves.clue_points`` (the civilians' statements of the games scored from that seat:
x the spy's gain in bits about the civilians' word, y log2 P(s | civilians' word) /
P(s | spies' word)) and prints each axis's range and quantiles and the correlation between
them: Pearson's r and Spearman's ρ with 95% percentile bootstrap intervals over games (a
game's statements resampled together; 2000 resamples, seed 0), and r², the share of y's
variance a line in x explains. ``--json`` writes the figures.

    python -m benchmarks.studies.spy_plane RESULTS [--json FILE]

The figures in docs/batch.md come from a sample of the CK-Arena dev logs (every fourth log
by name: 57 games; ``../shared/data``, Xu et al. 2025, evaluation only; nothing from them is
written but the figures).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray


def _ranks(v: NDArray[np.float64]) -> NDArray[np.float64]:
    from scipy.stats import rankdata

    return np.asarray(rankdata(v), dtype=np.float64)


def _r(x: NDArray[np.float64], y: NDArray[np.float64]) -> float:
    return float(np.corrcoef(x, y)[0, 1])


def axes_figures(results: Path, *, replicates: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The figures of the module docstring for the step table in ``results``."""
    import pyarrow.dataset as ds

    from leakage.curves import clue_points

    points = clue_points(ds.dataset(Path(results) / "steps", format="parquet"))
    if not points["spy_seat_games"]:
        raise SystemExit(
            f"{results}: no game scored from the spy's seat (leakage batch --seat spy)"
        )
    x, y, game = points["x"], points["y"], points["game"]
    games = np.unique(game)
    rows = [np.flatnonzero(game == g) for g in games]
    rng = np.random.default_rng(seed)
    boot: dict[str, list[float]] = {"pearson": [], "spearman": []}
    for _ in range(replicates):
        pick = np.concatenate([rows[i] for i in rng.integers(len(games), size=len(games))])
        boot["pearson"].append(_r(x[pick], y[pick]))
        boot["spearman"].append(_r(_ranks(x[pick]), _ranks(y[pick])))
    q = [0, 5, 25, 50, 75, 95, 100]

    def axis(v: NDArray[np.float64]) -> dict[str, Any]:
        quantiles = dict(zip(map(str, q), np.percentile(v, q).tolist(), strict=True))
        return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)), "quantiles": quantiles}

    pearson, spearman = _r(x, y), _r(_ranks(x), _ranks(y))
    return {
        "games": int(points["spy_seat_games"]),
        "statements": len(x),
        "spies_left_out": int(points["spies_left_out"]),
        "x_spy_gain_bits": axis(x),
        "y_value_to_civilians_bits": axis(y),
        "pearson": pearson,
        "pearson_95": np.percentile(boot["pearson"], [2.5, 97.5]).tolist(),
        "spearman": spearman,
        "spearman_95": np.percentile(boot["spearman"], [2.5, 97.5]).tolist(),
        "r_squared": pearson**2,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="a leakage batch --seat spy output directory")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    found = axes_figures(args.results)
    text = json.dumps(found, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", "utf-8")


if __name__ == "__main__":
    main()
