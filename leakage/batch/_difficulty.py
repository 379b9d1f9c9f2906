"""Difficulty of SpyGame word pairs from a splits file, for grouping results by difficulty.

Accepted: the output directory of ``leakage splits build`` (``hard.csv``, ``medium.csv``,
``easy.csv``), or one CSV whose first two columns are the pair's words and whose
``difficulty`` or ``split`` column holds the level (without such a column the file's stem is
the level: ``hard.csv``). Pairs are matched order-free and case-folded. The file wins over a
game's ``meta.difficulty`` (which ``leakage play spygame --pairs-from`` records); a game
whose pair the file lacks keeps its ``meta.difficulty``.
"""

from __future__ import annotations

import csv
from pathlib import Path

from leakage.errors import InvalidInput
from leakage.transcripts import pair_key

_SPLIT_FILES = ("hard.csv", "medium.csv", "easy.csv")
_LEVEL_COLUMNS = ("difficulty", "split")


def _read_csv(path: Path, into: dict[str, str]) -> None:
    try:
        _read_rows(path, into)
    except UnicodeDecodeError as err:
        raise InvalidInput(
            f"{path}: not UTF-8 text (byte {err.start}); pass a splits CSV (--difficulty)"
        ) from None
    except csv.Error as err:
        raise InvalidInput(f"{path}: not a readable CSV ({err}) (--difficulty)") from None


def _read_rows(path: Path, into: dict[str, str]) -> None:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh)
        header = [h.strip().lower() for h in next(reader, [])]
        if len(header) < 2:
            raise InvalidInput(f"{path}: expected a header with at least the pair's two columns")
        col = next((header.index(c) for c in _LEVEL_COLUMNS if c in header), None)
        for lineno, row in enumerate(reader, start=2):
            if len(row) < 2 or not row[0].strip() or not row[1].strip():
                continue
            level = row[col].strip() if col is not None and col < len(row) else path.stem
            if not level:
                raise InvalidInput(f"{path}: line {lineno}: empty {header[col or 0]}")
            into[pair_key(row[0], row[1])] = level


def load_difficulty(path: str | Path) -> dict[str, str]:
    """``pair key -> level`` from a splits directory or CSV (see the module docstring)."""
    p = Path(path).expanduser()
    table: dict[str, str] = {}
    if p.is_dir():
        files = [p / name for name in _SPLIT_FILES if (p / name).is_file()]
        if not files:
            raise InvalidInput(
                f"{p}: no {', '.join(_SPLIT_FILES)} here; pass a `leakage splits build` "
                "output directory or a CSV with a difficulty column"
            )
        for f in files:
            _read_csv(f, table)
    elif p.is_file():
        _read_csv(p, table)
    else:
        raise InvalidInput(f"{p}: no such file or directory (--difficulty)")
    return table
