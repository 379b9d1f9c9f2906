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
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

import numpy as np

from leakage.curves._compute import curves
from leakage.curves._data import NONE_GROUP, UNKNOWN_DIFFICULTY, StepTable
from leakage.errors import InvalidInput
from leakage.transcripts import AnyTranscript
from leakage.transcripts._files import expand_inputs, iter_records, to_transcript
from leakage_service.jobs import Job
from leakage_service.state import ServiceState

GROUPS = ("model", "matchup", "difficulty")


def job_files(state: ServiceState, job: Job) -> tuple[list[Path], str | None]:
    """The files the job read, and why not when they cannot be read again (an upload
    deleted, a path no longer allowed or gone): then ``([], reason)``."""
    assert state.store is not None
    if job.upload:
        files = [Path(job.paths[0])]
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
    files: list[Path], records: set[int], input_format: str
) -> dict[int, AnyTranscript]:
    """The transcripts of the wanted records (by position in the job's input)."""
    out: dict[int, AnyTranscript] = {}
    if not records:
        return out
    last = max(records)
    for i, raw in enumerate(iter_records(files)):
        if i in records:
            t = to_transcript(raw, input_format)
            if not isinstance(t, InvalidInput):
                out[i] = t
        if i >= last:
            break
    return out


def _game_model(t: AnyTranscript, steps: list[dict[str, Any]]) -> str:
    """As ``leakage batch``'s ``game_model``: the counted speakers' models, sorted, '+'-joined."""
    listed = t.meta.get("models")
    listed = listed if isinstance(listed, dict) else {}
    models = {p.id: p.agent or (str(listed[p.id]) if listed.get(p.id) else None) for p in t.players}
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
    whose game id is ``game_id``."""
    assert state.store is not None
    rows: Iterable[tuple[int, bool, str]]
    if record is not None:
        rows = [r for r in state.store.results_page(job.id, record - 1, 1) if r[0] == record]
    else:
        rows = state.store.results(job.id)
    for idx, ok, body in rows:
        if record is None and game_id not in body:  # cheap test before parsing
            continue
        doc = json.loads(body)
        if record is not None or doc.get("game_id") == game_id:
            return JobGame(idx, ok, doc.get("game_id"), doc)
    return None


def game_transcript(
    state: ServiceState, job: Job, record: int
) -> tuple[dict[str, Any] | None, str | None]:
    """The record's transcript as ``leakage.transcript/1`` JSON, or why there is none."""
    files, why = job_files(state, job)
    if why:
        return None, why
    found = _transcripts(files, {record}, job.params.input_format).get(record)
    if found is None:
        return None, "the record could not be read as a transcript"
    return found.model_dump(mode="json", exclude_none=True), None


@dataclass
class JobCurves:
    by: str
    games: int
    failed: int
    groups: list[str]
    rows: list[dict[str, Any]]
    game_list: list[dict[str, Any]]
    notes: list[str]


def job_curves(
    state: ServiceState, job: Job, by: str, *, max_clues: int, replicates: int, seed: int = 0
) -> JobCurves:
    assert state.store is not None
    reports: list[tuple[int, dict[str, Any]]] = []
    failed = 0
    for idx, ok, body in state.store.results(job.id):
        if ok:
            reports.append((idx, json.loads(body)))
        else:
            failed += 1
    notes: list[str] = []
    transcripts: dict[int, AnyTranscript] = {}
    if by == "model" and reports:
        files, why = job_files(state, job)
        if why:
            notes.append(f"{why}: no model grouping, every game is in {NONE_GROUP}")
        else:
            wanted = {i for i, _ in reports}
            transcripts = _transcripts(files, wanted, job.params.input_format)
    cols: dict[str, list[Any]] = {
        k: [] for k in ("game", "clues", "counted", "entropy", "prior", "gain", "rank", "k", "g")
    }
    game_list = []
    for n, (idx, rep) in enumerate(reports):
        steps = rep.get("steps") or []
        meta = rep.get("meta") or {}
        if by == "model":
            t = transcripts.get(idx)
            group = _game_model(t, steps) if t is not None else NONE_GROUP
        else:
            value = meta.get(by)
            group = str(value) if value not in (None, "") else NONE_GROUP
            if by == "difficulty" and group == NONE_GROUP:
                group = UNKNOWN_DIFFICULTY
        counted = [bool(s["counted"]) for s in steps]
        clues = list(accumulate(map(int, counted)))
        prior = rep["summary"]["prior_entropy_bits"]
        for s, c, m in zip(steps, counted, clues, strict=True):
            cols["game"].append(n)
            cols["clues"].append(m)
            cols["counted"].append(c)
            cols["entropy"].append(s["entropy_bits"])
            cols["prior"].append(prior)
            cols["gain"].append(s["information_gain_bits"])
            rank = s.get("secret_rank")
            cols["rank"].append(np.nan if rank is None else float(rank))
            cols["k"].append(len(rep["candidates"]))
            cols["g"].append(group)
        game_list.append(
            {
                "record": idx,
                "game_id": rep.get("game_id"),
                "game": rep.get("game"),
                "group": group,
                "clues": clues[-1] if clues else 0,
            }
        )
    groups_col = np.array(cols["g"], dtype=object)
    table = StepTable(
        game=np.array(cols["game"], dtype=np.int64),
        clues=np.array(cols["clues"], dtype=np.int64),
        counted=np.array(cols["counted"], dtype=bool),
        entropy=np.array(cols["entropy"], dtype=np.float64),
        prior=np.array(cols["prior"], dtype=np.float64),
        gain=np.array(cols["gain"], dtype=np.float64),
        rank=np.array(cols["rank"], dtype=np.float64),
        n_candidates=np.array(cols["k"], dtype=np.int64),
        curve_group=groups_col,
        clue_group=groups_col,
        n_games=len(reports),
        dataset=None,
        manifest=None,
        location=Path(job.id),
    )
    rows = curves(table, max_clues=max_clues, replicates=replicates, seed=seed)
    groups = list(dict.fromkeys(r["group"] for r in rows))
    groups += sorted({g["group"] for g in game_list} - set(groups))  # games without clues
    return JobCurves(by, len(reports), failed, groups, rows, game_list, notes)
