"""How long one ``POST /v1/splits`` request holds the HTTP service, and what happens to the
small scoring requests sent meanwhile, against a local ``leakage serve`` on 127.0.0.1.

Before splits were bounded, 1,000 pairs with 2 MB of supplied descriptions ran 377 s holding
the embedding model, and 12 of 22 small embedding requests and 3 of 27 co-occurrence requests
sent meanwhile got 503. Each scenario here sends one splits request while two clients each send
a small 16-candidate game every 0.2 s, one to ``/v1/score?backend=embedding`` and one to
``/v1/score`` (co-occurrence), each game new (the report cache is off), and times every
answer. Scenarios, scaled to a 2-core machine:

- ``issue_scaled``: 250 pairs, a 1 KB description supplied for each word (512 KB);
- ``at_limit``: 110 pairs, 1 KB descriptions: just under the default ``max_splits_cost``;
- ``ck_arena_wordnet``: CK-Arena's 527 pairs with WordNet's descriptions (needs
  ``../shared/data``): the ordinary request;
- ``deadline``: ``at_limit`` on a server whose ``LEAKAGE_SCORE_TIMEOUT`` is 5 s.

And one scenario of slow work of every kind at once (issue 37: four splits at the cost limit
held both scoring threads, and two report pages of a 30-game job made a small score wait
8.8 s):

- ``slow_work``: four ``at_limit`` splits requests and two ``report.html`` of a 30-game job,
  all sent at once, while one client sends a small 16-candidate co-occurrence game as soon as
  the last is answered; the target is a p99 under 1 s for those small scores.

The descriptions are English prose (WordNet definitions of random lemmas, joined). A fresh
server per scenario (cold caches, the embedding model preloaded). The server runs whatever
``leakage`` and ``leakage_service`` Python imports, so running this from an older tree's
folder (``PYTHONPATH=service``) measures that tree.

    .venv/bin/python -m benchmarks.service_splits [--label after] [--scenarios a,b] [--no-probes]
    .venv/bin/python -m benchmarks.service_splits --label slow_work_after --scenarios slow_work

Loopback only; every request is bounded (300 s).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks.common import (
    SHARED_DATA,
    Server,
    default_index,
    index_vocabulary,
    probe_game,
    timed_post,
    write_result,
)

SEED = 20261126
PROBE_EVERY = 0.2
TIMEOUT = 300.0
SETTINGS = {
    "LEAKAGE_PRELOAD": "cooccurrence,embedding",
    "LEAKAGE_BACKENDS": "cooccurrence,embedding",
    "LEAKAGE_REPORT_CACHE_BYTES": "0",
    "LEAKAGE_API_KEYS": None,  # the benchmark sends no key
}


def _prose(n: int) -> tuple[list[str], list[str]]:
    """``n`` WordNet lemmas and the descriptions WordNet gives them (in the same order)."""
    from leakage.corpus import find_wordnet_dir
    from leakage.splits import WordNetDescriber

    folder = find_wordnet_dir()
    lemmas: list[str] = []
    for name in ("index.noun", "index.verb", "index.adj"):
        with (folder / name).open(encoding="latin-1") as fh:
            lemmas += [line.split()[0] for line in fh if not line.startswith(" ")]
    words = random.Random(SEED).sample([w for w in lemmas if w.isalpha()], n)
    said = WordNetDescriber().describe(words)
    found = [(w, d) for w, d in said.items() if d]
    return [w for w, _ in found], [d for _, d in found]


def _supplied(pairs: int, size: int, words: list[str], texts: list[str]) -> dict[str, Any]:
    """``pairs`` pairs of distinct words, each word with ``size`` bytes of prose."""
    rng = random.Random(SEED + pairs)
    chosen = words[: 2 * pairs]
    descriptions = {}
    for w in chosen:
        text = ""
        while len(text) < size:
            text += rng.choice(texts) + " "
        descriptions[w] = text[:size].strip()
    return {
        "pairs": [[chosen[2 * i], chosen[2 * i + 1]] for i in range(pairs)],
        "descriptions": descriptions,
    }


def scenarios() -> dict[str, tuple[dict[str, Any], dict[str, str]]]:
    """Name -> (the splits request, extra server settings)."""
    words, texts = _prose(3000)
    limit = _supplied(110, 1024, words, texts)
    found = {
        "issue_scaled": (_supplied(250, 1024, words, texts), {}),
        "at_limit": (limit, {}),
        "deadline": (limit, {"LEAKAGE_SCORE_TIMEOUT": "5"}),
        "slow_work": (limit, {}),
    }
    pairs_csv = SHARED_DATA / "ck-arena-dev" / "pairs_en.csv"
    if pairs_csv.exists():
        from leakage.splits import read_pairs

        table = read_pairs(pairs_csv)
        found["ck_arena_wordnet"] = ({"pairs": [[p.a, p.b] for p in table.pairs]}, {})
    return found


def _summary(answers: list[tuple[int, float]]) -> dict[str, Any]:
    lat = np.array([s for _, s in answers]) if answers else np.zeros(1)
    statuses: dict[str, int] = {}
    for status, _ in answers:
        statuses[str(status)] = statuses.get(str(status), 0) + 1
    return {
        "sent": len(answers),
        "statuses": statuses,
        "p50_s": round(float(np.percentile(lat, 50)), 3),
        "max_s": round(float(lat.max()), 3),
    }


def run_scenario(url: str, body: bytes, words: list[str], *, probes: bool = True) -> dict[str, Any]:
    """The splits request's status and time, and each probe client's answers meanwhile
    (and, once the splits request is answered, how long the next embedding probe takes)."""
    big: dict[str, Any] = {}
    done = threading.Event()

    def send() -> None:
        json_body = {"content-type": "application/json"}
        big.update(timed_post(url, "/v1/splits", body, TIMEOUT, headers=json_body))
        done.set()

    answers: dict[str, list[tuple[int, float]]] = {"embedding": [], "cooccurrence": []}

    def probe(backend: str, offset: int) -> None:
        i = offset
        with httpx.Client(base_url=url, timeout=TIMEOUT) as client:
            while not done.is_set() or len(answers[backend]) < 5:
                start = time.perf_counter()
                r = client.post(f"/v1/score?backend={backend}", content=probe_game(i, words))
                answers[backend].append((r.status_code, time.perf_counter() - start))
                i += 1
                time.sleep(PROBE_EVERY)

    splits = threading.Thread(target=send)
    clients = [
        threading.Thread(target=probe, args=("embedding", 0)),
        threading.Thread(target=probe, args=("cooccurrence", 100)),
    ]
    splits.start()
    time.sleep(0.05)  # the splits request first, as in the issue
    for t in clients if probes else []:
        t.start()
    splits.join()
    for t in clients if probes else []:
        t.join()
    start = time.perf_counter()
    r = httpx.post(
        url + "/v1/score?backend=embedding", content=probe_game(999, words), timeout=TIMEOUT
    )
    after = {"status": r.status_code, "seconds": round(time.perf_counter() - start, 3)}
    return {
        **big,
        "body_bytes": len(body),
        "embedding_probes": _summary(answers["embedding"]),
        "cooccurrence_probes": _summary(answers["cooccurrence"]),
        "embedding_probe_after_the_answer": after,
    }


JOB_GAMES = 30
SLOW_SPLITS = 4
SLOW_REPORTS = 2


def _job_body(words: list[str], n: int = JOB_GAMES) -> bytes:
    """``n`` 4-player Chameleon games (16 candidates, 4 clues each) with two models playing,
    as JSONL: the job whose report pages are drawn."""
    lines = []
    for g in range(n):
        game = json.loads(probe_game(500 + g, words))
        game["id"] = f"job-{g}"
        for k, player in enumerate(game["players"]):
            player["agent"] = ("model-a", "model-b")[(g + k) % 2]
        lines.append(json.dumps(game))
    return ("\n".join(lines) + "\n").encode()


def _slow_job(url: str, words: list[str]) -> str:
    """A finished 30-game job's id."""
    r = httpx.post(url + "/v1/jobs", content=_job_body(words), timeout=TIMEOUT)
    r.raise_for_status()
    job = r.json()["id"]
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        state = httpx.get(f"{url}/v1/jobs/{job}", timeout=TIMEOUT).json()["state"]
        if state in ("done", "failed", "cancelled"):
            if state != "done":
                raise RuntimeError(f"the job ended {state}")
            return str(job)
        time.sleep(0.2)
    raise RuntimeError("the job did not finish")


def run_slow_work(url: str, splits_body: bytes, words: list[str]) -> dict[str, Any]:
    """Four splits and two report pages sent at once; each one's status, time and
    Retry-After; and the small co-occurrence scores sent one after another meanwhile, with
    their latency percentiles."""
    job = _slow_job(url, words)
    slow: list[dict[str, Any]] = []
    lock = threading.Lock()

    def send(kind: str) -> None:
        start = time.perf_counter()
        try:
            if kind == "splits":
                r = httpx.post(
                    url + "/v1/splits",
                    content=splits_body,
                    headers={"content-type": "application/json"},
                    timeout=TIMEOUT,
                )
            else:
                r = httpx.get(f"{url}/v1/jobs/{job}/report.html", timeout=TIMEOUT)
            found: dict[str, Any] = {"kind": kind, "status": r.status_code}
            if r.status_code != 200:
                found["error"] = r.json().get("error", {}).get("type")
                found["retry_after"] = r.headers.get("retry-after")
        except httpx.TimeoutException:
            found = {"kind": kind, "status": "client timeout"}
        found["seconds"] = round(time.perf_counter() - start, 3)
        with lock:
            slow.append(found)

    answers: list[tuple[int, float]] = []
    done = threading.Event()

    def probe() -> None:
        i = 0
        with httpx.Client(base_url=url, timeout=TIMEOUT) as client:
            while not done.is_set():
                start = time.perf_counter()
                r = client.post("/v1/score", content=probe_game(i, words))
                answers.append((r.status_code, time.perf_counter() - start))
                i += 1

    prober = threading.Thread(target=probe)
    prober.start()
    time.sleep(1.0)  # a few scores before the slow work, for comparison
    alone = len(answers)
    senders = [threading.Thread(target=send, args=("splits",)) for _ in range(SLOW_SPLITS)]
    senders += [threading.Thread(target=send, args=("report",)) for _ in range(SLOW_REPORTS)]
    start = time.perf_counter()
    for t in senders:
        t.start()
    for t in senders:
        t.join()
    window = time.perf_counter() - start
    done.set()
    prober.join()
    during = answers[alone:]
    lat = np.array([s for _, s in during]) if during else np.zeros(1)
    return {
        "job_games": JOB_GAMES,
        "slow_requests": sorted(slow, key=lambda x: (x["kind"], x["seconds"])),
        "slow_window_s": round(window, 3),
        "cooccurrence_before_slow_work": _summary(answers[:alone]),
        "cooccurrence_during_slow_work": {
            **_summary(during),
            "p99_s": round(float(np.percentile(lat, 99)), 3),
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.service_splits", description=__doc__
    )
    parser.add_argument("--label", default="current", help="a name for this tree in the results")
    parser.add_argument("--scenarios", default="", help="comma-separated (default: all)")
    parser.add_argument(
        "--no-probes", action="store_true", help="the splits request alone (its own time)"
    )
    args = parser.parse_args(argv)
    index = default_index()
    words = index_vocabulary(index)
    found = scenarios()
    names = [n for n in args.scenarios.split(",") if n] or list(found)
    results: dict[str, Any] = {}
    for name in names:
        request, extra = found[name]
        with (
            tempfile.TemporaryDirectory(prefix="leakage-splits-") as tmp,
            Server(Path(tmp), index, {**SETTINGS, **extra}) as server,  # cold caches
        ):
            body = json.dumps(request).encode()
            if name == "slow_work":
                results[name] = run_slow_work(server.url, body, words)
            else:
                results[name] = run_scenario(server.url, body, words, probes=not args.no_probes)
        print(f"{args.label} {name}: {json.dumps(results[name])}", flush=True)
    parameters = {
        "scenarios": names,
        "probes": not args.no_probes,
        "probe_every_s": PROBE_EVERY,
        "seed": SEED,
    }
    write_result(f"service_splits_{args.label}", parameters, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
