"""Calibration per item type: each item's type, and a weights file with one fit per type.

A temperature belongs to the kind of clue it was fitted on (docs/calibration.md): the fit on
CK-Arena sentences against a pair is far too flat for a one-word clue against a board. The
ensemble therefore looks up each clue's type (``leakage.backends.ensemble.item_type``: ``word``,
``sentence_card`` or ``statement``) and uses that type's weights and scales; this module gives
the items of a calibration set their types and puts a type's fit into a
``leakage.ensemble-weights/2`` file next to the fits already there.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.backends.ensemble import (
    ITEM_TYPES,
    WEIGHTS_FORMAT,
    EnsembleWeights,
    TypeFit,
    item_type,
)
from leakage.calibration._calibrate import CalibrationResult
from leakage.calibration._data import GameItems


def item_types(games: Sequence[GameItems]) -> NDArray[np.str_]:
    """The type of every item, in the order ``build_item_set`` stacks them."""
    return np.array(
        [item_type(clue, len(g.candidates)) for g in games for clue in g.clues], dtype=np.str_
    )


def with_type_fit(
    base: EnsembleWeights,
    kind: str,
    result: CalibrationResult,
    *,
    fitted_on: dict[str, Any],
    note: str | None = None,
    member_info: dict[str, Any] | None = None,
) -> EnsembleWeights:
    """``base`` (any version) as a ``/2`` file whose items of type ``kind`` use ``result``'s
    fit; its top-level fit and other types' fits are kept as they are.

    The file's members become those of ``base`` and then ``result``'s others: a member that a
    fit was not fitted with gets weight 0 in it (and scale 1, which nothing reads), so that
    one type can pool a member another type leaves out (the LLM judge's speaker direction on
    one-word clues, but not on statements, where it is slow and the listener reads better).
    ``member_info``: the ``info()`` of members new to the file.
    """
    if kind not in ITEM_TYPES:
        raise ValueError(f"unknown item type {kind!r}; known: {', '.join(ITEM_TYPES)}")
    members = [*base.members, *(n for n in result.members if n not in base.members)]
    doc = result.weights_document(fitted_on=fitted_on)
    fit = TypeFit(
        weights=_padded(doc.weights, members, 0.0),
        scales=_padded(doc.scales, members, 1.0),
        note=note,
        fallback=doc.fallback,
        fitted_on=doc.fitted_on,
        metrics=doc.metrics,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    old = base.model_dump()
    types = {
        k: {
            **f,
            "weights": _padded(f["weights"], members, 0.0),
            "scales": _padded(f["scales"], members, 1.0),
        }
        for k, f in old["item_types"].items()
    }
    return EnsembleWeights.model_validate(
        {
            **old,
            "format": WEIGHTS_FORMAT,
            "version": int(WEIGHTS_FORMAT.rsplit("/", 1)[1]),
            "members": members,
            "weights": _padded(old["weights"], members, 0.0),
            "scales": _padded(old["scales"], members, 1.0),
            "member_info": {**(member_info or {}), **old["member_info"]},
            "item_types": {**types, kind: fit.model_dump()},
        }
    )


def _padded(values: dict[str, float], members: Sequence[str], missing: float) -> dict[str, float]:
    """``values`` for every one of ``members``, ``missing`` for those it lacks."""
    return {n: float(values.get(n, missing)) for n in members}
