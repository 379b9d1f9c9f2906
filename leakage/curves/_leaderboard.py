"""The leaderboard ``leakage.leaderboard/1``: which model gives its secret away least, per role.

One row per game kind, model and role (the speaking player's own model and role, as
``--by speaker``), computed once from a step table (``leakage.steps/1``) so that the report,
the service and anyone with the Parquet parts get the same numbers:

- ``clues``: the model's counted turns in that role (Chameleon: one-word *clues*; SpyGame and
  CK-Arena: *statements*), ``games``: the games it spoke in, in that role.
- ``leakage_bits``: mean information gain per counted clue, to the observer without the
  secret, the posterior engine's reader (``information_gain_bits``: Chameleon, the entropy
  drop over the card's candidates that the clue causes, the clues before it heard;
  SpyGame, the drop from uniform of the statement's own word posterior over the pair, each
  statement read on its own, not cumulatively; a SpyGame scored from the spy's own seat,
  ``seat = "spy"``, the spy's gain about the civilians' word over an open vocabulary, the
  statements before heard: ``observers`` then says so, :data:`OBSERVERS_SPY_SEAT`).
  Σ gain / Σ clues over the games, as the report's "leakage by group" and the plane compute it.
- ``reveal_bits``: mean value per counted clue to the players who share the secret, the
  plane's y (:mod:`leakage.curves._plane`): Chameleon, log2 of the likelihood ratio that
  the speaker knows the secret; SpyGame, log2 P(statement | civilian word) / P(statement |
  spy word): from the statement's posterior over the pair, or, for a game scored from the
  spy's seat (whose posteriors are over an open vocabulary), the table's ``reveal_bits``,
  the same ratio by the seat's reader; one computation,
  :func:`leakage.curves._plane.reveal_per_step`.
- ``own_word_probability``: mean posterior the model's clues leave on its own word
  (``secret_probability``: Chameleon, P(secret) after the clue, the clues before it
  included; SpyGame, P(the speaker's word) from that statement alone). For the roles without
  the secret (chameleon) it is still P(secret): what the reader has on the word it hides
  from.
- ``win_rate``: the share of the games it played in that role that its side won, where the
  game's outcome is known. Outcomes are the games' ``meta.winner_role``, given as
  ``game_id -> winner role`` and matched on ``game_id`` (a game id held by several games of
  the table is left without an outcome). One rule says where they come from
  (:func:`game_outcomes`, which :func:`leaderboard` applies unless given outcomes, so the report,
  ``report.html`` and the service read the same): the step table's own ``winner_role``
  column when every part of the table holds it (:func:`outcomes_from_steps`); else the
  games' reports (:func:`outcomes_from_reports`: ``reports.jsonl`` of a ``leakage batch``
  results directory, :func:`load_outcomes`, or the reports the caller gives, e.g. a service
  job's stored ones), for tables written before the column was added. ``outcomes`` says
  which was used.

Intervals are bootstrap percentile intervals over games (:mod:`leakage._stats`; Efron &
Tibshirani 1993, ch. 13): each replicate draws the games of the table with replacement, once
for every row, so the rows of one replicate are computed on the same games and the pairing of
models that met in a game is kept. Each row of at least ``min_games`` games (10) also has a
**rank** among the ranked rows of its game kind and role (1 = leaks least), with a rank
interval: the percentile interval of its rank over the same replicates (Hall & Miller 2009,
"Using the bootstrap to quantify the authority of an empirical ranking", Ann. Statist.
37(6B)); a replicate that drew none of a row's games leaves the row out of that replicate's
ranking. **Not separable from** lists the models whose
difference in leakage from this row is not significant: for every pair of rows of a game kind
and role, a two-sided test of "no difference" with the bootstrap standard error of the
difference (z = d / se*, se* its standard deviation over the same replicates; Efron &
Tibshirani 1993, ch. 6 and 16), then Holm's step-down correction over all the pairs of that
block (Holm 1979, "A simple sequentially rejective multiple test procedure", Scand. J.
Statist. 6), which bounds the family-wise error at ``alpha``. Rows of fewer games keep their
figures and intervals, without rank or tests.

**All roles.** A plain mean over a model's clues in every role mixes its leakage with its
mix of roles (a model that was mostly a spy is compared with one that was mostly a civilian).
So an all-roles row (``role`` ``(all roles, standardised)``) is given only for a game kind
whose every role holds a word (SpyGame: civilians and spies each leak their own; not the
Chameleon, whose chameleon has no secret to leak) with at least two roles that have counted
clues, and only for a model with counted clues in each of them; its figure is the direct
standardisation Σ_r w_r · figure_r, with w_r each role's share of that figure's observations
over all models (the same weights for every model). All-roles rows are ranked among
themselves, a model only when it has ``min_games`` games in every role.

A leakage figure is a lower bound set by its reader: ``reader`` names the backend,
``reader_note`` says how strong it is (:func:`leakage.reader.lower_bound_note`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from leakage._stats import percentile_interval, ratio_draws, ratio_of_sums
from leakage.curves._data import NONE_GROUP
from leakage.errors import InvalidInput

LEADERBOARD_FORMAT: Final = "leakage.leaderboard/1"
ALL_ROLES_STANDARDISED: Final = "(all roles, standardised)"
FIGURES: Final = ("leakage", "reveal", "own_word_probability", "win_rate")
UNITS: Final = {"chameleon": "clue", "spygame": "statement"}
OBSERVERS: Final = {
    "chameleon": {
        "leakage": "the player without the secret (the chameleon's seat): information gain "
        "over the card's candidates, the clues before it heard",
        "reveal": "the players who share the secret: log2 likelihood ratio that the speaker "
        "knows it",
        "own_word_probability": "P(secret) after the clue, to the reader without the secret",
    },
    "spygame": {
        "leakage": "a reader who knows the pair: information gain about the speaker's word "
        "from the statement alone (per statement, not cumulative)",
        "reveal": "the civilians: log2 P(statement | civilian word) / P(statement | spy word)",
        "own_word_probability": "P(the speaker's own word) from the statement alone",
    },
}
OBSERVERS_SPY_SEAT: Final = {
    "leakage": "the spy's own seat (the first spy in seat order, its own word known): "
    "information gain about the civilians' word over an open vocabulary, the statements "
    "before heard (cumulative); a spy's row: what another spy's statement tells it",
    "reveal": "the civilians: log2 P(statement | civilian word) / P(statement | spy word), "
    "by the seat's reader",
    "own_word_probability": "P(the civilians' word) to the spy after the statement, the "
    "statements before heard (a spy's row: the civilians' word, not its own)",
}
"""What the SpyGame figures mean when every SpyGame game was scored from the spy's seat."""
_ROLE_ORDER = {"non-chameleon": 0, "chameleon": 1, "civilian": 0, "spy": 1}
_COLUMNS = [
    "source", "record", "game_id", "game", "backend", "step", "model", "role", "counted",
    "information_gain_bits", "secret_probability",
]  # fmt: skip
_REVEAL_COLUMNS = ["candidates", "probabilities", "secret", "pair"]
LEADERBOARD_COLUMNS: Final = [
    "game", "role", "rank", "rank_low", "rank_high", "model", "unit", "clues", "games",
    "leakage_bits", "leakage_low", "leakage_high",
    "reveal_bits", "reveal_low", "reveal_high",
    "own_word_probability", "own_word_probability_low", "own_word_probability_high",
    "win_rate", "win_rate_low", "win_rate_high", "games_with_outcome", "not_separable_from",
]  # fmt: skip
"""The CSV columns of :class:`LeaderboardRow` (``not_separable_from`` joined by ``;``)."""
PAIR_COLUMNS: Final = [
    "game", "role", "model_a", "model_b", "difference_bits", "difference_low",
    "difference_high", "p_value", "p_holm", "separable",
]  # fmt: skip


class LeaderboardRow(BaseModel):
    """One model in one role of one game kind (``None``: no observation for the figure)."""

    model_config = ConfigDict(extra="forbid")

    game: str
    """``chameleon`` or ``spygame``."""
    role: str
    """The speaker's role, or ``(all roles, standardised)``."""
    model: str
    unit: str
    """What a counted turn is: ``clue`` (Chameleon) or ``statement`` (SpyGame)."""
    clues: int
    """Counted clues (statements) of the model in that role."""
    games: int
    """Games the model spoke in, in that role."""
    leakage_bits: float | None
    leakage_low: float | None
    leakage_high: float | None
    reveal_bits: float | None
    reveal_low: float | None
    reveal_high: float | None
    own_word_probability: float | None
    own_word_probability_low: float | None
    own_word_probability_high: float | None
    win_rate: float | None
    win_rate_low: float | None
    win_rate_high: float | None
    games_with_outcome: int
    rank: int | None
    """1 = leaks least among the rows of its game kind and role (ties share the best rank)."""
    rank_low: int | None
    rank_high: int | None
    not_separable_from: list[str]
    """Models of the same game kind and role whose leakage differs from this one's by no more
    than chance (Holm-corrected bootstrap tests at ``alpha``)."""


class LeaderboardPair(BaseModel):
    """The bootstrap test of one pair of rows of a game kind and role."""

    model_config = ConfigDict(extra="forbid")

    game: str
    role: str
    model_a: str
    model_b: str
    difference_bits: float
    """Leakage of ``model_a`` minus ``model_b`` (bits per clue)."""
    difference_low: float | None
    difference_high: float | None
    p_value: float | None
    p_holm: float | None
    separable: bool


class Leaderboard(BaseModel):
    """``leakage.leaderboard/1``: rows sorted by game kind, role and rank."""

    model_config = ConfigDict(extra="forbid")

    format: str = LEADERBOARD_FORMAT
    games: int
    """Games in the step table."""
    reader: str | None
    """The backend that computed the figures (the step table's ``backend``)."""
    reader_note: str
    """Leakage is a lower bound set by this reader, and its measured strength."""
    level: float
    alpha: float
    replicates: int
    seed: int
    min_games: int
    """Rows of fewer games are shown without rank or tests."""
    correction: str
    outcomes: str
    """Where the win rates come from, or why there are none."""
    observers: dict[str, dict[str, str]]
    """Per game kind, what each figure measures and for whom."""
    notes: list[str]
    """What was left out and why (a role with no counted clue and no known outcome)."""
    rows: list[LeaderboardRow]
    pairs: list[LeaderboardPair]


# -- reading ----------------------------------------------------------------------------------


def _table(steps: Any, columns: list[str], optional: Sequence[str] = ()) -> Any:
    """A pyarrow Table of ``columns`` (and of those of ``optional`` the table has) from a
    path, a dataset, a Table or a list of rows."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    if isinstance(steps, (str, Path)):
        where = Path(steps)
        where = where / "steps" if (where / "steps").is_dir() else where
        if not where.exists():
            raise InvalidInput(f"{where}: no such file or directory (a step table is expected)")
        try:
            steps = ds.dataset(where, format="parquet")
        except (pa.ArrowInvalid, OSError) as err:
            raise InvalidInput(f"{where}: not a readable step table ({err})") from None
    elif isinstance(steps, Sequence):
        steps = pa.Table.from_pylist(list(steps))
    names = steps.schema.names
    missing = [c for c in columns if c not in names]
    if missing:
        raise InvalidInput(f"not a leakage.steps/1 table (missing columns {', '.join(missing)})")
    columns = columns + [c for c in optional if c in names]
    if isinstance(steps, pa.Table):
        return steps.select(columns)
    return steps.to_table(columns=columns)


def outcomes_from_reports(reports: Iterable[Mapping[str, Any]]) -> dict[str, str | None]:
    """``game_id -> meta.winner_role`` of ``leakage.report/1`` objects (as dicts, e.g. a
    service job's stored reports). A game id listed twice with different outcomes maps to
    ``None``. Raises :class:`InvalidInput` for an object without ``game_id``, naming its
    position."""
    out: dict[str, str | None] = {}
    for number, report in enumerate(reports):
        try:
            game_id, meta = report["game_id"], report.get("meta") or {}
        except (KeyError, TypeError, AttributeError):
            raise InvalidInput(f"report {number}: not a leakage.report/1 (field game_id)") from None
        winner = meta.get("winner_role") if isinstance(meta, dict) else None
        winner = winner if isinstance(winner, str) else None
        out[game_id] = winner if out.get(game_id, winner) == winner else None
    return out


def outcomes_from_steps(steps: Any) -> dict[str, str | None]:
    """``game_id -> winner role`` from a step table's own outcome column (``winner_role``,
    the games' ``meta.winner_role``; ``steps`` as :func:`leaderboard` takes it): what
    :func:`outcomes_from_reports` gives from the same games' reports. A game id held by
    games with different outcomes maps to ``None``; a table without the column (written
    before it existed) gives an empty mapping; a folder whose parts were written before and
    after (a run resumed) gives the outcomes of the games in the later parts."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    if isinstance(steps, (str, Path)) and Path(steps).exists():
        where = Path(steps) / "steps" if (Path(steps) / "steps").is_dir() else Path(steps)
        try:  # every part's columns, not the first part's alone
            parts = ds.dataset(where, format="parquet")
            schema = pa.unify_schemas([f.physical_schema for f in parts.get_fragments()])
            steps = ds.dataset(where, format="parquet", schema=schema)
        except (pa.ArrowInvalid, OSError) as err:
            raise InvalidInput(f"{where}: not a readable step table ({err})") from None
    try:
        table = _table(steps, ["source", "record", "game_id", "winner_role"])
    except InvalidInput:
        _table(steps, ["source", "record", "game_id"])  # not a step table at all: raises
        return {}  # a table written before its outcome column
    games = table.group_by(["source", "record", "game_id", "winner_role"]).aggregate([])
    out: dict[str, str | None] = {}
    for game_id, winner in zip(
        games["game_id"].to_pylist(), games["winner_role"].to_pylist(), strict=True
    ):
        out[game_id] = winner if out.get(game_id, winner) == winner else None
    return out


def _holds_outcomes(steps: Any) -> bool:
    """Whether every part of ``steps`` (as :func:`leaderboard` takes it) holds the outcome
    column ``winner_role``; reads the Parquet parts' footers only."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    if isinstance(steps, (str, Path)):
        where = Path(steps) / "steps" if (Path(steps) / "steps").is_dir() else Path(steps)
        if not where.exists():
            return False
        try:
            steps = ds.dataset(where, format="parquet")
        except (pa.ArrowInvalid, OSError):
            return False
    if isinstance(steps, Sequence):
        return bool(steps) and all(isinstance(r, Mapping) and "winner_role" in r for r in steps)
    if hasattr(steps, "get_fragments"):  # a dataset: every part's own columns
        fragments = list(steps.get_fragments())
        return bool(fragments) and all("winner_role" in f.physical_schema.names for f in fragments)
    return "winner_role" in steps.schema.names


def game_outcomes(
    steps: Any,
    *,
    reports: Iterable[Mapping[str, Any]] | None = None,
    reports_source: str = "the games' reports (meta.winner_role)",
) -> tuple[dict[str, str | None], str]:
    """The leaderboard's one rule for the games' outcomes (``game_id -> winner role``) and a
    phrase saying where they came from: the step table's ``winner_role`` column when every
    part of ``steps`` holds it (:func:`outcomes_from_steps`); else ``reports``
    (:func:`outcomes_from_reports`, named by ``reports_source``; read only then), else a
    results directory's ``reports.jsonl`` (:func:`load_outcomes`); else none (``{}``, "").
    A table written before ``leakage.steps/1`` held outcomes, or with parts written before
    and after (a run resumed), takes them from the reports."""
    if _holds_outcomes(steps):
        return outcomes_from_steps(steps), "the step table's winner_role column"
    if reports is not None:
        return outcomes_from_reports(reports), reports_source
    if isinstance(steps, (str, Path)) and (Path(steps) / "reports.jsonl").is_file():
        return load_outcomes(steps), f"meta.winner_role in {Path(steps) / 'reports.jsonl'}"
    return {}, ""


def load_outcomes(results: str | Path) -> dict[str, str | None]:
    """:func:`outcomes_from_reports` of a ``leakage batch`` results directory's
    ``reports.jsonl`` (or that file); empty when there is none."""
    path = Path(results)
    path = path / "reports.jsonl" if path.is_dir() else path
    if not path.is_file():
        return {}

    def reports() -> Iterator[Any]:
        with path.open(encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    report = json.loads(line)
                except ValueError:
                    raise InvalidInput(f"{path}, line {number}: not JSON") from None
                if not isinstance(report, dict) or "game_id" not in report:
                    raise InvalidInput(f"{path}, line {number}: not a leakage.report/1")
                yield report

    return outcomes_from_reports(reports())


def _objects(column: Any) -> NDArray[np.object_]:
    values = column.to_numpy(zero_copy_only=False).astype(object)
    values[values == None] = NONE_GROUP  # noqa: E711  (elementwise comparison)
    return values


# -- figures ----------------------------------------------------------------------------------


def _holm(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Holm's step-down adjusted p-values (monotone, capped at 1); a NaN p (no replicates)
    stays NaN and counts as a test all the same."""
    m = len(p)
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    adjusted = np.full(m, np.nan)
    running = 0.0
    for i, j in enumerate(order):
        if np.isnan(p[j]):
            continue
        running = max(running, min(1.0, (m - i) * float(p[j])))
        adjusted[j] = running
    return adjusted


def _ranks(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Competition ranks ("1224") of each row of ``values`` (..., items), smallest first,
    among the finite entries; NaN where the value is NaN."""
    v = np.where(np.isfinite(values), values, np.inf)
    less = (v[..., None, :] < v[..., :, None]).sum(axis=-1)
    return np.where(np.isfinite(values), less + 1.0, np.nan)


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def leaderboard(
    steps: Any,
    *,
    outcomes: Mapping[str, str | None] | None = None,
    reports: Iterable[Mapping[str, Any]] | None = None,
    reports_source: str = "the games' reports (meta.winner_role)",
    reveal: bool = True,
    replicates: int = 1000,
    level: float = 0.95,
    alpha: float = 0.05,
    seed: int = 0,
    min_games: int = 10,
) -> Leaderboard:
    """The leaderboard of a step table (module docstring: the figures and the method).

    ``steps``: a ``leakage batch`` results directory, a directory of Parquet parts or one
    Parquet file (str / Path), a ``pyarrow.Table`` or dataset, or a list of step rows
    (dicts with the ``leakage.steps/1`` columns). ``outcomes``: ``game_id -> winner role``;
    when ``None``, by :func:`game_outcomes`' rule: the table's ``winner_role`` column when
    every part holds it, else ``reports`` (report dicts, named by ``reports_source``), else
    the ``reports.jsonl`` of a results directory. ``reveal=False`` leaves out the reveal
    value (it reads every posterior). A row of fewer than ``min_games`` games is shown
    unranked and untested. Raises :class:`InvalidInput` when the table lacks a column or
    has no counted clue.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from leakage.reader import lower_bound_note

    source = "the caller's outcomes"
    if outcomes is None:
        outcomes, source = game_outcomes(steps, reports=reports, reports_source=reports_source)
    table = _table(
        steps, _COLUMNS + (_REVEAL_COLUMNS if reveal else []),
        optional=["reveal_bits"],
    )  # fmt: skip
    if table.num_rows == 0:
        raise InvalidInput("the step table has no rows: no game was scored")
    # Steps in order within each game (the reveal value reads consecutive posteriors).
    table = table.sort_by([("source", "ascending"), ("record", "ascending"), ("step", "ascending")])
    key = pc.binary_join_element_wise(
        pc.cast(table["source"], pa.string()), pc.cast(table["record"], pa.string()), "\x1f"
    )
    encoded = pc.dictionary_encode(key).combine_chunks()
    game = encoded.indices.to_numpy().astype(np.int64)
    n_games = len(encoded.dictionary)
    model, role = _objects(table["model"]), _objects(table["role"])
    kind = _objects(table["game"])
    counted = table["counted"].to_numpy(zero_copy_only=False).astype(bool)
    gain = pc.cast(table["information_gain_bits"], pa.float64()).fill_null(np.nan).to_numpy()
    prob = pc.cast(table["secret_probability"], pa.float64()).fill_null(np.nan).to_numpy()
    clue = counted & np.isfinite(gain)
    if not clue.any():
        raise InvalidInput("the step table has no counted clue to rank models by")
    y = _reveal(table, game) if reveal else np.full(len(game), np.nan)
    # The outcome of each game, from its id; an id shared by two games has none.
    first_row = np.unique(game, return_index=True)[1]  # games are numbered 0..n-1
    ids = table["game_id"].take(pa.array(first_row)).to_pylist()
    shared = Counter(ids)
    given = outcomes or {}
    winner = np.array([given.get(i) if shared[i] == 1 else None for i in ids], dtype=object)
    known_games = int(sum(w is not None for w in winner))
    if not source:
        outcomes_text = (
            "none: the step table has no outcome column (written before leakage.steps/1 "
            "held one) and no reports with meta.winner_role were found"
        )
    elif known_games == 0:
        outcomes_text = f"none: no game has a known outcome in {source}"
    else:
        outcomes_text = f"{source}, matched on game_id: {known_games:,} of {n_games:,} games"
    reader = _reader(table)
    rows: list[LeaderboardRow] = []
    pairs: list[LeaderboardPair] = []
    notes: list[str] = []
    observers = {k: v for k, v in OBSERVERS.items() if k in set(kind.tolist())}
    seat, spygames = _spy_seat(table, game, kind)
    if seat and seat == spygames:
        observers["spygame"] = dict(OBSERVERS_SPY_SEAT)
    elif seat:
        notes.append(
            f"spygame: {seat:,} of {spygames:,} games scored from the spy's own seat, the "
            "others from an outside seat: the rows mix two observers' figures (score them "
            "apart)"
        )
    for kind_name in sorted(set(kind.tolist())):
        in_kind = kind == kind_name
        block_rows, block_pairs = _rank_block(
            str(kind_name), in_kind, game, n_games, model, role, clue, gain, prob, y, winner,
            replicates=replicates, level=level, alpha=alpha, seed=seed,
            min_games=min_games, notes=notes,
        )  # fmt: skip
        empty = [r for r in block_rows if r.clues == 0 and r.games_with_outcome == 0]
        for role_name in dict.fromkeys(r.role for r in empty):
            n = sum(r.role == role_name for r in empty)
            notes.append(
                f"{kind_name} · {role_name}: {n} model(s) left out, with no counted clue and no "
                "known outcome"
                + (
                    " (the chameleon's clues count only when scored with them counted)"
                    if role_name == "chameleon"
                    else ""
                )
            )
        rows += [r for r in block_rows if not (r.clues == 0 and r.games_with_outcome == 0)]
        pairs += block_pairs
    return Leaderboard(
        games=n_games,
        reader=reader,
        reader_note=lower_bound_note(reader),
        level=level,
        alpha=alpha,
        replicates=replicates,
        seed=seed,
        min_games=min_games,
        correction="Holm (1979) over the pairwise bootstrap tests of each game kind and role",
        outcomes=outcomes_text,
        observers=observers,
        notes=notes,
        rows=rows,
        pairs=pairs,
    )


def _reader(table: Any) -> str | None:
    found = {b for b in table["backend"].to_pylist() if b}
    return found.pop() if len(found) == 1 else None


def _spy_seat(table: Any, game: NDArray[np.int64], kind: NDArray[np.object_]) -> tuple[int, int]:
    """(SpyGame games scored from the spy's seat: a ``reveal_bits`` value, SpyGame games)."""
    spy = np.unique(game[kind == "spygame"])
    if "reveal_bits" not in table.column_names:
        return 0, len(spy)
    held = np.asarray(table["reveal_bits"].is_valid().to_numpy(zero_copy_only=False), bool)
    return len(np.unique(game[held & (kind == "spygame")])), len(spy)


def _reveal(table: Any, game: NDArray[np.int64]) -> NDArray[np.float64]:
    """The plane's y of every row (:func:`leakage.curves._plane.reveal_per_step`, the one
    computation): from the posteriors over the pair, or, for a game scored from the spy's
    seat, its ``reveal_bits`` column (the same ratio, by the seat's reader)."""
    from leakage.curves._plane import reveal_per_step

    return reveal_per_step(table, game)


def _rank_block(
    kind: str,
    in_kind: NDArray[np.bool_],
    game: NDArray[np.int64],
    n_games: int,
    model: NDArray[np.object_],
    role: NDArray[np.object_],
    clue: NDArray[np.bool_],
    gain: NDArray[np.float64],
    prob: NDArray[np.float64],
    y: NDArray[np.float64],
    winner: NDArray[np.object_],
    *,
    replicates: int,
    level: float,
    alpha: float,
    seed: int,
    min_games: int,
    notes: list[str],
) -> tuple[list[LeaderboardRow], list[LeaderboardPair]]:
    keys = sorted(
        set(zip(model[in_kind].tolist(), role[in_kind].tolist(), strict=True)),
        key=lambda k: (_ROLE_ORDER.get(k[1], 9), k[1], k[0]),
    )
    index = {k: i for i, k in enumerate(keys)}
    n_keys = len(keys)
    col = np.array(
        [index.get((m, r), -1) for m, r in zip(model.tolist(), role.tolist(), strict=True)]
    )
    col = np.where(in_kind, col, -1)

    def per_game(weights: NDArray[np.float64], rows: NDArray[np.bool_]) -> NDArray[np.float64]:
        flat = game[rows] * n_keys + col[rows]
        counts = np.bincount(flat, weights=weights[rows], minlength=n_games * n_keys)
        return counts.astype(np.float64).reshape(n_games, n_keys)

    ones = np.ones(len(game))
    sel = in_kind & clue
    has_p = sel & np.isfinite(prob)
    has_y = sel & np.isfinite(y)
    played = per_game(ones, in_kind) > 0
    has_winner = np.array([w is not None for w in winner], dtype=bool)
    key_roles = np.array([r for _, r in keys], dtype=object)
    known = (played & has_winner[:, None]).astype(np.float64)
    won = (known > 0) & (winner[:, None] == key_roles[None, :])
    won = won.astype(np.float64)
    # Figures f x keys, as (games, f * keys) numerators and denominators.
    num = np.concatenate(
        [
            per_game(np.where(sel, gain, 0.0), sel),
            per_game(np.where(has_y, y, 0.0), has_y),
            per_game(np.where(has_p, prob, 0.0), has_p),
            won,
        ],
        axis=1,
    )
    den = np.concatenate(
        [per_game(ones, sel), per_game(ones, has_y), per_game(ones, has_p), known], axis=1
    )
    # All-roles rows: direct standardisation over the roles with counted clues.
    roles = sorted({r for _, r in keys}, key=lambda r: (_ROLE_ORDER.get(r, 9), r))
    clue_roles = [r for r in roles if den[:, [index[k] for k in keys if k[1] == r]].sum() > 0]
    std_models: list[str] = []
    if len(clue_roles) >= 2 and kind == "chameleon":
        notes.append(
            "chameleon: no all-roles rows (the chameleon holds no word, so the gain of its "
            "clues is not leakage of its own secret; its rows stay apart)"
        )
    elif len(clue_roles) >= 2:
        clues_of = den[:, :n_keys].sum(axis=0)
        std_models = sorted(
            {m for m, _ in keys}
            - {m for m, _ in keys for r in clue_roles if (m, r) not in index}
            - {m for m, r in keys if r in clue_roles and clues_of[index[(m, r)]] == 0}
        )
    value = ratio_of_sums(num, den)
    draws = (
        ratio_draws(num, den, replicates=replicates, rng=np.random.default_rng(seed))
        if replicates > 0 and n_games > 0
        else np.full((0, num.shape[1]), np.nan)
    )
    n_fig = len(FIGURES)
    value = value.reshape(n_fig, n_keys)
    draws = draws.reshape(len(draws), n_fig, n_keys)
    totals = den.sum(axis=0).reshape(n_fig, n_keys)
    labels: list[tuple[str, str]] = list(keys)
    rank_games = played.sum(axis=0)
    if std_models:
        weights = np.zeros((n_fig, len(clue_roles)))
        for j, r in enumerate(clue_roles):
            weights[:, j] = totals[:, [index[k] for k in keys if k[1] == r]].sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            weights /= weights.sum(axis=1, keepdims=True)
        cols = np.array([[index[(m, r)] for r in clue_roles] for m in std_models])  # (M, R)
        std_value = np.einsum("fmr,fr->fm", value[:, cols], weights)
        std_draws = np.einsum("bfmr,fr->bfm", draws[:, :, cols], weights)
        value = np.concatenate([value, std_value], axis=1)
        draws = np.concatenate([draws, std_draws], axis=2)
        std_totals = totals[:, cols].sum(axis=2)
        std_played = played[:, cols].any(axis=2)
        # a game counts once for a model that held both roles in it
        std_totals[3] = (std_played & (known[:, cols].max(axis=2) > 0)).sum(axis=0)
        totals = np.concatenate([totals, std_totals], axis=1)
        labels += [(m, ALL_ROLES_STANDARDISED) for m in std_models]
        played = np.concatenate([played, std_played], axis=1)
        # a standardised row is as good as its thinnest role: ranked only if each has enough
        rank_games = np.concatenate([rank_games, played[:, cols].sum(axis=0).min(axis=1)])
    low, high = percentile_interval(draws.reshape(len(draws), value.size), level)
    low, high = low.reshape(value.shape), high.reshape(value.shape)
    rows: list[LeaderboardRow] = []
    pairs: list[LeaderboardPair] = []
    for block_role in dict.fromkeys(r for _, r in labels):
        members = [i for i, (_, r) in enumerate(labels) if r == block_role]
        # Rows of fewer than min_games games keep their figures but are not ranked or tested:
        # a bootstrap over three games says little about its own spread.
        few = rank_games[members] < min_games
        leak = np.where(few, np.nan, value[0, members])
        rank = _ranks(leak)
        rank_draws = _ranks(np.where(few[None, :], np.nan, draws[:, 0, members]))
        if few.any() and np.isfinite(value[0, members]).any():
            notes.append(
                f"{kind} · {block_role}: {int((few & np.isfinite(value[0, members])).sum())} "
                f"model(s) with fewer than {min_games} games"
                + (" in one of the roles" if block_role == ALL_ROLES_STANDARDISED else "")
                + " shown unranked"
            )
        rank_low, rank_high = percentile_interval(rank_draws, level)
        ranked = sorted(
            (j for j in range(len(members)) if np.isfinite(leak[j])),
            key=lambda j: (leak[j], labels[members[j]][0]),
        )
        tests = list(combinations(ranked, 2))
        p = np.array(
            [
                _p_value(
                    draws[:, 0, members[a]] - draws[:, 0, members[b]],
                    float(value[0, members[a]] - value[0, members[b]]),
                )
                for a, b in tests
            ]
        )
        p_holm = _holm(p) if len(p) else p
        close: dict[int, list[str]] = {j: [] for j in range(len(members))}
        for (a, b), pv, ph in zip(tests, p, p_holm, strict=True):
            ia, ib = members[a], members[b]
            diff = draws[:, 0, ia] - draws[:, 0, ib]
            d_low, d_high = percentile_interval(diff[:, None], level)
            separable = bool(np.isfinite(ph) and ph < alpha)
            if not separable:
                close[a].append(labels[ib][0])
                close[b].append(labels[ia][0])
            pairs.append(
                LeaderboardPair(
                    game=kind, role=block_role, model_a=labels[ia][0], model_b=labels[ib][0],
                    difference_bits=float(value[0, ia] - value[0, ib]),
                    difference_low=_num(d_low[0]), difference_high=_num(d_high[0]),
                    p_value=_num(pv), p_holm=_num(ph), separable=separable,
                )
            )  # fmt: skip
        for j, i in enumerate(members):
            fig = {
                name: (_num(value[f, i]), _num(low[f, i]), _num(high[f, i]))
                for f, name in enumerate(FIGURES)
            }
            rows.append(
                LeaderboardRow(
                    game=kind,
                    role=block_role,
                    model=labels[i][0],
                    unit=UNITS.get(kind, "clue"),
                    clues=round(float(totals[0, i])),
                    games=int(played[:, i].sum()),
                    leakage_bits=fig["leakage"][0],
                    leakage_low=fig["leakage"][1],
                    leakage_high=fig["leakage"][2],
                    reveal_bits=fig["reveal"][0],
                    reveal_low=fig["reveal"][1],
                    reveal_high=fig["reveal"][2],
                    own_word_probability=fig["own_word_probability"][0],
                    own_word_probability_low=fig["own_word_probability"][1],
                    own_word_probability_high=fig["own_word_probability"][2],
                    win_rate=fig["win_rate"][0],
                    win_rate_low=fig["win_rate"][1],
                    win_rate_high=fig["win_rate"][2],
                    games_with_outcome=round(float(totals[3, i])),
                    rank=_int(rank[j]),
                    rank_low=_int(
                        math.floor(rank_low[j]) if np.isfinite(rank_low[j]) else rank_low[j]
                    ),
                    rank_high=_int(
                        math.ceil(rank_high[j]) if np.isfinite(rank_high[j]) else rank_high[j]
                    ),
                    not_separable_from=sorted(close[j]),
                )
            )
    rows.sort(
        key=lambda r: (
            r.role == ALL_ROLES_STANDARDISED,
            _ROLE_ORDER.get(r.role, 9),
            r.role,
            r.rank if r.rank is not None else math.inf,
            r.model,
        )
    )
    return rows, pairs


def _int(x: float) -> int | None:
    return None if not math.isfinite(x) else round(x)


def _p_value(diff: NDArray[np.float64], observed: float) -> float:
    """Two-sided p-value of "no difference": z = observed / se*, with se* the standard
    deviation of the difference over the replicates (the bootstrap standard error), p =
    2 Φ(-|z|). A percentile count cannot go below 2 / (replicates + 1), which Holm's bound
    over a few hundred pairs never reaches; NaN with fewer than two replicates."""
    d = diff[np.isfinite(diff)]
    if d.size < 2 or not math.isfinite(observed):
        return math.nan
    se = float(d.std(ddof=1))
    if se == 0.0:
        return 1.0 if observed == 0.0 else 0.0
    return math.erfc(abs(observed) / se / math.sqrt(2.0))


def leaderboard_records(board: Leaderboard) -> list[dict[str, Any]]:
    """The rows as flat dicts of :data:`LEADERBOARD_COLUMNS` (CSV: lists joined by ``;``)."""
    out = []
    for row in board.rows:
        d = row.model_dump()
        d["not_separable_from"] = ";".join(row.not_separable_from)
        out.append({c: d[c] for c in LEADERBOARD_COLUMNS})
    return out
