"""Calibration of likelihood backends on logged games: temperatures, ensemble weights,
held-out metrics and the reliability diagram.

Importing this package imports neither scipy nor matplotlib; fitting and plotting do.
"""

from leakage.calibration._calibrate import (
    ENSEMBLE,
    EQUAL_POOL,
    CalibrationResult,
    Metrics,
    calibrate,
    calibrate_on,
    decide_fallback,
)
from leakage.calibration._data import (
    GameItems,
    ItemSet,
    build_item_set,
    extract_items,
    member_rows,
    split_games,
)
from leakage.calibration._fit import (
    fit_multipliers,
    fit_temperature,
    nll_and_grad,
    pooled_log_probs,
    pooled_probs,
)
from leakage.calibration._frozen import FROZEN_SHARE, dev_frozen_split, split_side
from leakage.calibration._metrics import (
    ECE_BINS,
    PairedDifference,
    ReliabilityBin,
    accuracy,
    expected_calibration_error,
    item_log_loss,
    log_loss,
    paired_bootstrap,
    reliability_bins,
    top1_hits,
)
from leakage.calibration._plot import write_reliability_diagram
from leakage.calibration._types import item_types, with_type_fit

__all__ = [
    "ECE_BINS",
    "ENSEMBLE",
    "EQUAL_POOL",
    "FROZEN_SHARE",
    "CalibrationResult",
    "GameItems",
    "ItemSet",
    "Metrics",
    "PairedDifference",
    "ReliabilityBin",
    "accuracy",
    "build_item_set",
    "calibrate",
    "calibrate_on",
    "decide_fallback",
    "dev_frozen_split",
    "expected_calibration_error",
    "extract_items",
    "fit_multipliers",
    "fit_temperature",
    "item_log_loss",
    "item_types",
    "log_loss",
    "member_rows",
    "nll_and_grad",
    "paired_bootstrap",
    "pooled_log_probs",
    "pooled_probs",
    "reliability_bins",
    "split_games",
    "split_side",
    "top1_hits",
    "with_type_fit",
    "write_reliability_diagram",
]
