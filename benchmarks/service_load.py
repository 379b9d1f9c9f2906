"""HTTP service load: ``POST /v1/score`` against a local ``leakage serve`` on 127.0.0.1.

A uvicorn child process (the real ``leakage serve``, report cache off so every request is
scored) and, in this process, asyncio clients, each sending one request at a time. The load
generator (``_RawClient``) keeps one HTTP/1.1 connection per client on bare asyncio streams;
the co-occurrence runs are repeated with an httpx ``AsyncClient``, whose own per-request
cost is then part of what is measured. The bodies are 4-player synthetic Chameleon games
(``benchmarks/_games.py``), serialised up front; each phase sends games no earlier phase
sent (the soak wraps around the pool). For each backend (co-occurrence, embedding) and each
number of concurrent clients (1, 8, 32): a fixed number of requests, bounded by a time
limit, after a warm-up; throughput and p50 / p95 / p99 of the client-side latency; errors
(any non-200 or transport error). Then a soak: 10,000 co-occurrence requests at 8 clients,
the server's RSS (``/proc/PID/status`` VmRSS) sampled every 1,000.

Loopback only; every loop is bounded in count and time. The clients share the machine's two
cores with the server, as a local client would.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from benchmarks._games import generate_games
from benchmarks.common import Server, default_index, mark, write_result

SEED = 20261122
N_GAMES = 12_000
CONCURRENCY = (1, 8, 32)
REQUESTS = {"cooccurrence": 2000, "embedding": 1000}
WARMUP = 200
PHASE_SECONDS = 90.0
SOAK_REQUESTS = 10_000
SOAK_CLIENTS = 8
SOAK_SECONDS = 300.0
_JSON = {"content-type": "application/json"}
HTTPX_REQUESTS = 1000
TARGETS = {"p99_ms_max_cooccurrence_8": 100.0, "errors": 0, "rss_growth_mb_max": 25.0}
SETTINGS = {  # the server's: report cache off, so that every request is scored
    "LEAKAGE_PRELOAD": "cooccurrence,embedding",
    "LEAKAGE_REPORT_CACHE_BYTES": "0",
    "LEAKAGE_QUEUE_SIZE": "256",
    "LEAKAGE_API_KEYS": None,  # the benchmark sends no key
}


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class _RawClient:
    """One keep-alive HTTP/1.1 connection on asyncio streams, one request at a time.

    httpx's connection pool costs this machine 2.5-6 ms of client CPU per request and, past a
    few connections, sets the throughput itself (the ``httpx`` rows); a bare connection costs
    a few hundred µs, so what is measured is the server.
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self._conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: bytes) -> int:
        if self._conn is None:
            self._conn = await asyncio.open_connection("127.0.0.1", self.port)
        reader, writer = self._conn
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        try:
            writer.write(head + body)
            await writer.drain()
            raw = await reader.readuntil(b"\r\n\r\n")
            lines = raw.decode("latin-1").split("\r\n")
            status = int(lines[0].split()[1])
            length = next(
                int(x.split(":", 1)[1])
                for x in lines[1:]
                if x.lower().startswith("content-length:")
            )
            await reader.readexactly(length)
        except (OSError, asyncio.IncompleteReadError, StopIteration, ValueError):
            await self.close()
            raise
        return status

    async def close(self) -> None:
        if self._conn is not None:
            self._conn[1].close()
            self._conn = None


async def _load(
    url: str,
    bodies: list[bytes],
    *,
    backend: str,
    clients: int,
    requests: int,
    seconds: float,
    on_progress: Any = None,
    path: str = "/v1/score",
    use_httpx: bool = False,
    offset: int = 0,
) -> dict[str, Any]:
    """``requests`` requests from ``clients`` concurrent clients, stopping at ``seconds``."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    next_i = 0
    deadline = time.monotonic() + seconds
    target = f"{path}?backend={backend}"
    port = int(url.rsplit(":", 1)[1])
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as shared:

        async def send(raw: _RawClient, body: bytes) -> int:
            if use_httpx:
                r = await shared.post(target, content=body, headers=_JSON)
                return r.status_code
            return await raw.post(target, body)

        async def worker() -> None:
            nonlocal next_i
            raw = _RawClient(port)
            while next_i < requests and time.monotonic() < deadline:
                i = next_i
                next_i += 1
                start = time.perf_counter()
                try:
                    status = str(await send(raw, bodies[(offset + i) % len(bodies)]))
                except (OSError, httpx.HTTPError, asyncio.IncompleteReadError) as err:
                    status = type(err).__name__
                latencies.append(time.perf_counter() - start)
                if status != "200":
                    errors[status] = errors.get(status, 0) + 1
                if on_progress is not None:
                    on_progress(i + 1)
            await raw.close()

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        elapsed = time.perf_counter() - start
    ms = np.array(latencies) * 1000
    return {
        "backend": backend,
        "clients": clients,
        "client": "httpx" if use_httpx else "raw",
        "requests": len(latencies),
        "requests_planned": requests,
        "seconds": round(elapsed, 2),
        "stopped_by_time_limit": len(latencies) < requests,
        "throughput_rps": round(len(latencies) / elapsed, 1),
        "p50_ms": round(float(np.percentile(ms, 50)), 2),
        "p95_ms": round(float(np.percentile(ms, 95)), 2),
        "p99_ms": round(float(np.percentile(ms, 99)), 2),
        "max_ms": round(float(ms.max()), 2),
        "errors": sum(errors.values()),
        "errors_by_status": errors,
    }


def _bodies(n: int) -> list[bytes]:
    games, _ = generate_games(n, SEED)
    return [g.model_dump_json(exclude_defaults=True).encode() for g in games]


def _load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run() -> dict[str, Any]:
    index = default_index()
    print(f"service_load: {N_GAMES} synthetic 4-player Chameleon games ...", flush=True)
    bodies = _bodies(N_GAMES)
    warm, rest = bodies[:WARMUP], bodies[WARMUP:]
    phases = []
    with (
        tempfile.TemporaryDirectory(prefix="leakage-serve-") as tmp,
        Server(Path(tmp), index, SETTINGS) as server,
    ):
        rss_start = _rss_mb(server.proc.pid)
        runs = [(b, c, n, False) for b, n in REQUESTS.items() for c in CONCURRENCY]
        runs += [("cooccurrence", c, HTTPX_REQUESTS, True) for c in CONCURRENCY]
        warmed: set[str] = set()
        offset = 0  # each phase sends games no earlier phase sent
        for backend, clients, n, use_httpx in runs:
            if backend not in warmed:
                warmed.add(backend)
                asyncio.run(
                    _load(server.url, warm, backend=backend, clients=8, requests=WARMUP,
                          seconds=PHASE_SECONDS)
                )  # fmt: skip
            load_before = _load_avg()
            r = asyncio.run(
                _load(server.url, rest, backend=backend, clients=clients, requests=n,
                      seconds=PHASE_SECONDS, use_httpx=use_httpx, offset=offset)
            )  # fmt: skip
            offset += r["requests"]
            r["load_avg_before"] = load_before
            phases.append(r)
            print(
                f"  {backend:<13}{r['client']:<6}{clients:>3} clients: "
                f"{r['throughput_rps']:>7,.0f} req/s, p50 {r['p50_ms']:.1f} ms, p95 "
                f"{r['p95_ms']:.1f} ms, p99 {r['p99_ms']:.1f} ms, {r['errors']} errors "
                f"({r['requests']} requests, load {load_before[0]})",
                flush=True,
            )
        print(f"  soak: {SOAK_REQUESTS:,} co-occurrence requests at {SOAK_CLIENTS} clients")
        rss: list[tuple[int, float]] = [(0, _rss_mb(server.proc.pid))]

        def sample(done: int) -> None:
            if done % 1000 == 0:
                rss.append((done, round(_rss_mb(server.proc.pid), 1)))

        soak = asyncio.run(
            _load(server.url, rest, backend="cooccurrence", clients=SOAK_CLIENTS,
                  requests=SOAK_REQUESTS, seconds=SOAK_SECONDS, on_progress=sample,
                  offset=offset)
        )  # fmt: skip
        rss_end = _rss_mb(server.proc.pid)
    first_k = next((mb for done, mb in rss if done >= 1000), rss[0][1])
    growth = rss_end - first_k
    soak.update(
        rss_mb_at_start=round(rss_start, 1),
        rss_mb_series=rss,
        rss_mb_after=round(rss_end, 1),
        rss_growth_mb_after_first_1000=round(growth, 1),
    )
    key = next(
        p
        for p in phases
        if p["backend"] == "cooccurrence" and p["clients"] == 8 and p["client"] == "raw"
    )
    met = {
        "p99_cooccurrence_8": key["p99_ms"] <= TARGETS["p99_ms_max_cooccurrence_8"],
        "zero_errors": all(p["errors"] == 0 for p in [*phases, soak]),
        "flat_memory": growth <= TARGETS["rss_growth_mb_max"],
    }
    print(
        f"  soak: {soak['throughput_rps']:,.0f} req/s, p99 {soak['p99_ms']:.1f} ms, "
        f"{soak['errors']} errors; RSS {rss[0][1]:.0f} MB before, {first_k:.0f} MB after 1,000, "
        f"{rss_end:.0f} MB after {soak['requests']:,} (+{growth:.1f} MB)"
    )
    print(
        f"  targets: p99 <= 100 ms at 8 clients (co-occurrence) {mark(met['p99_cooccurrence_8'])}, "
        f"zero errors {mark(met['zero_errors'])}, flat memory {mark(met['flat_memory'])}"
    )
    params = {
        "n_games": N_GAMES,
        "seed": SEED,
        "warmup_requests": WARMUP,
        "requests": REQUESTS,
        "httpx_client_requests": HTTPX_REQUESTS,
        "client": "raw: one keep-alive HTTP/1.1 connection per client on asyncio streams; "
        "httpx: one AsyncClient with a pool of as many connections as clients",
        "concurrency": CONCURRENCY,
        "phase_seconds_max": PHASE_SECONDS,
        "soak_requests": SOAK_REQUESTS,
        "targets": TARGETS,
        "server": "leakage serve (uvicorn, 1 process, 2 scoring threads), report cache off",
        "load_avg_at_end": _load_avg(),
    }
    results = {"phases": phases, "soak": soak, "targets_met": met}
    path = write_result("service_load", params, results)
    print(f"  wrote {path}")
    print(json.dumps(met))
    return results
