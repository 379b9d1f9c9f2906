"""What the explorer shows of a job: its curves (``GET /v1/jobs/{id}/curves``), plane,
model comparison and one game with its transcript (``GET /v1/jobs/{id}/games/{game_id}``).
Blocking (reads the store and files): run on a thread.

Every figure is a call to ``leakage.curves`` on the job's step table (``leakage.steps/1``,
written by ``leakage.batch``'s engine as the job ran, held by :mod:`job_steps`): the curves
are ``leakage report``'s (mean entropy after m counted clues, P(secret in the top k) after m
clues, bootstrap intervals over games), grouped by the table's columns (``game_model``,
``matchup``, ``difficulty``, each clue's speaker's ``model`` and ``role``), which the engine
took from each transcript when it scored it. Only a game's transcript is read again from the
job's input.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leakage.curves import (
    Leaderboard,
    colour_of,
    curves,
    default_grouping,
    game_list,
    group_colour,
    leaderboard,
    models_present,
    paired_difference,
    per_statement,
    plane_view,
    spy_seat_games,
    steps_from_table,
)
from leakage.errors import InvalidInput
from leakage.transcripts import (
    AnyTranscript,
    ReadLimits,
    expand_inputs,
    iter_records,
    to_transcript,
)
from leakage_service.errors import ServiceError
from leakage_service.job_steps import JobSteps
from leakage_service.jobs import Job
from leakage_service.state import ServiceState

GROUPS = ("model", "matchup", "difficulty", "speaker")


def job_files(state: ServiceState, job: Job) -> tuple[list[Path], str | None]:
    """The files the job read, and why not when they cannot be read again (an upload
    deleted, a path no longer allowed or gone): then ``([], reason)``."""
    assert state.store is not None
    if job.upload:
        files = [Path(p) for p in job.paths]  # a multipart upload: one or more
    else:
        files = state.store.files(job.id) or expand_inputs(job.paths)
        roots = [Path(p).expanduser().resolve() for p in state.settings.allowed_paths]
        if not all(any(f.resolve().is_relative_to(r) for r in roots) for f in files):
            return [], "the job's files are outside the folders this server allows now"
    missing = [f for f in files if not f.is_file()]
    if missing:
        return [], "the job's input is no longer on the server"
    return files, None


def _transcripts(
    files: list[Path], records: set[int], input_format: str, limits: ReadLimits
) -> dict[int, AnyTranscript]:
    """The transcripts of the wanted records (by position in the job's input), read under
    the server's ``limits`` as the job read them."""
    out: dict[int, AnyTranscript] = {}
    if not records:
        return out
    last = max(records)
    for i, raw in enumerate(iter_records(files, limits=limits)):
        if i in records:
            t = to_transcript(raw, input_format)
            if not isinstance(t, InvalidInput):
                out[i] = t
        if i >= last:
            break
    return out


@dataclass
class JobGame:
    record: int
    ok: bool
    game_id: str | None
    body: dict[str, Any]


def find_game(state: ServiceState, job: Job, game_id: str, record: int | None) -> JobGame | None:
    """The stored result at ``record`` when given (game ids may repeat), else the first
    whose game id is exactly ``game_id`` (the id stored with each result, compared whole:
    any character, ``"``, ``\\``, a tab, ``/``, matches itself)."""
    assert state.store is not None
    if record is not None:
        rows = [r for r in state.store.results_page(job.id, record - 1, 1) if r[0] == record]
        found = rows[0] if rows else None
    else:
        found = state.store.result_of_game(job.id, game_id)
    if found is None:
        return None
    idx, ok, body = found
    doc = json.loads(body)
    # a failed record's error line has no game id of its own: the stored one matched
    return JobGame(idx, ok, doc.get("game_id") or (game_id if record is None else None), doc)


def game_transcript(
    state: ServiceState, job: Job, record: int
) -> tuple[dict[str, Any] | None, str | None]:
    """The record's transcript as ``leakage.transcript/1`` JSON, or why there is none."""
    files, why = job_files(state, job)
    if why:
        return None, why
    found = _transcripts(
        files, {record}, job.params.input_format, state.settings.read_limits()
    ).get(record)
    if found is None:
        return None, "the record could not be read as a transcript"
    return found.model_dump(mode="json", exclude_none=True), None


@dataclass
class JobCurves:
    by: str
    games: int
    failed: int
    groups: list[str]
    colours: dict[str, str]
    rows: list[dict[str, Any]]
    game_list: list[dict[str, Any]]
    notes: list[str]
    per_statement: bool = False
    default_by: str = "model"


def _steps(state: ServiceState, job: Job) -> JobSteps:
    assert state.store is not None
    return state.steps.get(job.id, state.store.results_dir(job.id), done=job.state == "done")


def job_curves(
    state: ServiceState, job: Job, by: str, *, max_clues: int, replicates: int, seed: int = 0
) -> JobCurves:
    """The curves of the rows committed so far (``leakage.curves.curves`` on the job's step
    table) and every scored game with its group and counted clues; ``by="auto"`` groups them
    the games' own way (``leakage.curves.default_grouping``)."""
    held = _steps(state, job)
    if by == "auto":  # the games' own grouping (speaker for SpyGame)
        table = held.table
        by = default_grouping(table["game"].unique().to_pylist()) if table.num_rows else "model"
    key = ("curves", by, max_clues, replicates, seed)
    rows, games = held.view(key, lambda: _curves(held, job, by, max_clues, replicates, seed))
    groups = list(dict.fromkeys(r["group"] for r in rows))
    if by != "speaker":
        groups += sorted({g["group"] for g in games} - set(groups))  # games without clues
    colours = {g: group_colour(g) for g in groups}
    kinds = [g["game"] for g in games]
    return JobCurves(
        by, len(games), job.failed, groups, colours, rows, games, [],
        per_statement(kinds, spy_seat=spy_seat_games(held.table) > 0), default_grouping(kinds),
    )  # fmt: skip


def _curves(
    held: JobSteps, job: Job, by: str, max_clues: int, replicates: int, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    table = steps_from_table(held.table, by, location=Path(job.id))
    games = [
        {
            "record": held.index(g["source"], g["record"]), "game_id": g["game_id"],
            "game": g["game"], "group": g["group"], "clues": g["clues"],
            "speakers": g["speakers"],
        }
        for g in game_list(table, by)
    ]  # fmt: skip
    return curves(table, max_clues=max_clues, replicates=replicates, seed=seed), games


@dataclass
class JobPlane:
    games: int
    failed: int
    groups: list[dict[str, Any]]
    references: list[dict[str, Any]]
    points: list[dict[str, Any]]
    points_total: int
    colours: dict[str, str]
    notes: list[str]
    references_note: str = ""
    x_label: str = ""
    y_label: str = ""


def job_plane(
    state: ServiceState, job: Job, *, replicates: int, max_points: int, seed: int = 0
) -> JobPlane:
    """The reveal-vs-conceal plane (``leakage.curves.plane_view``) of the rows committed so
    far: per clue its leakage and reveal value, per model and role the means with bootstrap
    intervals over games, and the reference strategies that belong to the job's games
    (``leakage.curves.plane_references``: Karabag & Topcu's for the Chameleon games' K, none
    for SpyGame, with ``references_note`` saying which). A SpyGame job's ``notes`` say what
    its axes are (``leakage.curves.plane_axes``): from the spy's seat the spy's gain and the
    statement's value to the civilians, two dimensions; from an outside seat one curve."""
    held = _steps(state, job)
    view = held.view(
        ("plane", replicates, max_points, seed),
        lambda: plane_view(held.table, replicates=replicates, max_points=max_points, seed=seed),
    )
    notes: list[str] = []
    if view["undefined"]:
        notes.append(
            f"{view['undefined']} counted clues have no reveal value (a probability "
            "underflowed, or no secret)"
        )
    if view["axes"]["note"]:  # SpyGame: the spy's seat's two axes, or what would give them
        notes.append(view["axes"]["note"].rstrip("."))
    points = [
        {
            "record": held.index(p["source"], p["record"]), "game_id": p["game_id"],
            "step": p["step"], "group": p["group"], "leakage_bits": p["leakage_bits"],
            "reveal_bits": p["reveal_bits"],
        }
        for p in view["points"]
    ]  # fmt: skip
    groups = view["groups"]
    colours = {r["group"]: group_colour(r["group"]) for r in groups}
    games = _games(held)
    return JobPlane(
        games, job.failed, groups, view["references"], points, view["points_total"], colours,
        notes, view["references_note"], view["axes"]["x_label"], view["axes"]["y_label"],
    )  # fmt: skip


def _games(held: JobSteps) -> int:
    """The games in the table (distinct source and record)."""
    import pyarrow as pa

    if held.table.num_rows == 0:
        return 0
    pairs = pa.table({"s": held.table["source"], "r": held.table["record"]})
    return int(pairs.group_by(["s", "r"]).aggregate([]).num_rows)


@dataclass
class JobCompare:
    games: int
    failed: int
    models: list[str]
    """The models that gave a counted clue, most clues first."""
    colours: dict[str, str]
    """Model -> ``#rrggbb`` (the model's colour in the curves by speaker and the plane)."""
    rows: list[dict[str, Any]]
    notes: list[str]


def job_compare(
    state: ServiceState,
    job: Job,
    model_a: str | None,
    model_b: str | None,
    *,
    replicates: int,
    seed: int = 0,
) -> JobCompare:
    """Two models' paired difference (``leakage.curves.paired_difference``, the figures of
    ``leakage report --compare A B``) over the rows committed so far: the step table with
    each clue's speaker's own model and role. Without both models, the models present and no
    rows (what a picker offers). A model that gave no counted clue is a 404
    ``model_not_found`` naming those that did; one model compared with itself a 422."""
    held = _steps(state, job)
    table = held.view(
        "speaker table",
        lambda: steps_from_table(held.table, "speaker", location=Path(f"job {job.id}")),
    )
    present = held.view("models", lambda: models_present(table))
    rows: list[dict[str, Any]] = []
    if model_a is not None and model_b is not None:
        listed = ", ".join(present) or "none"
        for field, name in (("a", model_a), ("b", model_b)):
            if name not in present:  # not in this job: not found, as an unknown job is
                raise ServiceError(
                    404, "model_not_found",
                    f"job {job.id} has no counted clue by model {name!r} (models here: {listed})",
                    field=field,
                )  # fmt: skip
        if model_a == model_b:
            raise ServiceError(
                422, "invalid_input",
                f"compare two different models, not {model_a!r} with itself "
                f"(models here: {listed})",
                field="b",
            )  # fmt: skip
        rows = held.view(
            ("compare", model_a, model_b, replicates, seed),
            lambda: paired_difference(table, model_a, model_b, replicates=replicates, seed=seed),
        )
    colours = {m: colour_of(m) for m in present}
    return JobCompare(table.n_games, job.failed, present, colours, rows, [])


def job_leaderboard(
    state: ServiceState, job: Job, *, replicates: int, seed: int = 0
) -> Leaderboard:
    """The leaderboard (``leakage.leaderboard/1``, :func:`leakage.curves.leaderboard`) of the
    rows committed so far: one call on the job's step table, its win rates by the library's
    one rule (:func:`leakage.curves.game_outcomes`): the table's ``winner_role`` column when
    every part read holds it, else the job's stored reports' ``meta.winner_role``. The
    cached table reads a part without the column as null, so the column is dropped from
    what the library is given when a part lacks it. A job with no scored game, or none with
    a counted clue, is a 409 ``job_not_ready``."""
    assert state.store is not None
    store = state.store
    held = _steps(state, job)
    if not held.table.num_rows:  # the request is right; the job has nothing to rank yet
        raise ServiceError(
            409, "job_not_ready",
            f"job {job.id} has no scored game with turns yet ({job.state}): nothing to rank",
            field="id",
        )  # fmt: skip

    def compute() -> Leaderboard:
        folder = store.results_dir(job.id) / "steps"
        table = held.table
        if "winner_role" in table.column_names and not _hold_outcomes(folder, held.parts):
            table = table.drop_columns(["winner_role"])  # as the parts are: some lack it
        reports = (json.loads(body) for _, ok, body in store.results(job.id) if ok)
        try:
            return leaderboard(
                table, reports=reports, reports_source="the job's stored reports' meta.winner_role",
                replicates=replicates, seed=seed,
            )  # fmt: skip
        except InvalidInput as err:  # e.g. no counted clue yet: nothing to rank by
            raise ServiceError(
                409, "job_not_ready", f"job {job.id} ({job.state}): {err}", field="id"
            ) from None

    board: Leaderboard = held.view(("leaderboard", replicates, seed), compute)
    return board


def _hold_outcomes(folder: Path, parts: tuple[str, ...]) -> bool:
    """Whether every part read holds the games' outcomes (``winner_role``, a column added
    to ``leakage.steps/1`` after its first parts were written: the cache reads a part
    without it as null). Reads the parts' footers only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return all("winner_role" in pq.read_schema(folder / name).names for name in parts)
    except (OSError, pa.ArrowInvalid):  # the job deleted meanwhile
        return False
