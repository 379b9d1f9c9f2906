"""The step table ``leakage.steps/1``: one Parquet row per turn of every scored game.

The schema is fixed here and written into every part file, so that parts from different
runs (and from the Ray engine) concatenate. Within ``leakage.steps/1`` a column is only ever
added, nullable and at the end, and readers take a table without it (a part written before
it existed reads it as null: read the parts with :func:`steps_schema`); renaming, removing or
changing a column is a version bump. Added since the first version: ``winner_role``.

Grouping columns come from the transcript: ``model`` is the speaking player's model (its
``agent``, else ``meta.models[player]``), ``game_model`` the models of the players whose
turns update the posterior ('+'-joined, sorted; one name when one model gave every counted
clue), ``matchup``, ``difficulty`` and ``category`` from ``meta`` (``difficulty`` from a
splits file joined on ``pair``, the SpyGame word pair ``civilian|spy``, when one is given and
holds the pair; else from ``meta``). ``winner_role`` is the game's outcome, the transcript's
``meta.winner_role`` (the role whose side won, as the adapters and the game runner record it),
null when the log does not say.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from leakage.posterior import SpyTrace, Trace
from leakage.scoring import GameInput, ReportContext, report_context
from leakage.transcripts import AnyTranscript, ChameleonTranscript

if TYPE_CHECKING:
    from leakage.seats import SeatTrace

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
    (
        "reveal_bits",
        "double",
        True,
        "SpyGame from the spy's seat: the statement's value to the civilians, log2 "
        "P(statement | civilians' word) / P(statement | spies' word) by the seat's reader "
        "(the plane's y); null from other seats and in tables written before it",
    ),
    ("secret", "string", True, "Chameleon: the secret; SpyGame: the civilians' word"),
    ("secret_probability", "double", True, "probability of the secret (SpyGame: speaker's word)"),
    ("secret_rank", "int32", True, "rank of the secret, 1 = most probable"),
    ("speaker_word", "string", True, "SpyGame: the word the speaker held"),
    ("category", "string", True, "Chameleon: the card's category"),
    ("matchup", "string", True, "meta.matchup"),
    ("difficulty", "string", True, "from the --difficulty file, else meta.difficulty"),
    ("pair", "string", True, "SpyGame: civilian|spy"),
    ("winner_role", "string", True, "the game's outcome: meta.winner_role, the winning side"),
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


def winner_role(meta: Mapping[str, Any]) -> str | None:
    """A game's outcome as the step rows hold it: ``meta.winner_role`` when it is a string
    (as :func:`leakage.curves.outcomes_from_reports` reads a report's), else None."""
    winner = meta.get("winner_role")
    return winner if isinstance(winner, str) else None


def player_models(t: AnyTranscript) -> dict[str, str | None]:
    """Each player's model, as the step rows read it: the player's ``agent``, else
    ``meta.models[player]``; None when neither says."""
    listed = t.meta.get("models")
    listed = listed if isinstance(listed, dict) else {}
    return {p.id: p.agent or _text(listed.get(p.id)) for p in t.players}


class RowContext(NamedTuple):
    """What the step rows and the report of one game take from its transcript and record,
    beside its :class:`~leakage.scoring.GameInput` and trace: plain values, cheap to send
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
    winner_role: str | None = None
    """The game's outcome (:func:`winner_role`)."""


def row_context(
    source: str,
    record: int,
    t: AnyTranscript,
    counted: Sequence[bool],
    difficulty: Mapping[str, str] | None = None,
) -> RowContext:
    """The :class:`RowContext` of ``t``; ``counted`` says which turns update the posterior."""
    models = player_models(t)
    speakers = [turn.player for turn in t.turns]
    counted_models = sorted(
        {m for p, c in zip(speakers, counted, strict=True) if c and (m := models[p])}
    )
    level = _text(t.meta.get("difficulty"))
    if isinstance(t, ChameleonTranscript):
        category, pair = t.category, None
    else:
        category, pair = None, f"{t.words.civilian}|{t.words.spy}"
        if difficulty:  # an explicit splits file wins over meta.difficulty
            level = difficulty.get(t.words.key, level)
    return RowContext(
        report_context(t), source, record, "+".join(counted_models) or None, category,
        _text(t.meta.get("matchup")), level, pair, tuple(models[p] for p in speakers),
        winner_role(t.meta),
    )  # fmt: skip


_STEP_COLUMNS = ("step", "clues_so_far", "player", "role", "model", "round", "text", "counted")
_NUMBER_COLUMNS = ("entropy_bits", "information_gain_bits", "kl_bits")
_GAME_COLUMNS = (
    "source", "record", "game_id", "game", "backend", "game_model", "secret", "category",
    "matchup", "difficulty", "pair", "winner_role",
)  # fmt: skip


class StepNumbers:
    """The numbers of many games' step rows, gathered as flat arrays.

    The process that scores the games gathers them; :meth:`arrays` is what it sends to the
    process that shapes the rows (a few numpy arrays per chunk, cheap to pickle), where
    :meth:`StepColumns.to_batch` puts them beside the rest of each row.
    """

    def __init__(self) -> None:
        self._parts: dict[str, list[Any]] = {
            c: [] for c in (*_NUMBER_COLUMNS, "posterior", "secret_probability", "secret_rank")
        }
        self._prior_entropy: list[float] = []
        self._has_secret: list[Any] = []
        self._reveal: list[Any] = []

    def __len__(self) -> int:
        """How many games were added."""
        return len(self._prior_entropy)

    def add(self, trace: Trace | SpyTrace | SeatTrace) -> None:
        """Append one scored game's figures."""
        import numpy as np

        parts = self._parts
        for name in _NUMBER_COLUMNS:
            parts[name].append(getattr(trace, name))
        parts["posterior"].append(trace.posterior.ravel())
        self._prior_entropy.append(float(trace.prior_entropy_bits))
        probability, rank = trace.secret_probability, trace.secret_rank
        n = len(trace.entropy_bits)
        if probability is None or rank is None:
            probability, rank = np.zeros(n), np.zeros(n, np.int64)
            self._has_secret.append(np.zeros(n, np.bool_))
        else:
            self._has_secret.append(np.ones(n, np.bool_))
        parts["secret_probability"].append(probability)
        parts["secret_rank"].append(rank)
        reveal = getattr(trace, "reveal_bits", None)  # the spy's seat's alone
        self._reveal.append(np.full(n, np.nan) if reveal is None else reveal)

    def arrays(self) -> dict[str, Any]:
        """Every number, one flat array per column (``posterior``: step after step, one
        probability per candidate; ``prior_entropy_bits``: one per game)."""
        import numpy as np

        out = {name: np.concatenate(parts) for name, parts in self._parts.items()}
        out["has_secret"] = np.concatenate(self._has_secret)
        out["reveal_bits"] = np.concatenate(self._reveal).astype(np.float64)
        out["prior_entropy_bits"] = np.asarray(self._prior_entropy, np.float64)
        return out


class StepColumns:
    """Rows of many games gathered column by column, turned into one Arrow batch at the end.

    A game adds one tuple of game-level values (repeated by Arrow's ``take``), its turns'
    values to per-column lists, and its candidates once (repeated per step by ``take``).
    Everything here comes from the game's inputs and row context; the numbers come as the
    flat arrays of :class:`StepNumbers`, gathered for the same games in the same order,
    perhaps in another process.
    """

    def __init__(self) -> None:
        self._games: list[tuple[Any, ...]] = []
        self._per_game: list[int] = []
        self._steps: dict[str, list[Any]] = {c: [] for c in _STEP_COLUMNS}
        self._speaker_word: list[str | None] = []
        self._candidates: list[str] = []
        self._k: list[int] = []

    @property
    def rows(self) -> int:
        return sum(self._per_game)

    def add(self, ctx: RowContext, inp: GameInput, backend: str) -> int:
        """Append the rows of one scored game, but for their numbers; returns how many."""
        n = len(inp.texts)
        report = ctx.report
        self._games.append(
            (
                ctx.source, ctx.record, report.game_id, inp.game, backend, ctx.game_model,
                report.secret, ctx.category, ctx.matchup, ctx.difficulty, ctx.pair,
                ctx.winner_role,
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
        self._speaker_word.extend(report.speaker_words)
        self._candidates.extend(inp.columns)  # the players, from a voter's seat
        self._k.append(len(inp.columns))
        return n

    def to_batch(self, numbers: Mapping[str, Any]) -> Any:
        """The rows as a ``pyarrow.RecordBatch`` with :func:`steps_schema`; ``numbers`` is
        :meth:`StepNumbers.arrays` of the same games."""
        import numpy as np
        import pyarrow as pa

        schema = steps_schema()
        columns: dict[str, Any] = {}
        for name, values in self._steps.items():
            columns[name] = pa.array(values, schema.field(name).type)
        for name in _NUMBER_COLUMNS:
            columns[name] = pa.array(numbers[name], pa.float64())
        missing = ~numbers["has_secret"]
        columns["secret_probability"] = pa.array(
            numbers["secret_probability"], pa.float64(), mask=missing
        )
        columns["secret_rank"] = pa.array(numbers["secret_rank"], pa.int32(), mask=missing)
        columns["speaker_word"] = pa.array(self._speaker_word, pa.string())
        reveal = numbers.get("reveal_bits")  # numbers gathered before the column: all null
        if reveal is None:
            reveal = np.full(len(self._steps["step"]), np.nan)
        columns["reveal_bits"] = pa.array(reveal, pa.float64(), mask=np.isnan(reveal))
        per_game = np.asarray(self._per_game)
        repeat = pa.array(np.repeat(np.arange(len(self._games)), per_game))
        for name, column in zip(_GAME_COLUMNS, zip(*self._games, strict=True), strict=True):
            columns[name] = pa.array(column, schema.field(name).type).take(repeat)
        columns["prior_entropy_bits"] = pa.array(numbers["prior_entropy_bits"]).take(repeat)
        # Each step lists its game's candidates: positions into the games' candidates,
        # one run of k per step; every step has one probability per candidate too.
        k = np.asarray(self._k)
        first = np.concatenate(([0], np.cumsum(k)[:-1]))
        step_first = np.repeat(first, per_game)
        step_k = np.repeat(k, per_game)
        offsets = np.concatenate(([0], np.cumsum(step_k))).astype(np.int32)
        within = np.arange(offsets[-1]) - np.repeat(offsets[:-1], step_k)
        positions = pa.array(np.repeat(step_first, step_k) + within)
        offsets_array = pa.array(offsets)
        columns["candidates"] = pa.ListArray.from_arrays(
            offsets_array, pa.array(self._candidates, pa.string()).take(positions)
        )
        columns["probabilities"] = pa.ListArray.from_arrays(
            offsets_array, pa.array(numbers["posterior"], pa.float64())
        )
        return pa.RecordBatch.from_arrays([columns[f.name] for f in schema], schema=schema)
