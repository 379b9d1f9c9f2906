"""Two readings of the step table ``leakage.steps/1`` beside the curves: one row per game
(:func:`game_records`, ``leakage.games/1``), and the step rows of games scored before the
table existed, rebuilt from their stored reports (:func:`report_steps`).

``leakage.games/1`` is what a table of games shows (the service's ``records`` and
``results.parquet``): each game's last step, its counted turns, the models that spoke and its
outcome.
Everything in it comes from the step rows; a game with no turns has no step row, so it has
no row here either.

Rows rebuilt from a ``leakage.report/1`` are those the scorer wrote, number for number,
except for what a report does not hold:

- a speaker's model is the one ``models`` gives for that game, else the report's
  ``meta.models``; a player's ``agent`` field is not in the report, so without ``models``
  (read from the transcript) such a model is left null rather than guessed;
- a report written with ``top_k`` keeps only the k most probable candidates of each step:
  the others' probabilities are NaN (unknown), never a share of the rest;
- ``difficulty`` is ``meta.difficulty`` (no splits file is joined), ``winner_role`` the
  report's ``meta.winner_role``;
- a report of a player's seat (``settings.seat``) is refused: its posterior ranges over
  what the seat knows and needs the game's input to be laid out again (score it again).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple

from leakage._seats import canonical_seat
from leakage.batch._rows import RowContext, StepColumns, StepNumbers, _text, winner_role
from leakage.errors import InvalidInput
from leakage.posterior import Trace
from leakage.scoring import ChameleonInput, GameInput, ReportContext, SpyInput

GAMES_FORMAT: Final = "leakage.games/1"

# (name, arrow type name, nullable, what it holds); the order is the column order.
GAME_COLUMNS: Final[tuple[tuple[str, str, bool, str], ...]] = (
    ("source", "string", False, "input file (absolute path)"),
    ("record", "int64", False, "position of the record in its file, from 0"),
    ("game_id", "string", False, "the transcript's id"),
    ("game", "string", False, "chameleon or spygame"),
    ("backend", "string", False, "likelihood backend"),
    ("turns", "int32", False, "turns scored (step rows)"),
    ("counted", "int32", False, "turns that updated the posterior"),
    ("final_entropy_bits", "double", False, "entropy of the posterior after the last turn"),
    ("final_secret_probability", "double", True, "Chameleon: P(secret) after the last turn"),
    ("final_secret_rank", "int32", True, "Chameleon: rank of the secret after the last turn"),
    (
        "mean_speaker_word_probability", "double", True,
        "SpyGame: mean over statements of P(the speaker's own word | the statement)",
    ),
    ("secret", "string", True, "Chameleon: the secret; SpyGame: the civilians' word"),
    ("category", "string", True, "Chameleon: the card's category"),
    ("matchup", "string", True, "meta.matchup"),
    ("difficulty", "string", True, "the step table's difficulty"),
    ("pair", "string", True, "SpyGame: civilian|spy"),
    ("game_model", "string", True, "models of the players whose turns are counted"),
    ("models", "list<string>", False, "every speaker's model, sorted, each once"),
    ("winner_role", "string", True, "the game's outcome: meta.winner_role, the winning side"),
)  # fmt: skip
GAME_COLUMN_NAMES: Final = tuple(c[0] for c in GAME_COLUMNS)
_PLAYER_SEATS: Final = ("civilian", "spy")
"""SpyGame's seats of a player (the others are an outside observer's)."""


def games_schema() -> Any:
    """The pyarrow schema of :func:`game_records` (pyarrow imported here)."""
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "int32": pa.int32(),
        "double": pa.float64(),
        "list<string>": pa.list_(pa.string()),
    }
    fields = [pa.field(n, types[t], nullable=null) for n, t, null, _ in GAME_COLUMNS]
    return pa.schema(fields, metadata={"format": GAMES_FORMAT})


def game_records(table: Any, *, seat: str | None = None) -> Any:
    """One row per game of a step table (a ``pyarrow.Table`` with ``steps_schema()``), as a
    ``pyarrow.Table`` with :func:`games_schema`, games in the order their first rows come.

    The final figures are those of the game's last step (the highest ``step``), as the
    ``summary`` of the game's ``leakage.report/1`` gives them: its entropy, P(secret) and
    rank (a rank of 0, a player's seat's step without one, is null as in the report). A
    SpyGame read from outside (its default seats) is the exception: there a step's
    ``secret_probability`` is P(speaker's word) from that statement alone, so its final
    P(secret) and rank are null, as in its report, and its figure is the mean over the
    statements (``mean_speaker_word_probability``). ``seat`` is the seat the table's games
    were scored from (``ScoreOptions.seat``; a step table does not hold it): from a
    player's seat (``civilian``, ``spy``) a SpyGame's final figures are its last step's.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = games_schema()
    if not table.num_rows:
        return schema.empty_table()
    # keep the table's order of games; within a game, its steps in order
    first_seen = (
        pa.table(
            {
                "source": table["source"],
                "record": table["record"],
                "_row": np.arange(table.num_rows),
            }
        )
        .group_by(["source", "record"], use_threads=False)
        .aggregate([("_row", "min")])
    )
    order = pc.sort_indices(first_seen, [("_row_min", "ascending")])
    first_seen = first_seen.take(order)
    position = {
        (s, r): i
        for i, (s, r) in enumerate(
            zip(first_seen["source"].to_pylist(), first_seen["record"].to_pylist(), strict=True)
        )
    }
    game_of = np.fromiter(
        (
            position[(s, r)]
            for s, r in zip(table["source"].to_pylist(), table["record"].to_pylist(), strict=True)
        ),
        np.int64,
        table.num_rows,
    )
    rows = table.append_column("_game", pa.array(game_of)).sort_by(
        [("_game", "ascending"), ("step", "ascending")]
    )
    games = rows["_game"].to_numpy()
    n = len(position)
    starts = np.searchsorted(games, np.arange(n), side="left")
    ends = np.searchsorted(games, np.arange(n), side="right")
    first, last = pa.array(starts), pa.array(ends - 1)
    spy = pc.equal(rows["game"].take(first), "spygame")
    if seat is not None and canonical_seat(seat) in _PLAYER_SEATS:  # a player's seat
        spy = pa.array(np.zeros(n, np.bool_))
    chameleon = pc.invert(spy)
    counted = np.add.reduceat(
        rows["counted"].to_numpy(zero_copy_only=False).astype(np.int64), starts
    )
    probability = rows["secret_probability"].to_numpy(zero_copy_only=False)
    held = ~np.isnan(probability.astype(np.float64))
    sums = np.add.reduceat(np.where(held, probability, 0.0), starts)
    have = np.add.reduceat(held.astype(np.int64), starts)
    mean = pa.array(sums / np.maximum(have, 1), pa.float64(), mask=have == 0)
    null_double = pa.nulls(n, pa.float64())
    null_int = pa.nulls(n, pa.int32())
    models = rows["model"].to_pylist()
    model_lists = [sorted({m for m in models[s:e] if m}) for s, e in zip(starts, ends, strict=True)]
    columns: dict[str, Any] = {
        name: rows[name].take(first)
        for name in (
            "source", "record", "game_id", "game", "backend", "secret", "category", "matchup",
            "difficulty", "pair", "game_model", "winner_role",
        )
    }  # fmt: skip
    columns["turns"] = pa.array(ends - starts, pa.int32())
    columns["counted"] = pa.array(counted, pa.int32())
    columns["final_entropy_bits"] = rows["entropy_bits"].take(last)
    columns["final_secret_probability"] = pc.if_else(
        chameleon, rows["secret_probability"].take(last), null_double
    )
    rank = rows["secret_rank"].take(last)
    rank = pc.if_else(pc.equal(rank, 0), null_int, rank)  # a seat's step without a rank
    columns["final_secret_rank"] = pc.if_else(chameleon, rank, null_int)
    columns["mean_speaker_word_probability"] = pc.if_else(spy, mean, null_double)
    columns["models"] = pa.array(model_lists, pa.list_(pa.string()))
    arrays = [pa.chunked_array([columns[f.name]]).cast(f.type) for f in schema]
    return pa.Table.from_arrays(arrays, schema=schema)


class StoredReport(NamedTuple):
    """One game's stored ``leakage.report/1`` (parsed JSON) and where its record was."""

    source: str
    record: int
    report: Mapping[str, Any]
    models: Mapping[str, str | None] | None = None
    """Each player's model, read from the game's transcript when it is still at hand (a
    player's ``agent`` is not in the report); None: the report's ``meta.models`` alone."""


def _rebuilt(stored: StoredReport) -> tuple[RowContext, GameInput, Trace]:
    import numpy as np

    doc = stored.report
    where = f"{stored.source}, record {stored.record}"
    settings = doc.get("settings") or {}
    if settings.get("seat"):
        raise InvalidInput(
            f"{where}: a report of the {settings['seat']!r} seat cannot be laid out as step "
            "rows again; score the game again"
        )
    steps = doc.get("steps") or []
    candidates = tuple(str(c) for c in doc.get("candidates") or ())
    meta = doc.get("meta") or {}
    found = meta.get("models")
    listed: Mapping[str, Any] = found if isinstance(found, dict) else {}
    given = stored.models
    speakers = tuple(str(s["player"]) for s in steps)

    def model(player: str) -> str | None:
        if given is not None and given.get(player):
            return _text(given[player])
        return _text(listed.get(player))

    counted = tuple(bool(s["counted"]) for s in steps)
    texts = tuple(str(s["text"]) for s in steps)
    game = doc.get("game")
    secret = _text(doc.get("secret"))
    inp: GameInput
    if game == "chameleon":
        category, pair = _text(doc.get("category")), None
        inp = ChameleonInput(texts, speakers, candidates, category, counted, None)
    elif game == "spygame" and len(candidates) >= 2:
        category, pair = None, f"{candidates[0]}|{candidates[1]}"
        inp = SpyInput(texts, speakers, candidates, (), (), int(settings.get("n_spies") or 1))
    else:
        raise InvalidInput(f"{where}: game: not a leakage.report/1 of a chameleon or spygame")
    nan = float("nan")
    posterior = np.array(
        [[(s.get("posterior") or {}).get(c, nan) for c in candidates] for s in steps],
        np.float64,
    ).reshape(len(steps), len(candidates))

    def column(name: str, kind: Any) -> Any:
        return np.array([s.get(name) for s in steps], kind)

    has_secret = bool(steps) and all(s.get("secret_probability") is not None for s in steps)
    prior = (doc.get("summary") or {}).get("prior_entropy_bits")
    trace = Trace(
        prior=np.full(len(candidates), 1 / max(len(candidates), 1)),
        posterior=posterior,
        entropy_bits=column("entropy_bits", np.float64),
        information_gain_bits=column("information_gain_bits", np.float64),
        kl_bits=column("kl_bits", np.float64),
        counted=np.array(counted, np.bool_),
        secret_probability=column("secret_probability", np.float64) if has_secret else None,
        secret_rank=column("secret_rank", np.int64) if has_secret else None,
        prior_entropy_bits=float(
            np.log2(len(candidates)) if prior is None else prior  # as the scorer's prior
        ),
    )
    models = tuple(model(p) for p in speakers)
    counted_models = sorted({m for m, c in zip(models, counted, strict=True) if c and m})
    ctx = RowContext(
        ReportContext(
            str(doc.get("game_id")), secret, tuple(str(s["role"]) for s in steps),
            tuple(s.get("round") for s in steps),
            tuple(s.get("speaker_word") for s in steps), (), dict(meta),
        ),
        stored.source, stored.record, "+".join(counted_models) or None, category,
        _text(meta.get("matchup")), _text(meta.get("difficulty")), pair, models,
        winner_role(meta),
    )  # fmt: skip
    return ctx, inp, trace


def report_steps(reports: Iterable[StoredReport]) -> Any:
    """The step rows (``leakage.steps/1``) of games scored before the table was written,
    rebuilt from their stored reports by the scorer's own row builders
    (:class:`~leakage.batch.StepColumns`, :class:`~leakage.batch.StepNumbers`): a
    ``pyarrow.RecordBatch``, or None when no game has a turn. What a report does not hold is
    in the module's docstring. Raises :class:`~leakage.errors.InvalidInput` naming the
    record of a report that cannot be read so."""
    cols, numbers = StepColumns(), StepNumbers()
    for stored in reports:
        ctx, inp, trace = _rebuilt(stored)
        if not inp.texts:
            continue
        cols.add(ctx, inp, str(stored.report.get("backend")))
        numbers.add(trace)
    if not cols.rows:
        return None
    return cols.to_batch(numbers.arrays())
