"""``python -m leakage_service.provision STEP...``: make the service's home ready ahead of
time, so that the server starts without building or converting anything
(``docker/prepare.sh`` runs it at image build time, with the steps ``LEAKAGE_PREPARE`` names).

Steps: ``index`` (build the co-occurrence index unless it is there), ``embedding`` (load the
bundled MiniLM once), ``judge`` / ``smollm2`` (convert the bundled Gemma-3-270M /
SmolLM2-135M GGUF files into the cached transformers folders under the home's ``models``).
Every file goes where the service will look for it: the service's settings
(``Settings.from_env``: ``LEAKAGE_HOME``, ``LEAKAGE_INDEX``) and the creation options of its
backends (``runtime.Backends.options``).
"""

from __future__ import annotations

import sys
import time

from leakage.backends import open_backend
from leakage.corpus import build_index, default_documents, read_meta
from leakage_service.runtime import Backends
from leakage_service.settings import Settings
from leakage_service.telemetry import Metrics

STEPS = ("index", "embedding", "judge", "smollm2")


def provision(step: str, settings: Settings) -> str:
    """Do one step for the service ``settings`` describe; returns what was done."""
    if step == "index":
        path = settings.index_path
        if path.exists():
            return f"index: {path} is there ({read_meta(path)['documents']:,} documents)"
        docs, sources = default_documents()
        info = build_index(path, docs, sources=sources)
        return f"index: built {path} ({info.documents:,} documents)"
    options = Backends(settings, Metrics()).options
    if step == "embedding":
        with open_backend("embedding", **options("embedding")) as backend:
            backend.loglik(["warm"], ["up", "down"])
            return f"embedding: {backend.info()['model']} loads"
    if step in ("judge", "smollm2"):
        model = {"model": "smollm2-135m"} if step == "smollm2" else {}
        with open_backend("judge", **options("judge"), **model) as backend:
            return f"{step}: {backend.info().get('model')} converted and loads"
    raise SystemExit(f"unknown step {step!r}; choose from {', '.join(STEPS)}")


def main(argv: list[str]) -> int:
    settings = Settings.from_env()
    for step in argv or ["index"]:
        start = time.perf_counter()
        print(f"{provision(step, settings)} ({time.perf_counter() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
