"""Calibration per item type: each item's type, and a weights file with one fit per type.

A temperature belongs to the kind of clue it was fitted on (docs/calibration.md): the fit on
CK-Arena sentences against a pair is far too flat for a one-word clue against a board. The
ensemble therefore looks up each clue's type (``leakage.backends.ensemble.item_type``: ``word``
or ``statement``) and uses that type's weights and scales; this module gives the items of a
calibration set their types and puts a type's fit into a ``leakage.ensemble-weights/2`` file
next to the fits already there.
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
) -> EnsembleWeights:
    """``base`` (any version) as a ``/2`` file whose items of type ``kind`` use ``result``'s
    fit; its top-level fit and other types' fits are kept as they are.

    ``result`` must have been fitted with the members of ``base``, in any order.
    """
    if kind not in ITEM_TYPES:
        raise ValueError(f"unknown item type {kind!r}; known: {', '.join(ITEM_TYPES)}")
    if set(result.members) != set(base.members):
        raise ValueError(
            f"the {kind} fit has members {sorted(result.members)}, the weights file "
            f"{sorted(base.members)}; fit with the same members"
        )
    doc = result.weights_document(fitted_on=fitted_on)
    fit = TypeFit(
        weights=doc.weights,
        scales=doc.scales,
        note=note,
        fallback=doc.fallback,
        fitted_on=doc.fitted_on,
        metrics=doc.metrics,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    return EnsembleWeights.model_validate(
        {
            **base.model_dump(),
            "format": WEIGHTS_FORMAT,
            "version": int(WEIGHTS_FORMAT.rsplit("/", 1)[1]),
            "item_types": {**base.model_dump()["item_types"], kind: fit.model_dump()},
        }
    )
