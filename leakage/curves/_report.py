"""``build_site``: a step table in, figures, CSVs and one HTML file out.

Files written in ``out`` (overwritten):

- ``leaderboard.png`` / ``.svg``, ``leaderboard.csv``, ``leaderboard.json``
  (``leakage.leaderboard/1``) and
  ``leaderboard_pairs.csv``: which model leaks least, per role, with intervals, rank
  intervals and the Holm-corrected pairwise tests (:mod:`leakage.curves._leaderboard`);
  the first section of the page;
- ``entropy.png`` / ``.svg`` and ``curves.csv``: mean entropy after m clues (m = 0: prior);
- ``topk.png`` / ``.svg`` (same ``curves.csv``, metrics ``top1``, ``top3``, ``top5``);
- ``info_gain.png`` / ``.svg`` and ``info_gain.csv``: per-clue information gain histograms;
- ``leakage_by_group.png`` / ``.svg`` and ``leakage_by_group.csv``: mean gain per clue and
  top-1 share by speaker group (the speaking player's model with ``--by model``);
- ``most_revealing.csv``, ``least_revealing.csv``: the clues with the largest and smallest
  information gain;
- ``plane.png`` / ``.svg``, ``plane.csv`` and ``plane_clues.csv``: the reveal-vs-conceal plane
  (:mod:`leakage.curves._plane`): per clue its leakage (information gain) and reveal value (log
  likelihood ratio that its speaker knows the secret; SpyGame scored from the spy's seat: the
  spy's gain about the civilians' word and the statement's value to the civilians, two
  dimensions), per model and role the means with intervals, and Karabag & Topcu's reference
  strategies simulated on the same axes;
- with ``compare=(A, B)``: ``compare.png`` / ``.svg`` and ``compare.csv``, the paired
  difference of A's and B's mean gain per clue in the games where both spoke
  (:mod:`leakage.curves._compare`);
- ``report.html``: all of it in one self-contained page.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from leakage.curves import _html
from leakage.curves._colours import assign_colours, model_of
from leakage.curves._compare import COMPARE_COLUMNS, paired_difference
from leakage.curves._compute import (
    TOP_K,
    curves,
    extreme_clues,
    gain_histogram,
    leakage_by_group,
)
from leakage.curves._data import GROUPINGS, StepTable, load_steps
from leakage.curves._figures import (
    MAX_BANDS,
    MAX_GROUPS,
    by_group_figure,
    compare_figure,
    entropy_figure,
    gain_figure,
    leaderboard_figure,
    plane_figure,
    topk_figure,
)
from leakage.curves._leaderboard import (
    ALL_ROLES_STANDARDISED,
    LEADERBOARD_COLUMNS,
    PAIR_COLUMNS,
    Leaderboard,
    leaderboard,
    leaderboard_records,
)
from leakage.curves._plane import (
    CLUE_COLUMNS as PLANE_CLUE_COLUMNS,
)
from leakage.curves._plane import (
    PLANE_COLUMNS,
    clue_points,
    per_statement,
    plane_axes,
    plane_groups,
    plane_references,
    spy_seat_games,
)
from leakage.reader import lower_bound_note


@dataclass
class ReportFiles:
    """What ``build_site`` wrote, and the numbers behind it."""

    out: Path
    files: list[Path] = field(default_factory=list)
    games: int = 0
    curves: list[dict[str, Any]] = field(default_factory=list)
    by_group: list[dict[str, Any]] = field(default_factory=list)
    plane: list[dict[str, Any]] = field(default_factory=list)
    compare: list[dict[str, Any]] = field(default_factory=list)
    leaderboard: Leaderboard | None = None


def _write_csv(path: Path, rows: list[dict[str, Any]], columns: list[str]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


def _single_k(steps: StepTable) -> int | None:
    ks = np.unique(steps.n_candidates[steps.counted])
    return int(ks[0]) if len(ks) == 1 else None


def _reader(steps: StepTable) -> str | None:
    """The backend behind the figures: the manifest's, else the step table's when every row
    names the same one (a service job's table has no manifest)."""
    named = (steps.manifest or {}).get("backend")
    if named:
        return str(named)
    if "backend" not in steps.dataset.schema.names:  # a table written without it
        return None
    column = steps.dataset.to_table(columns=["backend"]).column("backend").to_pylist()
    found = {b for b in column if b}
    return found.pop() if len(found) == 1 else None


def _seat(steps: StepTable) -> str:
    """Whose posterior the figures are: the run's ``--seat``, else each game's default seat
    under its options (a table without a manifest: the defaults)."""
    from leakage.seats import default_seat, seat_sentence

    options = (steps.manifest or {}).get("score_options") or {}
    if options.get("seat"):
        return seat_sentence(str(options["seat"]))
    spy = default_seat("spygame", str(options.get("spy_assignment") or "known"))
    cham = default_seat("chameleon", include_chameleon=bool(options.get("include_chameleon")))
    return (
        f"Figures from each game's default seat: SpyGame {spy}, The Chameleon {cham} "
        "(docs/games.md, Seats)."
    )


def _provenance(steps: StepTable) -> str:
    m = steps.manifest or {}
    facts = [
        ("results", str(steps.location)),
        ("seat", _seat(steps)),
        ("games", f"{steps.n_games:,}"),
        ("backend", m.get("backend")),
        ("models", ", ".join(map(str, m.get("models") or [])) or None),
        ("corpus", (m.get("corpus") or {}).get("index")),
        ("code version", (m.get("code_version") or {}).get("leakage")),
        ("git commit", (m.get("code_version") or {}).get("git_commit")),
        ("failed records", (m.get("totals") or {}).get("failed")),
    ]
    rows = [{"what": k, "value": v} for k, v in facts if v is not None]
    return _html.table(rows, [("what", "what"), ("value", "value")])


_CURVE_COLS = ["group", "metric", "m", "value", "low", "high", "games"]
_GAIN_COLS = ["group", "bin_low", "bin_high", "count", "density"]
_GROUP_COLS = [
    "group", "clues", "games", "mean_gain_bits", "mean_gain_low", "mean_gain_high",
    "median_gain_bits", "top1_share", "top1_low", "top1_high",
]  # fmt: skip
_CLUE_HEADINGS = [
    ("information_gain_bits", "gain (bits)"),
    ("text", "clue"),
    ("model", "model"),
    ("role", "role"),
    ("secret", "secret"),
    ("secret_rank", "secret rank after"),
    ("clues_so_far", "m"),
    ("game_id", "game"),
]


def build_site(
    results: str | Path,
    out: str | Path,
    *,
    by: str = "model",
    replicates: int = 1000,
    seed: int = 0,
    max_clues: int = 16,
    top: int = 20,
    difficulty: dict[str, str] | None = None,
    compare: tuple[str, str] | None = None,
    plane: bool = True,
    outcomes: dict[str, str | None] | None = None,
    reports: Iterable[Mapping[str, Any]] | None = None,
    reports_source: str = "the games' reports (meta.winner_role)",
    min_games: int = 10,
) -> ReportFiles:
    """Read a step table and write the figures, CSVs and ``report.html`` into ``out``
    (a folder of files, not a ``leakage.report/1``: see :func:`leakage.scoring.build_report`).

    ``compare`` names two models (the ``model`` column) whose paired difference to add;
    ``plane=False`` leaves out the reveal-vs-conceal plane and the leaderboard's reveal value
    (they read every posterior). ``outcomes`` (``game_id -> winner role``) gives the
    leaderboard's win rates; by default :func:`leakage.curves.game_outcomes`' rule takes
    them from the step table's ``winner_role`` column, or, for a table written before it,
    from ``reports`` (named by ``reports_source``) or ``results``/reports.jsonl; its rows of
    fewer than ``min_games`` games are shown unranked."""
    steps = load_steps(results, by, difficulty=difficulty)
    compare_rows = (
        paired_difference(steps, *compare, replicates=replicates, seed=seed) if compare else []
    )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rep = ReportFiles(out=out, games=steps.n_games)
    board = leaderboard(
        results, outcomes=outcomes, reports=reports, reports_source=reports_source,
        reveal=plane, replicates=replicates, seed=seed, min_games=min_games,
    )  # fmt: skip
    rep.leaderboard = board
    rep.files += [
        _write_csv(out / "leaderboard.csv", leaderboard_records(board), LEADERBOARD_COLUMNS),
        _write_csv(
            out / "leaderboard_pairs.csv", [p.model_dump() for p in board.pairs], PAIR_COLUMNS
        ),
    ]
    (out / "leaderboard.json").write_text(board.model_dump_json(indent=1), encoding="utf-8")
    rep.files.append(out / "leaderboard.json")
    curve_rows = curves(steps, max_clues=max_clues, replicates=replicates, seed=seed)
    gain_rows = gain_histogram(steps)
    group_rows = leakage_by_group(steps, replicates=replicates, seed=seed)
    most, least = extreme_clues(steps, n=top)
    rep.curves, rep.by_group = curve_rows, group_rows
    rep.files += [
        _write_csv(out / "curves.csv", curve_rows, _CURVE_COLS),
        _write_csv(out / "info_gain.csv", gain_rows, _GAIN_COLS),
        _write_csv(out / "leakage_by_group.csv", group_rows, _GROUP_COLS),
        _write_csv(out / "most_revealing.csv", most, [k for k, _ in _CLUE_HEADINGS]),
        _write_csv(out / "least_revealing.csv", least, [k for k, _ in _CLUE_HEADINGS]),
    ]
    curve_col, clue_col = GROUPINGS[by]
    k = _single_k(steps)
    prior = f" (K = {k}: the prior is log2 {k} = {np.log2(k):.2f} bits)" if k else ""
    # SpyGame statements are read one by one from an outside seat: m numbers them, nothing
    # accumulates; the spy's seat accumulates what it has heard.
    each = per_statement((r.game for r in board.rows), spy_seat=spy_seat_games(results) > 0)
    colours = assign_colours(
        steps.model.tolist(),
        [model_of(str(g)) for g in {*steps.curve_group.tolist(), *steps.clue_group.tolist()}],
    )
    after_m = "in the m-th statement, each read on its own" if each else "after m clues"
    svg_entropy = entropy_figure(
        curve_rows, out, title=f"Mean entropy {after_m}, by {by}{prior}", colours=colours,
        per_statement=each,
    )  # fmt: skip
    svg_topk = topk_figure(
        curve_rows, out, ks=TOP_K, chance_k=k, colours=colours, per_statement=each
    )
    svg_gain = gain_figure(gain_rows, out, colours=colours)
    svg_board = leaderboard_figure(board, out, colours=colours)
    rep.files += [out / "leaderboard.png", out / "leaderboard.svg"]
    svg_group = by_group_figure(group_rows, out, label=f"{clue_col} (speaker)", colours=colours)
    for stem in ("entropy", "topk", "info_gain", "leakage_by_group"):
        rep.files += [out / f"{stem}.png", out / f"{stem}.svg"]
    n_groups = len({r["group"] for r in curve_rows})
    cut = (
        f" The {MAX_GROUPS} groups with the most games are drawn; curves.csv has all {n_groups}."
        if n_groups > MAX_GROUPS
        else ""
    )
    sizes = [
        {"group": r["group"], "games": r["games"]}
        for r in curve_rows
        if r["metric"] == "entropy_bits" and r["m"] == 0
    ]
    intro = (
        f'<p class="note">Made {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC by '
        f"<code>leakage report --by {_html._esc(by)}</code>. Intervals are bootstrap 95% "
        f"percentile intervals over games ({replicates} replicates, seed {seed}); the curves "
        f"draw them as bands when at most {MAX_BANDS} groups are drawn (more bands hide each "
        "other). Every plotted number, every interval included, is in the CSV named under its "
        "figure.</p>"
    )
    bound = (
        f'<p class="note">{_html._esc(lower_bound_note(_reader(steps)))} '
        f"{_html._esc(_seat(steps))}</p>"
    )
    sections = [
        (
            "Leaderboard: which model leaks least",
            _html.figure(
                svg_board,
                "Mean leakage per clue (statement) by model, per role, with 95% bootstrap "
                "intervals over games; rank. model (games); grey: too few games to rank. "
                "Data: leaderboard.csv.",
            )
            + _leaderboard_section(board),
        ),
        (
            "Data",
            bound + _provenance(steps) + _html.table(sizes, [("group", by), ("games", "games")]),
        ),
        (
            f"Entropy {after_m}",
            _html.figure(
                svg_entropy,
                (
                    "Mean entropy of the posterior over the speaker's word from the m-th "
                    "statement alone (SpyGame reads each statement on its own, so the curve "
                    "does not accumulate: m numbers the statements), grouped by "
                    f"{curve_col}; m = 0 is the prior."
                    if each
                    else f"Mean entropy of the posterior over the candidates after m counted "
                    f"clues, grouped by {curve_col}; m = 0 is the prior."
                )
                + f" A game counts at m only when it has m counted "
                f"{'statements' if each else 'clues'}.{cut} "
                "Data: curves.csv (metric entropy_bits).",
            ),
        ),
        (
            "Speaker's word ranked first, per statement"
            if each
            else "Secret in the top k after m clues",
            _html.figure(
                svg_topk,
                (
                    "Share of games whose m-th statement, read alone, puts the speaker's own "
                    "word first among the candidates (ties count against it)"
                    if each
                    else "Share of games whose secret is among the k most probable candidates "
                    "after m clues (ties count against the secret)"
                )
                + "; dashed: chance, k / K. Data: curves.csv (metrics top1, top3, top5).",
            ),
        ),
        (
            "Information gain per clue",
            _html.figure(
                svg_gain,
                f"Distribution of the entropy drop caused by each counted clue, by "
                f"{clue_col}; negative: the clue made the posterior less certain. "
                "Data: info_gain.csv.",
            ),
        ),
        (
            f"Leakage by {clue_col}",
            _html.figure(svg_group, "Data: leakage_by_group.csv.")
            + _html.table(
                group_rows,
                [
                    ("group", clue_col),
                    ("clues", "clues"),
                    ("games", "games"),
                    ("mean_gain_bits", "mean gain (bits)"),
                    ("mean_gain_low", "95% low"),
                    ("mean_gain_high", "95% high"),
                    ("top1_share", "secret first after the clue"),
                ],
            ),
        ),
        ("Most revealing clues", _html.table(most, _CLUE_HEADINGS)),
        ("Least revealing clues", _html.table(least, _CLUE_HEADINGS)),
    ]
    if plane:
        points = clue_points(steps.dataset)
        plane_rows = plane_groups(
            points["game"], points["group"], points["x"], points["y"],
            replicates=replicates, seed=seed,
        )  # fmt: skip
        refs = plane_references(steps.dataset, seed=seed)
        plane_rows += refs["references"]
        rep.plane = plane_rows
        rep.files += [
            _write_csv(out / "plane.csv", plane_rows, PLANE_COLUMNS),
            _write_csv(out / "plane_clues.csv", points["rows"], PLANE_CLUE_COLUMNS),
        ]
        axes = plane_axes(points)
        svg_plane = plane_figure(plane_rows, points, out, colours=colours, axes=axes)
        rep.files += [out / "plane.png", out / "plane.svg"]
        undefined = (
            f" {points['undefined']:,} counted clues have no reveal value (a probability the "
            "ratio needs underflowed to 0, or the game has no secret) and are left out."
            if points["undefined"]
            else ""
        )
        sections.append(
            (
                "Reveal vs conceal",
                _html.figure(
                    svg_plane,
                    "Each counted clue: x, its information gain about the secret (what the "
                    "player without the secret learns); y, log2 of the likelihood ratio that "
                    "its speaker knows the secret (Chameleon: P(clue | secret) over the mean "
                    "over candidates of P(clue | w); SpyGame: P(clue | civilian word) over "
                    "P(clue | spy word)), what the players with the secret learn about the "
                    "speaker. Coloured marks: means per model and role with 95% bootstrap "
                    "intervals over games. "
                    + refs["note"]
                    + (f" {axes['note']}" if axes["note"] else "")
                    + " "
                    + f"Chameleon clues are on it only when counted.{undefined} "
                    "Data: plane.csv, plane_clues.csv.",
                )
                + _html.table(
                    plane_rows,
                    [
                        ("kind", "kind"),
                        ("group", "model · role"),
                        ("clues", "clues"),
                        ("games", "games"),
                        ("leakage_bits", "leakage (bits)"),
                        ("leakage_low", "95% low"),
                        ("leakage_high", "95% high"),
                        ("reveal_bits", "reveal (bits)"),
                        ("reveal_low", "95% low"),
                        ("reveal_high", "95% high"),
                        ("note", "note"),
                    ],
                ),
            )
        )
    if compare:
        rep.compare = compare_rows
        rep.files.append(_write_csv(out / "compare.csv", compare_rows, COMPARE_COLUMNS))
        svg_compare = compare_figure(compare_rows, out)
        rep.files += [out / "compare.png", out / "compare.svg"]
        a, b = compare
        sections.append(
            (
                f"{a} against {b}",
                _html.figure(
                    svg_compare,
                    f"Per role, in the games where both {a} and {b} gave counted clues in that "
                    f"role: the mean over those games of ({a}'s mean gain per clue minus "
                    f"{b}'s), with a bootstrap 95% interval over the shared games. Above 0: "
                    f"{a}'s clues leaked more. Data: compare.csv.",
                )
                + _html.table(
                    compare_rows,
                    [
                        ("role", "role"),
                        ("shared_games", "shared games"),
                        ("clues_a", f"clues by {a}"),
                        ("clues_b", f"clues by {b}"),
                        ("mean_gain_a", f"{a}: mean gain"),
                        ("mean_gain_b", f"{b}: mean gain"),
                        ("difference_bits", "difference (bits)"),
                        ("difference_low", "95% low"),
                        ("difference_high", "95% high"),
                    ],
                ),
            )
        )
    html_path = out / "report.html"
    title = f"Leakage report: {steps.n_games:,} games by {by}"
    html_path.write_text(_html.page(title, sections, intro=intro), encoding="utf-8")
    rep.files.append(html_path)
    return rep


def not_separable_text(close: list[str], others: list[str]) -> str:
    """The "not separable from" cell: the list, or what it leaves out when that is shorter."""
    if not close:
        return "–"
    if len(others) > 3 and len(close) == len(others):
        return f"all {len(others)} others"
    if len(others) > 3 and len(close) > len(others) / 2:
        return "all but " + ", ".join(sorted(set(others) - set(close)))
    return ", ".join(close)


_BOARD_HEADINGS = [
    ("rank", "rank"),
    ("rank_interval", "rank 95%"),
    ("model", "model"),
    ("clues", "clues"),
    ("games", "games"),
    ("leakage", "leakage (bits per clue)"),
    ("reveal", "reveal (bits)"),
    ("own_word", "P(own word)"),
    ("win", "win rate"),
    ("not_separable_from", "not separable from"),
]


def interval_text(value: float | None, low: float | None, high: float | None, fmt: str) -> str:
    """``value`` in ``fmt`` with its interval ``[low, high]`` when it has one; ``–`` for none
    (the leaderboard's CSV and the terminal's table)."""
    if value is None:
        return "–"
    if low is None or high is None:
        return format(value, fmt)
    return f"{value:{fmt}} [{low:{fmt}}, {high:{fmt}}]"


def _leaderboard_section(board: Leaderboard) -> str:
    """The leaderboard's tables, one per game kind and role, and what they mean."""
    unit = {r.game: r.unit for r in board.rows}
    parts = [
        f'<p class="note">{_html._esc(board.reader_note)}</p>',
        '<p class="note">One row per model and role, the speaking player\'s own model. '
        "Leakage: mean information gain per counted "
        + " / ".join(f"{u} ({g})" for g, u in sorted(unit.items()))
        + " to the observer without the secret; reveal: its value to the players who share "
        "the secret; P(own word): the posterior the reader puts on the speaker's own word "
        "after it (SpyGame: from that statement alone). Rank 1 leaks least; rows of fewer "
        f"than {board.min_games} games are shown unranked. The rank "
        f"interval and the 95% intervals are bootstrap percentile intervals over games "
        f"({board.replicates} replicates, seed {board.seed}). Not separable from: the models "
        "whose leakage differs from this row's by no more than chance, pairwise bootstrap "
        f"tests with the correction of {board.correction.split(' over')[0]} at alpha "
        f"{board.alpha}. Win rates: {board.outcomes}. Rows "
        f"'{ALL_ROLES_STANDARDISED}' weigh each role by its share of all models' clues, the "
        "same weights for every model. Data: leaderboard.csv, leaderboard.json, "
        "leaderboard_pairs.csv.</p>",
        *(f'<p class="note">{_html._esc(n)}</p>' for n in board.notes),
    ]
    blocks: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in board.rows:
        blocks.setdefault((r.game, r.role), []).append(
            {
                "rank": r.rank,
                "rank_interval": f"{r.rank_low}–{r.rank_high}" if r.rank_low else "–",
                "model": r.model,
                "clues": r.clues,
                "games": r.games,
                "leakage": interval_text(r.leakage_bits, r.leakage_low, r.leakage_high, ".3f"),
                "reveal": interval_text(r.reveal_bits, r.reveal_low, r.reveal_high, ".2f"),
                "own_word": interval_text(
                    r.own_word_probability,
                    r.own_word_probability_low,
                    r.own_word_probability_high,
                    ".2f",
                ),
                "win": interval_text(r.win_rate, r.win_rate_low, r.win_rate_high, ".2f")
                + (f" ({r.games_with_outcome})" if r.win_rate is not None else ""),
                "not_separable_from": r.not_separable_from,
            }
        )
    for (game, role), rows in blocks.items():
        ranked = [str(x["model"]) for x in rows if x["rank"] is not None]
        for x in rows:
            others = [m for m in ranked if m != x["model"]]
            x["not_separable_from"] = not_separable_text(list(x["not_separable_from"]), others)
        parts.append(f"<h3>{_html._esc(game)} · {_html._esc(role)}</h3>")
        unit_of = next((r.unit for r in board.rows if (r.game, r.role) == (game, role)), "clue")
        headings = [
            (k, f"{unit_of}s" if k == "clues" else h.replace("per clue", f"per {unit_of}"))
            for k, h in _BOARD_HEADINGS
        ]
        parts.append(_html.table(rows, headings))
    return "".join(parts)


build_report = build_site
"""The former name of :func:`build_site`, kept for callers."""
