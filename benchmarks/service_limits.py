"""How long one oversized game holds the HTTP service, and how long other requests wait
behind it: ``POST /v1/score`` against a local ``leakage serve`` on 127.0.0.1.

Each scenario sends one large game while a second client sends a small 16-candidate game
every 0.2 s (each a new game: the report cache is off anyway) and times the answers. The
large games: the two found by hand (100,000 candidates; one 730 KB clue), and the largest
games the default limits admit on the co-occurrence backend (1,000 candidates x 1,000
characters of clues; 50 candidates x 20,000 characters), built from words of the default
index so that every clue token is looked up for real (cold caches: a fresh server per
scenario). The server runs whatever ``leakage`` and ``leakage_service`` Python imports, so
running this with ``PYTHONPATH`` on an older tree measures that tree.

    .venv/bin/python -m benchmarks.service_limits [--label after] [--scenarios a,b]

Loopback only; every request is bounded (150 s).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks import common
from benchmarks._games import chameleon_game
from benchmarks.common import Server, default_index, index_vocabulary, probe_game, write_result

SEED = 20261123
PROBE_EVERY = 0.2
TIMEOUT = 150.0
SETTINGS = {
    "LEAKAGE_PRELOAD": "cooccurrence",
    "LEAKAGE_BACKENDS": "cooccurrence",
    "LEAKAGE_REPORT_CACHE_BYTES": "0",
    "LEAKAGE_API_KEYS": None,  # the benchmark sends no key
}


def _game(gid: str, candidates: list[str], clues: list[str]) -> dict[str, Any]:
    return chameleon_game(gid, candidates, clues, one_speaker=True)


def _text(rng: np.random.Generator, words: list[str], chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        w = words[int(rng.integers(len(words)))]
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:chars].strip()


def scenarios(words: list[str]) -> dict[str, dict[str, Any]]:
    rng = np.random.default_rng(SEED)
    distinct = list(dict.fromkeys(words))
    return {
        "100k_candidates": _game(
            "100k-candidates", [f"word{i:06d}" for i in range(100_000)], ["ball", "court"]
        ),
        "730kb_clue": _game("730kb-clue", distinct[:16], [_text(rng, words, 730_000)]),
        "limits_1000x1000": _game("limits-1000", distinct[:1000], [_text(rng, words, 1000)]),
        "limits_50x20000": _game(
            "limits-50", distinct[1000:1050], [_text(rng, words, 2000) for _ in range(10)]
        ),
    }


def run_scenario(url: str, body: bytes, words: list[str]) -> dict[str, Any]:
    """The large request's status and time, and the small requests' latencies meanwhile."""
    big: dict[str, Any] = {}

    def send() -> None:
        big.update(common.timed_post(url, "/v1/score", body, TIMEOUT, message_chars=160))

    thread = threading.Thread(target=send)
    thread.start()
    latencies: list[float] = []
    i = 0
    with httpx.Client(base_url=url, timeout=TIMEOUT) as client:
        while thread.is_alive() or i < 5:
            start = time.perf_counter()
            r = client.post("/v1/score", content=probe_game(i, words))
            latencies.append(time.perf_counter() - start)
            assert r.status_code == 200, r.text
            i += 1
            time.sleep(PROBE_EVERY)
    thread.join()
    lat = np.array(latencies)
    return {
        **big,
        "body_bytes": len(body),
        "probes": len(lat),
        "probe_p50_s": round(float(np.percentile(lat, 50)), 3),
        "probe_max_s": round(float(lat.max()), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.service_limits", description=__doc__
    )
    parser.add_argument("--label", default="current", help="a name for this tree in the results")
    parser.add_argument("--scenarios", default="", help="comma-separated (default: all)")
    args = parser.parse_args(argv)
    index = default_index()
    words = index_vocabulary(index)
    found = scenarios(words)
    names = [n for n in args.scenarios.split(",") if n] or list(found)
    results: dict[str, Any] = {}
    for name in names:
        with (
            tempfile.TemporaryDirectory(prefix="leakage-limits-") as tmp,
            Server(Path(tmp), index, SETTINGS) as server,  # a fresh server: cold caches
        ):
            body = json.dumps(found[name]).encode()
            results[name] = run_scenario(server.url, body, words)
        print(f"{args.label} {name}: {json.dumps(results[name])}", flush=True)
    write_result(f"service_limits_{args.label}", {"scenarios": names}, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
