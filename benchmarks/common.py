"""What the benchmarks share: the machine record, result files, reference data, the index,
a real ``leakage serve`` to send requests to, and the helpers more than one benchmark or study
uses (word folding, Chameleon items, resamples by group, padded posteriors, probe games).

The one public module of ``benchmarks``: a benchmark or study takes what it shares with another
from here, never a private name of another module."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks._spygame import spy_round1 as spy_round1  # re-exported for the studies
from benchmarks._stats import bootstrap_ci as bootstrap_ci  # re-exported for the studies
from benchmarks._stats import roc_auc as roc_auc  # re-exported for the studies
from leakage.runtime import cpu_supports_bf16

REPO = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"
SHARED_DATA = REPO.parent / "shared" / "data"
"""Third-party reference data beside the repository (read in place, never copied in)."""


class Skip(Exception):
    """A benchmark cannot run on this machine; the message says why."""


def shared_data(*parts: str) -> Path:
    """A path under ``../shared/data``; ``Skip`` when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        raise Skip(f"needs the shared reference data at {path}, which is absent")
    return path


def ck_arena_games() -> tuple[Path, list[Any]]:
    """The CK-Arena dev logs (``../shared/data/ck-arena-dev/logs``) and their games, every one
    a SpyGame; ``Skip`` when the data is absent, ``ValueError`` (the count and the first
    error) when a record cannot be read."""
    from leakage import load_transcripts

    logs = shared_data("ck-arena-dev", "logs")
    games, errors = load_transcripts([logs], input_format="ck-arena")
    if errors:
        raise ValueError(f"{logs}: {len(errors)} unreadable records, first: {errors[0]}")
    return logs, list(games)


def clembench_dev(game: str) -> tuple[Path, list[dict[str, Any]]]:
    """The clembench dev episodes of ``game`` (``guesswhat``, ``taboo``): the folder
    ``../shared/data/clembench-dev/<game>`` and the rows of its ``<game>_dev.jsonl``;
    ``Skip`` when the data is absent."""
    root = shared_data("clembench-dev", game)
    lines = (root / f"{game}_dev.jsonl").read_text(encoding="utf-8").splitlines()
    return root, [json.loads(x) for x in lines if x]


def clembench_transcript(path: Path, game: str) -> Any:
    """The transcript of one clembench ``game`` episode file (its error when unreadable)."""
    from leakage import load_transcripts

    good, bad = load_transcripts([path], input_format=f"clembench-{game}")
    if bad:
        raise bad[0]
    (t,) = good
    return t


def shipped_fit(members: Mapping[str, Any], weights_file: Path | None = None) -> tuple[Path, Any]:
    """``weights_file``, else the weights file the ensemble over ``members`` ships with (the
    one for their LLM rows), and its fit (``read_weights``)."""
    from leakage.backends.ensemble import default_weights_path, llm_rows, read_weights

    path = weights_file or default_weights_path(llm_rows(members))
    return path, read_weights(path)


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model(),
        "bf16_native": cpu_supports_bf16(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "load_average_1_5_15_min": [round(x, 2) for x in os.getloadavg()],
    }


def write_result(name: str, parameters: dict[str, Any], results: dict[str, Any]) -> Path:
    """``benchmarks/results/<name>.json``: machine, parameters, numbers."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    doc = {"benchmark": name, "machine": machine(), "parameters": parameters, "results": results}
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def default_index() -> Path:
    """The default co-occurrence index, built first if it is missing (as `make corpus` does)."""
    from leakage.corpus import build_index, default_documents, default_index_path

    path = default_index_path()
    if not path.exists():
        print(f"  building the default index at {path} ...", flush=True)
        docs, sources = default_documents()
        build_index(path, docs, sources=sources)
    return path


def mark(ok: bool) -> str:
    return "met" if ok else "MISSED"


class Stopwatch:
    """``with Stopwatch() as sw: ...`` then ``sw.seconds``."""

    seconds: float = 0.0

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start


class Server:
    """A real ``leakage serve`` (uvicorn) in a child process on a free loopback port, ready
    when the constructor returns; ``with Server(...) as server:`` stops it on the way out.

    The child's environment is this process's with ``LEAKAGE_HOME`` and ``LEAKAGE_INDEX`` set
    and ``settings`` on top (``None`` removes a variable). Its stdout and stderr go to ``log``
    (``home/server.log`` unless given), which the errors name. The child runs in a session of
    its own, so a Ctrl-C reaches this process only, which then stops the server.
    """

    def __init__(
        self,
        home: Path,
        index: Path,
        settings: Mapping[str, str | None],
        *,
        log: Path | None = None,
        ready_seconds: float = 120.0,
    ) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log or home / "server.log"
        env = {**os.environ, "LEAKAGE_HOME": str(home), "LEAKAGE_INDEX": str(index)}
        for name, value in settings.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        command = [sys.executable, "-m", "leakage", "serve", "--host", "127.0.0.1"]
        with self.log.open("wb") as fh:  # the child holds its own copy of the descriptor
            self.proc = subprocess.Popen(
                [*command, "--port", str(self.port)],
                env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        try:
            self._wait_ready(ready_seconds)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, seconds: float) -> None:
        import httpx  # here, so that benchmarks without a server run where httpx is not

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited {self.proc.returncode}; see {self.log}")
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"the server was not ready in {seconds:g} s; see {self.log}")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 30 s; nothing if the server has already exited."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# -- helpers more than one benchmark or study uses ------------------------------------------------


def fold(word: str) -> str:
    """Case folded, runs of white space as one space: how the card studies compare words."""
    return " ".join(word.casefold().split())


def chameleon_item(
    item_id: str,
    category: str,
    candidates: Sequence[str],
    secret: str,
    clues: Sequence[str],
    meta: Mapping[str, Any],
) -> Any:
    """A one-round Chameleon transcript: one non-chameleon per clue, in order, and the
    chameleon (who says nothing)."""
    from leakage.transcripts import ChameleonTranscript

    players = [{"id": str(i + 1), "role": "non-chameleon"} for i in range(len(clues))]
    players.append({"id": "chameleon", "role": "chameleon"})
    return ChameleonTranscript.model_validate(
        {
            "id": item_id,
            "game": "chameleon",
            "category": category,
            "candidates": list(candidates),
            "secret": secret,
            "players": players,
            "turns": [{"player": str(i + 1), "text": c, "round": 1} for i, c in enumerate(clues)],
            "meta": dict(meta),
        }
    )


def bootstrap_draws(groups: Sequence[str], n_boot: int, seed: int) -> list[NDArray[np.int64]]:
    """``n_boot`` resamples of the items, drawing whole groups (secret words) with
    replacement from ``default_rng(seed)``: with the card studies' ``N_BOOT`` and ``SEED``,
    the draws ``chameleon_cards.grouped_figures`` makes for the same items."""
    names = sorted(set(groups))
    members = [np.flatnonzero(np.array(groups) == g) for g in names]
    rng = np.random.default_rng(seed)
    return [
        np.concatenate([members[j] for j in rng.integers(0, len(names), len(names))])
        for _ in range(n_boot)
    ]


def padded_probs(log_posts: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
    """Posteriors (from log posteriors) padded with zeros to the widest card (as
    ``chameleon_cards.Scored.arrays``)."""
    out = np.zeros((len(log_posts), max(lp.size for lp in log_posts)))
    for n, lp in enumerate(log_posts):
        out[n, : lp.size] = np.exp(lp)
    return out


def index_vocabulary(index: Path, n: int = 20_000) -> list[str]:
    """Frequent terms of the index (stemmed forms are words the index knows)."""
    import sqlite3

    con = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        con.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab('main', 'docs', 'row')")
        rows = con.execute(
            "SELECT term FROM temp.v WHERE doc > 20 AND length(term) > 3 AND term GLOB '[a-z]*' "
            "ORDER BY doc DESC LIMIT ?",
            (n,),
        ).fetchall()
    finally:
        con.close()
    return [r[0] for r in rows]


def probe_game(i: int, words: list[str]) -> bytes:
    """The ``i``-th small request body of the service benchmarks: 16 candidates and 4 clues
    from ``words`` (``index_vocabulary``), one speaker."""
    from benchmarks._games import chameleon_game

    cands = words[2000 + 16 * (i % 200) : 2016 + 16 * (i % 200)]
    clues = [words[(7 * i + k) % len(words)] for k in range(4)]
    game = chameleon_game(f"probe-{i}", cands, clues, one_speaker=True)
    return json.dumps(game).encode()


def timed_post(
    url: str,
    path: str,
    body: bytes,
    timeout: float,
    *,
    headers: Mapping[str, str] | None = None,
    message_chars: int = 200,
) -> dict[str, Any]:
    """``POST path`` of the service at ``url``: its ``status`` (``client timeout`` when the
    client gave up), the ``error`` of an answer other than 200 (``type: message``, the message
    cut to ``message_chars``) and the ``seconds`` it took."""
    import httpx

    out: dict[str, Any] = {}
    start = time.perf_counter()
    try:
        r = httpx.post(url + path, content=body, headers=headers, timeout=timeout)
        out["status"] = r.status_code
        if r.status_code != 200:
            err = r.json().get("error", {})
            out["error"] = f"{err.get('type')}: {err.get('message', '')[:message_chars]}"
    except httpx.TimeoutException:
        out["status"] = "client timeout"
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out
