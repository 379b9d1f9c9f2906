"""Reading a step table (``leakage.steps/1``) for the curves: the columns needed, as numpy.

``RESULTS`` is a ``leakage batch`` output directory (its ``steps/``), a directory of Parquet
parts, or one Parquet file. Only the numeric columns and the grouping column are read whole;
the text of the few clues a report names is fetched by row afterwards (``rows``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.errors import InvalidInput

NONE_GROUP = "(none)"
UNKNOWN_DIFFICULTY = "unknown"
"""The difficulty group of a game with neither ``meta.difficulty`` nor a splits file entry."""

# --by NAME -> (column grouping the curves, column grouping per-clue figures)
GROUPINGS: dict[str, tuple[str, str]] = {
    "model": ("game_model", "model"),
    "matchup": ("matchup", "matchup"),
    "difficulty": ("difficulty", "difficulty"),
    "role": ("role", "role"),
    "speaker": ("speaker", "speaker"),
}
"""``speaker``: the speaking player's own model and role, ``model (role)`` (a clue belongs to
the model that said it); built from the ``model`` and ``role`` columns, not a column itself."""
SPEAKER_SEP = " · "
_NUMERIC = (
    "clues_so_far",
    "counted",
    "entropy_bits",
    "prior_entropy_bits",
    "information_gain_bits",
    "secret_rank",
)


@dataclass
class StepTable:
    """The columns of a step table that the curves use, one entry per step."""

    game: NDArray[np.int64]
    """Game number (one per distinct source file and record)."""
    clues: NDArray[np.int64]
    counted: NDArray[np.bool_]
    entropy: NDArray[np.float64]
    prior: NDArray[np.float64]
    gain: NDArray[np.float64]
    rank: NDArray[np.float64]
    """Secret rank, NaN when the game has no secret."""
    n_candidates: NDArray[np.int64]
    curve_group: NDArray[np.object_]
    clue_group: NDArray[np.object_]
    model: NDArray[np.object_]
    """The speaking player's model (``(none)`` when the log names none)."""
    role: NDArray[np.object_]
    n_games: int
    dataset: Any
    manifest: dict[str, Any] | None
    location: Path

    def rows(self, indices: NDArray[np.int64], columns: list[str]) -> list[dict[str, Any]]:
        """Selected rows (by position in the table), with the columns asked."""
        if len(indices) == 0:
            return []
        at = np.asarray(indices, dtype=np.int64)
        if hasattr(self.dataset, "to_table"):  # a pyarrow dataset
            table = self.dataset.take(at, columns=columns)
        else:  # a pyarrow table
            table = self.dataset.select(columns).take(at)
        return list(table.to_pylist())


def _locate(results: Path) -> tuple[Path, dict[str, Any] | None]:
    manifest = None
    if (results / "manifest.json").is_file():
        manifest = json.loads((results / "manifest.json").read_text(encoding="utf-8"))
    if (results / "steps").is_dir():
        return results / "steps", manifest
    if results.is_dir() or results.is_file():
        return results, manifest
    raise InvalidInput(f"{results}: no such file or directory (RESULTS)")


def _groups(column: Any) -> NDArray[np.object_]:
    values = column.to_numpy(zero_copy_only=False).astype(object)
    values[values == None] = NONE_GROUP  # noqa: E711  (elementwise comparison)
    return values


def speaker_groups(model: NDArray[np.object_], role: NDArray[np.object_]) -> NDArray[np.object_]:
    """``model · role`` per row: the group of ``--by speaker``."""
    return np.array([f"{m}{SPEAKER_SEP}{r}" for m, r in zip(model, role, strict=True)], object)


def load_steps(
    results: str | Path, by: str, *, difficulty: dict[str, str] | None = None
) -> StepTable:
    """Read what the curves need, grouped ``by`` one of :data:`GROUPINGS`."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    if by not in GROUPINGS:
        raise InvalidInput(f"unknown grouping {by!r}; choose one of {', '.join(GROUPINGS)}")
    where, manifest = _locate(Path(results))
    try:
        dataset = ds.dataset(where, format="parquet")
    except (pa.ArrowInvalid, OSError) as err:
        raise InvalidInput(f"{where}: not a readable step table ({err})") from None
    if not dataset.files:
        errors = where.parent / "errors.jsonl"
        if manifest is not None and errors.is_file():
            raise InvalidInput(f"{where}: no step rows: the run scored no game (see {errors})")
        raise InvalidInput(f"{where}: no Parquet files here (a step table is expected)")
    columns = [] if by == "speaker" else list(GROUPINGS[by])
    wanted = ["source", "record", *_NUMERIC, *columns, "model", "role", "pair"]
    missing = [c for c in wanted if c not in dataset.schema.names]
    if missing:
        raise InvalidInput(
            f"{where}: not a leakage.steps/1 table (missing columns {', '.join(missing)})"
        )
    table = dataset.to_table(columns=list(dict.fromkeys(wanted)))
    return steps_from_table(
        table, by, difficulty=difficulty, rows=dataset, manifest=manifest, location=where
    )


def steps_from_table(
    table: Any,
    by: str,
    *,
    difficulty: dict[str, str] | None = None,
    rows: Any = None,
    manifest: dict[str, Any] | None = None,
    location: Path = Path("<step table>"),
) -> StepTable:
    """The :class:`StepTable` of a ``leakage.steps/1`` table held in memory (a
    ``pyarrow.Table`` with at least the columns :func:`load_steps` reads), grouped ``by``
    one of :data:`GROUPINGS`: what a caller that keeps a job's rows (the service, reading a
    running job's new parts only) gives the curves, the plane and the comparison. A game is
    a distinct ``(source, record)``, numbered in the order its rows come. ``rows``: where
    :meth:`StepTable.rows` fetches whole rows (default: ``table``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if by not in GROUPINGS:
        raise InvalidInput(f"unknown grouping {by!r}; choose one of {', '.join(GROUPINGS)}")
    curve_col, clue_col = GROUPINGS[by]
    key = pc.binary_join_element_wise(
        table["source"], pc.cast(table["record"], pa.string()), "\x1f"
    )
    encoded = pc.dictionary_encode(key).combine_chunks()
    game = encoded.indices.to_numpy().astype(np.int64)
    rank = pc.cast(table["secret_rank"], pa.float64()).fill_null(np.nan).to_numpy()
    model, role = _groups(table["model"]), _groups(table["role"])
    if by == "speaker":
        curve_group = clue_group = speaker_groups(model, role)
    else:
        curve_group = _groups(table[curve_col])
        clue_group = curve_group if clue_col == curve_col else _groups(table[clue_col])
    if by == "difficulty":
        if difficulty:  # an explicit splits file wins over the recorded difficulty
            from leakage.transcripts import pair_key

            pairs = table["pair"].to_pylist()
            for i, p in enumerate(pairs):
                if p:
                    a, _, b = p.partition("|")
                    curve_group[i] = difficulty.get(pair_key(a, b), curve_group[i])
        curve_group[curve_group == NONE_GROUP] = UNKNOWN_DIFFICULTY
        clue_group = curve_group
    return StepTable(
        game=game,
        clues=table["clues_so_far"].to_numpy().astype(np.int64),
        counted=table["counted"].to_numpy(zero_copy_only=False).astype(bool),
        entropy=table["entropy_bits"].to_numpy(),
        prior=table["prior_entropy_bits"].to_numpy(),
        gain=table["information_gain_bits"].to_numpy(),
        rank=rank,
        # K from the prior, log2 K (reading the candidate lists would cost far more).
        n_candidates=np.rint(np.exp2(table["prior_entropy_bits"].to_numpy())).astype(np.int64),
        curve_group=curve_group,
        clue_group=clue_group,
        model=model,
        role=role,
        n_games=len(encoded.dictionary),
        dataset=table if rows is None else rows,
        manifest=manifest,
        location=location,
    )
