"""The reliability diagram: accuracy against confidence per bin, one line per predictor.

matplotlib is imported here and drawn through its Agg canvas directly (no pyplot, so no
global backend is chosen for the caller).
"""

from __future__ import annotations

from pathlib import Path

from leakage.calibration._calibrate import ENSEMBLE, EQUAL_POOL, CalibrationResult
from leakage.errors import BackendUnavailable

_STYLE = {
    ENSEMBLE: {"color": "black", "linewidth": 2.2, "marker": "o"},
    EQUAL_POOL: {"color": "#777777", "linewidth": 1.2, "marker": "s", "linestyle": ":"},
}
_MEMBER_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]


def write_reliability_diagram(result: CalibrationResult, path: str | Path) -> None:
    """Reliability curves of each member, the equal-weight pool and the ensemble (held out),
    with the diagonal, and below them how many items fall in each confidence bin."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise BackendUnavailable(
            "the reliability diagram needs matplotlib: pip install 'leakage[splits]'"
        ) from None

    fig = Figure(figsize=(7, 7.5), dpi=120)
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    top.plot([0, 1], [0, 1], color="#bbbbbb", linestyle="--", linewidth=1, label="perfect")
    names = [*result.members, EQUAL_POOL, ENSEMBLE]
    for i, name in enumerate(names):
        m = result.metrics[name]
        style = _STYLE.get(name, {"color": _MEMBER_COLOURS[i % 5], "linewidth": 1.5, "marker": "^"})
        pts = [(b.confidence, b.accuracy) for b in m.reliability if b.count]
        label = (
            f"{name.replace('_', '-')}: log loss {m.log_loss:.3f}, acc {m.accuracy:.3f}, "
            f"ECE {m.ece:.3f}"
        )
        top.plot([p[0] for p in pts], [p[1] for p in pts], label=label, markersize=4, **style)
        centres = [(b.low + b.high) / 2 for b in m.reliability]
        bottom.step(
            centres,
            [b.count for b in m.reliability],
            where="mid",
            color=style["color"],
            linewidth=1,
        )
    top.set_xlim(0, 1)
    top.set_ylim(0, 1.02)
    top.set_ylabel("top-1 accuracy (held-out)")
    top.set_title(
        f"Reliability on {len(result.test_games)} held-out games, {result.test_items} items "
        f"({len(result.metrics[ENSEMBLE].reliability)} bins)",
        fontsize=10,
    )
    top.legend(loc="upper left", fontsize=7.5, framealpha=0.9, edgecolor="none")
    top.grid(alpha=0.3)
    bottom.set_xlabel("top-1 confidence")
    bottom.set_ylabel("items")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(str(path), format="png")
