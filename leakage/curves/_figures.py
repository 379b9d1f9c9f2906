"""The report's figures, drawn with matplotlib's Agg canvas (no pyplot, no global backend).

Each figure is saved as PNG and SVG; the SVG text is also returned for the HTML report.
At most ``MAX_GROUPS`` groups are drawn (those with the most games); the CSVs hold them all.
A group's colour comes from the ``colours`` mapping of the view (its model's with
``--by speaker``: see :mod:`leakage.curves._colours`), never from its position; intervals
are drawn as bands only when at most ``MAX_BANDS`` groups are drawn (more bands hide each
other; the CSVs have them).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from leakage.curves._colours import group_colour, role_style
from leakage.errors import BackendUnavailable

MAX_GROUPS = 10
MAX_BANDS = 4


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


def _clue_axis(ax: Any, per_statement: bool = False) -> None:
    """The x axis counts clues (statements, each read on its own): whole numbers only."""
    from matplotlib.ticker import MaxNLocator

    ax.set_xlabel(
        "statement number (m), each read on its own" if per_statement else "clues given (m)"
    )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))


Colours = Mapping[str, str] | None


def _band(
    ax: Any, rows: list[dict[str, Any]], group: str, metric: str, band: bool, colours: Colours
) -> None:
    pts = [r for r in rows if r["group"] == group and r["metric"] == metric]
    if not pts:
        return
    m = [r["m"] for r in pts]
    colour = group_colour(group, colours)
    line, marker = role_style(group)
    ax.plot(
        m, [r["value"] for r in pts], marker=marker, markersize=3, color=colour, ls=line,
        label=short(group),
    )  # fmt: skip
    if band:
        ax.fill_between(
            m, [r["low"] for r in pts], [r["high"] for r in pts], color=colour, alpha=0.15, lw=0
        )


def entropy_figure(
    rows: list[dict[str, Any]],
    out: Path,
    *,
    title: str,
    colours: Colours = None,
    per_statement: bool = False,
) -> str:
    """Mean entropy after m clues, with 95% bands and the prior."""
    fig = _figure(9, 4.5)
    ax = fig.subplots()
    groups = _groups(rows)
    for g in groups:
        _band(ax, rows, g, "entropy_bits", len(groups) <= MAX_BANDS, colours)
    _clue_axis(ax, per_statement)
    ax.set_ylabel("mean entropy of the posterior (bits)")
    ax.set_title(title, fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    _legend(ax)
    return _save(fig, out, "entropy")


def topk_figure(
    rows: list[dict[str, Any]],
    out: Path,
    *,
    ks: tuple[int, ...],
    chance_k: int | None,
    colours: Colours = None,
    per_statement: bool = False,
) -> str:
    """P(secret in top k) after m clues, one panel per k that has data (a k with K <= k in
    every game has none), with the chance level k / K."""
    ks = tuple(k for k in ks if any(r["metric"] == f"top{k}" for r in rows)) or ks[:1]
    fig = _figure(3.2 * len(ks) + 2.5, 4)
    axes = fig.subplots(1, len(ks), sharey=True, squeeze=False)[0]
    groups = _groups(rows)
    for ax, k in zip(axes, ks, strict=True):
        for g in groups:
            _band(ax, rows, g, f"top{k}", len(groups) <= MAX_BANDS, colours)
        if chance_k:
            ax.axhline(min(1.0, k / chance_k), color="#999999", ls="--", lw=1, label="chance")
        what = "speaker's word" if per_statement else "secret"
        ax.set_title(f"P({what} in top {k})", fontsize=10)
        _clue_axis(ax, per_statement)
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("share of games")
    _legend(axes[-1])
    return _save(fig, out, "topk")


def gain_figure(rows: list[dict[str, Any]], out: Path, *, colours: Colours = None) -> str:
    """Distribution (density) of the information gain per clue, one outline per group."""
    fig = _figure(9, 4.5)
    ax = fig.subplots()
    for g in _groups(rows):
        pts = [r for r in rows if r["group"] == g]
        edges = [pts[0]["bin_low"], *(r["bin_high"] for r in pts)]
        ax.stairs(
            [r["density"] for r in pts], edges, color=group_colour(g, colours), ls=role_style(g)[0],
            label=short(g),
        )  # fmt: skip
    ax.axvline(0, color="#999999", lw=1)
    ax.set_xlabel("information gain of a clue (bits)")
    ax.set_ylabel("density")
    ax.grid(alpha=0.3)
    _legend(ax)
    return _save(fig, out, "info_gain")


def by_group_figure(
    rows: list[dict[str, Any]], out: Path, *, label: str, colours: Colours = None
) -> str:
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
    bars = [group_colour(r["group"], colours) for r in shown]
    ax.barh(y, values, xerr=err, color=bars, alpha=0.8, capsize=3)
    ax.set_yticks(y, [f"{short(r['group'])} ({r['clues']} clues)" for r in shown], fontsize=8)
    ax.set_xlabel("mean information gain per clue (bits)")
    ax.set_title(f"Leakage by {label}", fontsize=10)
    ax.grid(alpha=0.3, axis="x")
    return _save(fig, out, "leakage_by_group")


def plane_figure(
    groups: list[dict[str, Any]],
    clues: dict[str, Any],
    out: Path,
    *,
    max_points: int = 4000,
    colours: Colours = None,
    axes: dict[str, Any] | None = None,
) -> str:
    """The reveal-vs-conceal plane: every clue as a faint point in its group's colour, each
    group's mean with 95% intervals on both axes, and the reference strategies (black);
    ``axes`` (:func:`leakage.curves.plane_axes`) names the axes (the spy's seat's on
    SpyGame scored from it)."""
    import numpy as np

    fig = _figure(9, 6)
    ax = fig.subplots()
    data = [r for r in groups if r["kind"] == "data"][:MAX_GROUPS]
    shown = [r["group"] for r in data]  # in order: a set's order changes from run to run
    x, y, g = clues["x"], clues["y"], clues["group"]
    if len(x) > max_points:  # a fixed, seeded subsample keeps the SVG small
        pick = np.random.default_rng(0).choice(len(x), max_points, replace=False)
        x, y, g = x[pick], y[pick], g[pick]
    for name in shown:
        sel = g == name
        ax.scatter(x[sel], y[sel], s=5, alpha=0.18, color=group_colour(name, colours), lw=0)
    for r in data:
        marker = role_style(r["group"])[1]
        ax.errorbar(
            r["leakage_bits"], r["reveal_bits"],
            xerr=[[r["leakage_bits"] - r["leakage_low"]], [r["leakage_high"] - r["leakage_bits"]]],
            yerr=[[r["reveal_bits"] - r["reveal_low"]], [r["reveal_high"] - r["reveal_bits"]]],
            fmt=marker, ms=7, color=group_colour(r["group"], colours), capsize=3, mec="black",
            mew=0.6,
            label=f"{short(r['group'])} ({r['clues']} clues)",
        )  # fmt: skip
    refs = [r for r in groups if r["kind"] == "reference"]
    for r in refs:
        marker = "X" if r["role"] == "chameleon" else "D"
        ax.scatter(r["leakage_bits"], r["reveal_bits"], marker=marker, s=40, color="black")
        ax.annotate(
            short(r["group"], 30), (r["leakage_bits"], r["reveal_bits"]), fontsize=7,
            xytext=(4, 4), textcoords="offset points",
        )  # fmt: skip
    if refs:
        ax.scatter([], [], marker="D", color="black", label="reference: non-chameleon")
        ax.scatter([], [], marker="X", color="black", label="reference: chameleon")
    ax.axhline(0, color="#999999", lw=1)
    ax.axvline(0, color="#999999", lw=1)
    from leakage.curves._plane import X_LABEL, Y_LABEL

    ax.set_xlabel((axes or {}).get("x_label", X_LABEL))
    ax.set_ylabel((axes or {}).get("y_label", Y_LABEL))
    ax.set_title("Reveal vs conceal, per clue (means with 95% intervals)", fontsize=10)
    ax.grid(alpha=0.3)
    _legend(ax)
    return _save(fig, out, "plane")


def compare_figure(rows: list[dict[str, Any]], out: Path) -> str:
    """The paired difference of two models' mean gain per clue, per role, with 95% intervals."""
    import math

    shown = [r for r in rows if not math.isnan(r["difference_bits"])]
    fig = _figure(7, 1.4 + 0.4 * max(1, len(shown)))
    ax = fig.subplots()
    y = list(range(len(shown)))[::-1]
    values = [r["difference_bits"] for r in shown]
    err = [
        [max(0.0, r["difference_bits"] - r["difference_low"]) for r in shown],
        [max(0.0, r["difference_high"] - r["difference_bits"]) for r in shown],
    ]
    ax.errorbar(values, y, xerr=err, fmt="o", color="black", capsize=3)
    ax.set_yticks(y, [f"{r['role']} ({r['shared_games']} games)" for r in shown], fontsize=8)
    ax.axvline(0, color="#999999", lw=1)
    if rows:
        a, b = short(rows[0]["model_a"], 30), short(rows[0]["model_b"], 30)
        ax.set_xlabel(f"mean gain per clue: {a} minus {b} (bits), in the games both played")
    ax.grid(alpha=0.3, axis="x")
    return _save(fig, out, "compare")


def leaderboard_figure(board: Any, out: Path, *, colours: Colours = None) -> str:
    """The leaderboard as a forest plot: one panel per game kind and role, each ranked model's
    mean leakage per clue with its 95% interval, least leakage on top, in the model's colour
    (unranked rows, too few games, in grey); the panel's title names the unit."""
    blocks: dict[tuple[str, str], list[Any]] = {}
    for r in board.rows:
        if r.leakage_bits is not None:
            blocks.setdefault((r.game, r.role), []).append(r)
    if not blocks:
        blocks = {("", "no counted clue"): []}
    tallest = max(len(v) for v in blocks.values())
    fig = _figure(4.2 * len(blocks) + 1.5, 1.2 + 0.28 * max(1, min(tallest, 3 * MAX_GROUPS)))
    axes = fig.subplots(1, len(blocks), squeeze=False)[0]
    for ax, ((game, role), rows) in zip(axes, blocks.items(), strict=True):
        shown = rows[: 3 * MAX_GROUPS]
        y = list(range(len(shown)))[::-1]
        for yy, r in zip(y, shown, strict=True):
            colour = group_colour(r.model, colours) if r.rank is not None else "#aaaaaa"
            low = r.leakage_low if r.leakage_low is not None else r.leakage_bits
            high = r.leakage_high if r.leakage_high is not None else r.leakage_bits
            ax.errorbar(
                r.leakage_bits, yy,
                xerr=[[max(0.0, r.leakage_bits - low)], [max(0.0, high - r.leakage_bits)]],
                fmt="o", color=colour, capsize=2, ms=4,
            )  # fmt: skip
        labels = [
            f"{r.rank if r.rank is not None else '–'}. {short(r.model, 28)} ({r.games})"
            for r in shown
        ]
        ax.set_yticks(y, labels, fontsize=7)
        unit = shown[0].unit if shown else "clue"
        ax.set_title(f"{game} · {role}", fontsize=9)
        ax.set_xlabel(f"leakage, bits per {unit} (95% interval)", fontsize=8)
        ax.grid(alpha=0.3, axis="x")
    return _save(fig, out, "leaderboard")
