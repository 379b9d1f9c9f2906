"""``write_splits``: the split CSVs, ``summary.json``, the descriptions and the histogram.

Files in the output directory (overwritten):

- ``hard.csv``, ``medium.csv``, ``easy.csv``: the pair's two columns as named in the input,
  ``similarity`` (4 decimals), then the input's other columns; most similar first. With a
  sample, they hold the sample.
- ``all.csv``: every scored pair with its ``split`` (and ``sampled`` when sampling).
- ``unknown.csv``: pairs not scored, with ``unknown_words`` (``; ``-separated); header only
  when there are none.
- ``descriptions.jsonl``: ``{"word", "description"}`` per known word, for ``--describer file``.
- ``summary.json``: ``leakage.splits/1`` (``SplitSummary``).
- ``similarity_hist.png``: the similarities by split, with the cut points.

Input columns that clash with the ones written here (``similarity``, ``split``, ``sampled``,
``unknown_words``) are not copied: they are recomputed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from leakage.splits._build import SplitResult
from leakage.splits._pairs import Pair
from leakage.splits._partition import SPLITS

_OWN_COLUMNS = ("similarity", "split", "sampled", "unknown_words")
_COLOURS = {"hard": "#c0392b", "medium": "#e1a730", "easy": "#2e86c1"}


def _extras(result: SplitResult) -> tuple[list[str], list[int]]:
    names = result.table.extra_columns
    keep = [i for i, n in enumerate(names) if n.strip().lower() not in _OWN_COLUMNS]
    return [names[i] for i in keep], keep


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def write_splits(result: SplitResult, out_dir: str | Path) -> list[Path]:
    """Write every output file into ``out_dir`` (created if needed); returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cols = list(result.table.columns)
    extra_names, keep = _extras(result)
    sims = result.similarities

    def row(p: Pair, *mid: str) -> list[str]:
        return [p.a, p.b, *mid, *(p.extra[i] for i in keep)]

    written = []
    for split in SPLITS:
        path = out / f"{split}.csv"
        rows = [row(result.known[i], f"{sims[i]:.4f}") for i in result.selected[split]]
        _write_csv(path, [*cols, "similarity", *extra_names], rows)
        written.append(path)

    sampling = result.summary.sample is not None
    chosen = {i for s in SPLITS for i in result.selected[s]}
    all_rows = []
    for split in SPLITS:
        for i in result.splits[split]:
            flag = (["yes" if i in chosen else "no"]) if sampling else []
            all_rows.append(row(result.known[i], f"{sims[i]:.4f}", split, *flag))
    header = [*cols, "similarity", "split", *(["sampled"] if sampling else []), *extra_names]
    _write_csv(out / "all.csv", header, all_rows)
    written.append(out / "all.csv")

    unknown_rows = [row(p, "; ".join(ws)) for p, ws in result.unknown]
    _write_csv(out / "unknown.csv", [*cols, "unknown_words", *extra_names], unknown_rows)
    written.append(out / "unknown.csv")

    path = out / "descriptions.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for word, text in result.descriptions.items():
            fh.write(json.dumps({"word": word, "description": text}, ensure_ascii=False) + "\n")
    written.append(path)

    path = out / "summary.json"
    path.write_text(result.summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    written.append(path)

    path = out / "similarity_hist.png"
    write_histogram(result, path)
    written.append(path)
    return written


def write_histogram(result: SplitResult, path: str | Path) -> None:
    """A PNG histogram of the similarities, stacked by split, with the cut points.

    matplotlib is imported here, and drawn through its Agg canvas directly (no pyplot, so no
    global backend is chosen for the caller).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    sims = result.similarities
    s = result.summary
    fig = Figure(figsize=(8, 4.5), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    cuts = {k: v for k, v in s.cut_points.items() if v is not None}
    lo = min([float(sims.min()), *cuts.values()])
    hi = max([float(sims.max()), *cuts.values()])
    pad = max(hi - lo, 0.05) * 0.03
    lo, hi = lo - pad, hi + pad
    ax.hist(sims.tolist(), bins=np.linspace(lo, hi, 41).tolist(), color="#555555", zorder=2)
    # Each split's similarity range, shaded (hard on the right: the most similar pairs).
    upper = cuts.get("hard_medium", hi)
    lower = cuts.get("medium_easy", lo)
    spans = {"hard": (upper, hi), "medium": (lower, upper), "easy": (lo, lower)}
    for name in SPLITS:
        a, b = spans[name]
        if b > a:
            ax.axvspan(
                a, b, color=_COLOURS[name], alpha=0.18, lw=0, label=f"{name} ({s.counts[name]})"
            )
    for name, value in cuts.items():
        ax.axvline(
            value,
            color="black",
            linestyle="--",
            linewidth=1,
            zorder=3,
            label=f"{name.replace('_', ' / ')} cut {value:.3f}",
        )
    ax.set_xlim(lo, hi)
    ax.set_ylim(0, ax.get_ylim()[1] * 1.3)  # headroom for the legend
    ax.set_xlabel("cosine similarity of the two descriptions")
    ax.set_ylabel("pairs")
    ax.set_title(
        f"{len(sims)} pairs, {s.method}: {s.describer} descriptions, {s.model}", fontsize=10
    )
    ax.legend(loc="upper left", fontsize=8, ncol=2, framealpha=0.9, edgecolor="none")
    fig.tight_layout()
    fig.savefig(str(path), format="png")
