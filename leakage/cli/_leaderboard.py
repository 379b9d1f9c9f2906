"""The leaderboard in the terminal (``leakage report --leaderboard``): one table per game
kind and role, then the reader's lower-bound sentence."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from leakage.curves import Leaderboard
from leakage.curves._report import interval_text, not_separable_text


def print_leaderboard(board: Leaderboard, console: Console | None = None) -> None:
    """Print ``board`` (to stdout unless ``console`` says otherwise)."""
    console = console or Console(highlight=False, width=160)
    blocks: dict[tuple[str, str], Table] = {}
    for r in board.rows:
        key = (r.game, r.role)
        if key not in blocks:
            table = Table(title=f"{r.game} · {r.role}", title_justify="left")
            for name, right in [
                ("rank", True), ("rank 95%", True), ("model", False), (f"{r.unit}s", True),
                ("games", True), (f"leakage bits/{r.unit} [95%]", True),
                ("P(own word)", True), ("win rate (games)", True), ("not separable from", False),
            ]:  # fmt: skip
                table.add_column(name, justify="right" if right else "left", overflow="fold")
            blocks[key] = table
        others = [x.model for x in board.rows if (x.game, x.role) == key and x.rank is not None]
        close = not_separable_text(r.not_separable_from, [m for m in others if m != r.model])
        blocks[key].add_row(
            str(r.rank or "–"),
            f"{r.rank_low}–{r.rank_high}" if r.rank_low else "–",
            r.model,
            f"{r.clues:,}",
            f"{r.games:,}",
            interval_text(r.leakage_bits, r.leakage_low, r.leakage_high, ".3f"),
            interval_text(r.own_word_probability, None, None, ".2f"),
            interval_text(r.win_rate, None, None, ".2f")
            + (f" ({r.games_with_outcome})" if r.win_rate is not None else ""),
            close,
        )
    for table in blocks.values():
        console.print(table)
    for note in board.notes:
        console.print(note)
    console.print(board.reader_note)
    console.print(
        f"Intervals: bootstrap over games ({board.replicates} replicates, seed {board.seed}); "
        f"not separable: {board.correction}, alpha {board.alpha}. Win rates: {board.outcomes}."
    )
