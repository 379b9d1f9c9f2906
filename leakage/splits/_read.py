"""Reading split files back: the word pairs ``leakage play spygame --pairs-from`` plays.

Accepted: the output directory of ``leakage splits build`` (``hard.csv``, ``medium.csv``,
``easy.csv``; with ``--sample`` they hold the sample), or one CSV in that format: a header
whose first two columns are the pair (the civilians' word, then the spy's) and which has a
``similarity`` column; the level is the ``split`` (or ``difficulty``) column when there is
one (``all.csv``), else the file's name (``hard.csv``). Every problem of a file (a missing
column, an empty word, a pair of the same word twice, a similarity that is not a number in
[-1, 1], an unknown level) is reported together, naming the file, line and column.

``draw_pairs`` gives a run its pairs: every pair is played once, in a seeded order, before
any pair is played again.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from leakage.errors import InvalidInput
from leakage.splits._partition import SPLITS

_LEVEL_COLUMNS = ("split", "difficulty")
_MAX_PROBLEMS = 20


@dataclass(frozen=True)
class SplitPair:
    """One pair of a split file: the civilians' word, the spy's word, its level and score."""

    civilian: str
    spy: str
    difficulty: str
    """``hard``, ``medium`` or ``easy``."""
    similarity: float
    """Cosine similarity of the two words' descriptions, as the split file gives it."""
    source: str
    """``file name:line`` of the row."""


def _read_file(path: Path, wanted: frozenset[str]) -> list[SplitPair]:
    try:
        with path.open(encoding="utf-8-sig", newline="") as fh:
            rows = list(csv.reader(fh))
    except UnicodeDecodeError as err:
        raise InvalidInput(f"{path}: not UTF-8 text (byte {err.start})") from None
    except csv.Error as err:
        raise InvalidInput(f"{path}: not a readable CSV ({err})") from None
    except OSError as err:
        raise InvalidInput(f"{path}: cannot read the split file: {err.strerror}") from None
    if not rows:
        raise InvalidInput(f"{path}: empty file; expected a `leakage splits build` split CSV")
    header = [h.strip() for h in rows[0]]
    names = [h.lower() for h in header]
    if len(header) < 3 or "similarity" not in names[2:]:
        raise InvalidInput(
            f"{path}: line 1: expected the pair's two columns then a 'similarity' column "
            f"(a `leakage splits build` split file), found {', '.join(header) or 'nothing'}"
        )
    sim_col = names.index("similarity", 2)
    level_col = next((names.index(c) for c in _LEVEL_COLUMNS if c in names[2:]), None)
    if level_col is None and path.stem.lower() not in SPLITS:
        raise InvalidInput(
            f"{path}: cannot tell the pairs' difficulty: no 'split' column and the file is not "
            f"named {', '.join(s + '.csv' for s in SPLITS)}"
        )
    problems: list[str] = []
    pairs: list[SplitPair] = []
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        where = f"{path}: line {line}"
        if len(row) != len(header):
            problems.append(f"{where}: expected {len(header)} fields, got {len(row)}")
            continue
        civ, spy = (" ".join(row[i].split()) for i in (0, 1))
        bad = [header[i] for i, w in ((0, civ), (1, spy)) if not w]
        if bad:
            problems.append(f"{where}: field {bad[0]!r}: empty word")
            continue
        if civ.casefold() == spy.casefold():
            problems.append(f"{where}: the pair is the same word twice ({civ!r})")
            continue
        text = row[sim_col].strip()
        try:
            sim = float(text)
        except ValueError:
            sim = math.nan
        if not (math.isfinite(sim) and -1.0 <= sim <= 1.0):
            problems.append(
                f"{where}: field {header[sim_col]!r}: expected a number in [-1, 1], got {text!r}"
            )
            continue
        level = row[level_col].strip().lower() if level_col is not None else path.stem.lower()
        if level not in SPLITS:
            problems.append(
                f"{where}: field {header[level_col or 0]!r}: expected one of "
                f"{', '.join(SPLITS)}, got {row[level_col or 0].strip()!r}"
            )
            continue
        if level in wanted:
            pairs.append(SplitPair(civ, spy, level, sim, f"{path.name}:{line}"))
    if problems:
        more = len(problems) - _MAX_PROBLEMS
        shown = problems[:_MAX_PROBLEMS] + ([f"... and {more} more"] if more > 0 else [])
        raise InvalidInput("\n".join(shown))
    return pairs


def read_split(path: str | Path, difficulty: str = "all") -> list[SplitPair]:
    """The pairs of ``difficulty`` (``hard``, ``medium``, ``easy`` or ``all``) in a splits
    directory or split CSV (see the module docstring), in file order."""
    if difficulty != "all" and difficulty not in SPLITS:
        raise InvalidInput(
            f"unknown difficulty {difficulty!r}; choose one of {', '.join(SPLITS)}, all"
        )
    wanted = frozenset(SPLITS if difficulty == "all" else (difficulty,))
    p = Path(path).expanduser()
    if p.is_dir():
        files = [p / f"{level}.csv" for level in SPLITS if level in wanted]
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            raise InvalidInput(
                f"{p}: no {', '.join(missing)} here; pass a `leakage splits build` output "
                "directory (hard.csv, medium.csv, easy.csv) or one split CSV"
            )
    elif p.is_file():
        files = [p]
    else:
        raise InvalidInput(f"{p}: no such file or directory (split)")
    pairs = [pair for f in files for pair in _read_file(f, wanted)]
    if not pairs:
        which = "" if difficulty == "all" else f"{difficulty} "
        raise InvalidInput(f"{p}: no {which}pairs to play")
    return pairs


def draw_pairs(pairs: Sequence[SplitPair], games: int, seed: int) -> list[SplitPair]:
    """``games`` pairs: passes over ``pairs``, each in a fresh seeded order, so that every
    pair is played once before any is played twice; the same seed gives the same pairs."""
    import numpy as np

    if not pairs:
        raise ValueError("no pairs to draw from")
    rng = np.random.default_rng([seed, 0x5B1])
    out: list[SplitPair] = []
    while len(out) < games:
        out.extend(pairs[int(i)] for i in rng.permutation(len(pairs)))
    return out[:games]
