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

from collections.abc import Mapping
from functools import cache
from typing import Any, Final

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


_STEP_COLUMNS = (
    "step", "clues_so_far", "player", "role", "model", "round", "text", "counted",
    "entropy_bits", "information_gain_bits", "kl_bits", "secret_probability", "secret_rank",
    "speaker_word",
)  # fmt: skip
_GAME_COLUMNS = (
    "source", "record", "game_id", "game", "backend", "game_model", "prior_entropy_bits",
    "secret", "category", "matchup", "difficulty", "pair",
)  # fmt: skip


class StepColumns:
    """Rows of many games gathered as tuples, turned into one Arrow batch at the end.

    A game adds one tuple of game-level values and one tuple per step; the columns are
    formed once, in :meth:`to_batch` (game-level ones repeated by Arrow's ``take``), and the
    two list columns are kept flat (values and offsets): building Arrow lists from Python
    lists of lists, or extending 28 lists per game, costs a good part of a game's scoring.
    """

    def __init__(self) -> None:
        self._games: list[tuple[Any, ...]] = []
        self._steps: list[tuple[Any, ...]] = []
        self._per_game: list[int] = []
        self._candidates: list[str] = []
        self._cand_offsets = [0]
        self._probabilities: list[float] = []

    @property
    def rows(self) -> int:
        return len(self._steps)

    def add(
        self,
        source: str,
        record: int,
        t: AnyTranscript,
        report: Mapping[str, Any],
        difficulty: Mapping[str, str] | None = None,
    ) -> int:
        """Append the rows of one scored game, its report as plain data
        (:func:`leakage.scoring.report_data`, or ``Report.model_dump()``); returns how many."""
        models = _models(t)
        steps = report["steps"]
        counted = sorted({m for s in steps if s["counted"] and (m := models[s["player"]])})
        pair = category = None
        if isinstance(t, ChameleonTranscript):
            category = t.category
        else:
            pair = f"{t.words.civilian}|{t.words.spy}"
        level = _text(t.meta.get("difficulty"))
        if level is None and difficulty and pair is not None:
            level = difficulty.get(pair_key(t.words.civilian, t.words.spy))  # type: ignore[union-attr]
        self._games.append(
            (
                source, record, report["game_id"], report["game"], report["backend"],
                "+".join(counted) or None, report["summary"]["prior_entropy_bits"],
                report["secret"], category, _text(t.meta.get("matchup")), level, pair,
            )
        )  # fmt: skip
        clues = 0
        append = self._steps.append
        probabilities = self._probabilities
        for s in steps:
            clues += s["counted"]
            append(
                (
                    s["index"], clues, s["player"], s["role"], models.get(s["player"]),
                    s["round"], s["text"], s["counted"], s["entropy_bits"],
                    s["information_gain_bits"], s["kl_bits"], s["secret_probability"],
                    s["secret_rank"], s["speaker_word"],
                )
            )  # fmt: skip
            probabilities.extend(s["posterior"].values())
        n = len(steps)
        self._per_game.append(n)
        candidates = report["candidates"]
        k = len(candidates)
        self._candidates.extend(candidates * n)
        last = self._cand_offsets[-1]
        self._cand_offsets.extend(range(last + k, last + k * n + 1, k))
        return n

    def to_batch(self) -> Any:
        """The rows as a ``pyarrow.RecordBatch`` with :func:`steps_schema`."""
        import numpy as np
        import pyarrow as pa

        schema = steps_schema()
        columns: dict[str, Any] = {}
        for name, values in zip(_STEP_COLUMNS, zip(*self._steps, strict=True), strict=True):
            columns[name] = pa.array(values, schema.field(name).type)
        repeat = pa.array(np.repeat(np.arange(len(self._games)), self._per_game))
        for name, values in zip(_GAME_COLUMNS, zip(*self._games, strict=True), strict=True):
            columns[name] = pa.array(values, schema.field(name).type).take(repeat)
        offsets = pa.array(self._cand_offsets, pa.int32())
        columns["candidates"] = pa.ListArray.from_arrays(
            offsets, pa.array(self._candidates, pa.string())
        )
        # Every step has one probability per candidate: the same offsets.
        columns["probabilities"] = pa.ListArray.from_arrays(
            offsets, pa.array(self._probabilities, pa.float64())
        )
        return pa.RecordBatch.from_arrays([columns[f.name] for f in schema], schema=schema)
