"""What the explorer shows of a job: its curves (``GET /v1/jobs/{id}/curves``) and one game
with its transcript (``GET /v1/jobs/{id}/games/{game_id}``), read from the stored reports and
the job's input files. Blocking (reads the store and files): run on a thread.

The curves are ``leakage report``'s (``leakage.curves``: mean entropy after m counted clues,
P(secret in the top k) after m clues, bootstrap intervals over games), computed from the
stored reports rather than a batch's step table: each report step is one row of the table the
library's ``curves`` reads. Grouping follows the step table's columns: ``model`` is the
models of the players whose clues are counted ('+'-joined, as ``leakage batch``'s
``game_model``, from the transcript's players, so it needs the job's input), ``matchup`` and
``difficulty`` the transcript's ``meta`` (kept in each report).
"""

from __future__ import annotations

import json
import math
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from leakage.curves import (
    NONE_GROUP,
    UNKNOWN_DIFFICULTY,
    StepTable,
    colour_of,
    curves,
    group_colour,
    group_of,
    paired_difference,
    plane_groups,
    reference_points,
    reveal_values,
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


def _player_models(
    files: list[Path], input_format: str, limits: ReadLimits
) -> dict[int, dict[str, str]]:
    """Each record's players' models (player id -> model, as ``leakage batch``'s
    ``game_model`` reads them: the player's ``agent``, else ``meta.models``), in one pass
    over the job's input, keeping no transcript; a record that is not one has none."""
    out: dict[int, dict[str, str]] = {}
    for i, raw in enumerate(iter_records(files, limits=limits)):
        t = to_transcript(raw, input_format)
        if isinstance(t, InvalidInput):
            continue
        listed = t.meta.get("models")
        listed = listed if isinstance(listed, dict) else {}
        out[i] = {
            p.id: model
            for p in t.players
            if (model := p.agent or (str(listed[p.id]) if listed.get(p.id) else None))
        }
    return out


def _game_model(models: dict[str, str], steps: list[dict[str, Any]]) -> str:
    """The counted speakers' models, sorted, '+'-joined (``leakage batch``'s ``game_model``)."""
    names = sorted({m for s in steps if s["counted"] and (m := models.get(s["player"]))})
    return "+".join(names) or NONE_GROUP


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


def job_curves(
    state: ServiceState, job: Job, by: str, *, max_clues: int, replicates: int, seed: int = 0
) -> JobCurves:
    """The curves of the reports stored so far, read in one pass: each report gives its rows
    of the step table and its line of the game list, and is then dropped, so a large job
    holds its step table (a few numbers per clue) but never its reports."""
    assert state.store is not None
    notes: list[str] = []
    models: dict[int, dict[str, str]] | None = None  # by model: read at the first report
    table = _Columns()
    game_list: list[dict[str, Any]] = []
    failed = 0
    for idx, ok, body in state.store.results(job.id):
        if not ok:
            failed += 1
            continue
        rep = json.loads(body)
        steps = rep.get("steps") or []
        group: str | list[str]
        if by in ("model", "speaker"):
            if models is None:
                files, why = job_files(state, job)
                if why:
                    notes.append(f"{why}: no model grouping, every game is in {NONE_GROUP}")
                models = (
                    {}
                    if why
                    else _player_models(
                        files, job.params.input_format, state.settings.read_limits()
                    )
                )
            own = models.get(idx)
            if by == "speaker":
                group = [group_of((own or {}).get(s["player"]), s.get("role")) for s in steps]
            else:
                group = _game_model(own, steps) if own is not None else NONE_GROUP
        else:
            value = (rep.get("meta") or {}).get(by)
            group = str(value) if value not in (None, "") else NONE_GROUP
            if by == "difficulty" and group == NONE_GROUP:
                group = UNKNOWN_DIFFICULTY
        clues = table.add(len(game_list), rep, steps, group)
        speakers = None
        if isinstance(group, list):  # by speaker: the game's counted speakers' groups
            speakers = sorted({g for g, s in zip(group, steps, strict=True) if s["counted"]})
            group = "+".join(speakers) or NONE_GROUP
        game_list.append(
            {
                "record": idx,
                "game_id": rep.get("game_id"),
                "game": rep.get("game"),
                "group": group,
                "clues": clues,
                "speakers": speakers,
            }
        )
    rows = curves(
        table.step_table(len(game_list), Path(job.id)),
        max_clues=max_clues,
        replicates=replicates,
        seed=seed,
    )
    groups = list(dict.fromkeys(r["group"] for r in rows))
    if by != "speaker":
        groups += sorted({g["group"] for g in game_list} - set(groups))  # games without clues
    colours = {g: group_colour(g) for g in groups}
    return JobCurves(by, len(game_list), failed, groups, colours, rows, game_list, notes)


class _Columns:
    """The step table's columns, filled report by report (typed arrays: 8 bytes a number)."""

    def __init__(self) -> None:
        self.game, self.clues, self.k = array("q"), array("q"), array("q")
        self.counted = array("b")
        self.entropy, self.prior, self.gain, self.rank = (array("d") for _ in range(4))
        self.group: list[str] = []

    def add(
        self, game: int, rep: dict[str, Any], steps: list[dict[str, Any]], group: str | list[str]
    ) -> int:
        """One report's rows (``group``: the game's, or one per step); returns its number of
        counted clues."""
        prior = rep["summary"]["prior_entropy_bits"]
        k = len(rep["candidates"])
        m = 0
        for i, s in enumerate(steps):
            counted = bool(s["counted"])
            m += counted
            rank = s.get("secret_rank")
            self.game.append(game)
            self.clues.append(m)
            self.counted.append(counted)
            self.entropy.append(s["entropy_bits"])
            self.prior.append(prior)
            self.gain.append(s["information_gain_bits"])
            self.rank.append(math.nan if rank is None else float(rank))
            self.k.append(k)
            self.group.append(group[i] if isinstance(group, list) else group)
        return m

    def step_table(self, games: int, location: Path) -> StepTable:
        groups = np.array(self.group, dtype=object)
        return StepTable(
            game=np.array(self.game, dtype=np.int64),
            clues=np.array(self.clues, dtype=np.int64),
            counted=np.array(self.counted, dtype=bool),
            entropy=np.array(self.entropy, dtype=np.float64),
            prior=np.array(self.prior, dtype=np.float64),
            gain=np.array(self.gain, dtype=np.float64),
            rank=np.array(self.rank, dtype=np.float64),
            n_candidates=np.array(self.k, dtype=np.int64),
            curve_group=groups,
            clue_group=groups,
            model=np.full(len(groups), NONE_GROUP, dtype=object),
            role=np.full(len(groups), NONE_GROUP, dtype=object),
            n_games=games,
            dataset=None,
            manifest=None,
            location=location,
        )


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


def _posterior_matrix(candidates: list[str], steps: list[dict[str, Any]]) -> np.ndarray:
    """Steps x candidates; NaN where a report kept only the top candidates (``top_k``)."""
    out = np.full((len(steps), len(candidates)), np.nan)
    for i, s in enumerate(steps):
        post = s.get("posterior") or {}
        for j, w in enumerate(candidates):
            if w in post:
                out[i, j] = post[w]
    return out


def job_plane(
    state: ServiceState, job: Job, *, replicates: int, max_points: int, seed: int = 0
) -> JobPlane:
    """The reveal-vs-conceal plane (:mod:`leakage.curves._plane`) of the reports stored so
    far: per clue its leakage and reveal value, per model and role the means with bootstrap
    intervals over games, and Karabag & Topcu's reference strategies for the job's K."""
    assert state.store is not None
    notes: list[str] = []
    models: dict[int, dict[str, str]] | None = None
    game, group, xs, ys = array("q"), [], array("d"), array("d")
    points: list[dict[str, Any]] = []
    ks: set[int] = set()
    games = failed = undefined = 0
    for idx, ok, body in state.store.results(job.id):
        if not ok:
            failed += 1
            continue
        if models is None:
            files, why = job_files(state, job)
            if why:
                notes.append(f"{why}: every clue's model is {NONE_GROUP}")
            models = (
                {}
                if why
                else _player_models(files, job.params.input_format, state.settings.read_limits())
            )
        rep = json.loads(body)
        steps = rep.get("steps") or []
        candidates = list(rep.get("candidates") or [])
        ks.add(len(candidates))
        kind = rep.get("game")
        spy_word = candidates[1] if kind == "spygame" and len(candidates) > 1 else None
        counted = [bool(s.get("counted")) for s in steps]
        y = reveal_values(
            str(kind), candidates, _posterior_matrix(candidates, steps), counted,
            secret=rep.get("secret"), spy_word=spy_word,
        )  # fmt: skip
        own = models.get(idx) or {}
        for i, s in enumerate(steps):
            x = s.get("information_gain_bits")
            if not counted[i] or x is None or not math.isfinite(x):
                continue
            if not math.isfinite(y[i]):
                undefined += 1
                continue
            g = group_of(own.get(s.get("player", "")), s.get("role"))
            game.append(games)
            group.append(g)
            xs.append(float(x))
            ys.append(float(y[i]))
            if len(points) < max_points:
                points.append(
                    {
                        "record": idx, "game_id": rep.get("game_id"), "step": i, "group": g,
                        "leakage_bits": float(x), "reveal_bits": float(y[i]),
                    }
                )  # fmt: skip
        games += 1
    if undefined:
        notes.append(
            f"{undefined} counted clues have no reveal value (a report kept only the top "
            "candidates of each posterior, a probability underflowed, or no secret)"
        )
    groups = plane_groups(
        np.array(game, dtype=np.int64), np.array(group, dtype=object),
        np.array(xs, dtype=np.float64), np.array(ys, dtype=np.float64),
        replicates=replicates, seed=seed,
    )  # fmt: skip
    k = next(iter(ks)) if len(ks) == 1 else 16
    if len(ks) > 1:
        notes.append("the games have different numbers of candidates: references use K = 16")
    refs = reference_points(k=k, seed=seed) if games else []
    colours = {r["group"]: group_colour(r["group"]) for r in groups}
    return JobPlane(games, failed, groups, refs, points, len(xs), colours, notes)


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
    """Two models' paired difference (``leakage.curves._compare.paired_difference``, the
    figures of ``leakage report --compare A B``) over the reports stored so far: the step
    table with each clue's speaker's own model and role. Without both models, the models
    present and no rows (what a picker offers). A model that gave no counted clue is a 404
    ``model_not_found`` naming those that did; one model compared with itself a 422."""
    assert state.store is not None
    notes: list[str] = []
    models: dict[int, dict[str, str]] | None = None
    table = _Columns()
    model_col: list[str] = []
    role_col: list[str] = []
    games = failed = 0
    for idx, ok, body in state.store.results(job.id):
        if not ok:
            failed += 1
            continue
        if models is None:
            files, why = job_files(state, job)
            if why:
                notes.append(f"{why}: every clue's model is {NONE_GROUP}")
            models = (
                {}
                if why
                else _player_models(files, job.params.input_format, state.settings.read_limits())
            )
        rep = json.loads(body)
        steps = rep.get("steps") or []
        own = models.get(idx) or {}
        step_models = [own.get(s.get("player", "")) or NONE_GROUP for s in steps]
        roles = [str(s.get("role")) for s in steps]
        table.add(
            games, rep, steps, [group_of(m, r) for m, r in zip(step_models, roles, strict=True)]
        )
        model_col += step_models
        role_col += roles
        games += 1
    steps_table = table.step_table(games, Path(f"job {job.id}"))
    steps_table.model = np.array(model_col, dtype=object)
    steps_table.role = np.array(role_col, dtype=object)
    usable = steps_table.counted & np.isfinite(steps_table.gain)
    names, counts = np.unique(steps_table.model[usable].astype(str), return_counts=True)
    present = [
        str(n) for n, _ in sorted(zip(names, counts, strict=True), key=lambda t: (-t[1], t[0]))
    ]
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
        rows = paired_difference(steps_table, model_a, model_b, replicates=replicates, seed=seed)
    colours = {m: colour_of(m) for m in present}
    return JobCompare(games, failed, present, colours, rows, notes)
