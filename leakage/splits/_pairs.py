"""Reading word pairs: CSV (or TSV) with a header, JSONL, or a JSON array.

- CSV: a header row. The pair is the two columns named by ``columns``; without it, the first
  known pair of names in the header (``civilian,spy``, ``word_a,word_b``, ``word1,word2``,
  ...; any case), else the first two columns. Every other column is kept and written back
  after ``similarity`` (e.g. CK-Arena's ``group``).
- JSONL: one pair per line, an object (``{"civilian": ..., "spy": ...}``, or any known pair
  of names, or ``columns``; other keys are kept) or a two-element list.
- JSON: an array of such objects or two-element lists (like SpyGame's ``keyword_set.json``).

Lists get the column names ``civilian,spy``. Every problem found is reported at once, each
naming the file, the line (the item, for JSON) and the field.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leakage.errors import InvalidInput

KNOWN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("civilian", "spy"),
    ("civilian_word", "spy_word"),
    ("word_a", "word_b"),
    ("word1", "word2"),
    ("word_1", "word_2"),
    ("first", "second"),
)
"""Column pairs recognised without ``columns``, in this order of preference."""
LIST_COLUMNS = ("civilian", "spy")
_MAX_REPORTED = 20


@dataclass(frozen=True)
class Pair:
    """One word pair as read, with where it came from and the row's other fields."""

    a: str
    b: str
    line: int
    """Line of the file (the item number, from 1, for a JSON array)."""
    extra: tuple[str, ...] = ()
    """Values of ``PairTable.extra_columns``, in that order."""

    @property
    def key(self) -> tuple[str, str]:
        """Order-free, case-free identity: (b, a) duplicates (a, b)."""
        x, y = " ".join(self.a.split()).casefold(), " ".join(self.b.split()).casefold()
        return (x, y) if x <= y else (y, x)


@dataclass(frozen=True)
class PairTable:
    """The pairs of one input, with its column names."""

    pairs: list[Pair]
    columns: tuple[str, str] = ("word_a", "word_b")
    extra_columns: tuple[str, ...] = ()
    source: str = "<memory>"
    format: str = "memory"
    unit: str = "line"
    """What ``Pair.line`` counts: ``line`` or ``item``."""
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_pairs(
        cls, pairs: Iterable[tuple[str, str]], columns: tuple[str, str] = ("word_a", "word_b")
    ) -> PairTable:
        """A table from (a, b) tuples (``line`` is the position, from 1)."""
        rows = [Pair(a, b, i) for i, (a, b) in enumerate(pairs, 1)]
        return cls(rows, columns=columns, unit="item")

    def duplicates(self) -> list[tuple[tuple[str, str], list[int]]]:
        """Pairs that occur more than once (either order, any case): (pair, lines)."""
        seen: dict[tuple[str, str], list[Pair]] = {}
        for p in self.pairs:
            seen.setdefault(p.key, []).append(p)
        return [((ps[0].a, ps[0].b), [p.line for p in ps]) for ps in seen.values() if len(ps) > 1]


class _Problems:
    def __init__(self, source: Path, unit: str) -> None:
        self.source = source
        self.unit = unit
        self.items: list[str] = []

    def add(self, where: int, msg: str, field_: str | None = None) -> None:
        loc = f"{self.source}: {self.unit} {where}"
        self.items.append(f"{loc}: field {field_!r}: {msg}" if field_ else f"{loc}: {msg}")

    def raise_if_any(self) -> None:
        if not self.items:
            return
        shown = self.items[:_MAX_REPORTED]
        more = len(self.items) - len(shown)
        tail = [f"... and {more} more problem(s)"] if more else []
        raise InvalidInput("\n".join([*shown, *tail]))


def _word(value: Any, where: int, field_: str, problems: _Problems) -> str | None:
    if not isinstance(value, str) or not value.strip():
        got = "an empty string" if isinstance(value, str) else type(value).__name__
        problems.add(where, f"expected a non-empty word, got {got}", field_)
        return None
    return " ".join(value.split())


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _pick_columns(names: list[str], columns: tuple[str, str] | None) -> tuple[str, str] | None:
    """The two pair columns among ``names`` (as spelled there), or None."""
    lower = {n.strip().lower(): n for n in names}
    wanted = [columns] if columns else list(KNOWN_COLUMNS)
    for x, y in wanted:
        if x.lower() in lower and y.lower() in lower:
            return lower[x.lower()], lower[y.lower()]
    return None


def _checked(
    a: str | None, b: str | None, cols: tuple[str, str], where: int, problems: _Problems
) -> tuple[str, str] | None:
    """(a, b) when both words are there and differ; else None (the problem is recorded)."""
    if a is None or b is None:
        return None
    if a.casefold() == b.casefold():
        problems.add(where, f"both words are {a!r}; a pair needs two different words", cols[1])
        return None
    return a, b


def _read_csv(path: Path, text: str, columns: tuple[str, str] | None) -> PairTable:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = [h.strip() for h in next(reader, [])]
    problems = _Problems(path, "line")
    if len(header) < 2:
        raise InvalidInput(
            f"{path}: line 1: a pairs CSV needs a header row with at least two columns "
            f"(found {header or 'nothing'})"
        )
    if len(set(header)) != len(header):
        raise InvalidInput(f"{path}: line 1: the header repeats a column name: {header}")
    picked = _pick_columns(header, columns)
    notes = []
    if picked is None:
        if columns:
            raise InvalidInput(
                f"{path}: line 1: no columns {columns[0]!r} and {columns[1]!r} in the header "
                f"({', '.join(header)})"
            )
        picked = (header[0], header[1])
        notes.append(f"pair columns: the first two, {picked[0]} and {picked[1]}")
    ia, ib = header.index(picked[0]), header.index(picked[1])
    extra_idx = [i for i in range(len(header)) if i not in (ia, ib)]
    pairs = []
    for row in reader:
        where = reader.line_num
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            problems.add(where, f"expected {len(header)} fields as in the header, got {len(row)}")
            continue
        a = _word(row[ia], where, picked[0], problems)
        b = _word(row[ib], where, picked[1], problems)
        ok = _checked(a, b, picked, where, problems)
        if ok is not None:
            pairs.append(Pair(*ok, where, tuple(row[i] for i in extra_idx)))
    problems.raise_if_any()
    return PairTable(
        pairs,
        columns=picked,
        extra_columns=tuple(header[i] for i in extra_idx),
        source=str(path),
        format="csv",
        notes=notes,
    )


def _read_records(
    path: Path, records: list[tuple[int, Any]], unit: str, fmt: str, columns: tuple[str, str] | None
) -> PairTable:
    problems = _Problems(path, unit)
    picked: tuple[str, str] | None = None
    extra_cols: dict[str, None] = {}
    parsed: list[tuple[int, str | None, str | None, dict[str, Any]]] = []
    for where, rec in records:
        if isinstance(rec, list):
            if len(rec) != 2:
                problems.add(where, f"a list pair needs exactly two words, got {len(rec)}")
                continue
            parsed.append((where, *_list_words(rec, where, problems), {}))
        elif isinstance(rec, dict):
            cols = _pick_columns(list(rec), columns)
            if cols is None:
                want = f"{columns[0]!r} and {columns[1]!r}" if columns else "'civilian' and 'spy'"
                problems.add(where, f"expected the fields {want}; found {', '.join(rec) or 'none'}")
                continue
            picked = picked or cols
            rest = {k: v for k, v in rec.items() if k not in cols}
            extra_cols.update(dict.fromkeys(rest))
            a = _word(rec[cols[0]], where, cols[0], problems)
            b = _word(rec[cols[1]], where, cols[1], problems)
            parsed.append((where, a, b, rest))
        else:
            problems.add(
                where,
                'expected an object {"civilian": ..., "spy": ...} or a two-element list, '
                f"got {type(rec).__name__}",
            )
    names = picked or LIST_COLUMNS
    pairs = []
    for where, a, b, rest in parsed:
        ok = _checked(a, b, names, where, problems)
        if ok is not None:
            pairs.append(Pair(*ok, where, tuple(_cell(rest.get(k)) for k in extra_cols)))
    problems.raise_if_any()
    return PairTable(
        pairs,
        columns=names,
        extra_columns=tuple(extra_cols),
        source=str(path),
        format=fmt,
        unit=unit,
    )


def _list_words(rec: list[Any], where: int, problems: _Problems) -> tuple[str | None, str | None]:
    return (
        _word(rec[0], where, f"[0] ({LIST_COLUMNS[0]})", problems),
        _word(rec[1], where, f"[1] ({LIST_COLUMNS[1]})", problems),
    )


def read_pairs(path: str | Path, *, columns: tuple[str, str] | None = None) -> PairTable:
    """Read the pairs of a ``.csv``/``.tsv``, ``.jsonl`` or ``.json`` file (other suffixes:
    by content). Raises ``InvalidInput`` naming file, line and field of every problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as err:
        raise InvalidInput(f"{path}: cannot read the pairs file: {err}") from err
    except UnicodeDecodeError as err:
        raise InvalidInput(f"{path}: not UTF-8 text: {err}") from err
    suffix = path.suffix.lower()
    start = text.lstrip()[:1]
    if suffix == ".json" or (suffix not in (".csv", ".tsv", ".jsonl") and start == "["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise InvalidInput(f"{path}: line {err.lineno}: not JSON: {err.msg}") from err
        except (ValueError, RecursionError) as err:  # an over-long integer, deep nesting
            raise InvalidInput(f"{path}: not JSON that can be read: {_why(err)}") from err
        if not isinstance(data, list):
            raise InvalidInput(f"{path}: expected a JSON array of pairs, got {type(data).__name__}")
        return _read_records(path, list(enumerate(data, 1)), "item", "json", columns)
    if suffix == ".jsonl" or (suffix not in (".csv", ".tsv") and start == "{"):
        records: list[tuple[int, Any]] = []
        # lines end at "\n" only (splitlines would cut at a U+2028 inside a JSON string)
        for i, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                records.append((i, json.loads(line)))
            except json.JSONDecodeError as err:
                raise InvalidInput(f"{path}: line {i}: not JSON: {err.msg}") from err
            except (ValueError, RecursionError) as err:
                raise InvalidInput(
                    f"{path}: line {i}: not JSON that can be read: {_why(err)}"
                ) from err
        return _read_records(path, records, "line", "jsonl", columns)
    return _read_csv(path, text, columns)


def _why(err: Exception) -> str:
    if isinstance(err, RecursionError):
        return "nested too deeply"
    return "an integer of more than 4,300 digits (write it as a string)"
