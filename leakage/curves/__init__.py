"""Leakage curves and reports over batch results (``leakage report``).

Mean entropy after m clues and P(secret in top k) after m clues with bootstrap intervals
over games, per-clue information gain distributions, the most and least revealing clues and
leakage by model, as PNG / SVG figures, CSVs of every plotted number and one HTML page.
Importing this package imports neither pyarrow nor matplotlib; building a report does.
"""

from leakage.curves._report import ReportFiles, build_report, build_site
from leakage.curves._stats import Estimate, bootstrap_mean, bootstrap_ratio

__all__ = [
    "Estimate",
    "ReportFiles",
    "bootstrap_mean",
    "bootstrap_ratio",
    "build_report",
    "build_site",
]
