"""Uploads that cost far more than their size (issue 37), against a real ``leakage serve``
on 127.0.0.1 and through ``leakage score`` and ``leakage batch``: how long each takes to be
answered and how much the server's (or the command's) memory grows.

The uploads (built by ``benchmarks._archives`` and ``benchmarks._big_records``):

- ``header_bomb``: a ``.eval`` log of one game whose ``header.json`` is ``--bomb-mib`` MiB of
  spaces (1,024 by default: a 1 MB file);
- ``messages_bomb``: the same log with a string of that many spaces in the sample's
  ``messages`` (a field the reader skips), ``header.json`` honest;
- ``ck_arena_20k``: a CK-Arena record of 20,000 players (1.8 MB), the last one repeating the
  first's id (the duplicate-player check used to compare every pair).

Each upload is sent to a fresh server (so that its peak resident memory, ``VmHWM``, is this
request's): the bombs to ``POST /v1/transcripts`` and ``POST /v1/jobs``, the record to
``POST /v1/score`` and ``POST /v1/jobs`` (then the job is waited for). The bombs are also
read by ``leakage score`` and ``leakage batch`` (their peak memory from ``wait4``). The server
and commands run whatever ``leakage`` Python imports; ``--tree DIR`` runs them on another
checkout (``PYTHONPATH=DIR:DIR/service``) to measure it, e.g. the tree before the fix.

    .venv/bin/python -m benchmarks.service_uploads [--label after] [--scenarios a,b]
        [--tree /path/to/checkout] [--bomb-mib 1024] [--timeout 150]

Loopback only; every request is bounded (``--timeout``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks._archives import eval_log
from benchmarks._big_records import ck_arena
from benchmarks.common import Server, default_index, write_result

REPO = Path(__file__).resolve().parents[1]
GAME = json.loads((REPO / "corpora" / "examples" / "chameleon_sports.json").read_text("utf-8"))
SETTINGS: dict[str, str | None] = {
    "LEAKAGE_PRELOAD": "cooccurrence",
    "LEAKAGE_BACKENDS": "cooccurrence",
    "LEAKAGE_REPORT_CACHE_BYTES": "0",
    "LEAKAGE_API_KEYS": None,  # the benchmark sends no key
}
MiB = 1 << 20


def _kib(pid: int, field: str) -> int:
    """``VmRSS`` or ``VmHWM`` (peak) of a process, in KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def build(name: str, bomb_mib: int) -> tuple[bytes, str]:
    """The upload and its content type."""
    if name == "header_bomb":
        return eval_log([GAME], header_pad=bomb_mib * MiB), "application/zip"
    if name == "messages_bomb":
        return eval_log([GAME], messages_pad={0: bomb_mib * MiB}), "application/zip"
    if name == "ck_arena_20k":
        return json.dumps(ck_arena(20_000, duplicate_last=True)).encode(), "application/json"
    raise ValueError(name)


def _send(client: httpx.Client, path: str, body: bytes, ctype: str) -> dict[str, Any]:
    start = time.perf_counter()
    out: dict[str, Any] = {"route": path}
    try:
        r = client.post(path, content=body, headers={"content-type": ctype})
        out["status"] = r.status_code
        if r.status_code >= 400:
            err = r.json().get("error", {})
            out["error"] = f"{err.get('type')} ({err.get('field')}): {err.get('message', '')[:200]}"
        elif path == "/v1/jobs":
            out["job"] = r.json()["id"]
    except httpx.TimeoutException:
        out["status"] = "client timeout"
    except httpx.TransportError as err:
        out["status"] = f"transport error: {err}"
    out["seconds"] = round(time.perf_counter() - start, 3)
    return out


def _wait_job(client: httpx.Client, job_id: str, timeout: float) -> dict[str, Any]:
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if job["state"] in ("done", "failed", "cancelled"):
            errors = job.get("errors") or [{}]
            message = (errors[0].get("error") or {}).get("message", "")
            return {"state": job["state"], "failed": job["failed"], "ok": job["ok"],
                    "first_error": message[:200],
                    "seconds_to_end": round(time.perf_counter() - start, 3)}  # fmt: skip
        time.sleep(0.1)
    return {"state": "still running", "seconds_to_end": round(time.perf_counter() - start, 3)}


def on_server(
    index: Path, name: str, body: bytes, ctype: str, route: str, env: dict[str, str | None],
    timeout: float,
) -> dict[str, Any]:  # fmt: skip
    """One upload to one route of a fresh server: status, time, the server's RSS growth."""
    with (
        tempfile.TemporaryDirectory(prefix="leakage-uploads-") as tmp,
        Server(Path(tmp), index, {**SETTINGS, **env}) as server,
        httpx.Client(base_url=server.url, timeout=timeout) as client,
    ):
        pid = server.proc.pid
        before = _kib(pid, "VmRSS")
        out = _send(client, route, body, ctype)
        if "job" in out:
            out.update(_wait_job(client, out.pop("job"), timeout))
        out["rss_before_mib"] = round(before / 1024, 1)
        out["rss_peak_growth_mib"] = round((_kib(pid, "VmHWM") - before) / 1024, 1)
    return out


def on_command(args: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    """``python -m leakage ARGS``: exit status, time, peak RSS, the first error line."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "leakage", *args], env=env,
                                stdout=subprocess.DEVNULL, stderr=err)  # fmt: skip
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        err.seek(0)
        lines = [x for x in err.read().decode(errors="replace").splitlines() if "error" in x]
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "seconds": round(time.perf_counter() - start, 3),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "error": lines[0][:240] if lines else None,
    }


ROUTES = {
    "header_bomb": ("/v1/transcripts", "/v1/jobs"),
    "messages_bomb": ("/v1/transcripts", "/v1/jobs"),
    "ck_arena_20k": ("/v1/score", "/v1/jobs"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.service_uploads", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    parser.add_argument("--label", default="current", help="a name for this tree in the results")
    parser.add_argument("--scenarios", default="", help="comma-separated (default: all)")
    parser.add_argument("--tree", type=Path, help="run the server and commands on this checkout")
    parser.add_argument("--bomb-mib", type=int, default=1024, help="how far the bombs expand")
    parser.add_argument("--timeout", type=float, default=150.0, help="seconds per request")
    parser.add_argument("--no-commands", action="store_true", help="skip score and batch")
    args = parser.parse_args(argv)
    env: dict[str, str | None] = {}
    if args.tree is not None:
        tree = args.tree.resolve()
        env["PYTHONPATH"] = f"{tree}{os.pathsep}{tree / 'service'}"
        # ``python -m leakage`` puts its working folder first on sys.path: the children
        # start in the tree, or they would import this checkout's leakage
        os.chdir(tree)
    index = default_index()
    names = [n for n in args.scenarios.split(",") if n] or list(ROUTES)
    results: dict[str, Any] = {}
    for name in names:
        started = time.perf_counter()
        body, ctype = build(name, args.bomb_mib)
        results[name] = {"upload_bytes": len(body),
                         "built_seconds": round(time.perf_counter() - started, 2)}  # fmt: skip
        for route in ROUTES[name]:
            got = on_server(index, name, body, ctype, route, env, args.timeout)
            results[name][route] = got
            print(f"{args.label} {name} {route}: {json.dumps(got)}", flush=True)
        if name.endswith("_bomb") and not args.no_commands:
            with tempfile.TemporaryDirectory(prefix="leakage-uploads-cli-") as tmp:
                path = Path(tmp) / f"{name}.eval"
                path.write_bytes(body)
                cli_env = {**os.environ, "LEAKAGE_HOME": tmp, "LEAKAGE_INDEX": str(index)}
                cli_env.update({k: v for k, v in env.items() if v is not None})
                backend = ["-b", "cooccurrence", "-O", f"index={index}"]
                runs = {
                    "leakage score": ["score", str(path), "-f", "jsonl", *backend],
                    "leakage batch": ["batch", str(path), "--out", f"{tmp}/out", "--no-progress",
                                      "--workers", "0"],
                }  # fmt: skip
                for what, cli in runs.items():
                    got = on_command(cli, cli_env, args.timeout)
                    errors = Path(tmp) / "out" / "errors.jsonl"
                    if what == "leakage batch" and errors.exists():
                        first = json.loads(errors.read_text("utf-8").splitlines()[0])
                        got["error"] = first["error"]["message"][:240]
                    results[name][what] = got
                    print(f"{args.label} {name} {what}: {json.dumps(got)}", flush=True)
    params = {"scenarios": names, "bomb_mib": args.bomb_mib, "timeout": args.timeout,
              "tree": str(args.tree) if args.tree else "this checkout"}  # fmt: skip
    write_result(f"service_uploads_{args.label}", params, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
