"""The step table ``leakage.steps/1``: one Parquet row per turn of every scored game.

The schema is fixed here and written into every part file, so that parts from different
runs (and from the Ray engine) concatenate; a change of column is a version bump.

Grouping columns come from the transcript: ``model`` is the speaking player's model (its
``agent``, else ``meta.models[player]``), ``game_model`` the models of the players whose
turns update the posterior ('+'-joined, sorted; one name when one model gave every counted
clue), ``matchup``, ``difficulty`` and ``category`` from ``meta`` (``difficulty`` may instead
come from a splits file joined on ``pair``, the SpyGame word pair ``civilian|spy``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from itertools import accumulate
from typing import Any, Final, NamedTuple

from leakage.scoring import GameInput, Numbers, ReportContext, report_context
from leakage.transcripts import AnyTranscript, ChameleonTranscript

STEPS_FORMAT: Final = "leakage.steps/1"

# (name, arrow type name, nullable, what it holds); the order is the column order.
COLUMNS: Final[tuple[tuple[str, str, bool, str], ...]] = (
    ("source", "string", False, "input file (absolute path)"),
    ("record", "int64", False, "position of the record in its file, from 0"),
    ("game_id", "string", False, "the transcript's id"),
    ("game", "string", False, "chameleon or spygame"),
    ("backend", "string", False, "likelihood backend"),
    ("step", "int32", False, "position of the turn in the game, from 0"),
    ("clues_so_far", "int32", False, "counted turns up to and including this one"),
    ("player", "string", False, "speaking player's id"),
    ("role", "string", False, "speaking player's role"),
    ("model", "string", True, "speaking player's model"),
    ("game_model", "string", True, "models of the players whose turns are counted"),
    ("round", "int32", True, "round number, when the game has rounds"),
    ("text", "string", False, "the clue or statement"),
    ("counted", "bool", False, "whether the turn updated the posterior"),
    ("candidates", "list<string>", False, "candidate words, in the game's order"),
    ("probabilities", "list<double>", False, "posterior of each candidate after this turn"),
    ("entropy_bits", "double", False, "entropy of the posterior"),
    ("prior_entropy_bits", "double", False, "entropy of the prior (log2 K)"),
    ("information_gain_bits", "double", False, "entropy drop caused by this turn"),
    ("kl_bits", "double", False, "KL divergence from the previous posterior"),
    ("secret", "string", True, "Chameleon: the secret; SpyGame: the civilians' word"),
    ("secret_probability", "double", True, "probability of the secret (SpyGame: speaker's word)"),
    ("secret_rank", "int32", True, "rank of the secret, 1 = most probable"),
    ("speaker_word", "string", True, "SpyGame: the word the speaker held"),
    ("category", "string", True, "Chameleon: the card's category"),
    ("matchup", "string", True, "meta.matchup"),
    ("difficulty", "string", True, "meta.difficulty, or from the --difficulty file"),
    ("pair", "string", True, "SpyGame: civilian|spy"),
)
COLUMN_NAMES: Final = tuple(c[0] for c in COLUMNS)


@cache
def steps_schema() -> Any:
    """The pyarrow schema of the step table (pyarrow imported here, not at import time)."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "int32": pa.int32(),
        "bool": pa.bool_(),
        "double": pa.float64(),
        "list<string>": pa.list_(pa.string()),
        "list<double>": pa.list_(pa.float64()),
    }
    fields = [pa.field(n, types[t], nullable=null) for n, t, null, _ in COLUMNS]
    return pa.schema(fields, metadata={"format": STEPS_FORMAT})


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def pair_key(a: str, b: str) -> str:
    """The join key of a word pair, order-free and case-folded."""
    x, y = sorted((a.strip().casefold(), b.strip().casefold()))
    return f"{x}|{y}"


def _models(t: AnyTranscript) -> dict[str, str | None]:
    listed = t.meta.get("models")
    listed = listed if isinstance(listed, dict) else {}
    return {p.id: p.agent or _text(listed.get(p.id)) for p in t.players}


class RowContext(NamedTuple):
    """What the step rows and the report of one game take from its transcript and record,
    beside its :class:`~leakage.scoring.GameInput` and numbers: plain values, cheap to send
    to a worker."""

    report: ReportContext
    source: str
    record: int
    game_model: str | None
    category: str | None
    matchup: str | None
    difficulty: str | None
    pair: str | None
    models: tuple[str | None, ...]
    """Every turn's speaker's model."""


def row_context(
    source: str,
    record: int,
    t: AnyTranscript,
    counted: Sequence[bool],
    difficulty: Mapping[str, str] | None = None,
) -> RowContext:
    """The :class:`RowContext` of ``t``; ``counted`` says which turns update the posterior."""
    models = _models(t)
    speakers = [turn.player for turn in t.turns]
    counted_models = sorted(
        {m for p, c in zip(speakers, counted, strict=True) if c and (m := models[p])}
    )
    level = _text(t.meta.get("difficulty"))
    if isinstance(t, ChameleonTranscript):
        category, pair = t.category, None
    else:
        category, pair = None, f"{t.words.civilian}|{t.words.spy}"
        if level is None and difficulty:
            level = difficulty.get(pair_key(t.words.civilian, t.words.spy))
    return RowContext(
        report_context(t), source, record, "+".join(counted_models) or None, category,
        _text(t.meta.get("matchup")), level, pair, tuple(models[p] for p in speakers),
    )  # fmt: skip


_STEP_COLUMNS = ("step", "clues_so_far", "player", "role", "model", "round", "text", "counted")
_NUMBER_COLUMNS = ("entropy_bits", "information_gain_bits", "kl_bits")
_GAME_COLUMNS = (
    "source", "record", "game_id", "game", "backend", "game_model", "prior_entropy_bits",
    "secret", "category", "matchup", "difficulty", "pair",
)  # fmt: skip


class StepColumns:
    """Rows of many games gathered column by column, turned into one Arrow batch at the end.

    A game adds one tuple of game-level values (repeated by Arrow's ``take``), its turns'
    values to per-column lists, and its numbers as arrays: the probabilities straight from
    the posterior matrix, flat with one offset per step. Built from the numbers of the
    backend stage, so that the process that scores a game can also shape its rows.
    """

    def __init__(self) -> None:
        self._games: list[tuple[Any, ...]] = []
        self._per_game: list[int] = []
        self._steps: dict[str, list[Any]] = {c: [] for c in _STEP_COLUMNS}
        self._numbers: dict[str, list[Any]] = {c: [] for c in _NUMBER_COLUMNS}
        self._secret_probability: list[float | None] = []
        self._secret_rank: list[int | None] = []
        self._speaker_word: list[str | None] = []
        self._candidates: list[str] = []
        self._cand_offsets = [0]
        self._probabilities: list[Any] = []

    @property
    def rows(self) -> int:
        return sum(self._per_game)

    def add(self, ctx: RowContext, inp: GameInput, numbers: Numbers, backend: str) -> int:
        """Append the rows of one scored game; returns how many."""
        n = len(inp.texts)
        report = ctx.report
        self._games.append(
            (
                ctx.source, ctx.record, report.game_id, inp.game, backend, ctx.game_model,
                float(numbers["prior_entropy_bits"]), report.secret, ctx.category,
                ctx.matchup, ctx.difficulty, ctx.pair,
            )
        )  # fmt: skip
        self._per_game.append(n)
        steps = self._steps
        steps["step"].extend(range(n))
        steps["clues_so_far"].extend(accumulate(map(int, inp.counted)))
        steps["player"].extend(inp.speakers)
        steps["role"].extend(report.roles)
        steps["model"].extend(ctx.models)
        steps["round"].extend(report.rounds)
        steps["text"].extend(inp.texts)
        steps["counted"].extend(inp.counted)
        for name in _NUMBER_COLUMNS:
            self._numbers[name].append(numbers[name])
        probability, rank = numbers.get("secret_probability"), numbers.get("secret_rank")
        self._secret_probability.extend([None] * n if probability is None else probability.tolist())
        self._secret_rank.extend([None] * n if rank is None else rank.tolist())
        self._speaker_word.extend(report.speaker_words)
        k = len(inp.candidates)
        self._candidates.extend(inp.candidates * n)
        last = self._cand_offsets[-1]
        self._cand_offsets.extend(range(last + k, last + k * n + 1, k))
        self._probabilities.append(numbers["posterior"].ravel())
        return n

    def to_batch(self) -> Any:
        """The rows as a ``pyarrow.RecordBatch`` with :func:`steps_schema`."""
        import numpy as np
        import pyarrow as pa

        schema = steps_schema()
        columns: dict[str, Any] = {}
        for name, values in self._steps.items():
            columns[name] = pa.array(values, schema.field(name).type)
        for name, arrays in self._numbers.items():
            columns[name] = pa.array(np.concatenate(arrays), schema.field(name).type)
        columns["secret_probability"] = pa.array(self._secret_probability, pa.float64())
        columns["secret_rank"] = pa.array(self._secret_rank, pa.int32())
        columns["speaker_word"] = pa.array(self._speaker_word, pa.string())
        repeat = pa.array(np.repeat(np.arange(len(self._games)), self._per_game))
        for name, column in zip(_GAME_COLUMNS, zip(*self._games, strict=True), strict=True):
            columns[name] = pa.array(column, schema.field(name).type).take(repeat)
        offsets = pa.array(self._cand_offsets, pa.int32())
        columns["candidates"] = pa.ListArray.from_arrays(
            offsets, pa.array(self._candidates, pa.string())
        )
        # Every step has one probability per candidate: the same offsets.
        columns["probabilities"] = pa.ListArray.from_arrays(
            offsets, pa.array(np.concatenate(self._probabilities), pa.float64())
        )
        return pa.RecordBatch.from_arrays([columns[f.name] for f in schema], schema=schema)
