"""The report's figures, drawn with matplotlib's Agg canvas (no pyplot, no global backend).

Each figure is saved as PNG and SVG; the SVG text is also returned for the HTML report.
At most ``MAX_GROUPS`` groups are drawn (those with the most games); the CSVs hold them all.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from leakage.errors import BackendUnavailable

MAX_GROUPS = 10
_COLOURS = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
]  # fmt: skip


def _figure(width: float, height: float) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise BackendUnavailable(
            "leakage report draws with matplotlib: pip install 'leakage[batch]'"
        ) from None
    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, out: Path, stem: str) -> str:
    fig.savefig(out / f"{stem}.png")
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    svg = buf.getvalue()
    (out / f"{stem}.svg").write_text(svg, encoding="utf-8")
    return svg[svg.index("<svg") :]


def _groups(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["group"] for r in rows))[:MAX_GROUPS]


def short(label: str, width: int = 40) -> str:
    """A group name cut to fit a legend or an axis (matchups can be very long)."""
    return label if len(label) <= width else label[: width - 1] + "…"


def _legend(ax: Any) -> None:
    """Beside the axes, where long names cannot hide the curves."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _clue_axis(ax: Any) -> None:
    """The x axis counts clues: whole numbers only."""
    from matplotlib.ticker import MaxNLocator

    ax.set_xlabel("clues given (m)")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _band(ax: Any, rows: list[dict[str, Any]], group: str, metric: str, colour: str) -> None:
    pts = [r for r in rows if r["group"] == group and r["metric"] == metric]
    if not pts:
        return
    m = [r["m"] for r in pts]
    ax.plot(
        m, [r["value"] for r in pts], marker="o", markersize=3, color=colour, label=short(group)
    )
    ax.fill_between(
        m, [r["low"] for r in pts], [r["high"] for r in pts], color=colour, alpha=0.15, lw=0
    )


def entropy_figure(rows: list[dict[str, Any]], out: Path, *, title: str) -> str:
    """Mean entropy after m clues, with 95% bands and the prior."""
    fig = _figure(9, 4.5)
    ax = fig.subplots()
    for i, g in enumerate(_groups(rows)):
        _band(ax, rows, g, "entropy_bits", _COLOURS[i % len(_COLOURS)])
    _clue_axis(ax)
    ax.set_ylabel("mean entropy of the posterior (bits)")
    ax.set_title(title, fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend(ax)
    return _save(fig, out, "entropy")


def topk_figure(
    rows: list[dict[str, Any]], out: Path, *, ks: tuple[int, ...], chance_k: int | None
) -> str:
    """P(secret in top k) after m clues, one panel per k, with the chance level k / K."""
    fig = _figure(3.2 * len(ks) + 2.5, 4)
    axes = fig.subplots(1, len(ks), sharey=True)
    for ax, k in zip(axes, ks, strict=True):
        for i, g in enumerate(_groups(rows)):
            _band(ax, rows, g, f"top{k}", _COLOURS[i % len(_COLOURS)])
        if chance_k:
            ax.axhline(min(1.0, k / chance_k), color="#999999", ls="--", lw=1, label="chance")
        ax.set_title(f"P(secret in top {k})", fontsize=10)
        _clue_axis(ax)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of games")
    _legend(axes[-1])
    return _save(fig, out, "topk")


def gain_figure(rows: list[dict[str, Any]], out: Path) -> str:
    """Distribution (density) of the information gain per clue, one outline per group."""
    fig = _figure(9, 4.5)
    ax = fig.subplots()
    for i, g in enumerate(_groups(rows)):
        pts = [r for r in rows if r["group"] == g]
        edges = [pts[0]["bin_low"], *(r["bin_high"] for r in pts)]
        ax.stairs(
            [r["density"] for r in pts], edges, color=_COLOURS[i % len(_COLOURS)], label=short(g)
        )
    ax.axvline(0, color="#999999", lw=1)
    ax.set_xlabel("information gain of a clue (bits)")
    ax.set_ylabel("density")
    ax.grid(alpha=0.3)
    _legend(ax)
    return _save(fig, out, "info_gain")


def by_group_figure(rows: list[dict[str, Any]], out: Path, *, label: str) -> str:
    """Mean information gain per clue by speaker group, with 95% intervals."""
    shown = rows[: 3 * MAX_GROUPS]
    fig = _figure(7, 1.2 + 0.35 * max(1, len(shown)))
    ax = fig.subplots()
    y = list(range(len(shown)))[::-1]
    values = [r["mean_gain_bits"] for r in shown]
    err = [
        [max(0.0, r["mean_gain_bits"] - r["mean_gain_low"]) for r in shown],
        [max(0.0, r["mean_gain_high"] - r["mean_gain_bits"]) for r in shown],
    ]
    ax.barh(y, values, xerr=err, color="#1f77b4", alpha=0.8, capsize=3)
    ax.set_yticks(y, [f"{short(r['group'])} ({r['clues']} clues)" for r in shown], fontsize=8)
    ax.set_xlabel("mean information gain per clue (bits)")
    ax.set_title(f"Leakage by {label}", fontsize=10)
    ax.grid(alpha=0.3, axis="x")
    return _save(fig, out, "leakage_by_group")
