"""What a viewer of one step table shows beside the curves: its games with their group, the
models there are to compare, and the reveal-vs-conceal plane with its clues listed.

Each takes the table itself (a :class:`StepTable`, or the ``pyarrow`` table or dataset of
``leakage.steps/1`` rows), so that a server answers every view of a job from the rows its
engine wrote, never from the job's inputs or its stored reports.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from leakage.curves._data import NONE_GROUP, StepTable, speaker_groups
from leakage.curves._plane import clue_points, plane_axes, plane_groups, plane_references


def _columns(rows: Any, names: list[str]) -> Any:
    """``names`` of a ``pyarrow`` table or dataset, as a table."""
    return rows.to_table(columns=names) if hasattr(rows, "to_table") else rows.select(names)


def game_list(steps: StepTable, by: str) -> list[dict[str, Any]]:
    """One line per game of ``steps`` (grouped ``by``, as :func:`load_steps` groups it), in
    the table's order: its ``source`` and ``record``, ``game_id``, ``game`` (chameleon or
    spygame), ``group`` and ``clues`` (its counted clues). By speaker a game's group is its
    counted speakers' groups, sorted and '+'-joined (listed in ``speakers``; ``(none)`` when
    none), so that a point (group, m) of the curves can list its games."""
    n = steps.n_games
    if n == 0:
        return []
    table = _columns(steps.dataset, ["source", "record", "game_id", "game"])
    first = np.unique(steps.game, return_index=True)[1]
    clues = np.bincount(steps.game, weights=steps.counted, minlength=n).astype(np.int64)
    picked = table.take(first).to_pydict()
    speakers: list[list[str] | None] = [None] * n
    groups = [str(g) for g in steps.curve_group[first]]
    if by == "speaker":
        sets: list[set[str]] = [set() for _ in range(n)]
        per_step = speaker_groups(steps.model, steps.role)
        for g, counted, group in zip(steps.game, steps.counted, per_step, strict=True):
            if counted:
                sets[g].add(group)
        speakers = [sorted(s) for s in sets]
        groups = ["+".join(s) or NONE_GROUP for s in speakers]  # type: ignore[arg-type]
    return [
        {
            "source": picked["source"][i], "record": picked["record"][i],
            "game_id": picked["game_id"][i], "game": picked["game"][i], "group": groups[i],
            "clues": int(clues[i]), "speakers": speakers[i],
        }
        for i in range(n)
    ]  # fmt: skip


def models_present(steps: StepTable) -> list[str]:
    """The models that gave a counted clue with a defined gain, most clues first (then by
    name): the models :func:`paired_difference` can compare (``(none)`` for clues whose
    speaker's model the log does not name)."""
    usable = steps.counted & np.isfinite(steps.gain)
    names, counts = np.unique(steps.model[usable].astype(str), return_counts=True)
    ranked = sorted(zip(names, counts, strict=True), key=lambda t: (-t[1], t[0]))
    return [str(name) for name, _ in ranked]


def plane_view(
    rows: Any, *, replicates: int = 1000, max_points: int = 5000, seed: int = 0
) -> dict[str, Any]:
    """The reveal-vs-conceal plane of a step table (``pyarrow`` table or dataset): per
    ``model · role`` the means with bootstrap intervals over games (:func:`plane_groups`),
    the reference strategies that belong to its games (:func:`plane_references`: Karabag &
    Topcu's for the Chameleon games' K, 16 when those differ: ``mixed_k``;
    none for SpyGame, said in ``references_note``), and the first ``max_points`` counted clues
    (``source``, ``record``, ``game_id``, ``step``, ``group``, ``leakage_bits``,
    ``reveal_bits``) of ``points_total``. ``undefined``: counted clues without a reveal value
    (no secret, or a probability that underflowed). ``axes`` (:func:`plane_axes`): whether
    the plane has two dimensions (SpyGame scored from the spy's seat), the axis labels and a
    note saying what x and y are there, or, from an outside seat, what would give SpyGame
    two dimensions; ``spies_left_out`` the spies' statements of spy-seat games not placed."""
    points = clue_points(rows)
    groups = plane_groups(
        points["game"], points["group"], points["x"], points["y"],
        replicates=replicates, seed=seed,
    )  # fmt: skip
    table = _columns(rows, ["source", "record"])
    refs = plane_references(rows, seed=seed)
    shown = points["index"][:max_points]
    where = table.select(["source", "record"]).take(shown).to_pydict()
    listed = [
        {
            "source": where["source"][i], "record": where["record"][i],
            "game_id": row["game_id"], "step": row["step"], "group": str(points["group"][i]),
            "leakage_bits": row["leakage_bits"], "reveal_bits": row["reveal_bits"],
        }
        for i, row in enumerate(points["rows"][:max_points])
    ]  # fmt: skip
    return {
        "groups": groups,
        "references": refs["references"],
        "references_note": refs["note"],
        "points": listed,
        "points_total": len(points["x"]),
        "k": refs["k"],
        "mixed_k": refs["mixed_k"],
        "undefined": points["undefined"],
        "axes": plane_axes(points),
        "spies_left_out": points["spies_left_out"],
    }
