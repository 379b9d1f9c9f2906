"""A terminal rendering of reports with rich: one table per game, one row per turn."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from leakage.reports._models import Report, report_seat


def _top(d: dict[str, float], n: int = 3) -> str:
    best = sorted(d.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{w} {p:.2f}" for w, p in best)


def _backend_label(report: Report) -> str:
    info = report.backend_info
    if "model" in info:
        return f"{report.backend} ({info['model']}, {info.get('dimension', '?')}-d)"
    source = info.get("count_source", {}).get("source")
    return f"{report.backend} ({source})" if source else report.backend


_SEAT_COLUMNS = {
    # seat: (posterior column, probability column)
    "spy": ("P of the words", "P(civilians')"),
    "civilian": ("P(spy)", "P(true spies)"),
    "non-chameleon": ("P(chameleon)", "P(chameleon)"),
}


_SEAT_RANKS = {
    "spy": "civilians' word rank",
    "civilian": "spy rank",
    "non-chameleon": "chameleon rank",
}


def _rank_of(report: Report, seat: str) -> tuple[str, int]:
    """What the final rank in a caption is of, and out of how many: the candidates from the
    outside seats and the chameleon's; the open vocabulary from the spy's seat; the players
    from the civilian's and the non-chameleon's."""
    if seat == "spy" and report.settings.get("seat_vocabulary_words"):
        return _SEAT_RANKS[seat], int(report.settings["seat_vocabulary_words"])
    if seat in _SEAT_RANKS and report.steps:
        return _SEAT_RANKS[seat], len(report.steps[-1].posterior)
    return "secret rank", len(report.candidates)


def report_table(report: Report) -> Table:
    spy = report.game == "spygame"
    seat = report_seat(report)
    holders = report.settings.get("seat_holders")
    title = f"{report.game_id} · {report.game}"
    if report.category:
        title += f" · {report.category}"
    if report.secret is not None:
        title += f" · {'civilian word' if spy else 'secret'}: {report.secret}"
    title += f" · seat: {seat}" + (f" ({holders[0]})" if holders else "")
    posterior_col, p_col = _SEAT_COLUMNS.get(
        seat, ("speaker's word" if spy else "top candidates", "P(own)" if spy else "P(secret)")
    )
    spy = spy and seat not in _SEAT_COLUMNS  # the outside seats' spy posterior column
    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    table.add_column("#", justify="right")
    table.add_column("player")
    table.add_column("clue", overflow="fold", min_width=12, max_width=44)
    table.add_column(posterior_col, overflow="fold")
    table.add_column("H bits", justify="right")
    table.add_column("gain", justify="right")
    table.add_column(p_col, justify="right")
    table.add_column("rank", justify="right")
    if spy:
        table.add_column("most likely spy", overflow="fold")
    for s in report.steps:
        odd_one = s.role in ("chameleon", "spy")
        who = Text(
            f"{s.player} ({s.role})" if odd_one else s.player, style="bold" if odd_one else ""
        )
        clue = Text(s.text, style="" if s.counted else "dim")
        row: list[str | Text] = [
            str(s.index + 1),
            who,
            clue,
            _top(s.posterior, 2 if spy else 3),
            f"{s.entropy_bits:.2f}",
            f"{s.information_gain_bits:+.2f}" if s.counted else "·",
            "" if s.secret_probability is None else f"{s.secret_probability:.2f}",
            "" if s.secret_rank is None else str(s.secret_rank),
        ]
        if spy:
            row.append(_top(s.spy_posterior or {}, 2))
        table.add_row(*row)
    sm = report.summary
    caption = [_backend_label(report), f"prior {sm.prior_entropy_bits:.2f} bits"]
    if sm.final_entropy_bits is not None and not spy:
        caption.append(f"final {sm.final_entropy_bits:.2f} bits")
    if sm.final_secret_rank is not None:
        label, out_of = _rank_of(report, seat)
        caption.append(f"{label} {sm.final_secret_rank}/{out_of:,}")
    if spy and sm.spy_top_after_round1 is not None:
        hit = "a spy" if sm.spy_hit_after_round1 else "no spy"
        caption.append(f"top suspects after round 1: {', '.join(sm.spy_top_after_round1)} ({hit})")
    if spy and sm.outlier_top_after_round1 is not None:
        hit = "a spy" if sm.outlier_hit_after_round1 else "no spy"
        caption.append(
            f"top outliers after round 1: {', '.join(sm.outlier_top_after_round1)} ({hit})"
        )
    if seat in _SEAT_COLUMNS and holders and len(holders) > 1:
        caption.append(f"rows: {holders[0]}'s seat; seat_view holds {', '.join(holders)}")
    if not spy and any(not s.counted for s in report.steps):
        caption.append("dim rows did not update the posterior")
    table.caption = " · ".join(caption)
    table.caption_justify = "left"
    return table


def print_reports(reports: list[Report], console: Console) -> None:
    for r in reports:
        console.print(report_table(r))
        console.print()
