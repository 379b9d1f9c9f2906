"""Speed and quality measurements: ``python -m benchmarks [name ...]`` (``make bench``).

Each benchmark is a module with a ``run()`` that prints a short summary and writes
``benchmarks/results/<name>.json`` (machine, parameters, numbers). Benchmarks that need the
third-party reference data in ``../shared/data`` skip, saying so, when it is absent.

What benchmarks share is in ``benchmarks.common``; the research studies (questions about the
ensemble's fits, not measurements users rerun) are in ``benchmarks.studies``, each run as
``python -m benchmarks.studies.NAME``.
"""

BENCHMARKS = (
    "speed",
    "quality",
    "embedding",
    "splits",
    "faiss",
    "batch",
    "judge",
    "games",
    "service_load",
    "service_job_views",
    "adversary",
    "guess_cli",
    "reader",
    "gpu",
    "seat_speed",
)

__all__ = ["BENCHMARKS"]
