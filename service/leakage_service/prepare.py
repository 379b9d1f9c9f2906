"""``python -m leakage_service.prepare STEP...``: make ``$LEAKAGE_HOME`` ready for the service
ahead of time (``docker/prepare.sh`` runs it at image build time).

Steps: ``index`` (build the default co-occurrence index unless it is there), ``embedding``
(load the bundled MiniLM once), ``judge`` / ``smollm2`` (convert the bundled Gemma-3-270M /
SmolLM2-135M GGUF files into the cached transformers folders under ``$LEAKAGE_HOME/models``).
"""

from __future__ import annotations

import sys
import time

from leakage.backends import open_backend
from leakage.corpus import build_index, default_documents, default_index_path, read_meta

STEPS = ("index", "embedding", "judge", "smollm2")


def prepare(step: str) -> str:
    """Do one step; returns what was done."""
    if step == "index":
        path = default_index_path()
        if path.exists():
            return f"index: {path} is there ({read_meta(path)['documents']:,} documents)"
        docs, sources = default_documents()
        info = build_index(path, docs, sources=sources)
        return f"index: built {path} ({info.documents:,} documents)"
    if step == "embedding":
        with open_backend("embedding") as backend:
            backend.loglik(["warm"], ["up", "down"])
            return f"embedding: {backend.info()['model']} loads"
    if step in ("judge", "smollm2"):
        options = {"model": "smollm2-135m"} if step == "smollm2" else {}
        with open_backend("judge", **options) as backend:
            return f"{step}: {backend.info().get('model')} converted and loads"
    raise SystemExit(f"unknown step {step!r}; choose from {', '.join(STEPS)}")


def main(argv: list[str]) -> int:
    for step in argv or ["index"]:
        start = time.perf_counter()
        print(f"{prepare(step)} ({time.perf_counter() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
