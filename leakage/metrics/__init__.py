"""Leakage metrics beyond the posterior: SpyGame self-localisation signals."""

from leakage.metrics.outliers import outlier_scores, outlier_trace

__all__ = ["outlier_scores", "outlier_trace"]
